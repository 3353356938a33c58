import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Database } from '../../../src/db/database.js';
import { isolatedAwsEnv, startMockBedrock, type MockBedrockServer } from '../../helpers/mock-bedrock.js';
import { repoRoot, runCliInProcess } from '../../helpers/cli.js';
import { dialogueTag, scriptedReply, type Plan } from './replies.js';

/**
 * The PersonaLens differential test's moving parts: the original scripts, run unmodified with
 * /usr/bin/python3 and stub boto3 / botocore / diskcache modules (stubs/), and plens, run through
 * its CLI against a local mock Bedrock endpoint, both on the same users and tasks of the released
 * data and the same scripted replies (replies.ts, stubs/plens_replies.py). Every request either
 * side sends is normalised to model, system prompt, messages, temperature and max tokens.
 * Nothing of the original is copied: its code and data are read from ../shared.
 */
export const SHARED = resolve(repoRoot, '..', 'shared');
export const ORIGINAL = join(SHARED, 'personalens-original');
export const RELEASE = join(SHARED, 'personalens');
export const PYTHON = '/usr/bin/python3';
const STUBS = join(import.meta.dirname, 'stubs');

/** One request as either side sent it. */
export interface SentRequest {
  model: string;
  system: string;
  messages: Array<{ role: string; content: string }>;
  temperature: number | undefined;
  max_tokens: number | undefined;
  /** Sent by the original for Llama (0.9, its class default); plens sends it when the spec says `top_p=0.9`. */
  top_p?: number;
}

/** The assistants a run covers, by the original's short names; plens names them `bedrock:<name>`. */
export const ASSISTANTS = ['claude-3-sonnet-v1', 'llama-3-1-70b-instruct-v1', 'mistral-7b-instruct-v2'] as const;
/** What plens's spec adds to send what the original sends: its Llama and Mistral classes' top_p. */
const SPEC_EXTRA: Record<string, string> = { 'llama-3-1-70b-instruct-v1': '&top_p=0.9', 'mistral-7b-instruct-v2': '&top_p=1' };
export const USER_MODEL = 'claude-3-sonnet-v1';
export const JUDGE_MODEL = 'claude-3-5-sonnet-v2';

/** The original's assistant-context flags per plens setting (the settings its scripts can run). */
export const SETTINGS: Record<string, { flags: string[]; tag: string }> = {
  base: { flags: [], tag: '' },
  'base+d': { flags: ['-d'], tag: '_d' },
  'base+i': { flags: ['-p'], tag: '_p' },
  'base+s': { flags: ['-si'], tag: '_s' },
  'base+all': { flags: ['-d', '-p', '-si'], tag: '_d_p_s' },
};

/** The judge runs of evaluate_dialogue.py: dimension (as plens names the call) -> its flags. */
export const JUDGE_RUNS: Record<string, string[]> = {
  'naturalness.user': ['-d', 'naturalness'],
  'naturalness.assistant': ['-d', 'naturalness', '-a'],
  'coherence.user': ['-d', 'coherence'],
  'coherence.assistant': ['-d', 'coherence', '-a'],
  task_completion: ['-d', 'task_completion'],
  personalization: ['-d', 'personalization'],
};

export interface Inputs {
  dir: string;
  users: number[];
  plans: Plan[];
  /** Selected task ids per user, SD then MD. */
  tasks: Record<number, string[]>;
}

type TaskFile = Record<string, { task_id: string; 'User Intent': string }>;

/**
 * A data folder in the released layout holding `users`' profiles and, of their tasks, the SD and
 * MD ones at the given positions (the original runs every task of a user's task files, so the
 * selection is made in the files). Task definitions and the schema are linked from the release.
 * The first user's tasks get the plans that reach every ending: the round limit, a reply that is
 * only the marker, the marker inside a word, the marker after text with odd whitespace.
 */
