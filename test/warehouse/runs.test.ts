import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plensVersion } from '../../src/core/version.js';
import { Database } from '../../src/db/database.js';
import type { RunRecord } from '../../src/engine/run-record.js';
import { collectMetadata } from '../../src/report/metadata.js';
import { Workspace } from '../../src/core/workspace.js';
import { buildWarehouse, workspaceHas } from '../../src/warehouse/build.js';
import { repoRoot, runCliJson, tempDir } from '../helpers/cli.js';

const RUNS_SQL = join(repoRoot, 'warehouse', '05_runs.sql');

/** A finished record as RunRecorder writes one. */
function record(runId: string, over: { kind?: string; name?: string; status?: string; byModel?: Record<string, number> } = {}): RunRecord {
  const byModel = Object.fromEntries(Object.entries(over.byModel ?? {}).map(([m, usd]) => [m, { calls: 1, cached_calls: 0, cost_usd: usd }]));
  return {
    record_version: 1,
    run_id: runId,
    kind: (over.kind ?? 'stage') as RunRecord['kind'],
    name: over.name ?? 'judge',
    parent_run_id: null,
    spec: {
      benchmark: 'personalens',
      models: [{ role: 'judge', spec: 'sim:default?price_in=3' }],
      prompts: { dir: '/p', sha256: 'f'.repeat(64) },
      pipeline: null,
      dataset_fingerprint: 'fp1',
      limits: { concurrency: 4 },
      settings: { dimensions: ['task_completion'] },
    },
    provenance: { plens_version: '9.9.9', git_revision: 'a'.repeat(40), node_version: 'v20.0.0', duckdb_version: 'v1.0.0', host: 'h', platform: 'linux-x64' },
    outcome: {
      status: (over.status ?? 'ok') as RunRecord['outcome']['status'],
      started_at: '2025-01-01T10:00:00.000Z',
      ended_at: over.status === 'running' ? null : '2025-01-01T10:00:02.500Z',
      elapsed_ms: over.status === 'running' ? null : 2500,
      counts: { planned: 2, ok: 2, failed: 0, 'failure:http_429': 1 },
      spend: { by_role: {}, by_model: byModel },
      error: null,
    },
  };
}

describe('runs (05_runs.sql): the run records as a table', () => {
  let db: Database;
  const ws = tempDir('plens-runs-sql-');
  beforeAll(async () => {
    mkdirSync(join(ws, 'runs'));
    const write = (name: string, r: unknown) => writeFileSync(join(ws, 'runs', name), typeof r === 'string' ? r : JSON.stringify(r, null, 2));
    write('r1.json', record('r1', { byModel: { 'sim:default': 0.5, 'openai:org/m': 0.25 } }));
    write('r2.json', record('r2', { kind: 'make', name: 'demo', status: 'running' }));
    write('r3.json', record('r3', { name: 'dialogues' }));
    write('broken.json', '{"run_id": "bro');
    // A temp file being written is no record.
    write('.r4.json.tmp-abc-1-00000000', record('r4'));
    db = await Database.open(':memory:');
    await db.run('SET VARIABLE workspace = $1', undefined, [ws]);
    await db.run(readFileSync(RUNS_SQL, 'utf8'));
  });
  afterAll(() => db.close());

  it('flattens each record into columns, with the whole record beside them', async () => {
    const rows = await db.all<Record<string, unknown>>(
      `SELECT run_id, kind, name, parent_run_id, status, started_at::VARCHAR AS started_at, ended_at::VARCHAR AS ended_at, elapsed_ms,
         plens_version, git_revision, node_version, duckdb_version, host, platform, benchmark, pipeline_name, pipeline_sha256,
         prompts_dir, prompts_sha256, dataset_fingerprint, models, counts['failure:http_429'] AS n_429, cost_usd, error, record_version,
         record ->> '$.spec.settings.dimensions[0]' AS dimension, limits ->> '$.concurrency' AS concurrency
       FROM runs WHERE run_id = 'r1'`,
    );
    expect(rows).toEqual([
      {
        run_id: 'r1',
        kind: 'stage',
        name: 'judge',
        parent_run_id: null,
        status: 'ok',
        started_at: '2025-01-01 10:00:00',
        ended_at: '2025-01-01 10:00:02.5',
        elapsed_ms: 2500,
        plens_version: '9.9.9',
        git_revision: 'a'.repeat(40),
        node_version: 'v20.0.0',
        duckdb_version: 'v1.0.0',
        host: 'h',
        platform: 'linux-x64',
        benchmark: 'personalens',
        pipeline_name: null,
        pipeline_sha256: null,
        prompts_dir: '/p',
        prompts_sha256: 'f'.repeat(64),
        dataset_fingerprint: 'fp1',
        models: [{ role: 'judge', spec: 'sim:default?price_in=3' }],
        n_429: 1,
        cost_usd: 0.75,
        error: null,
        record_version: 1,
        dimension: 'task_completion',
        concurrency: '4',
      },
    ]);
  });

  it('keeps a running record (cost unknown), a finished one without calls (cost 0), and a file that is not JSON by its name', async () => {
    const rows = await db.all<{ run_id: string; kind: string | null; status: string | null; cost_usd: number | null; has_record: boolean }>(
      'SELECT run_id, kind, status, cost_usd, record IS NOT NULL AS has_record FROM runs ORDER BY run_id',
    );
    expect(rows).toEqual([
      { run_id: 'broken', kind: null, status: null, cost_usd: null, has_record: false },
      { run_id: 'r1', kind: 'stage', status: 'ok', cost_usd: 0.75, has_record: true },
      { run_id: 'r2', kind: 'make', status: 'running', cost_usd: null, has_record: true },
      { run_id: 'r3', kind: 'stage', status: 'ok', cost_usd: 0, has_record: true },
    ]);
  });

  it('is built only when the workspace has a record (-- requires-file: runs/*.json)', () => {
    expect(readFileSync(RUNS_SQL, 'utf8')).toMatch(/^-- requires-file: runs\/\*\.json$/m);
    expect(workspaceHas(ws, 'runs/*.json')).toBe(true);
    const empty = tempDir();
    expect(workspaceHas(empty, 'runs/*.json')).toBe(false);
    mkdirSync(join(empty, 'runs'));
    writeFileSync(join(empty, 'runs', '.x.json.tmp-abc-1-00000000'), '{}');
    writeFileSync(join(empty, 'runs', 'notes.txt'), '');
    expect(workspaceHas(empty, 'runs/*.json')).toBe(false);
  });
});

