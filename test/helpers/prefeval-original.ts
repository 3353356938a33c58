import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runCliInProcess } from './cli.js';
import type { MockBedrockRequest } from './mock-bedrock.js';

/**
 * The original PrefEval code, run unmodified (test/differential/prefeval/run_original.py): its
 * generation script (explicit or implicit preferences), its LLM judge and its error analysis, with /usr/bin/python3,
 * a recording stub Bedrock client and scripted replies, in a scratch directory (nothing is written to
 * the checkout). The checkout is read from ../shared/prefeval-original (CC-BY-NC: never copied here).
 */
const repoRoot = resolve(import.meta.dirname, '..', '..');
export const PREFEVAL_PYTHON = '/usr/bin/python3';
export const PREFEVAL_RUNNER = join(repoRoot, 'test', 'differential', 'prefeval', 'run_original.py');
/** The classification (MCQ) task's harness (run_original_mcq.py), and the writer of synthetic retrieval files (make_rag_fixture.py). */
export const PREFEVAL_MCQ_RUNNER = join(repoRoot, 'test', 'differential', 'prefeval', 'run_original_mcq.py');
export const PREFEVAL_RAG_FIXTURE = join(repoRoot, 'test', 'differential', 'prefeval', 'make_rag_fixture.py');
/** Where the checkout is looked for: ../shared beside the repository (as the other differential tests), then the workplace's. */
export const PREFEVAL_CHECKOUTS = [resolve(repoRoot, '..', 'shared', 'prefeval-original'), '/work/shared/prefeval-original'];

/**
 * The original's --task (the ones this harness runs). selfcritic: a zero-shot answer, a critique of it,
 * then a revised answer (generation_task/baselines_handling.py), the revised one judged. rag: the 5
 * earlier exchanges the precomputed retrievals rank highest put before the question (needs rag_dir).
 */
export type PrefEvalTask = 'zero-shot' | 'remind' | 'cot' | 'selfcritic' | 'rag';
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
  /** Task rag only: a folder holding rag_retrieval/ in the original layout (makeRagFixture's, or a real one), or that folder itself. */
  rag_dir?: string;
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

/**
 * The topic the differential tests run on: `travel_restaurant`, or PLENS_PREFEVAL_TOPIC (another of
 * the release's twenty topics, for a run on records the default one does not reach).
 */
export const DIFF_TOPIC = process.env['PLENS_PREFEVAL_TOPIC'] ?? 'travel_restaurant';

/** The checkout's path when the original can be run here (checkout, /usr/bin/python3 with bs4 and yaml), else null. */
export function prefevalOriginalAvailable(): string | null {
  return prefevalOriginalMissing() === null ? prefevalOriginalCheckout() : null;
}

/** Runs one of the harness scripts with /usr/bin/python3 on `input` (JSON on stdin) and parses the JSON it prints; throws with its stderr when it fails. */
function runHarness<T>(script: string, input: Record<string, unknown>): Promise<T> {
  return new Promise((done, fail) => {
    const child = spawn(PREFEVAL_PYTHON, [script], {
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
      if (code !== 0) return fail(new Error(`${PREFEVAL_PYTHON} ${script} exited ${code}:\n${stderr.slice(-4000)}`));
      try {
        done(JSON.parse(Buffer.concat(out).toString('utf8')) as T);
      } catch (e) {
        fail(new Error(`${script} printed no JSON (${(e as Error).message}):\n${stderr.slice(-4000)}`));
      }
    });
    child.stdin.end(JSON.stringify(input));
  });
}

/** Runs the original scripts on `input`; throws with their stderr when the run fails. */
export function runOriginalPrefEval(input: OriginalPrefEvalInput): Promise<OriginalPrefEvalRun> {
  const checkout = input.checkout ?? prefevalOriginalCheckout();
  return runHarness(PREFEVAL_RUNNER, { ...input, ...(checkout ? { checkout } : {}) });
}

/** The original classification (MCQ) task's input (run_original_mcq.py). */
export interface OriginalMcqInput {
  checkout?: string;
  topic: string;
  inter_turns: number;
  task: PrefEvalTask;
  /** The first `limit` records of the topic's MCQ file (and, implicit, of both implicit files). */
  limit: number;
  pref_form?: PrefForm;
  pref_type?: ImplicitPrefType;
  /** Task rag only: a folder holding rag_retrieval/ (or that folder itself). */
  rag_dir?: string;
  /** The original's model name (get_model_info); Bedrock ones only. Default claude3hk. */
  model?: string;
  /** Replaces the reply to a record's final choice call (selfcritic: the revised choice), verbatim, by record index. */
  replies?: { choice?: Record<string, string> };
  keep?: boolean;
}