export function buildInputs(dir: string, users: number[], sdPositions: number[], mdPositions: number[]): Inputs {
  mkdirSync(join(dir, 'data', 'profile'), { recursive: true });
  mkdirSync(join(dir, 'res'), { recursive: true });
  symlinkSync(join(RELEASE, 'data', 'task'), join(dir, 'data', 'task'));
  symlinkSync(join(RELEASE, 'res', 'schema.json'), join(dir, 'res', 'schema.json'));
  const plans: Plan[] = [];
  const kinds: Array<Omit<Plan, 'intent'>> = [
    { kind: 'limit', at: 0 },
    { kind: 'terminate-only', at: 1 },
    { kind: 'terminate', at: 2 },
    { kind: 'in-word', at: 3 },
    { kind: 'terminate', at: 1 },
  ];
  const tasks: Record<number, string[]> = {};
  for (const user of users) {
    const from = join(RELEASE, 'data', 'profile', `user${user}`);
    const to = join(dir, 'data', 'profile', `user${user}`);
    mkdirSync(to, { recursive: true });
    writeFileSync(join(to, 'profile.json'), readFileSync(join(from, 'profile.json')));
    tasks[user] = [];
    for (const [file, positions] of [
      ['tasks.json', sdPositions],
      ['tasks_md.json', mdPositions],
    ] as const) {
      const all = JSON.parse(readFileSync(join(from, file), 'utf8')) as TaskFile;
      const keys = Object.keys(all);
      const kept = Object.fromEntries([...new Set(positions.map((p) => keys[p % keys.length]!))].map((k) => [k, all[k]!]));
      writeFileSync(join(to, file), JSON.stringify(kept, null, 4));
      for (const t of Object.values(kept)) {
        tasks[user]!.push(t.task_id);
        const intent = t['User Intent'];
        // The limit plan goes to an SD task (41 calls a setting), not to an MD one (61).
        const next = kinds[plans.length];
        if (next && !plans.some((p) => p.intent === intent) && !(next.kind === 'limit' && file === 'tasks_md.json')) plans.push({ intent, ...next });
      }
    }
  }
  writeFileSync(join(dir, 'plans.json'), JSON.stringify({ plans }));
  return { dir, users, plans, tasks };
}

/** Runs the original's module with the stubs; resolves with what it printed. */
function python(cwd: string, args: string[], log: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(PYTHON, args, {
      cwd,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        PYTHONPATH: STUBS,
        PYTHONDONTWRITEBYTECODE: '1',
        PYTHONHASHSEED: '0',
        PLENS_DIFF_PLANS: join(cwd, 'plans.json'),
        PLENS_DIFF_LOG: log,
        DATA_DIR: join(cwd, 'caches-unused'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => void (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(stdout) : fail(new Error(`${PYTHON} ${args.join(' ')} exited ${code}:\n${stderr.slice(-3000)}`))));
  });
}

function readLog(file: string): SentRequest[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SentRequest);
}

