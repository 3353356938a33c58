import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runCliJson, tempDir } from '../helpers/cli.js';

// Users 0 and 1 have 3 + 3 MD scenarios (data/sample/README.md): a grid small enough to run in seconds.
const SCENARIOS = 6;
// task_completion (1 judgment per dialogue) + naturalness (user and assistant: 2).
const JUDGMENTS_PER_DIALOGUE = 3;

interface Step {
  step: string;
  status: string;
  work: number;
  elapsed_ms: number;
  cells?: Array<{
    id: string;
    assistant: string;
    setting: string;
    status: string;
    work: { done: number; pending: number; failed: number; estimate: { calls: number; costUsd: number } };
    new?: { ok: number; failed: number };
  }>;
  estimate?: { calls: number; inputTokens: number; outputTokens: number; costUsd: number };
}
interface MakeJson {
  ok: boolean;
  elapsed_ms: number;
  work: number;
  up_to_date: boolean;
  failed: string[];
  steps: Step[];
  error?: { code: string; message: string; file?: string; line?: number; pointer?: string };
}
interface Work {
  done: number;
  pending: number | null;
  failed: number;
  failure_reasons: Array<{ reason: string; count: number }>;
  spent: { calls: number; cached_calls: number; input_tokens: number; output_tokens: number; cost_usd: number };
}
interface StatusJson {
  stages: Record<string, string>;
  scenarios: number;
  cells: Array<{ assistant: string; setting: string; dialogues: Work; judge: Work | null }>;
  totals: { dialogues: Work; judge: Work };
}

const SIM_A = 'sim:default?price_in=1&price_out=2';
const SIM_B = 'sim:default?temperature=0.2&price_in=1&price_out=2';

/** A pipeline in its own folder; its workspace and warehouse live there too. */
function pipeline(body: { assistants?: string[]; extra?: string; name?: string } = {}): { file: string; dir: string } {
  const dir = tempDir('plens-make-');
  const assistants = body.assistants ?? [SIM_A, SIM_B];
  const file = join(dir, 'pipeline.yaml');
  writeFileSync(
    file,
    `name: ${body.name ?? 'test'}
workspace: ${dir}/out
warehouse: ${dir}/w.duckdb
data:
  from: sample
scenarios:
  kind: md
  users: "0-1"
dialogues:
  user: sim:default
  assistants:
${assistants.map((a) => `    - "${a}"`).join('\n')}
  settings: [base, base+all]
judge:
  model: "sim:default?price_in=3&price_out=15"
  dimensions: [task_completion, naturalness]
limits:
  cells: 2
  concurrency: 4
  retries: 0
  retry_delay_ms: 1
  retry_window_s: 1
  connect_timeout_s: 1
  call_timeout_s: 2
statistics:
  lexical: []
report: false
${body.extra ?? ''}`,
  );
  return { file, dir };
}

const step = (r: MakeJson, name: string) => r.steps.find((s) => s.step === name)!;

