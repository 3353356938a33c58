import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { repoRoot, runCli, runCliJson, tempDir } from '../../helpers/cli.js';
import { expectTablesCsvGolden } from '../../helpers/golden.js';

/**
 * PrefEval as a pipeline: pipelines/prefeval-demo.yaml (a synthetic sample, sim:default) made
 * end to end, as `npm run demo` runs it; its figures pinned byte for byte.
 */
interface MakeJson {
  steps: Array<{ step: string; status: string; work: number }>;
  failed: string[];
  report: string | null;
}

describe('plens make on PrefEval: the prefeval demo pipeline', () => {
  const dir = tempDir('plens-prefeval-demo-');
  const env = { PLENS_PREFEVAL_WORKSPACE: join(dir, 'out'), PLENS_PREFEVAL_WAREHOUSE: join(dir, 'w.duckdb') };
  const demo = join(repoRoot, 'pipelines', 'prefeval-demo.yaml');
  let first: MakeJson;

  beforeAll(async () => {
    const plan = await runCliJson<MakeJson>(['make', 'all', '-p', demo, '--dry-run'], { env });
    expect(plan.code, plan.stderr).toBe(0);
    // 3 forms x 2 topics x 4 preferences x 3 baselines x 2 turn counts, for each task.
    expect(plan.json.steps.map((s) => `${s.step}:${s.status}:${s.work}`)).toEqual([
      'prefeval-responses:would-run:144',
      'prefeval-checks:would-run:144',
      'prefeval-mcq:would-run:144',
      'warehouse:would-run:1',
      'tables:would-run:1',
      'report:would-run:1',
    ]);
    expect(existsSync(env.PLENS_PREFEVAL_WORKSPACE)).toBe(false);
    const r = await runCliJson<MakeJson>(['make', 'all', '-p', demo, '--no-progress'], { env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    first = r.json;
  }, 120_000);

  it('runs the responses, the checks, the MCQ answers, the warehouse, the tables and the report', () => {
    expect(first.steps.map((s) => `${s.step}:${s.status}`)).toEqual([
      'prefeval-responses:ran',
      'prefeval-checks:ran',
      'prefeval-mcq:ran',
      'warehouse:ran',
      'tables:ran',
      'report:ran',
    ]);
    expect(first.failed).toEqual([]);
    expect(readdirSync(join(env.PLENS_PREFEVAL_WORKSPACE, 'prefeval', 'responses'))).toHaveLength(18);
    expect(readdirSync(join(env.PLENS_PREFEVAL_WORKSPACE, 'prefeval', 'mcq'))).toHaveLength(18);
    expect(readdirSync(join(env.PLENS_PREFEVAL_WORKSPACE, 'tables')).sort()).toEqual([
      'prefeval_by_topic.md',
      'prefeval_mcq_by_topic.md',
      'prefeval_mcq_paired.md',
      'prefeval_mcq_results.md',
      'prefeval_paired.md',
      'prefeval_results.md',
    ]);
  });

  it('opens the report with the models compared, each task a block per form and turn count and a column per baseline', async () => {
    const html = readFileSync(join(env.PLENS_PREFEVAL_WORKSPACE, 'report.html'), 'utf8');
    const db = await Database.open(env.PLENS_PREFEVAL_WAREHOUSE, { readOnly: true });
    type Result = { model: string; form: string; baseline: string; inter_turns: number; n: bigint; accuracy: number; accuracy_lo: number; accuracy_hi: number };
    let generation: Result[];
    let mcq: Result[];
    try {
      generation = await db.all<Result>('SELECT * FROM prefeval_results');
      mcq = await db.all<Result>('SELECT * FROM prefeval_mcq_results');
    } finally {
      db.close();
    }
    const forms = [
      ['explicit', 'Explicit preference'],
      ['choice', 'Implicit preference (choice)'],
      ['persona', 'Implicit preference (persona)'],
    ];
    for (const [id, results] of [
      ['prefeval', generation],
      ['prefeval-mcq', mcq],
    ] as const) {
      const table = html.match(new RegExp(`<div class="table comparison" id="comparison-${id}">[\\s\\S]*?</table>`))![0];
      expect([...table.matchAll(/<th class="num">([^<]*)<\/th>/g)].map((m) => m[1])).toEqual(['n', 'Zero-shot', 'Reminder', 'Self-critic']);
      const blocks = table.split('<tr class="block">').slice(1);
      expect(blocks.map((b) => b.match(/scope="colgroup">([^<]*)</)![1])).toEqual(
        forms.flatMap(([, label]) => [`${label}, 0 filler turns`, `${label}, 3 filler turns`]),
      );
      for (const [b, block] of blocks.entries()) {
        const form = forms[Math.floor(b / 2)]![0];
        const turns = b % 2 === 0 ? 0 : 3;
        const here = results.filter((r) => r.model === 'sim:default' && r.form === form && Number(r.inter_turns) === turns);
        const cells = [...block.matchAll(/<td class="num">([^<]*)(?:<span class="ci">([^<]*)<\/span>)?<\/td>/g)].map((m) => [m[1], m[2] ?? null]);
        const expected = ['zero-shot', 'remind', 'selfcritic'].map((baseline) => {
          const r = here.find((x) => x.baseline === baseline)!;
          return [r.accuracy.toFixed(2), `[${r.accuracy_lo.toFixed(2)}, ${r.accuracy_hi.toFixed(2)}]`];
        });
        expect(cells, `${id} ${form} ${turns}`).toEqual([[String(here.reduce((n, r) => n + Number(r.n), 0)), null], ...expected]);
      }
    }
  });

  it('gives the same tables, byte for byte, as the committed golden file', async () => {
    await expectTablesCsvGolden(env.PLENS_PREFEVAL_WAREHOUSE, 'prefeval-demo-tables');
  });

  it('a second make has nothing to do; status shows the responses and checks', async () => {
    const again = await runCli(['make', 'all', '-p', demo, '--no-progress'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to do: every target is up to date');
    const status = await runCli(['status', '-p', demo], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^responses {2}144 done, 0 pending, 0 failed$/m);
    expect(status.stdout).toMatch(/^checks {5}144 done, 0 pending, 0 failed \(judge sim:default\)$/m);
    expect(status.stdout).toMatch(/^mcq {8}144 done, 0 pending, 0 failed$/m);
  });

  it('plens prefeval import checks a release and counts it', async () => {
    const r = await runCliJson<{ preferences: number; filler_turns: number; topics: unknown[] }>([
      'prefeval',
      'import',
      '--from',
      join(repoRoot, 'data', 'prefeval-sample'),
      '--topics',
      'travel_restaurant,shop_motors',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ preferences: 8, filler_turns: 6, mcq_records: 8 });
    const missing = await runCli(['prefeval', 'import', '--from', join(repoRoot, 'data', 'prefeval-sample')]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/no PrefEval topic travel_transportation at .*explicit_preference\/travel_transportation\.json/);
  });
});