/** A record of the results file the original classification script wrote: the data set's record with what it added. */
export interface OriginalMcqRecord {
  preference: string;
  question: string;
  /** The options as shown, shuffled (random.seed(41) once, random.sample per record). */
  shuffled_options: string[];
  /** Explicit only: the reply to the preference turn (max_tokens 5 as well). */
  response_to_pref?: string;
  /** "<choice>" + the reply (Claude). */
  response_to_q: string;
  /** The letter extract_choice read, or null (None). */
  choice: string | null;
  /** The letter of the option that follows the preference. */
  correct_idx: string;
  /** selfcritic only: the critique, and the first (zero-shot) answer with its "<choice>". */
  self_critic?: string;
  first_choice?: string;
  [field: string]: unknown;
}

export interface OriginalMcqRun {
  /** The requests in call order (explicit: the preference turn, then the choice; selfcritic: then the critique and the revised choice). */
  requests: OriginalRequest[];
  /** The reply each request got (aligned). */
  replies: string[];
  results: OriginalMcqRecord[];
  results_file: string;
  /** The X of "Overall accuracy: X%" (two decimals). */
  accuracy: number | null;
  written: string[];
  scratch: string;
}

/** Runs the original classification script on `input`; throws with its stderr (e.g. its RAG AssertionError) when it fails. */
export function runOriginalPrefEvalMcq(input: OriginalMcqInput): Promise<OriginalMcqRun> {
  const checkout = input.checkout ?? prefevalOriginalCheckout();
  return runHarness(PREFEVAL_MCQ_RUNNER, { ...input, ...(checkout ? { checkout } : {}) });
}

/** The answer's opening the original's choice requests end with (an assistant message): the reply continues it. */
export const CHOICE_PREFILL = '<choice>';
/** config.yaml's max_mcq_tokens: a choice call's max_tokens (and the explicit preference turn's). */
export const CHOICE_MAX_TOKENS = 5;

/** The stub's letter for a choice call: "ABCD"[int(sha256(utf-8 text)[:8], 16) % 4], text the second-to-last message's content. */
export function scriptedChoiceLetter(text: string): 'A' | 'B' | 'C' | 'D' {
  return 'ABCD'[Number.parseInt(createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 8), 16) % 4] as 'A' | 'B' | 'C' | 'D';
}

/**
 * The text a choice call is keyed by (its second-to-last message, the question with its options or the
 * revision request), or null when the call is no choice call: a choice call has max_tokens 5 and ends
 * with the assistant's "<choice>" (run_original_mcq.py's rule).
 */
export function choiceCallKey(messages: readonly ClaudeMessage[], maxTokens: number | undefined): string | null {
  const last = messages.at(-1);
  if (maxTokens !== CHOICE_MAX_TOKENS || messages.length < 2 || last?.role !== 'assistant' || last.content !== CHOICE_PREFILL) return null;
  return messages.at(-2)!.content;
}

/**
 * The scripted reply to a model (not judge) request, as run_original.py and run_original_mcq.py give
 * it: a choice call gets LETTER + "</choice>" (or `override(key)` when that gives one), every other
 * call scriptedGenerationReply of its last message.
 */
export function scriptedModelReply(messages: readonly ClaudeMessage[], maxTokens: number | undefined, override?: (key: string) => string | undefined): string {
  const key = choiceCallKey(messages, maxTokens);
  if (key === null) return scriptedGenerationReply(messages.at(-1)?.content ?? '');
  return override?.(key) ?? `${scriptedChoiceLetter(key)}</choice>`;
}

/**
 * The scripted reply to a Llama or Mistral InvokeModel body, as run_original_mcq.py (and, for the
 * generation task, run_original.py) gives it: a choice call (the choice token limit, `<choice>` in the
 * prompt) gets the letter of its prompt, Llama's after the `<choice>` it must write itself; every other
 * call scriptedGenerationReply of its prompt.
 */
export function scriptedPromptReply(body: { prompt: string; max_gen_len?: number; max_tokens?: number }): string {
  const llama = body.max_gen_len !== undefined;
  const limit = llama ? body.max_gen_len : body.max_tokens;
  if (limit !== CHOICE_MAX_TOKENS || !body.prompt.includes(CHOICE_PREFILL)) return scriptedGenerationReply(body.prompt);
  return `${llama ? CHOICE_PREFILL : ''}${scriptedChoiceLetter(body.prompt)}</choice>`;
}