interface Joined {
  stage: string;
  run_id: string;
  kind: string;
  name: string;
  status: string;
  plens_version: string;
  node_version: string;
  duckdb_version: string | null;
  benchmark: string;
  parent_run_id: string | null;
  prompts_sha256: string;
  dataset_fingerprint: string | null;
  models: Array<{ role: string; spec: string }>;
  cost_usd: number;
  n_dialogues: number;
  n_calls: number;
}

// A pipeline of one assistant and setting on 6 scenarios, judged on task completion: a result row of
// table3 goes through its calls to the run records of the judge and dialogue runs that made it.
describe('a table3 row joins to the runs that produced it (result_stage_runs)', () => {
  const dir = tempDir('plens-runs-make-');
  const file = join(dir, 'pipeline.yaml');
  const judge = 'sim:default?price_in=3&price_out=15';
  const assistant = 'sim:default?price_in=1&price_out=2';
  let db: Database;
  beforeAll(async () => {
    writeFileSync(
      file,
      `name: runs-test
workspace: ${dir}/out
warehouse: ${dir}/w.duckdb
data:
  from: sample
scenarios:
  kind: md
  users: "0-1"
dialogues:
  user: sim:default
  assistants: ["${assistant}"]
  settings: [base]
judge:
  model: "${judge}"
  dimensions: [task_completion]
limits:
  concurrency: 4
statistics:
  lexical: []
report: false
`,
    );
    const r = await runCliJson<{ ok: boolean }>(['make', 'warehouse', '-p', file]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
  });
  afterAll(() => db?.close());

  it('every stage run and the make run wrote a finished record, and every call names one', async () => {
    const records = readdirSync(join(dir, 'out', 'runs')).map((f) => JSON.parse(readFileSync(join(dir, 'out', 'runs', f), 'utf8')) as RunRecord);
    expect(records.map((r) => `${r.kind}:${r.name}`).sort()).toEqual(['make:runs-test', 'stage:dialogues', 'stage:judge']);
    expect(records.every((r) => r.outcome.status === 'ok' && r.outcome.ended_at !== null)).toBe(true);
    // The make run names its pipeline (file and hash) and is the parent of the stage runs it started.
    const makeRun = records.find((r) => r.kind === 'make')!;
    expect(makeRun.run_id).toMatch(/^make-/);
    expect(makeRun.spec.pipeline).toEqual({ name: 'runs-test', file, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(makeRun.spec.benchmark).toBe('personalens');
    expect(makeRun.outcome.counts).toMatchObject({ 'dialogues:ran': 1, 'dialogues:work': 6, 'judge:ran': 1, 'warehouse:ran': 1 });
    expect(records.filter((r) => r.kind === 'stage').map((r) => r.parent_run_id)).toEqual([makeRun.run_id, makeRun.run_id]);
    const orphans = await db.all('SELECT DISTINCT run_id FROM llm_calls WHERE run_id NOT IN (SELECT run_id FROM runs)');
    expect(orphans).toEqual([]);
  });

  it('from a table3 row to its judge run and its dialogue run', async () => {
    const rows = await db.all<Joined>(
      `SELECT s.stage, s.n_dialogues, s.n_calls, r.run_id, r.kind, r.name, r.status, r.plens_version, r.node_version, r.duckdb_version, r.benchmark,
         r.parent_run_id, r.prompts_sha256, r.dataset_fingerprint, r.models, r.cost_usd
       FROM table3 t JOIN result_stage_runs s USING (judge_model, run) JOIN runs r USING (run_id)
       WHERE t.kind = 'MD' ORDER BY s.stage DESC`,
    );
    expect(rows.map((r) => r.stage)).toEqual(['judge', 'dialogues']);
    const [j, d] = rows as [Joined, Joined];
    expect(j).toMatchObject({
      kind: 'stage',
      name: 'judge',
      status: 'ok',
      plens_version: plensVersion,
      node_version: process.version,
      benchmark: 'personalens',
    });
    expect(j.models).toEqual([{ role: 'judge', spec: judge }]);
    expect(j.duckdb_version).toMatch(/^v?\d+\.\d+/);
    expect(j.prompts_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(j.dataset_fingerprint).toBeTruthy();
    expect(j).toMatchObject({ n_dialogues: 6, n_calls: 6 });
    expect(j.cost_usd).toBeGreaterThan(0);

    expect(d).toMatchObject({ kind: 'stage', name: 'dialogues', status: 'ok', plens_version: plensVersion, n_dialogues: 6 });
    expect(d.models).toEqual([
      { role: 'user', spec: 'sim:default' },
      { role: 'assistant', spec: assistant },
    ]);
    expect(d.run_id).not.toBe(j.run_id);
    // ... and through its parent to the make run: the pipeline that produced the number.
    expect(j.parent_run_id).toBe(d.parent_run_id);
    const [parent] = await db.all<{ kind: string; pipeline_name: string; pipeline_file: string }>(
      'SELECT kind, pipeline_name, pipeline_file FROM runs WHERE run_id = $1',
      undefined,
      [j.parent_run_id],
    );
    expect(parent).toEqual({ kind: 'make', pipeline_name: 'runs-test', pipeline_file: file });
    // The judge's run cost what its calls cost.
    const [calls] = await db.all<{ cost: number }>('SELECT sum(cost_usd) AS cost FROM llm_calls WHERE run_id = $1', undefined, [j.run_id]);
    expect(j.cost_usd).toBeCloseTo(calls!.cost, 9);
  });

  it("the report's metadata lists the runs", async () => {
    const relations = new Set((await db.all<{ name: string }>('SELECT table_name AS name FROM information_schema.tables')).map((r) => r.name));
    const meta = await collectMetadata(db, relations);
    const table = meta.tables.find((t) => t.name === 'meta_run_records')!;
    expect(table.columns.map((c) => c.key)).toEqual(['run_id', 'kind', 'name', 'status', 'plens_version', 'git_revision', 'models', 'cost_usd']);
    // The make run's record was read as it was when its warehouse step ran: still running.
    expect(table.rows.map((r) => [r['name'], r['status'], r['plens_version']])).toEqual([
      ['runs-test', 'running', plensVersion],
      ['dialogues', 'ok', plensVersion],
      ['judge', 'ok', plensVersion],
    ]);
    expect(table.rows[2]!['models']).toBe(`judge ${judge}`);
  });

  it('a run record started, finished or removed since the last build makes the warehouse stale', async () => {
    db.close();
    const build = () => buildWarehouse({ workspace: new Workspace(join(dir, 'out')), dbPath: join(dir, 'w.duckdb'), lexical: [] });
    expect((await build()).up_to_date).toBe(true);
    const runs = join(dir, 'out', 'runs');
    const [first] = readdirSync(runs);
    const copy = { ...(JSON.parse(readFileSync(join(runs, first!), 'utf8')) as RunRecord), run_id: 'later-run' };
    writeFileSync(join(runs, 'later-run.json'), JSON.stringify({ ...copy, outcome: { ...copy.outcome, status: 'running', ended_at: null } }));
    expect((await build()).up_to_date).toBe(false);
    expect((await build()).up_to_date).toBe(true);
    writeFileSync(join(runs, 'later-run.json'), JSON.stringify(copy));
    expect((await build()).up_to_date).toBe(false);
    const check = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
    expect(await check.all("SELECT status FROM runs WHERE run_id = 'later-run'")).toEqual([{ status: 'ok' }]);
    check.close();
    rmSync(join(runs, 'later-run.json'));
    expect((await build()).up_to_date).toBe(false);
    db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
    expect(await db.all("SELECT count(*)::INT AS n FROM runs WHERE run_id = 'later-run'")).toEqual([{ n: 0 }]);
  });
});
