import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The original PrefEval code, run unmodified (test/differential/prefeval/run_original.py): its
 * generation script (explicit or implicit preferences), its LLM judge and its error analysis, with /usr/bin/python3,
 * a recording stub Bedrock client and scripted replies, in a scratch directory (nothing is written to
 * the checkout). The checkout is read from ../shared/prefeval-original (CC-BY-NC: never copied here).
 */
const repoRoot = resolve(import.meta.dirname, '..', '..');
export const PREFEVAL_PYTHON = '/usr/bin/python3';
export const PREFEVAL_RUNNER = join(repoRoot, 'test', 'differential', 'prefeval', 'run_original.py');
/** Where the checkout is looked for: ../shared beside the repository (as the other differential tests), then the workplace's. */
export const PREFEVAL_CHECKOUTS = [resolve(repoRoot, '..', 'shared', 'prefeval-original'), '/work/shared/prefeval-original'];

/**
 * The original's --task (the ones this harness runs). selfcritic: a zero-shot answer, a critique of it,
 * then a revised answer (generation_task/baselines_handling.py), the revised one judged.
 */
export type PrefEvalTask = 'zero-shot' | 'remind' | 'cot' | 'selfcritic';
/** The original's --pref_form. */
export type PrefForm = 'explicit' | 'implicit';
/** The original's --pref_type (implicit only): choice-based or persona-driven conversations. */
export type ImplicitPrefType = 'choice' | 'persona';
export type JudgeCheck = 'acknow' | 'violate' | 'hallucinate' | 'helpful';
export const JUDGE_CHECKS: readonly JudgeCheck[] = ['acknow', 'violate', 'hallucinate', 'helpful'];

export interface OriginalPrefEvalInput {
  /** The checkout; by default the first of PREFEVAL_CHECKOUTS that exists. */
  checkout?: string;
  topic: string;
  inter_turns: number;
  task: PrefEvalTask;
  /** The original's model name (get_model_info); Bedrock ones only. Default claude3hk. */
  model?: string;
  /** The first `limit` records of the topic are run. */
  limit: number;
  /**
   * Explicit (default): the record's preference is said in the first turn. Implicit: the record's
   * conversation (benchmark_dataset/implicit_preference/<choice-based|persona-driven>/<topic>.json)
   * stands in front of the filler, and there is one generation call per record.
   */
  pref_form?: PrefForm;
  /** Implicit only: which conversations (--pref_type); default choice. */
  pref_type?: ImplicitPrefType;
  /**
   * Judge replies by check, then by task index ('0', '1', ...) or one string for every task. Unset:
   * a reply that passes (acknow Yes with preference "p", violate No, hallucinate No, helpful Yes).
   */
  replies?: Partial<Record<JudgeCheck, string | Record<string, string>>>;
  /** Keep the scratch directory (its path is `scratch` in the output). */
  keep?: boolean;
}

export interface ClaudeMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** An Anthropic Messages body as the original sends it to InvokeModel. */
export interface ClaudeInvokeBody {
  anthropic_version: string;
  max_tokens: number;
  system: string;
  messages: ClaudeMessage[];
  /** 0 (an int in Python) for generation, 0.0 for the judge: both parse to 0. */
  temperature: number;
}

export interface OriginalRequest {
  modelId: string;
  /** The JSON body passed to invoke_model, parsed (a Llama or Mistral body for those models). */
  body: ClaudeInvokeBody;
}

/**
 * A record of the evaluation file: the topic's record as the data set has it (every key kept, in its
 * order), with what the original added. One record of each data set (travel_hotel's 52nd, and one
 * explicit one) has no explanation.
 */
export interface EvaluatedRecord {
  preference: string;
  question: string;
  explanation?: string;
  /** Explicit only: the reply to the preference turn (the implicit generation has no such turn). */
  response_to_pref?: string;
  /**
   * Implicit only. Choice-based: {query, assistant_options, user_selection, assistant_acknowledgment};
   * persona-driven: {"0": {user, assistant}, "1": ...}.
   */
  conversation?: Record<string, string> | Record<string, Record<string, string>>;
  /** Implicit choice-based only. */
  implicit_query?: string;
  options?: string[];
  aligned_op?: string;
  /** Implicit persona-driven only. */
  persona?: string;
  /** selfcritic only: the answer to the question before the critique (the first question call). */
  zero_shot_response_to_q?: string;
  /** The answer the judge judges; for selfcritic the revised answer (the last call of the record). */
  response_to_q: string;
  /** selfcritic only: the reply to the critique request. */
  self_critic?: string;
  evaluation_error_analysis: {
    acknow: { answer: string; extract_pref: string };
    violate: { explanation: string; answer: string };
    hallucinate: { explanation: string; answer: string };
    helpful: { explanation: string; answer: string };
  };
}