/** Runs `tasks` (promise factories) at most `n` at a time. */
async function limited<T>(n: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

export interface OriginalRun {
  /** `<assistant>/<setting>` -> the requests of the SD and the MD script, in the order sent. */
  dialogues: Map<string, SentRequest[]>;
  /** Judge dimension -> every request of its evaluate_dialogue.py runs (all cells, SD and MD). */
  judge: Map<string, SentRequest[]>;
  /** `<assistant>/<setting>/<SD|MD>/<dimension>` -> what gather_evaluation.py printed of the judge's files. */
  gather: Map<string, Gathered>;
}

/** What gather_evaluation.py prints of one cell and dimension: the files it read, and its figure. */
export interface Gathered {
  files: number;
  /** Task completion: the rate in percent; a score: the mean of the scores it read (0 when none). */
  average: number;
  /** A score's range (0 - 0 when none); absent for task completion. */
  min?: number;
  max?: number;
}

/**
 * gather_evaluation.py's runs: dimension (as plens names it) -> its flags. It reads a task
 * completion judge's files from a folder named claude-3-sonnet-v1 whatever judge wrote them
 * (the script fixes the name); runOriginalGather links that folder to the judge's.
 */
export const GATHER_RUNS: Record<string, string[]> = {
  task_completion: ['-d', 'task_completion'],
  personalization: ['-d', 'personalization'],
  'naturalness.user': ['-d', 'naturalness', '-f', '_user'],
  'naturalness.assistant': ['-d', 'naturalness', '-f', '_asst'],
  'coherence.user': ['-d', 'coherence', '-f', '_user'],
  'coherence.assistant': ['-d', 'coherence', '-f', '_asst'],
};
const GATHER_TC_JUDGE = 'claude-3-sonnet-v1';

/** Runs the original's dialogue scripts for every assistant and setting, then its judge on every dialogue they wrote. */
export async function runOriginal(inputs: Inputs): Promise<OriginalRun> {
  const cwd = inputs.dir;
  for (const [name, target] of [
    ['src', join(ORIGINAL, 'src')],
    ['util', join(ORIGINAL, 'util')],
  ]) {
    if (!existsSync(join(cwd, name))) symlinkSync(target!, join(cwd, name));
  }
  const logs = join(cwd, 'logs');
  mkdirSync(logs, { recursive: true });
  const users = inputs.users.map(String);
  const jobs: Array<() => Promise<void>> = [];
  for (const assistant of ASSISTANTS) {
    for (const [setting, { flags }] of Object.entries(SETTINGS)) {
      for (const script of ['src.generate_dialogue', 'src.generate_dialogue_md']) {
        const log = join(logs, `dialogues-${assistant}-${setting}.jsonl`);
        // One script at a time per log: SD then MD append in order.
        jobs.push(async () => {
          await python(cwd, ['-m', script, '--sample_idxs', ...users, '-u', USER_MODEL, '-m', assistant, ...flags], log);
        });
      }
    }
  }
  // SD and MD of one cell write one log: run the pairs in sequence, the cells side by side.
  const pairs = Array.from({ length: jobs.length / 2 }, (_, i) => async () => {
    await jobs[2 * i]!();
    await jobs[2 * i + 1]!();
  });
  await limited(4, pairs);
  const dialogues = new Map<string, SentRequest[]>();
  for (const assistant of ASSISTANTS)
    for (const setting of Object.keys(SETTINGS)) dialogues.set(`${assistant}/${setting}`, readLog(join(logs, `dialogues-${assistant}-${setting}.jsonl`)));
  const judge = await runOriginalJudge(inputs);
  return { dialogues, judge, gather: await runOriginalGather(inputs) };
}

/** gather_evaluation.py, unmodified, over the judge's files of every cell, dimension and kind. */
async function runOriginalGather(inputs: Inputs): Promise<Map<string, Gathered>> {
  const cwd = inputs.dir;
  const logs = join(cwd, 'logs');
  const cells = ASSISTANTS.flatMap((assistant) => Object.entries(SETTINGS).map(([setting, { tag }]) => ({ assistant, setting, folder: `${assistant}${tag}` })));
  const links: string[] = [];
  for (const user of inputs.users)
    for (const { folder } of cells) {
      const tc = join(cwd, 'output', 'evaluation', `user${user}`, folder, 'task_completion');
      if (existsSync(join(tc, JUDGE_MODEL)) && !existsSync(join(tc, GATHER_TC_JUDGE))) {
        symlinkSync(JUDGE_MODEL, join(tc, GATHER_TC_JUDGE));
        links.push(join(tc, GATHER_TC_JUDGE));
      }
    }
  const range = ['-s', String(Math.min(...inputs.users)), '-e', String(Math.max(...inputs.users))];
  const out = new Map<string, Gathered>();
  const jobs = cells.flatMap(({ assistant, setting, folder }) =>
    Object.entries(GATHER_RUNS).flatMap(([dimension, flags]) =>
      ['SD', 'MD'].map((kind) => async () => {
        const printed = await python(
          cwd,
          ['-m', 'util.gather_evaluation', ...range, '-m', folder, ...flags, ...(kind === 'MD' ? ['-md'] : [])],
          join(logs, 'gather.jsonl'),
        );
        out.set(`${assistant}/${setting}/${kind}/${dimension}`, readGathered(printed, dimension));
      }),
    ),
  );
  await limited(4, jobs);
  // The output folder is left as the scripts wrote it (import-legacy reads it next).
  for (const link of links) unlinkSync(link);
  return out;
}

/** The figures of gather_evaluation.py's printout (its overall lines; the per-domain ones follow them). */
function readGathered(printed: string, dimension: string): Gathered {
  const number = (re: RegExp) => {
    const m = re.exec(printed);
    if (!m) throw new Error(`gather_evaluation.py printed no ${re.source}:\n${printed.slice(0, 2000)}`);
    return Number(m[1]);
  };
  const files = number(/Analyzed (\d+) files/);
  if (dimension === 'task_completion') return { files, average: number(/Average Task Completion Rate: ([\d.]+)%/) };
  return {
    files,
    average: number(new RegExp(`Average ${dimension.split('.')[0]} rating: ([\\d.]+)`)),
    min: number(/Range: (-?\d+) - /),
    max: number(/Range: -?\d+ - (-?\d+)/),
  };
}

async function runOriginalJudge(inputs: Inputs): Promise<Map<string, SentRequest[]>> {
  const cwd = inputs.dir;
  const logs = join(cwd, 'logs');
  const jobs: Array<() => Promise<void>> = [];
  const files = new Map<string, string[]>();
  for (const assistant of ASSISTANTS) {
    for (const { tag } of Object.values(SETTINGS)) {
      for (const [dimension, flags] of Object.entries(JUDGE_RUNS)) {
        for (const md of [false, true]) {
          const log = join(logs, `judge-${dimension}-${assistant}${tag}-${md ? 'md' : 'sd'}.jsonl`);
          files.set(dimension, [...(files.get(dimension) ?? []), log]);
          // evaluate_dialogue.py has no --sample_idxs: one run per user, as --start_index N --end_index N.
          jobs.push(async () => {
            for (const user of inputs.users) {
              await python(
                cwd,
                [
                  '-m',
                  'src.evaluate_dialogue',
                  '-s',
                  String(user),
                  '-e',
                  String(user),
                  '-m',
                  `${assistant}${tag}`,
                  '-i',
                  JUDGE_MODEL,
                  ...flags,
                  ...(md ? ['-md'] : []),
                ],
                log,
              );
            }
          });
        }
      }
    }
  }
  await limited(4, jobs);
  return new Map([...files].map(([dimension, logsOf]) => [dimension, logsOf.flatMap(readLog)]));
}

export interface PlensRun {
  dialogues: Map<string, SentRequest[]>;
  /** Every judge request, with the dimension plens sent it for. */
  judge: Map<string, SentRequest[]>;
  /** The warehouse's `original_scoring` (the gather script's reading), keyed as OriginalRun's gather. */
  scoring: Map<string, OriginalScoring>;
  /** The warehouse built from the run. */
  db: string;
  server: MockBedrockServer;
}

/** One row of the warehouse's original_scoring view, with the range of the scores it read. */
export interface OriginalScoring {
  replies: number;
  read: number;
  mean: number | null;
  min: number | null;
  max: number | null;
  /** Task completion: the script's rate as Table 4 reports it beside plens's (and Table 3, for the base setting). */
  table4?: number | null;
  table3?: number | null;
}

const CREDS = { accessKeyId: 'AKIAPLENSDIFFTEST001', secretAccessKey: 'plensDiffSecret/abcdefghijklmnopqrstuvwxyz0123' };
const AWS_ENV = isolatedAwsEnv(CREDS, 'us-east-1');

function fromConverse(r: MockBedrockServer['requests'][number]): SentRequest {
  // A completion prompt (Mistral's) is compared as sent: the whole prompt as the one message.
  if (r.invoke)
    return {
      model: r.modelId,
      system: '',
      messages: [{ role: 'user', content: r.invoke.prompt }],
      temperature: r.invoke.temperature,
      max_tokens: r.invoke.max_tokens ?? r.invoke.max_gen_len,
      ...(r.invoke.top_p !== undefined ? { top_p: r.invoke.top_p } : {}),
    };
  return {
    model: r.modelId,
    system: (r.body.system ?? []).map((b) => b.text).join(''),
    messages: r.body.messages.map((m) => ({ role: m.role, content: m.content.map((c) => c.text).join('') })),
    temperature: r.body.inferenceConfig?.temperature,
    max_tokens: r.body.inferenceConfig?.maxTokens,
    ...(r.body.inferenceConfig?.topP !== undefined ? { top_p: r.body.inferenceConfig.topP } : {}),
  };
}

async function cli(args: string[]): Promise<void> {
  const r = await runCliInProcess(args, { env: AWS_ENV });
  if (r.code !== 0) throw new Error(`plens ${args.join(' ')} exited ${r.code}:\n${r.stderr.slice(-3000)}`);
}

/**
 * plens on the same inputs: import, scenarios for the users, the original's prompts imported from
 * ../shared, then one dialogues run per assistant and setting (the call cache off: the original
 * sends every opening again) and one judge run over all of them.
 */
export async function runPlens(inputs: Inputs, workDir: string): Promise<PlensRun> {
  const server = await startMockBedrock({
    credentials: CREDS,
    reply: (r) => {
      const q = fromConverse(r);
      return scriptedReply(inputs.plans, q.system, q.messages.at(-1)?.content ?? '');
    },
  });
  const ws = join(workDir, 'ws');
  const prompts = join(workDir, 'original-prompts');
  const spec = (m: string) => `bedrock:${m}?base_url=${server.url}`;
  await cli(['import', '--from', join(inputs.dir, 'data'), '-w', ws, '--no-progress', '-q']);
  await cli(['scenarios', '-w', ws, '--users', inputs.users.join(','), '--kind', 'all', '-q']);
  await cli(['prompts', 'import-original', ORIGINAL, '--out', prompts, '-q']);
  const dialogues = new Map<string, SentRequest[]>();
  for (const assistant of ASSISTANTS) {
    for (const setting of Object.keys(SETTINGS)) {
      const before = server.requests.length;
      await cli([
        'dialogues',
        '-w',
        ws,
        '--assistant',
        spec(assistant) + (SPEC_EXTRA[assistant] ?? ''),
        '--user',
        spec(USER_MODEL),
        '--setting',
        setting,
        '--prompts',
        prompts,
        '--cache',
        'off',
        '--no-progress',
        '-q',
      ]);
      dialogues.set(`${assistant}/${setting}`, server.requests.slice(before).map(fromConverse));
    }
  }
  const judge = new Map<string, SentRequest[]>();
  for (const dimension of ['task_completion', 'personalization', 'naturalness', 'coherence']) {
    const before = server.requests.length;
    await cli(['judge', '-w', ws, '--judge', spec(JUDGE_MODEL), '--dimensions', dimension, '--prompts', prompts, '--cache', 'off', '--no-progress', '-q']);
    for (const r of server.requests.slice(before).map(fromConverse)) {
      // Naturalness and coherence are judged per speaker: the template says which.
      const who = dimension === 'naturalness' || dimension === 'coherence' ? `.${speakerOf(r, prompts, dimension)}` : '';
      judge.set(`${dimension}${who}`, [...(judge.get(`${dimension}${who}`) ?? []), r]);
    }
  }
  const db = join(workDir, 'w.duckdb');
  return { dialogues, judge, scoring: await readScoring(ws, db), db, server };
}

/** An assistant as ASSISTANTS names it, from the model a warehouse records (its spec). */
const assistantOf = (model: string): string => ASSISTANTS.find((a) => model.includes(a)) ?? model;

/** A judgment's dimension as the gather runs and judge requests name it: naturalness and coherence with their speaker. */
const judgedAs = (dimension: string, target: string | null): string =>
  dimension === 'naturalness' || dimension === 'coherence' ? `${dimension}.${target}` : dimension;

/** Builds the warehouse of plens's run and reads `original_scoring`, each row keyed as the gather runs are. */
async function readScoring(ws: string, db: string): Promise<Map<string, OriginalScoring>> {
  await cli(['warehouse', '-w', ws, '--db', db, '-q']);
  const d = await Database.open(db, { readOnly: true });
  try {
    const rows = await d.all<{ assistant_model: string; setting: string; kind: string; dimension: string; target: string | null } & OriginalScoring>(
      `SELECT s.assistant_model, s.setting, s.kind, s.dimension, s.target, s.n_replies::INT AS replies, s.n_original::INT AS read, s.original_mean AS mean,
         r.min, r.max
       FROM original_scoring s
       JOIN (SELECT assistant_model, setting, kind, dimension, target, min(original_score) AS min, max(original_score) AS max
             FROM judgment_configs WHERE turn IS NULL GROUP BY ALL) r USING (assistant_model, setting, kind, dimension, target)`,
    );
    const out = new Map<string, OriginalScoring>();
    for (const r of rows) {
      out.set(`${assistantOf(r.assistant_model)}/${r.setting}/${r.kind}/${judgedAs(r.dimension, r.target)}`, {
        replies: r.replies,
        read: r.read,
        mean: r.mean,
        min: r.min,
        max: r.max,
      });
    }
    const table4 = await d.all<{ assistant_model: string; setting: string; sd: number | null; md: number | null }>(
      'SELECT assistant_model, setting, sd_tcr_original AS sd, md_tcr_original AS md FROM table4',
    );
    for (const r of table4)
      for (const kind of ['SD', 'MD'] as const) {
        const row = out.get(`${assistantOf(r.assistant_model)}/${r.setting}/${kind}/task_completion`);
        if (row) row.table4 = kind === 'SD' ? r.sd : r.md;
      }
    for (const r of await d.all<{ assistant_model: string; kind: string; tcr: number | null }>(
      'SELECT assistant_model, kind, tcr_original AS tcr FROM table3',
    )) {
      const row = out.get(`${assistantOf(r.assistant_model)}/base/${r.kind}/task_completion`);
      if (row) row.table3 = r.tcr;
    }
    return out;
  } finally {
    await d.close();
  }
}

/** A dialogue and its dialogue-level judgments as a warehouse holds them, keyed by assistant, setting and scenario. */
export interface StoredDialogue {
  status: string;
  endReason: string | null;
  messages: Array<{ role: string; content: string }>;
  /** `<dimension>[.<target>]` -> [status, score, original_score]. */
  judgments: Record<string, [string, number | null, number | null]>;
}

/** Every dialogue of a warehouse with its judgments (`<assistant>/<setting>/<scenario id>` keys). */
export async function storedDialogues(dbFile: string): Promise<Map<string, StoredDialogue>> {
  const d = await Database.open(dbFile, { readOnly: true });
  try {
    const dialogues = await d.all<{
      dialogue_id: string;
      assistant_model: string;
      setting: string;
      scenario_id: string;
      status: string;
      end_reason: string | null;
      messages: string;
    }>(
      'SELECT dialogue_id, assistant_model, setting, scenario_id, status, end_reason, to_json([{role: m.role, content: m.content} FOR m IN messages])::VARCHAR AS messages FROM dialogues',
    );
    const judgments = await d.all<{
      dialogue_id: string;
      dimension: string;
      target: string | null;
      status: string;
      score: number | null;
      original_score: number | null;
    }>('SELECT dialogue_id, dimension, target, status, score, original_score FROM judgments WHERE turn IS NULL');
    const byId = new Map<string, StoredDialogue>();
    const out = new Map<string, StoredDialogue>();
    for (const r of dialogues) {
      const entry: StoredDialogue = { status: r.status, endReason: r.end_reason, messages: JSON.parse(r.messages), judgments: {} };
      byId.set(r.dialogue_id, entry);
      out.set(`${assistantOf(r.assistant_model)}/${r.setting}/${r.scenario_id}`, entry);
    }
    for (const j of judgments) {
      const entry = byId.get(j.dialogue_id);
      if (entry) entry.judgments[judgedAs(j.dimension, j.target)] = [j.status, j.score, j.original_score];
    }
    return out;
  } finally {
    await d.close();
  }
}

/**
 * The original's own output folder (dialogue/ and evaluation/, as its scripts wrote them) imported
 * with `plens import-legacy` into a workspace of its own, on the same data and scenarios; returns
 * the warehouse built from it.
 */
export async function importOriginalOutput(inputs: Inputs, workDir: string): Promise<string> {
  const ws = join(workDir, 'ws');
  const db = join(workDir, 'w.duckdb');
  await cli(['import', '--from', join(inputs.dir, 'data'), '-w', ws, '--no-progress', '-q']);
  await cli(['scenarios', '-w', ws, '--users', inputs.users.join(','), '--kind', 'all', '-q']);
  await cli(['import-legacy', join(inputs.dir, 'output'), '-w', ws, '--user-model', `bedrock:${USER_MODEL}`, '-q']);
  await cli(['warehouse', '-w', ws, '--db', db, '-q']);
  return db;
}

/** Which speaker a naturalness or coherence request judges: the imported template whose fixed text it starts with. */
function speakerOf(r: SentRequest, prompts: string, dimension: string): string {
  const text = r.messages[0]?.content ?? '';
  for (const who of ['user', 'assistant']) {
    const template = readFileSync(join(prompts, `judge-${dimension}.${who}.pyfmt`), 'utf8');
    const head = template.slice(0, template.indexOf('{'));
    if (text.startsWith(head.replaceAll('{{', '{').replaceAll('}}', '}'))) return who;
  }
  return 'unknown';
}

/** A request's dialogue: the tag the scripted opening carries into every later request. */
export function groupByDialogue(requests: SentRequest[]): Map<string, SentRequest[]> {
  const out = new Map<string, SentRequest[]>();
  for (const r of requests) {
    const tag = dialogueTag(r.system, r.messages.at(-1)?.content ?? '') ?? 'untagged';
    out.set(tag, [...(out.get(tag) ?? []), r]);
  }
  return out;
}

/** The fields compared, in a fixed order. */
export function canonical(r: SentRequest): string {
  return JSON.stringify([r.model, r.system, r.messages, r.temperature, r.max_tokens, r.top_p ?? null]);
}

export const hashOf = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

/** Where two texts first differ, with a little context on each side (for failure messages). */
export function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 60), i + 60));
  return `at character ${i}: original ${show(a)} vs plens ${show(b)}`;
}