describe('plens make', () => {
  it('--dry-run plans every stage and cell with calls and cost, and writes nothing', async () => {
    const { file, dir } = pipeline();
    const r = await runCliJson<MakeJson>(['make', 'all', '-p', file, '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(step(r.json, 'import').status).toBe('would-run');
    expect(step(r.json, 'scenarios').status).toBe('would-run');
    const dialogues = step(r.json, 'dialogues');
    expect(dialogues.work).toBe(4 * SCENARIOS);
    expect(dialogues.cells).toHaveLength(4);
    for (const c of dialogues.cells!) {
      expect(c.work).toMatchObject({ done: 0, pending: SCENARIOS, failed: 0 });
      expect(c.work.estimate.calls).toBeGreaterThan(0);
      expect(c.work.estimate.costUsd).toBeGreaterThan(0);
    }
    expect(step(r.json, 'judge').work).toBe(4 * SCENARIOS * JUDGMENTS_PER_DIALOGUE);
    expect(step(r.json, 'judge').estimate!.costUsd).toBeGreaterThan(0);
    expect(['warehouse', 'tables'].map((s) => step(r.json, s).status)).toEqual(['would-run', 'would-run']);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expect(existsSync(join(dir, 'w.duckdb'))).toBe(false);

    const text = await runCli(['make', '-p', file, '--dry-run']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/dialogues +4 cell\(s\): 24 left/);
    expect(text.stdout).toContain('Nothing was run');
  });

  it("--dry-run prices a judge with batch: true at the batch price (half of OpenAI's online price)", async () => {
    const cost = async (batch: boolean) => {
      const { file } = pipeline();
      const judge = `  model: "openai:judge?price_in=3&price_out=15"${batch ? '\n  batch: true' : ''}`;
      writeFileSync(file, readFileSync(file, 'utf8').replace('  model: "sim:default?price_in=3&price_out=15"', judge));
      const r = await runCliJson<MakeJson>(['make', 'all', '-p', file, '--dry-run'], { env: { OPENAI_API_KEY: '' } });
      expect(r.code, r.stderr).toBe(0);
      return step(r.json, 'judge').estimate!.costUsd;
    };
    const online = await cost(false);
    expect(online).toBeGreaterThan(0);
    expect(await cost(true)).toBeCloseTo(online * 0.5, 9);
  });

  it('makes everything, does nothing on a rerun, and reruns only the cells of an assistant whose parameter changed', async () => {
    const { file, dir } = pipeline();
    const first = await runCliJson<MakeJson>(['make', 'all', '-p', file]);
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(step(first.json, 'dialogues').work).toBe(4 * SCENARIOS);
    expect(step(first.json, 'judge').work).toBe(4 * SCENARIOS * JUDGMENTS_PER_DIALOGUE);
    expect(first.json.steps.map((s) => s.status)).toEqual(['ran', 'ran', 'ran', 'ran', 'ran', 'ran']);
    // Each step's wall time, within the run's.
    const took = first.json.steps.map((s) => s.elapsed_ms);
    expect(took.every((ms) => Number.isInteger(ms) && ms >= 0)).toBe(true);
    expect(took.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(first.json.elapsed_ms);
    expect(existsSync(join(dir, 'out', 'tables', 'table3.md'))).toBe(true);

    const again = await runCli(['make', 'all', '-p', file]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to do: every target is up to date');
    const againJson = await runCliJson<MakeJson>(['make', '-p', file]);
    expect(againJson.json).toMatchObject({ up_to_date: true, work: 0 });
    expect(againJson.json.steps.every((s) => s.status === 'up-to-date')).toBe(true);

    // Table 10's laps speaker groups come from statistics.laps_speakers: a change rebuilds the warehouse with those rows.
    writeFileSync(file, readFileSync(file, 'utf8').replace('  lexical: []\n', '  lexical: [laps]\n  laps_speakers: [user]\n'));
    const lexical = await runCliJson<MakeJson>(['make', 'warehouse', '-p', file]);
    expect(lexical.code, lexical.stderr).toBe(0);
    expect(step(lexical.json, 'warehouse').status).toBe('ran');
    const table10 = await runCliJson<Array<{ speakers: string; protocol: string }>>([
      'sql',
      '--db',
      join(dir, 'w.duckdb'),
      'select distinct speakers, protocol from table10 order by all',
    ]);
    expect(table10.json).toEqual([{ speakers: 'user', protocol: 'laps' }]);
    expect((await runCliJson<MakeJson>(['make', 'warehouse', '-p', file])).json.up_to_date).toBe(true);

    // One parameter of one assistant: new keys for its two cells only; the judge judges just those.
    writeFileSync(file, readFileSync(file, 'utf8').replace('temperature=0.2', 'temperature=0.7'));
    const plan = await runCliJson<MakeJson>(['make', '-p', file, '--dry-run']);
    expect(step(plan.json, 'dialogues').work).toBe(2 * SCENARIOS);
    const changed = await runCliJson<MakeJson>(['make', '-p', file]);
    expect(changed.code, changed.stderr).toBe(0);
    expect(['import', 'scenarios'].map((s) => step(changed.json, s).status)).toEqual(['up-to-date', 'up-to-date']);
    const cells = step(changed.json, 'dialogues').cells!;
    for (const c of cells) {
      if (c.assistant.includes('temperature=0.7')) expect(c).toMatchObject({ status: 'ran', new: { ok: SCENARIOS, failed: 0 } });
      else expect(c.status).toBe('up-to-date');
    }
    expect(step(changed.json, 'dialogues').work).toBe(2 * SCENARIOS);
    expect(step(changed.json, 'judge').work).toBe(2 * SCENARIOS * JUDGMENTS_PER_DIALOGUE);
    expect(['warehouse', 'tables'].map((s) => step(changed.json, s).status)).toEqual(['ran', 'ran']);

    // status: per cell and in total, what the runs did and what they cost, as the warehouse records it.
    const status = await runCliJson<StatusJson>(['status', '-p', file]);
    expect(status.code).toBe(0);
    expect(status.json.stages).toMatchObject({ import: 'done', scenarios: 'done', warehouse: 'done', tables: 'done', report: 'off' });
    expect(status.json.scenarios).toBe(SCENARIOS);
    expect(status.json.cells).toHaveLength(4);
    for (const c of status.json.cells) {
      expect(c.dialogues).toMatchObject({ done: SCENARIOS, pending: 0, failed: 0 });
      expect(c.judge).toMatchObject({ done: SCENARIOS * JUDGMENTS_PER_DIALOGUE, pending: 0, failed: 0 });
      expect(c.dialogues.spent.calls).toBeGreaterThan(0);
    }
    // The pipeline's cells now: SIM_A (temperature 0) and SIM_B at 0.7; the 0.2 cells are no longer in it.
    const sql = await runCliJson<Array<{ stage: string; calls: number; cost: number; tokens: number }>>([
      'sql',
      '--db',
      join(dir, 'w.duckdb'),
      `with d as (select dialogue_id from dialogues where assistant_temperature <> 0.2),
            j as (select judgment_id from judgments where dialogue_id in (select dialogue_id from d))
       select stage, count(*)::int as calls, sum(cost_usd) as cost, (sum(input_tokens + output_tokens) filter (not cached))::int as tokens
       from llm_calls where (stage = 'dialogues' and work_key in (select dialogue_id from d)) or (stage = 'judge' and work_key in (select judgment_id from j))
       group by 1 order by 1`,
    ]);
    expect(sql.code, sql.stderr).toBe(0);
    const rows = Object.fromEntries(sql.json.map((x) => [x.stage, x]));
    const t = status.json.totals;
    expect(t.dialogues.spent.calls).toBe(rows['dialogues']!.calls);
    expect(t.dialogues.spent.input_tokens + t.dialogues.spent.output_tokens).toBe(rows['dialogues']!.tokens);
    expect(t.dialogues.spent.cost_usd).toBeCloseTo(rows['dialogues']!.cost, 9);
    expect(t.judge.spent.calls).toBe(rows['judge']!.calls);
    expect(t.judge.spent.cost_usd).toBeCloseTo(rows['judge']!.cost, 9);
    expect(t.judge.spent.cost_usd).toBeGreaterThan(0);
  });

  it('--keep-going finishes the other cells past a failing one; without it make stops before the judge', async () => {
    // A closed local port: every call of that assistant fails at once, and nothing leaves 127.0.0.1.
    const broken = 'openai:broken?base_url=http://127.0.0.1:9/v1';
    const { file } = pipeline({ assistants: [SIM_A, broken] });
    const stopped = await runCliJson<MakeJson>(['make', '-p', file]);
    expect(stopped.code).toBe(1);
    expect(stopped.json.ok).toBe(false);
    expect(stopped.json.failed).toEqual(['dialogues']);
    expect(['judge', 'warehouse', 'tables'].map((s) => step(stopped.json, s).status)).toEqual(['not-run', 'not-run', 'not-run']);

    const going = await runCliJson<MakeJson>(['make', '-p', file, '--keep-going']);
    expect(going.code).toBe(1);
    const cells = step(going.json, 'dialogues').cells!;
    expect(cells.filter((c) => c.status === 'failed').map((c) => c.assistant)).toEqual([broken, broken]);
    expect(cells.filter((c) => c.assistant === SIM_A).every((c) => c.work.done + (c.new?.ok ?? 0) === SCENARIOS)).toBe(true);
    expect(['judge', 'warehouse', 'tables'].map((s) => step(going.json, s).status)).toEqual(['ran', 'ran', 'ran']);
    expect(step(going.json, 'judge').work).toBe(2 * SCENARIOS * JUDGMENTS_PER_DIALOGUE);

    const status = await runCliJson<StatusJson>(['status', '-p', file]);
    for (const c of status.json.cells) {
      if (c.assistant === broken) {
        expect(c.dialogues).toMatchObject({ done: 0, pending: 0, failed: SCENARIOS });
        expect(c.dialogues.failure_reasons[0]!.count).toBe(SCENARIOS);
        expect(c.dialogues.spent.cost_usd).toBe(0);
      } else {
        expect(c.dialogues).toMatchObject({ done: SCENARIOS, pending: 0, failed: 0 });
      }
    }
    const text = await runCli(['status', '-p', file]);
    expect(text.stdout).toMatch(new RegExp(`base \\| ${broken.replace(/[?.]/g, '\\$&')}: 0 done, 0 pending, 6 failed \\(\\w+ x6\\)`));
  });

  it('a pipeline that breaks the schema is an error naming the file, the line and the JSON pointer', async () => {
    const { file } = pipeline({ extra: 'tables:\n  formats: [md]\n  colour: blue\n' });
    const r = await runCliJson<MakeJson>(['make', '-p', file, '--dry-run']);
    expect(r.code).toBe(3);
    expect(r.json.error).toMatchObject({ code: 'E_INPUT_SCHEMA', file, pointer: '/tables/colour' });
    expect(r.json.error!.message).toContain('unexpected field "colour"');
    const text = await runCli(['status', '-p', file]);
    expect(text.code).toBe(3);
    expect(text.stderr).toMatch(new RegExp(`${file}:\\d+:\\d+ /tables/colour`));
    const line = Number(/pipeline\.yaml:(\d+)/.exec(text.stderr)![1]);
    expect((await import('node:fs')).readFileSync(file, 'utf8').split('\n')[line - 1]).toContain('colour');
  });

  it('${VAR} in a pipeline comes from the environment; a missing one is named', async () => {
    const { file } = pipeline({ assistants: ['openai:m?base_url=${PLENS_TEST_ENDPOINT_UNSET}&price_in=1'] });
    const r = await runCliJson<MakeJson>(['make', '-p', file, '--dry-run']);
    expect(r.code).toBe(4);
    expect(r.json.error).toMatchObject({ code: 'E_PREREQUISITE', pointer: '/dialogues/assistants/0' });
    expect(r.json.error!.message).toContain('PLENS_TEST_ENDPOINT_UNSET');
    const keyed = pipeline({ assistants: ['openai:m?base_url=http://127.0.0.1:9/v1&key_env=${OPENAI_API_KEY}'] });
    const k = await runCliJson<MakeJson>(['make', '-p', keyed.file, '--dry-run']);
    expect(k.code).toBe(2);
    expect(k.json.error!.message).toContain('key_env=OPENAI_API_KEY');
  });

  it('targets: a stage builds only what it needs; an unknown target is a usage error', async () => {
    const { file, dir } = pipeline();
    const r = await runCliJson<MakeJson>(['make', 'scenarios', '-p', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.steps.map((s) => `${s.step}:${s.status}`)).toEqual(['import:ran', 'scenarios:ran']);
    expect(existsSync(join(dir, 'out', 'dialogues'))).toBe(false);
    const bad = await runCli(['make', 'tabel3', '-p', file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown target "tabel3"');
  });
});