/** analyze_errors's counts. */
export interface ErrorStats {
  acknowledgement: number;
  hallucination: number;
  violation: number;
  error_unhelpful: number;
  error_inconsistent: number;
  hallucination_of_preference_violation: number;
  preference_unaware_violation: number;
  preference_adherence_accuracy: number;
}

export interface OriginalPrefEvalRun {
  /**
   * benchmark_generation.py's requests in call order: per record, explicit: the preference turn, then
   * the question; implicit: the question only (after the record's conversation and the filler).
   * selfcritic: the same, then the critique request and the revision request (max_tokens 500), each
   * after the whole conversation so far.
   */
  generation_requests: OriginalRequest[];
  /** llm_based_evaluation_errortypes.py's requests in call order: per record, acknow, violate, hallucinate, helpful. */
  judge_requests: OriginalRequest[];
  /** Which check and record each judge request was (told apart by the template it starts with). */
  judge_checks: Array<{ check: JudgeCheck; task: number }>;
  /** The evaluation file as the original wrote it. */
  results: EvaluatedRecord[];
  stats: ErrorStats;
  total: number;
  /** The accuracy print_evaluation_results printed, in percent (two decimals). */
  accuracy: number | null;
  /** Everything print_evaluation_results printed. */
  report: string;
  /** The files the original wrote, relative to the scratch directory (benchmark_results/...). */
  written: string[];
  /** The scratch directory; removed after the run unless `keep`. */
  scratch: string;
}

/**
 * The stub's reply to a generation request: from the content of the body's last message (a Llama or
 * Mistral body: its whole prompt), "reply " + the first 12 hex digits of its UTF-8 SHA-256.
 */
export function scriptedGenerationReply(text: string): string {
  return 'reply ' + createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 12);
}

let pythonModules: boolean | undefined;
function pythonHasModules(): boolean {
  if (pythonModules === undefined) {
    pythonModules = existsSync(PREFEVAL_PYTHON) && spawnSync(PREFEVAL_PYTHON, ['-c', 'import bs4, yaml'], { stdio: 'ignore' }).status === 0;
  }
  return pythonModules;
}

export function prefevalOriginalCheckout(): string | null {
  return PREFEVAL_CHECKOUTS.find((dir) => existsSync(join(dir, 'generation_task', 'benchmark_generation.py'))) ?? null;
}

/** Why the original cannot be run here, or null when it can. */
export function prefevalOriginalMissing(): string | null {
  if (!prefevalOriginalCheckout()) return `no PrefEval checkout at ${PREFEVAL_CHECKOUTS.join(' or ')}`;
  if (!existsSync(PREFEVAL_PYTHON)) return `${PREFEVAL_PYTHON} is missing (apt-get install python3)`;
  if (!pythonHasModules()) return `${PREFEVAL_PYTHON} lacks bs4 or yaml (apt-get install python3-bs4 python3-yaml)`;
  return null;
}

/** The checkout's path when the original can be run here (checkout, /usr/bin/python3 with bs4 and yaml), else null. */
export function prefevalOriginalAvailable(): string | null {
  return prefevalOriginalMissing() === null ? prefevalOriginalCheckout() : null;
}

/** Runs the original scripts on `input`; throws with their stderr when the run fails. */
export function runOriginalPrefEval(input: OriginalPrefEvalInput): Promise<OriginalPrefEvalRun> {
  const checkout = input.checkout ?? prefevalOriginalCheckout();
  return new Promise((done, fail) => {
    const child = spawn(PREFEVAL_PYTHON, [PREFEVAL_RUNNER], {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        PYTHONDONTWRITEBYTECODE: '1',
        PYTHONHASHSEED: '0',
        PYTHONIOENCODING: 'utf-8',
        TMPDIR: process.env['TMPDIR'] ?? '/tmp',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => void out.push(c));
    child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0) return fail(new Error(`${PREFEVAL_PYTHON} ${PREFEVAL_RUNNER} exited ${code}:\n${stderr.slice(-4000)}`));
      try {
        done(JSON.parse(Buffer.concat(out).toString('utf8')) as OriginalPrefEvalRun);
      } catch (e) {
        fail(new Error(`${PREFEVAL_RUNNER} printed no JSON (${(e as Error).message}):\n${stderr.slice(-4000)}`));
      }
    });
    child.stdin.end(JSON.stringify({ ...input, ...(checkout ? { checkout } : {}) }));
  });
}
