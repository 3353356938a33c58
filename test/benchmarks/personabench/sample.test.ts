// The bundled synthetic sample (data/personabench-sample/): both formats read to the same
// corpus, and every task x setting yields samples with a prompt under both fidelities.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildAllPrompts } from '../../../src/benchmarks/personabench/build-prompts.js';
import { readPersonaUsers } from '../../../src/benchmarks/personabench/import.js';
import { packageRoot } from '../../../src/core/paths.js';

const dir = join(packageRoot, 'data', 'personabench-sample');

describe('data/personabench-sample', () => {
  it('raw and grouped files hold the same users and posts (4 users, 10 posts)', async () => {
    const raw = await readPersonaUsers(join(dir, 'raw.json'));
    const grouped = await readPersonaUsers(join(dir, 'grouped.json'));
    expect(raw.format).toBe('raw');
    expect(grouped.format).toBe('grouped');
    expect(grouped.users).toEqual(raw.users);
    expect(raw.users.map((u) => [u.user, u.posts.length])).toEqual([
      ['maya_reads', 3],
      ['kestrel_dev', 3],
      ['tomasz_bakes', 2],
      ['ada_orbit', 2],
    ]);
  });

  it.each(['original', 'fixed'] as const)('every task x setting yields samples under %s', async (fidelity) => {
    const { users } = await readPersonaUsers(join(dir, 'grouped.json'));
    const records = buildAllPrompts(users, { fidelity, seed: 0 });
    const counts = new Map<string, number>();
    for (const r of records) counts.set(`${r.task} ${r.setting}`, (counts.get(`${r.task} ${r.setting}`) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(['3.1', '3.2', '3.3'].flatMap((t) => ['NP-Conv', 'P-Conv', 'P-NonConv'].map((s) => `${t} ${s}`)).sort());
    // r/art (u1p3) has two participants: never a 3.1/3.2 target.
    expect(records.filter((r) => r.task !== '3.3').map((r) => r.targetPostId)).not.toContain('u1p3');
    // Both signs occur among the 3.1 labels.
    expect(new Set(records.filter((r) => r.task === '3.1').map((r) => r.trueLabel))).toEqual(new Set(['positive', 'negative']));
  });

  it('original pairs every NP-Conv sample with its own post (10 posts: 10 divides 200); fixed never does', async () => {
    const { users } = await readPersonaUsers(join(dir, 'grouped.json'));
    const selfPaired = (fidelity: 'original' | 'fixed') =>
      buildAllPrompts(users, { fidelity, seed: 0 })
        .filter((r) => r.setting === 'NP-Conv' && r.task === '3.3')
        .map((r) => r.extra!['context_post_used_idx_global'] === r.extra!['current_post_idx_global']);
    expect(selfPaired('original').every(Boolean)).toBe(true);
    expect(selfPaired('fixed').some(Boolean)).toBe(false);
  });
});