/**
 * Writes SYNTHETIC retrieval files (make_rag_fixture.py) for the first `limit` records of a topic under
 * `out`/rag_retrieval; returns the folder to give as rag_dir (`out`) and the files written.
 */
export function makeRagFixture(o: { out: string; topic: string; limit?: number; seed?: string; checkout?: string }): { rag_dir: string; files: string[] } {
  const checkout = o.checkout ?? prefevalOriginalCheckout();
  const args = [PREFEVAL_RAG_FIXTURE, '--out', o.out, '--topic', o.topic];
  if (checkout) args.push('--checkout', checkout);
  if (o.limit !== undefined) args.push('--limit', String(o.limit));
  if (o.seed !== undefined) args.push('--seed', o.seed);
  const r = spawnSync(PREFEVAL_PYTHON, args, { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1' } });
  if (r.status !== 0) throw new Error(`${PREFEVAL_RAG_FIXTURE} exited ${r.status}:\n${r.stderr.slice(-4000)}`);
  return JSON.parse(r.stdout) as { rag_dir: string; files: string[] };
}

/**
 * A scratch PrefEval checkout in `dir`, for plens (prefeval.data) and the harnesses (their checkout) alike:
 * a symlink to each of the checkout's entries (config.yaml, utils, the task folders...) and to each of
 * its dataset files, nothing copied, except that
 * - `ragRetrieval` (a folder in the original's rag_retrieval layout) becomes benchmark_dataset/rag_retrieval;
 * - `implicit` rewrites `topic`'s implicit files (choice-based and persona-driven): it gets their records
 *   and the folder name, and returns the records to write.
 * Returns `dir`.
 */
export function scratchCheckout(
  checkout: string,
  dir: string,
  o: {
    ragRetrieval?: string;
    topic?: string;
    implicit?: (records: Array<Record<string, unknown>>, folder: 'choice-based' | 'persona-driven') => unknown[];
  } = {},
): string {
  const dataset = join(checkout, 'benchmark_dataset');
  mkdirSync(join(dir, 'benchmark_dataset'), { recursive: true });
  for (const entry of readdirSync(checkout)) if (entry !== 'benchmark_dataset') symlinkSync(join(checkout, entry), join(dir, entry));
  for (const entry of readdirSync(dataset)) {
    if (entry === 'rag_retrieval' || (entry === 'implicit_preference' && o.implicit)) continue;
    symlinkSync(join(dataset, entry), join(dir, 'benchmark_dataset', entry));
  }
  if (o.ragRetrieval) symlinkSync(resolve(o.ragRetrieval), join(dir, 'benchmark_dataset', 'rag_retrieval'));
  if (o.implicit) {
    if (!o.topic) throw new Error('scratchCheckout: implicit needs the topic');
    for (const folder of ['choice-based', 'persona-driven'] as const) {
      const from = join(dataset, 'implicit_preference', folder);
      const to = join(dir, 'benchmark_dataset', 'implicit_preference', folder);
      mkdirSync(to, { recursive: true });
      for (const file of readdirSync(from))
        if (file === `${o.topic}.json`) {
          const records = JSON.parse(readFileSync(join(from, file), 'utf8')) as Array<Record<string, unknown>>;
          writeFileSync(join(to, file), JSON.stringify(o.implicit(records, folder), null, 1));
        } else symlinkSync(join(from, file), join(to, file));
    }
  }
  return dir;
}

/** What scratchCheckout's `implicit: rewordImplicit` appends to the implicit files' questions of records 1 and 3 (the release's MCQ and implicit files ask the same). */
export const IMPLICIT_WORDING = ' (as the implicit file words it)';
export const rewordImplicit = (records: Array<Record<string, unknown>>): unknown[] =>
  records.map((r, i) => (i === 1 || i === 3 ? { ...r, question: `${r['question'] as string}${IMPLICIT_WORDING}` } : r));

/**
 * The real retrieval files of the PrefEval release (benchmark_dataset/rag_retrieval; not in the
 * checkout, never copied into this repository), where this machine has them: $PLENS_PREFEVAL_RAG_DIR
 * (a folder holding rag_retrieval/, or that folder), else /tmp/rag/benchmark_dataset. The
 * rag_retrieval folder, or null.
 */
export function realRagRetrieval(): string | null {
  const given = process.env['PLENS_PREFEVAL_RAG_DIR'];
  const candidates = given
    ? [join(given, 'rag_retrieval'), join(given, 'benchmark_dataset', 'rag_retrieval'), given]
    : ['/tmp/rag/benchmark_dataset/rag_retrieval'];
  return candidates.find((d) => existsSync(join(d, 'simcse_explicit_pref'))) ?? null;
}

/** A model or judge request reduced to what the original sets: system, messages (text), temperature, max_tokens. */
export interface SentRequest {
  model: string;
  system: string;
  messages: ClaudeMessage[];
  temperature: number | undefined;
  max_tokens: number | undefined;
}

/** A request as a string, to compare requests as multisets. */
export const sentKey = (r: SentRequest) => JSON.stringify(r);

/** A mock Bedrock (Converse) request as the original's fields, its text blocks joined. */
export function sentOf(r: MockBedrockRequest): SentRequest {
  return {
    model: r.modelId,
    system: (r.body.system ?? []).map((b) => b.text).join(''),
    messages: r.body.messages.map((m) => ({ role: m.role as ClaudeMessage['role'], content: m.content.map((c) => c.text).join('') })),
    temperature: r.body.inferenceConfig?.temperature,
    max_tokens: r.body.inferenceConfig?.maxTokens,
  };
}

/** An InvokeModel request of the original (Claude body) as the same fields. */
export function originalSentOf(q: OriginalRequest): SentRequest {
  return { model: q.modelId, system: q.body.system, messages: q.body.messages, temperature: q.body.temperature, max_tokens: q.body.max_tokens };
}

/** The keys of `want` that `got` lacks, and those of `got` beyond `want`, counted as multisets. */
export function multisetDiff(want: readonly string[], got: readonly string[]): { missing: string[]; extra: string[] } {
  const count = new Map<string, number>();
  for (const k of got) count.set(k, (count.get(k) ?? 0) + 1);
  const missing: string[] = [];
  for (const k of want) {
    const n = count.get(k) ?? 0;
    if (n === 0) missing.push(k);
    else count.set(k, n - 1);
  }
  const extra = [...count.entries()].flatMap(([k, n]) => Array<string>(n).fill(k));
  return { missing, extra };
}

/**
 * The replies the MCQ harness sent instead of the scripted letter (its replies.choice overrides), by the
 * key of the choice call they answered (choiceCallKey): a mock replying so to the same request follows
 * the harness. Throws when one request got two different replies.
 */
export function overridesOf(runs: Iterable<OriginalMcqRun>): Map<string, string> {
  const out = new Map<string, string>();
  for (const run of runs)
    run.requests.forEach((q, i) => {
      const key = choiceCallKey(q.body.messages, q.body.max_tokens);
      const reply = run.replies[i]!;
      if (key === null || reply === `${scriptedChoiceLetter(key)}</choice>`) return;
      if (out.has(key) && out.get(key) !== reply) throw new Error(`two replies to one choice request: ${key.slice(0, 200)}`);
      out.set(key, reply);
    });
  return out;
}

/**
 * A PrefEval pipeline for a differential test, written to `<dir>/<name>.yaml`: its workspace and
 * warehouse in `dir`, the `prefeval:` section's lines as given (each indented two spaces), the call
 * cache off (the original sends every request again: so does plens, to compare them one by one),
 * 4 calls at a time, no report. Returns the file.
 */
export function writeDiffPipeline(dir: string, name: string, section: string[]): string {
  const file = join(dir, `${name}.yaml`);
  const lines = [
    `name: ${name}`,
    `workspace: ${dir}/out`,
    `warehouse: ${dir}/w.duckdb`,
    'benchmark: prefeval',
    'prefeval:',
    ...section.map((l) => `  ${l}`),
    'limits:',
    '  cache: off',
    '  concurrency: 4',
    'report: false',
  ];
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** Runs `plens make warehouse` on a differential test's pipeline in this process; throws with its output unless it exits 0. */
export async function makeDiffWarehouse(file: string, env: Record<string, string>): Promise<void> {
  const r = await runCliInProcess(['make', 'warehouse', '-p', file, '--no-progress'], { env });
  if (r.code !== 0) throw new Error(`plens make exited ${r.code}:\n${r.stderr.slice(-3000)}${r.stdout.slice(-2000)}`);
}
