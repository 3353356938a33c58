import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../../src/db/database.js';
import { startMockLlm, type MockLlmServer } from '../../../../src/testkit/mock-server.js';
import { cliPath, repoRoot, runCli, runCliJson, tempDir } from '../../../helpers/cli.js';

/**
 * Building a benchmark in `plens make` (pipelines/build-demo.yaml and variants): every construction
 * stage with the offline simulator, the export in the released layout that import reads with the
 * released data's validators, then dialogues and the judge on it; a rerun does nothing; a build
 * killed mid-stage resumes with every unit once.
 */
interface MakeJson {
  steps: Array<{ step: string; status: string; work: number; detail: string }>;
  failed: string[];
}

const BUILD_STEPS = [
  'build-users',
  'build-masks',
  'build-preferences',
  'build-interactions',
  'build-sd-tasks',
  'build-md-tasks',
  'build-situations',
  'build-consistency',
  'build-reference',
  'build-export',
];

async function records(glob: string, sql: string): Promise<Array<Record<string, unknown>>> {
  const db = await Database.open(':memory:');
  try {
    return await db.all(sql.replace('$FILES', `read_parquet('${glob}')`));
  } finally {
    await db.close();
  }
}

describe('plens make on pipelines/build-demo.yaml', () => {
  const dir = tempDir('plens-build-demo-');
  const env = { PLENS_BUILD_WORKSPACE: join(dir, 'out'), PLENS_BUILD_WAREHOUSE: join(dir, 'w.duckdb') };
  const demo = join(repoRoot, 'pipelines', 'build-demo.yaml');
  let first: MakeJson;

  beforeAll(async () => {
    const plan = await runCliJson<MakeJson>(['make', 'all', '-p', demo, '--dry-run'], { env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.json.steps.map((s) => `${s.step}:${s.status}`).slice(0, BUILD_STEPS.length + 2)).toEqual([
      ...BUILD_STEPS.map((s) => `${s}:would-run`),
      'import:would-run',
      'scenarios:would-run',
    ]);
    // 8 users; 20 domains of 2 SD tasks; 4 MD tasks; the later stages estimated from the release's rates.
    const work = Object.fromEntries(plan.json.steps.map((s) => [s.step, s.work]));
    expect(work).toMatchObject({ 'build-masks': 8, 'build-sd-tasks': 20, 'build-md-tasks': 1, 'build-consistency': 8 });
    expect(existsSync(env.PLENS_BUILD_WORKSPACE)).toBe(false);
    const r = await runCliJson<MakeJson>(['make', 'all', '-p', demo, '--no-progress'], { env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    first = r.json;
  }, 180_000);

  it('builds, exports, imports and runs the dialogues and the judge on what it built', () => {
    expect(first.failed).toEqual([]);
    expect(first.steps.filter((s) => s.status !== 'ran').map((s) => s.step)).toEqual([]);
    const exported = first.steps.find((s) => s.step === 'build-export')!;
    expect(exported.detail).toMatch(/^8 users, \d+ SD \+ \d+ MD scenarios/);
  });

  it('writes the released layout, which import reads with the released data validators', async () => {
    const built = join(env.PLENS_BUILD_WORKSPACE, 'built');
    for (const f of [
      'data/profile/user0/profile.json',
      'data/profile/user0/tasks.json',
      'data/task/Multi-Domain/task.jsonl',
      'res/schema.json',
      '.plens-build.json',
    ])
      expect(existsSync(join(built, f)), f).toBe(true);
    const r = await runCliJson<{ users: number }>(['import', '--from', join(built, 'data'), '--dry-run', '-w', join(dir, 'check')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.users).toBe(8);
    const profile = JSON.parse(readFileSync(join(built, 'data', 'profile', 'user0', 'profile.json'), 'utf8'));
    // Preferences and past interactions for the domains the mask keeps, and only those.
    const kept = Object.keys(profile.interests).filter((d) => profile.interests[d] === 1);
    expect(Object.keys(profile.affinities)).toEqual(kept);
    expect(Object.keys(profile.interactions)).toEqual(kept);
  });

  it("records the simulator's malformed replies: each refused once, asked again, and why", async () => {
    const rows = await records(
      join(env.PLENS_BUILD_WORKSPACE, 'build', '*', '*', 'records.parquet'),
      `SELECT first_parse_state AS state, count(*)::INT AS n FROM $FILES WHERE reasked GROUP BY ALL ORDER BY ALL`,
    );
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows)
      expect(['not_json', 'missing_type', 'unknown_type', 'bad_value', 'off_set', 'empty', 'wrong_count', 'unknown_domain', 'not_xml']).toContain(r['state']);
    const statuses = await records(join(env.PLENS_BUILD_WORKSPACE, 'build', '*', '*', 'records.parquet'), `SELECT DISTINCT status FROM $FILES`);
    expect(statuses).toEqual([{ status: 'ok' }]);
  });

  it('prints the validation tables with both columns: the built benchmark beside the one it is compared with', async () => {
    const db = env.PLENS_BUILD_WAREHOUSE;
    const table = async (name: string) => {
      const r = await runCliJson<{ tables: Array<{ rows: Array<Record<string, unknown>> }> }>(['tables', '--db', db, '--only', name]);
      expect(r.code, r.stderr).toBe(0);
      return r.json.tables[0]!.rows;
    };
    // The users are the sample's own: their demographics match row for row.
    const demographics = await table('build_table6_7');
    expect(demographics.length).toBeGreaterThan(20);
    for (const row of demographics) expect(row['built_count']).toBe(row['released_count']);
    // Two SD tasks per domain were asked for; the sample has its own.
    const t1 = await table('build_table1');
    expect(t1).toHaveLength(20);
    for (const row of t1) {
      expect(Number(row['built_sd_tasks'])).toBe(2);
      expect(row['released_sd_tasks']).not.toBeNull();
    }
    for (const name of ['build_table8_9', 'build_situations', 'build_lexical', 'build_parse_states', 'build_consistency'])
      expect((await table(name)).length, name).toBeGreaterThan(0);
    const states = await table('build_parse_states');
    expect(states.map((r) => r['stage'])).toEqual(['masks', 'preferences', 'interactions', 'sd-tasks', 'md-tasks', 'situations', 'consistency']);
  });

  it('a second make has nothing to do', async () => {
    const again = await runCli(['make', 'all', '-p', demo, '--no-progress'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to do: every target is up to date');
    const status = await runCli(['status', '-p', demo], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^build {6}users done \| reference done \| export done \(8 users, 0 left out, \d+ flagged by the consistency check\)$/m);
    expect(status.stdout).toMatch(/^ {2}situations {3}\d+ done, 0 pending, 0 refused, 0 failed \(sim:default\)$/m);
  });
});

describe('a build from a CSV of demographics', () => {
  it('draws the users with the seed, numbers them, and fills what is missing with N/A', async () => {
    const dir = tempDir('plens-build-csv-');
    writeFileSync(
      join(dir, 'people.csv'),
      [
        'user_id,age,gender,reside_country,religion',
        'p1,18-24 years old,Female,Kenya,',
        'p2,65+ years old,Male,Chile,Catholic',
        'p3,35-44 years old,Female,Japan,',
      ].join('\n'),
    );
    const pipeline = join(dir, 'p.yaml');
    writeFileSync(
      pipeline,
      [
        'name: csv-build',
        `workspace: ${join(dir, 'out')}`,
        'build:',
        `  demographics: {from: ${join(dir, 'people.csv')}, users: 2, seed: 3}`,
        `  schema: ${join(repoRoot, 'data', 'sample', 'res', 'schema.json')}`,
        '  examples: null',
        '  models: {default: sim:default}',
        '  sd_tasks: 1',
        '  md_tasks: 2',
        'scenarios: {kind: all}',
        '',
      ].join('\n'),
    );
    const r = await runCli(['make', 'build-users', '-p', pipeline, '--no-progress']);
    expect(r.code, r.stderr).toBe(0);
    const users = readFileSync(join(dir, 'out', 'build', 'users.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(users.map((u) => u.user_id)).toEqual(['user0', 'user1']);
    expect(users.every((u) => ['p1', 'p2', 'p3'].includes(u.source))).toBe(true);
    expect(users[0]).toMatchObject({ education: 'N/A', ethnicity: 'N/A' });
    const all = await runCli(['make', 'all', '-p', pipeline, '--no-progress']);
    expect(all.code, all.stderr + all.stdout).toBe(0);
    expect(existsSync(join(dir, 'out', 'built', 'data', 'profile', 'user1', 'profile.json'))).toBe(true);
  }, 120_000);
});

describe('a build killed mid-stage', () => {
  let server: MockLlmServer;
  afterAll(async () => server?.close());

  it('resumes with every unit recorded once and no completed one asked again', async () => {
    // The situations come from a slow endpoint; the other stages from the simulator.
    const situation = [
      'Location: Lisbon, Portugal',
      'Justification: She lives there.',
      'Device: Laptop',
      'Justification: At her desk.',
      'Time of Day: Evening',
      'Justification: After work.',
      'Day of the Week: Thursday',
      'Justification: A weekday.',
      'Environment: Quiet',
      'Justification: Alone at home.',
    ].join('\n');
    server = await startMockLlm({ latencyMs: 20, reply: () => situation });
    const dir = tempDir('plens-build-kill-');
    const pipeline = join(dir, 'p.yaml');
    writeFileSync(
      pipeline,
      [
        'name: kill-build',
        `workspace: ${join(dir, 'out')}`,
        'build:',
        '  demographics: {from: sample, users: 3}',
        '  models:',
        '    default: sim:default',
        `    situations: openai:slow?base_url=${server.url}/v1`,
        '  sd_tasks: 2',
        '  md_tasks: 3',
        'scenarios: {kind: all}',
        'limits: {concurrency: 4, cache: off}',
        '',
      ].join('\n'),
    );
    const env = { OPENAI_API_KEY: 'sk-kill-test' };
    const before = await runCli(['make', 'build-consistency', 'build-sd-tasks', 'build-md-tasks', '-p', pipeline, '--no-progress'], { env });
    expect(before.code, before.stderr).toBe(0);
    const plan = await runCliJson<MakeJson>(['make', 'build-situations', '-p', pipeline, '--dry-run'], { env });
    const total = plan.json.steps.find((s) => s.step === 'build-situations')!.work;
    expect(total).toBeGreaterThan(40);
    for (const calls of [12, 20]) {
      const start = server.stats().requests;
      const signal = await new Promise<string | null>((resolve, reject) => {
        const child = spawn(process.execPath, [cliPath, 'make', 'build-situations', '-p', pipeline, '--no-progress'], {
          cwd: repoRoot,
          env: { ...process.env, ...env },
          stdio: 'ignore',
        });
        const poll = setInterval(() => {
          if (server.stats().requests - start >= calls) child.kill('SIGKILL');
        }, 5);
        child.on('error', reject);
        child.on('exit', (_code, s) => {
          clearInterval(poll);
          resolve(s);
        });
      });
      expect(signal).toBe('SIGKILL');
    }
    const asked = server.stats().requests;
    const finish = await runCliJson<MakeJson>(['make', 'build-situations', '-p', pipeline, '--no-progress'], { env });
    expect(finish.code, finish.stderr).toBe(0);
    // The rest only: the kills' completed units are kept (at most the in-flight ones are asked again).
    expect(server.stats().requests - asked).toBeLessThan(total);
    expect(server.stats().requests).toBeLessThanOrEqual(total + 2 * 4);
    const rows = await records(
      join(dir, 'out', 'build', 'situations', '*', 'records.parquet'),
      `SELECT count(*)::INT AS n, count(DISTINCT unit)::INT AS units, count(*) FILTER (status = 'ok')::INT AS ok FROM $FILES`,
    );
    expect(rows).toEqual([{ n: total, units: total, ok: total }]);
  }, 180_000);
});

describe('a build through the batch API (build.batch)', () => {
  let server: MockLlmServer;
  afterAll(async () => server?.close());

  it("sends a stage's requests as one batch, keeps every answer, and a rerun submits nothing", async () => {
    const schema = JSON.parse(readFileSync(join(repoRoot, 'data', 'sample', 'res', 'schema.json'), 'utf8')) as Array<{ domain: string }>;
    const mask = JSON.stringify(Object.fromEntries(schema.map((d, i) => [d.domain, i % 4 === 0 ? 0 : 1])));
    server = await startMockLlm({ reply: () => mask, batch: {}, requireAuth: true });
    const dir = tempDir('plens-build-batch-');
    const pipeline = join(dir, 'p.yaml');
    writeFileSync(
      pipeline,
      [
        'name: batch-build',
        `workspace: ${join(dir, 'out')}`,
        'build:',
        '  demographics: {from: sample}',
        `  models: {default: "openai:builder?base_url=${server.url}/v1&price_in=2.5&price_out=10"}`,
        '  batch: true',
        '  poll_interval_s: 0.01',
        'scenarios: {kind: all}',
        '',
      ].join('\n'),
    );
    const env = { OPENAI_API_KEY: 'sk-batch-test' };
    const r = await runCli(['make', 'build-masks', '-p', pipeline, '--no-progress'], { env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const batched = server.requests.filter((q) => q.batch !== undefined);
    expect(batched).toHaveLength(8);
    expect(server.requests.filter((q) => q.batch === undefined)).toHaveLength(0);
    const rows = await records(
      join(dir, 'out', 'build', 'masks', '*', 'records.parquet'),
      `SELECT count(*)::INT AS n, count(*) FILTER (status = 'ok')::INT AS ok FROM $FILES`,
    );
    expect(rows).toEqual([{ n: 8, ok: 8 }]);
    const again = await runCli(['make', 'build-masks', '-p', pipeline, '--no-progress'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(server.requests.filter((q) => q.batch !== undefined)).toHaveLength(8);
  }, 120_000);
});

describe('the few-shot examples of a unit', () => {
  it('never include the person being built', async () => {
    const { examplesFor } = await import('../../../../src/benchmarks/personalens/construction/make-steps.js');
    const person = (id: string) => ({ demographics: { user_id: id } }) as never;
    const w = { examples: { users: [person('user0'), person('user1'), person('user2')], released: {} as never } };
    const ids = (u: { source?: string }) => examplesFor(w, { user_id: 'user0', ...u } as never).map((e) => e.demographics.user_id);
    expect(ids({ source: 'user1' })).toEqual(['user0', 'user2']);
    expect(ids({})).toEqual(['user0', 'user1', 'user2']);
  });
});

describe('a build whose replies are refused', () => {
  let server: MockLlmServer;
  afterAll(async () => server?.close());

  it('records each refusal, asks once more, leaves the users out of the export and says why', async () => {
    // Every past-interaction reply is a bare label: empty once stripped, refused twice.
    server = await startMockLlm({ reply: () => 'Interaction Summary:' });
    const dir = tempDir('plens-build-refused-');
    const pipeline = join(dir, 'p.yaml');
    writeFileSync(
      pipeline,
      [
        'name: refused-build',
        `workspace: ${join(dir, 'out')}`,
        'build:',
        '  demographics: {from: sample, users: 2}',
        '  models:',
        '    default: sim:default',
        `    interactions: openai:terse?base_url=${server.url}/v1`,
        '  sd_tasks: 1',
        '  md_tasks: 2',
        '  compare_with: null',
        'scenarios: {kind: all}',
        '',
      ].join('\n'),
    );
    const env = { OPENAI_API_KEY: 'sk-refused' };
    const r = await runCliJson<MakeJson>(['make', 'build-export', '-p', pipeline, '--no-progress'], { env });
    expect(r.code).toBe(1);
    const interactions = r.json.steps.find((s) => s.step === 'build-interactions')!;
    // Refused replies are recorded parse states, not failed calls: the step itself ran.
    expect(interactions.status).toBe('ran');
    expect(interactions.detail).toMatch(/reply\(ies\) refused by the parser/);
    const exported = r.json.steps.find((s) => s.step === 'build-export')!;
    expect(exported.status).toBe('failed');
    expect(exported.detail).toMatch(/no user is complete \(user0: no past interactions for /);
    const report = JSON.parse(readFileSync(join(dir, 'out', 'build', 'export-report.json'), 'utf8'));
    expect(report.left_out.map((u: { user_id: string }) => u.user_id)).toEqual(['user0', 'user1']);
    const rows = await records(
      join(dir, 'out', 'build', 'interactions', '*', 'records.parquet'),
      `SELECT DISTINCT status, parse_state, reasked, first_parse_state FROM $FILES`,
    );
    expect(rows).toEqual([{ status: 'parse_error', parse_state: 'empty', reasked: true, first_parse_state: 'empty' }]);
    // Each unit was asked twice: the reply, and once more with why.
    const units = Number((await records(join(dir, 'out', 'build', 'interactions', '*', 'records.parquet'), 'SELECT count(*)::INT AS n FROM $FILES'))[0]!['n']);
    expect(server.stats().requests).toBe(2 * units);
    const status = await runCli(['status', '-p', pipeline], { env });
    expect(status.stdout).toMatch(/export pending \(0 users, 2 left out, 0 flagged by the consistency check\)/);
    expect(status.stdout).toMatch(/^ {2}interactions 0 done, 0 pending, \d+ refused, 0 failed/m);
  }, 120_000);
});

describe('a build whose inputs change', () => {
  it('asks the changed units again and reads only their new records', async () => {
    const dir = tempDir('plens-build-change-');
    const pipeline = join(dir, 'p.yaml');
    const write = (examples: string) =>
      writeFileSync(
        pipeline,
        [
          'name: change-build',
          `workspace: ${join(dir, 'out')}`,
          'build:',
          '  demographics: {from: sample, users: 3}',
          '  models: {default: sim:default}',
          `  examples: ${examples}`,
          '  compare_with: null',
          'scenarios: {kind: all}',
          '',
        ].join('\n'),
      );
    write('null');
    const first = await runCliJson<MakeJson>(['make', 'build-masks', '-p', pipeline, '--no-progress']);
    expect(first.code, first.stderr).toBe(0);
    const masksDir = join(dir, 'out', 'build', 'masks');
    const parquet = join(masksDir, '*', 'records.parquet');
    const firstKeys = (await records(parquet, 'SELECT key FROM $FILES')).map((r) => r['key']);
    expect(firstKeys).toHaveLength(3);
    // The examples are part of every prompt: new keys for the same units, in the same partition.
    write('sample');
    const second = await runCliJson<MakeJson>(['make', 'build-masks', '-p', pipeline, '--no-progress']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json.steps.find((s) => s.step === 'build-masks')!.work).toBe(3);
    expect(await records(parquet, 'SELECT count(*)::INT AS n FROM $FILES')).toEqual([{ n: 6 }]);
    // What the later stages and status read: the three new records, none of the first run's.
    const { readBuildRecords } = await import('../../../../src/benchmarks/personalens/construction/build-stage.js');
    const readKeys = async () => [...(await readBuildRecords(join(masksDir, readdirSync(masksDir)[0]!))).values()].map((r) => r.key);
    const secondKeys = await readKeys();
    expect(secondKeys).toHaveLength(3);
    for (const k of secondKeys) expect(firstKeys).not.toContain(k);
    // Back to the first inputs: nothing to ask (their records exist), and those are the ones read again.
    write('null');
    const third = await runCliJson<MakeJson>(['make', 'build-masks', '-p', pipeline, '--no-progress']);
    expect(third.json.steps.find((s) => s.step === 'build-masks')!.status).toBe('up-to-date');
    expect((await readKeys()).sort()).toEqual([...firstKeys].sort());
  }, 60_000);
});

describe('a build section with a data section', () => {
  it('is refused at the data line: import reads what the build writes', async () => {
    const dir = tempDir('plens-build-data-');
    const pipeline = join(dir, 'p.yaml');
    writeFileSync(
      pipeline,
      ['name: both', 'build:', '  demographics: {from: sample}', '  models: {default: sim:default}', 'data: {from: sample}', 'scenarios: {kind: all}', ''].join(
        '\n',
      ),
    );
    const r = await runCli(['make', '-p', pipeline, '--dry-run']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/p\.yaml:5:\d+ \/data: a pipeline with a build section imports what the build writes: leave data out/);
  });
});
