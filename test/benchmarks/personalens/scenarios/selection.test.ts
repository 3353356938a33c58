import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseUserList } from '../../../../src/benchmarks/personalens/scenarios/selection.js';
import { runCli, runCliJson, sampleDir, tempDir } from '../../../helpers/cli.js';

describe('parseUserList', () => {
  it('reads indices, ranges and user<N> names into sorted distinct indices', () => {
    expect(parseUserList('3-5,1,user7,4')).toEqual([1, 3, 4, 5, 7]);
    expect(parseUserList('user2-user4')).toEqual([2, 3, 4]);
  });
  it('rejects backwards ranges and junk with a usage error', () => {
    expect(() => parseUserList('5-3')).toThrow(/backwards/);
    expect(() => parseUserList('abc')).toThrow(/cannot read "abc"/);
    expect(() => parseUserList(',')).toThrow(/no users/);
  });
});

describe('plens scenarios on the sample', () => {
  const root = tempDir();
  const ws = join(root, 'out');
  type Result = { scenarios: { total: number; sd: number; md: number }; users: number; missing_users: number[]; warnings: string[] };
  const select = async (...args: string[]) => {
    const r = await runCliJson<Result>(['scenarios', '-w', ws, ...args]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return r.json;
  };
  const ids = async (...args: string[]) => {
    const db = join(root, `w-${Math.random().toString(36).slice(2)}.duckdb`);
    expect((await runCli(['scenarios', '-w', ws, ...args])).code).toBe(0);
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
    return (await runCliJson<Array<{ scenario_id: string }>>(['sql', 'select scenario_id from scenarios', '--db', db])).json.map((r) => r.scenario_id);
  };

  beforeAll(async () => {
    expect((await runCli(['import', '--from', sampleDir, '-w', ws])).code).toBe(0);
  });

  // Counts below are from data/sample/README.md (hand-tabulated by the sample's author).
  it('selects by kind', async () => {
    expect((await select('--kind', 'all')).scenarios).toEqual({ total: 180, sd: 161, md: 19 });
    expect((await select('--kind', 'sd')).scenarios).toEqual({ total: 161, sd: 161, md: 0 });
    expect((await select('--kind', 'md')).scenarios).toEqual({ total: 19, sd: 0, md: 19 });
  });

  it('selects by users: user5 has 22 SD + 4 MD, user4 18 SD + 1 MD', async () => {
    expect((await select('--users', 'user5')).scenarios).toEqual({ total: 26, sd: 22, md: 4 });
    expect((await select('--users', '4-5')).scenarios).toEqual({ total: 45, sd: 40, md: 5 });
  });

  it('selects scenarios touching any listed domain (MD tasks count for each of their domains)', async () => {
    // Buses: 12 scenarios (sample README), of which MD-task-4 accounts for 5.
    expect((await select('--domains', 'Buses')).scenarios).toEqual({ total: 12, sd: 7, md: 5 });
  });

  it('reports requested users that are absent rather than failing silently', async () => {
    const r = await select('--users', '6-9');
    expect(r.users).toBe(2);
    expect(r.missing_users).toEqual([8, 9]);
    expect(r.warnings[0]).toMatch(/2 of 4 requested users/);
  });

  it('a paper sample keeps only its users present in the data and reports the others', async () => {
    // Of sample_50 only user7 exists in the sample (19 SD + 3 MD).
    const r = await select('--sample', '50');
    expect(r.scenarios).toEqual({ total: 22, sd: 19, md: 3 });
    expect(r.missing_users).toHaveLength(49);
  });

  it('an empty selection is exit 4 saying why and what the dataset has, and keeps the previous selection', async () => {
    await select('--users', '0');
    const manifest = () => readFileSync(join(ws, 'scenarios', 'manifest.json'), 'utf8');
    const before = manifest();
    const both = await runCli(['scenarios', '-w', ws, '--sample', '50', '--users', '0-6']);
    expect(both.code, both.stderr).toBe(4);
    expect(both.stderr).toContain(
      'E_PREREQUISITE: the scenario selection is empty (--kind all AND --sample 50 AND --users (7 user(s))): no user is in both --sample and --users',
    );
    expect(both.stderr).toContain('hint: the dataset has 8 users (indices 0-7) and');
    const absent = await runCli(['scenarios', '-w', ws, '--users', '40-45']);
    expect(absent.code).toBe(4);
    expect(absent.stderr).toContain('none of the 6 requested user(s) is in the dataset');
    const noDomain = await runCli(['scenarios', '-w', ws, '--users', '0', '--kind', 'md', '--domains', 'Alarm']);
    expect(noDomain.code, noDomain.stderr).toBe(4);
    expect(noDomain.stderr).toContain('(--kind md AND --users (1 user(s)) AND --domains Alarm)');
    // Nothing was written: the last good selection stands.
    expect(manifest()).toBe(before);
  });

  it('--random N --seed S is deterministic, seed-dependent, and a larger N keeps a smaller N', async () => {
    const a = await ids('--random', '20', '--seed', '7');
    const b = await ids('--random', '20', '--seed', '7');
    const c = await ids('--random', '20', '--seed', '8');
    const big = await ids('--random', '50', '--seed', '7');
    expect(a).toHaveLength(20);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    expect(big.filter((id) => a.includes(id))).toHaveLength(20);
  });

  it('rejects an unknown domain and a seed without --random with usage errors (exit 2)', async () => {
    const bad = await runCli(['scenarios', '-w', ws, '--domains', 'Weather']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown domain(s) "Weather"');
    const seed = await runCli(['scenarios', '-w', ws, '--seed', '3']);
    expect(seed.code).toBe(2);
  });

  it('needs an imported dataset first (exit 4, with a hint)', async () => {
    const r = await runCli(['scenarios', '-w', join(root, 'empty')]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('plens import');
  });
});
