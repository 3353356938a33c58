import { appendFileSync, copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { buildGraph } from '../../src/make/graph.js';
import { loadPipeline } from '../../src/make/pipeline.js';
import { PERSONA_DEFAULTS } from '../../src/benchmarks/personabench/pipeline-settings.js';
import { repoRoot, runCli, runCliJson, tempDir } from '../helpers/cli.js';
import { standIn } from '../helpers/personabench-standin.js';
import { expectTablesCsvGolden } from '../helpers/golden.js';

// PERSONA-bench as a pipeline: pipelines/persona-demo.yaml (the bundled sample, sim:default) made
// end to end into a temporary workspace and warehouse, then made again, planned and reported.

const SAMPLE = join(repoRoot, 'data', 'personabench-sample', 'raw.json');
// The sample's selection (original, seed 0): 63 samples, 3.3's 27 prompts x 10 samples + 36 others
// = 306 calls; sim:default answers 21 of them unreadably (test/benchmarks/personabench: predict).
const CALLS = 306;
const UNPARSED = 21;

interface MakeJson {
  ok: boolean;
  work: number;
  up_to_date: boolean;
  failed: string[];
  report: string | null;
  steps: Array<{ step: string; status: string; work: number; cells?: Array<{ assistant: string; status: string; work: { pending: number; done: number } }> }>;
  error?: { code: string; message: string; file?: string; pointer?: string };
}

interface StatusJson {
  benchmark: string;
  stages: Record<string, string>;
  predictions: Array<{ model: string; work: { done: number; pending: number | null; failed: number; unparsed?: number; spent: { calls: number } } }>;
}

/** A pipeline file in a temp folder; its workspace and warehouse live there too. */
function pipelineFile(body: string): { file: string; dir: string } {
  const dir = tempDir('plens-persona-make-');
  const file = join(dir, 'pipeline.yaml');
  writeFileSync(file, `name: pm\nworkspace: ${dir}/out\nwarehouse: ${dir}/w.duckdb\n${body}`);
  return { file, dir };
}

describe('plens make on PERSONA-bench: the persona demo pipeline', () => {
  const dir = tempDir('plens-persona-demo-');
  const env = { PLENS_PERSONA_WORKSPACE: join(dir, 'out'), PLENS_PERSONA_WAREHOUSE: join(dir, 'w.duckdb') };
  const demo = join(repoRoot, 'pipelines', 'persona-demo.yaml');
  let first: MakeJson;

  beforeAll(async () => {
    // The plan first: it runs nothing and leaves the workspace untouched.
    const plan = await runCliJson<MakeJson>(['make', 'all', '-p', demo, '--dry-run'], { env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.json.steps.map((s) => `${s.step}:${s.status}`)).toEqual([
      'select:would-run',
      'predictions:would-run',
      'scores:would-run',
      'warehouse:would-run',
      'tables:would-run',
      'report:would-run',
    ]);
    expect(plan.json.steps[1]!.work).toBe(CALLS);
    expect(existsSync(env.PLENS_PERSONA_WORKSPACE)).toBe(false);

    const r = await runCliJson<MakeJson>(['make', 'all', '-p', demo, '--no-progress'], { env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    first = r.json;
  }, 300_000);

  it('runs select, predictions, scores, warehouse, tables and report', () => {
    expect(first.steps.map((s) => `${s.step}:${s.status}`)).toEqual([
      'select:ran',
      'predictions:ran',
      'scores:ran',
      'warehouse:ran',
      'tables:ran',
      'report:ran',
    ]);
    // Every call is new work; the unparsed replies are outcomes, not failures.
    expect(first.steps[1]!.work).toBe(CALLS);
    expect(first.failed).toEqual([]);
    const ws = env.PLENS_PERSONA_WORKSPACE;
    expect(existsSync(join(ws, 'persona', 'selection-original', 'prompts.jsonl'))).toBe(true);
    expect(readdirSync(join(ws, 'persona', 'predictions')).length).toBe(9);
    expect(existsSync(join(ws, 'persona', 'scores', 'metrics.parquet'))).toBe(true);
    expect(readdirSync(join(ws, 'tables')).sort()).toEqual(
      ['persona_prediction_status', 'persona_results', 'persona_results_by_subreddit', 'persona_setting_comparison']
        .flatMap((t) => [`${t}.md`, `${t}.tex`])
        .sort(),
    );
  });

  it('gives the same tables, byte for byte, as the committed golden file', async () => {
    // Every figure of the PERSONA-bench demo, pinned: refactors must not move a number.
    await expectTablesCsvGolden(env.PLENS_PERSONA_WAREHOUSE, 'persona-demo-tables');
  });

  it('builds a warehouse with the persona tables and views and no PersonaLens ones', async () => {
    const db = await Database.open(env.PLENS_PERSONA_WAREHOUSE, { readOnly: true });
    try {
      const relations = new Set((await db.all<{ name: string }>('SELECT table_name AS name FROM information_schema.tables')).map((r) => r.name));
      for (const r of ['persona_predictions', 'persona_metrics', 'persona_results', 'persona_setting_comparison']) expect(relations.has(r), r).toBe(true);
      for (const r of ['domains', 'dialogues', 'table3']) expect(relations.has(r), r).toBe(false);
      const [status] = await db.all<{ ok: number; unparsed: number; failed: number; total: number }>(
        'SELECT sum(ok)::INT AS ok, sum(unparsed)::INT AS unparsed, sum(failed)::INT AS failed, sum(total)::INT AS total FROM persona_prediction_status',
      );
      expect(status).toEqual({ ok: CALLS - UNPARSED, unparsed: UNPARSED, failed: 0, total: CALLS });
      // The results table: every task x setting, the unparsed replies counted beside the value.
      const cells = await db.all<{ task: string; n: number; unparsed: number }>(
        `SELECT task, count(DISTINCT setting)::INT AS n, sum(n_unparsed)::INT AS unparsed FROM persona_results WHERE metric IN ('accuracy', 'rmse', 'rouge1') GROUP BY task ORDER BY task`,
      );
      expect(cells.map((c) => [c.task, c.n])).toEqual([
        ['3.1', 3],
        ['3.2', 3],
        ['3.3', 3],
      ]);
      expect(cells.reduce((n, c) => n + c.unparsed, 0)).toBeGreaterThan(0);
      // Settings pair on the same target reply: 3.1's six targets are shared by all three settings.
      const pairs = await db.all<{ setting_a: string; setting_b: string; n_pairs: number }>(
        `SELECT setting_a, setting_b, n_pairs::INT AS n_pairs FROM persona_setting_comparison WHERE task = '3.1' ORDER BY setting_a, setting_b`,
      );
      expect(pairs).toEqual([
        { setting_a: 'P-Conv', setting_b: 'NP-Conv', n_pairs: 6 },
        { setting_a: 'P-Conv', setting_b: 'P-NonConv', n_pairs: 6 },
        { setting_a: 'P-NonConv', setting_b: 'NP-Conv', n_pairs: 6 },
      ]);
    } finally {
      db.close();
    }
  });

  it('writes a report with the results table, both charts and the simulator named as such', () => {
    const html = readFileSync(first.report!, 'utf8');
    expect(first.report).toBe(join(env.PLENS_PERSONA_WORKSPACE, 'report.html'));
    expect(html).toContain('id="chart-persona-results"');
    expect(html).toContain('id="chart-persona-settings"');
    expect(html).toContain('id="table-persona_results"');
    expect(html).toContain('offline simulator');
    // Fixed scales: accuracy on 0-1, MCC on -1-1, whatever the values.
    expect(html).toMatch(/Y-axis titled '3\.1 accuracy' for a linear scale with values from 0\.0 to 1\.0/);
    expect(html).toMatch(/Y-axis titled '3\.1 MCC' for a linear scale with values from −1\.0 to 1\.0/);
    // A PERSONA-bench-only report does not list PersonaLens's absent charts.
    expect(html).not.toContain('Figure 4 chart: skipped');
  });

  it('a second make is a no-op; status lists the steps and the predictions per model', async () => {
    const again = await runCli(['make', 'all', '-p', demo, '--no-progress'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to do: every target is up to date');
    const plan = await runCliJson<MakeJson>(['make', '-p', demo, '--dry-run'], { env });
    expect(plan.json.work).toBe(0);

    const status = await runCliJson<StatusJson>(['status', '-p', demo], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.json.benchmark).toBe('persona-bench');
    expect(status.json.stages).toEqual({ select: 'done', scores: 'done', warehouse: 'done', tables: 'done', report: 'done' });
    expect(status.json.predictions).toHaveLength(1);
    expect(status.json.predictions[0]).toMatchObject({
      model: 'sim:default',
      work: { done: CALLS - UNPARSED, pending: 0, failed: 0, unparsed: UNPARSED, spent: { calls: CALLS } },
    });
    const text = await runCli(['status', '-p', demo], { env });
    expect(text.stdout).toMatch(/^select {5}done$/m);
    expect(text.stdout).toMatch(/^ {2}sim:default: 285 done, 0 pending, 0 failed, 21 unparsed/m);
    expect(text.stdout).not.toContain('scenarios');
  });

  it('plens warehouse and plens tables work on the PERSONA-bench-only workspace', async () => {
    const db = join(dir, 'again.duckdb');
    const w = await runCli(['warehouse', '-w', env.PLENS_PERSONA_WORKSPACE, '--db', db]);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toContain('persona_results');
    const t = await runCliJson<{ tables: Array<{ name: string }>; missing: Array<{ name: string }> }>(['tables', '--db', db]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.json.tables.map((x) => x.name)).toContain('persona_results');
    // The PersonaLens tables are not listed as missing from a PERSONA-bench warehouse.
    expect(JSON.stringify(t.json)).not.toContain('table3');
  });

  it('a new model adds only its own predictions (a price alone is no new model)', async () => {
    const { file } = pipelineFile(
      `benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  tasks: ["3.1"]\n  settings: [P-Conv]\n  models: [sim:default]\nreport: false\n`,
    );
    const one = await runCliJson<MakeJson>(['make', '-p', file, '--no-progress'], {});
    expect(one.code, one.stderr).toBe(0);
    expect(one.json.steps.find((s) => s.step === 'predictions')!.work).toBe(6);
    // A price is not part of what is computed: the same predictions, nothing to do.
    writeFileSync(file, readFileSync(file, 'utf8').replace('models: [sim:default]', 'models: ["sim:default?price_in=1"]'));
    const priced = await runCliJson<MakeJson>(['make', '-p', file, '--no-progress']);
    expect(priced.json.up_to_date).toBe(true);
    writeFileSync(file, readFileSync(file, 'utf8').replace('models: ["sim:default?price_in=1"]', 'models: [sim:default]'));
    writeFileSync(file, readFileSync(file, 'utf8').replace('models: [sim:default]', 'models: [sim:default, "sim:second"]'));
    const two = await runCliJson<MakeJson>(['make', '-p', file, '--no-progress']);
    expect(two.code, two.stderr).toBe(0);
    const step = two.json.steps.find((s) => s.step === 'predictions')!;
    expect(step.work).toBe(6);
    expect(two.json.steps.map((s) => `${s.step}:${s.status}`)).toEqual(['select:up-to-date', 'predictions:ran', 'scores:ran', 'warehouse:ran', 'tables:ran']);
  }, 120_000);
});

describe('PERSONA-bench up-to-date rules', () => {
  it('a changed input reselects; the same prompts make no new predictions, so nothing after reruns', async () => {
    const { file, dir } = pipelineFile('');
    const source = join(dir, 'raw.json');
    copyFileSync(SAMPLE, source);
    writeFileSync(file, `${readFileSync(file, 'utf8')}benchmark: persona-bench\npersona:\n  source: ${source}\n  tasks: ["3.1"]\n  models: [sim:default]\n`);
    const first = await runCliJson<MakeJson>(['make', '-p', file, '--no-progress']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.steps.find((s) => s.step === 'predictions')!.work).toBe(18);
    expect(first.json.steps.find((s) => s.step === 'warehouse')!.status).toBe('ran');

    // A trailing newline: the file changed, its posts did not.
    appendFileSync(source, '\n');
    const status = await runCliJson<StatusJson>(['status', '-p', file]);
    expect(status.json.stages).toMatchObject({ select: 'out-of-date', scores: 'out-of-date', warehouse: 'out-of-date' });
    expect(status.json.predictions[0]!.work.pending).toBeNull();
    const again = await runCliJson<MakeJson>(['make', '-p', file, '--no-progress']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.steps.map((s) => `${s.step}:${s.status}`)).toEqual([
      'select:ran',
      'predictions:up-to-date',
      'scores:up-to-date',
      'warehouse:up-to-date',
      'tables:up-to-date',
      'report:up-to-date',
    ]);
    expect((await runCliJson<StatusJson>(['status', '-p', file])).json.stages).toMatchObject({ select: 'done', scores: 'done', report: 'done' });
  }, 120_000);
});

describe('PERSONA-bench pipelines: the schema and the settings resolver', () => {
  it('fills in the defaults and makes the graph of its benchmark', () => {
    const { file } = pipelineFile(`benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  models: [sim:default]\n`);
    const p = loadPipeline(file, {});
    expect(p.benchmark).toBe('persona-bench');
    expect(p.persona).toMatchObject({ source: SAMPLE, fidelity: 'original', seed: 0, decoding: 'best-of-n', samples: PERSONA_DEFAULTS.samples });
    expect(p.persona!.tasks).toEqual(['3.1', '3.2', '3.3']);
    expect(p.tables.only).toEqual(['persona_results', 'persona_results_by_subreddit', 'persona_prediction_status', 'persona_setting_comparison']);
    expect(buildGraph(['warehouse'], p).steps).toEqual(['select', 'predictions', 'scores', 'warehouse']);
    expect(() => buildGraph(['dialogues'], p)).toThrow(/does not include dialogues/);
    const single = pipelineFile(`benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  models: [sim:default]\n  decoding: single-sample\n`);
    expect(loadPipeline(single.file, {}).persona!.samples).toBe(1);
    // A PersonaLens pipeline keeps its own steps and tables.
    const lens = pipelineFile('data:\n  from: sample\nscenarios:\n  kind: md\n');
    const pl = loadPipeline(lens.file, {});
    expect(pl.benchmark).toBe('personalens');
    expect(pl.tables.only.some((t) => t.startsWith('persona_'))).toBe(false);
    expect(buildGraph(['all'], pl).steps).toEqual(['import', 'scenarios', 'warehouse', 'tables', 'report']);
  });

  const error = async (body: string) => {
    const { file } = pipelineFile(body);
    const r = await runCliJson<MakeJson>(['make', '-p', file, '--dry-run']);
    return { code: r.code, error: r.json.error!, file };
  };

  it('a schema error names the field: a missing persona section, a bad value, a misplaced section', async () => {
    const missing = await error('benchmark: persona-bench\n');
    expect(missing.code).toBe(3);
    expect(missing.error).toMatchObject({ code: 'E_INPUT_SCHEMA', file: missing.file });
    expect(missing.error.message).toContain('missing required field "persona"');

    const bad = await error(`benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  models: [sim:default]\n  fidelity: exact\n`);
    expect(bad.code).toBe(3);
    expect(bad.error).toMatchObject({ pointer: '/persona/fidelity' });
    expect(bad.error.message).toContain('["original","fixed"]');

    const noModels = await error(`benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n`);
    expect(noModels.error.message).toContain('missing required field "models"');

    const extra = await error(
      `benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  models: [sim:default]\ndialogues:\n  assistants: [sim:default]\n  settings: [base]\n`,
    );
    expect(extra.code).toBe(3);
    expect(extra.error).toMatchObject({ pointer: '/dialogues' });
    expect(extra.error.message).toContain('a persona-bench pipeline takes a persona section instead');

    const wrong = await error(`data:\n  from: sample\nscenarios:\n  kind: md\npersona:\n  source: ${SAMPLE}\n  models: [sim:default]\n`);
    expect(wrong.error).toMatchObject({ pointer: '/persona' });

    const samples = await error(`benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  models: [sim:default]\n  decoding: single-sample\n  samples: 5\n`);
    expect(samples.error).toMatchObject({ pointer: '/persona/samples' });

    const model = await error(`benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  models: [nosuch:model]\n`);
    expect(model.error).toMatchObject({ pointer: '/persona/models/0' });
    expect(model.error.message).toContain('unknown provider');

    const lens = await error('data:\n  from: sample\n');
    expect(lens.error.message).toContain('missing required field "scenarios"');
  });

  it('npm run demo runs the PERSONA-bench demo pipeline too', () => {
    const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['demo']).toContain('make all -p pipelines/demo.yaml');
    expect(scripts['demo']).toContain('make all -p pipelines/persona-demo.yaml');
  });

  it('the paper pipeline loads: the 3 x 3 grid, fidelity original, a real model', () => {
    const p = loadPipeline(join(repoRoot, 'pipelines', 'persona-bench.yaml'), {});
    expect(p.persona).toMatchObject({ fidelity: 'original', decoding: 'best-of-n', samples: 10 });
    expect(p.persona!.tasks).toHaveLength(3);
    expect(p.persona!.settings).toEqual(['P-Conv', 'P-NonConv', 'NP-Conv']);
    expect(p.persona!.models[0]).toMatch(/^openai:gpt-4\.1/);
  });
});

describe('plens warehouse on an empty workspace', () => {
  it('still refuses, naming both benchmarks', async () => {
    const r = await runCli(['warehouse', '-w', tempDir('plens-empty-ws-'), '--db', join(tempDir('plens-empty-db-'), 'w.duckdb')]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/no imported dataset in .* and no PERSONA-bench predictions/);
  });
});

describe('PERSONA-bench pipelines under a spend cap', () => {
  it('predictions draw from the run cap: stop (exit 6), later steps not run, a higher cap resumes without asking twice', async () => {
    const { startMockLlm } = await import('../../src/testkit/mock-server.js');
    const server = await startMockLlm({ reply: () => 'positive' });
    try {
      // 3.1 only: 12 prompts on the sample (P-Conv, P-NonConv, NP-Conv); $1 a token, so a call
      // reserves its prompt and 10 output tokens (hundreds of dollars) and a cap of $1,500 stops part-way.
      const model = `openai:tiny?base_url=${server.url}/v1&price_in=1000000&price_out=1000000`;
      const { file } = pipelineFile(
        `benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  tasks: ['3.1']\n  models: ['${model}']\nlimits:\n  concurrency: 1\n  max_cost: 1500\n`,
      );
      const env = { env: { OPENAI_API_KEY: 'sk-persona-make-cap' } };
      const first = await runCliJson<MakeJson & { spend_capped: boolean; spent_usd: number }>(['make', 'all', '-p', file, '--no-progress'], env);
      expect(first.code, first.stderr + first.stdout).toBe(6);
      expect(first.json.spend_capped).toBe(true);
      expect(first.json.spent_usd).toBeLessThanOrEqual(1500);
      const predictions = first.json.steps.find((s) => s.step === 'predictions')!;
      expect(predictions.work).toBeGreaterThan(0);
      expect(first.json.steps.find((s) => s.step === 'scores')!.status).toBe('not-run');
      const asked = server.requests.length;
      expect(asked).toBe(predictions.work);

      const second = await runCliJson<MakeJson>(['make', 'all', '-p', file, '--max-cost', '1000000', '--no-progress'], env);
      expect(second.code, second.stderr + second.stdout).toBe(0);
      const total = asked + second.json.steps.find((s) => s.step === 'predictions')!.work;
      expect(server.requests).toHaveLength(total);
      expect(new Set(server.requests.map((r) => r.messages[0]!.content)).size).toBe(total);
      expect(second.json.steps.find((s) => s.step === 'report')!.status).toBe('ran');
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('PERSONA-bench pipelines through the batch API', () => {
  it('persona.batch sends the predictions through batches (no online call); a bad batch field is an error at its line', async () => {
    const { startMockLlm } = await import('../../src/testkit/mock-server.js');
    const server = await startMockLlm({ reply: () => 'positive', batch: { plan: () => ({ polls: 1 }) } });
    try {
      const model = `openai:tiny?base_url=${server.url}/v1&price_in=1&price_out=1`;
      const body = (batch: string) => `benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  tasks: ['3.1']\n  models: ['${model}']\n${batch}`;
      const { file } = pipelineFile(body('  batch: true\n  poll_interval_s: 0.01\n'));
      expect(loadPipeline(file, {}).persona!.batch).toEqual({ fallback: 'online', pollIntervalS: 0.01, maxItems: 50_000 });
      const env = { env: { OPENAI_API_KEY: 'sk-persona-make-batch' } };
      const r = await runCliJson<MakeJson>(['make', 'predictions', '-p', file, '--no-progress'], env);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const predictions = r.json.steps.find((s) => s.step === 'predictions')!;
      expect(predictions.work).toBeGreaterThan(0);
      expect(server.batch.submissions).toBeGreaterThanOrEqual(1);
      expect(server.requests.filter((q) => q.batch === undefined)).toHaveLength(0);
      expect(server.requests.filter((q) => q.batch !== undefined)).toHaveLength(predictions.work);

      const bad = pipelineFile(body('  batch: true\n  batch_fallback: maybe\n'));
      const e = await runCliJson<MakeJson>(['make', 'predictions', '-p', bad.file, '--dry-run'], env);
      expect(e.code).toBe(3);
      expect(e.json.error).toMatchObject({ code: 'E_INPUT_SCHEMA', pointer: '/persona/batch_fallback' });
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('PERSONA-bench pipelines with the original wording (persona.original)', () => {
  it("the select step runs the checkout's makers, their records become the prompts; a changed script reselects", async () => {
    const checkout = standIn();
    const { file, dir } = pipelineFile(
      `benchmark: persona-bench\npersona:\n  source: ${SAMPLE}\n  original: ${checkout}\n  python: /usr/bin/python3\n  tasks: ["3.3"]\n  settings: [P-Conv]\n  models: [sim:default]\nreport: false\n`,
    );
    const one = await runCliJson<MakeJson>(['make', 'select', '-p', file, '--no-progress']);
    expect(one.code, one.stderr).toBe(0);
    const selection = join(dir, 'out', 'persona', 'selection-original');
    expect(readdirSync(join(selection, 'original-files'))).toHaveLength(9);
    // The stand-in writes one record per file: nine prompt records, its own prompt text.
    const prompts = readFileSync(join(selection, 'prompts.jsonl'), 'utf8').trim().split('\n');
    expect(prompts.map((l) => (JSON.parse(l) as { prompt: string }).prompt)).toEqual(Array(9).fill('p'));
    const again = await runCliJson<MakeJson>(['make', 'select', '-p', file, '--no-progress']);
    expect(again.json.up_to_date).toBe(true);
    appendFileSync(join(checkout, 'PromptMakers', '3.3PromptMaker.py'), '# changed\n');
    const changed = await runCliJson<MakeJson>(['make', 'select', '-p', file, '--no-progress']);
    expect(changed.json.steps.map((s) => `${s.step}:${s.status}`)).toEqual(['select:ran']);

    // fixed and original do not go together.
    writeFileSync(file, readFileSync(file, 'utf8').replace('  python:', '  fidelity: fixed\n  python:'));
    const bad = await runCliJson<MakeJson>(['make', 'select', '-p', file, '--no-progress']);
    expect(bad.code).toBe(3);
    expect(bad.json.error?.message).toMatch(/no fixed variant/);
  }, 60_000);
});
