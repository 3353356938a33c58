import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { UserPosts } from '../../../src/benchmarks/personabench/corpus.js';
import { selectImpactNpConv, selectSignNpConv } from '../../../src/benchmarks/personabench/selection.js';
import { repoRoot, tempDir } from '../../helpers/cli.js';
import { originalAvailable, runMaker } from './original.js';

/*
 * The NP-Conv makers' seeded order against the original scripts: 3.1_RandPrompt.py and
 * 3.2_RandPrompt.py run unmodified with /usr/bin/python3 (their shuffle is unseeded: a wrapper seeds
 * Python's random, as plens's --seed does, and runs the script), on our fixtures; the target reply
 * ids must come out in the same order. Needs a checkout of the original
 * (github.com/PERSONA-bench/PERSONA, branch Latest) in PERSONABENCH_ORIGINAL; skipped without one.
 */
const available = originalAvailable(join('PromptMakers', '3.1_RandPrompt.py'));

/** The sample with scores the original reads but cannot compare: a string on a reply, null and a string on posts. */
function oddScores(): string {
  const grouped = JSON.parse(readFileSync(join(repoRoot, 'data', 'personabench-sample', 'grouped.json'), 'utf8')) as Record<
    string,
    Array<Record<string, unknown>>
  >;
  const posts = Object.values(grouped).flat();
  posts[0]!['score'] = '15';
  posts[1]!['score'] = null;
  const reply = (posts[2]!['comments'] as Array<{ replies?: Array<Record<string, unknown>> }>).find((c) => c.replies?.length)?.replies?.[0];
  if (reply) reply['score'] = '15';
  const file = join(tempDir('plens-pb-odd-'), 'grouped.json');
  writeFileSync(file, JSON.stringify(grouped));
  return file;
}

const INPUTS = [join(repoRoot, 'test', 'fixtures', 'personabench', 'grouped.json'), join(repoRoot, 'data', 'personabench-sample', 'grouped.json'), oddScores()];
const MAKERS = [
  { script: '3.1_RandPrompt.py', output: 'WithConversationPrompts_ScorePrediction_PseudoRandomContext.jsonl', select: selectSignNpConv },
  { script: '3.2_RandPrompt.py', output: 'WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl', select: selectImpactNpConv },
];

function runOriginal(script: string, input: string, seed: number, output: string): string[] {
  const dir = tempDir('plens-pb-orig-');
  copyFileSync(input, join(dir, 'merged_posts_remapped.json'));
  const r = runMaker(dir, script, seed);
  if (r.status !== 0) throw new Error(`${script} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return readFileSync(join(dir, output), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { prediction_task: { target_reply_id: string } }).prediction_task.target_reply_id);
}

describe.skipIf(!available)('PERSONA-bench NP-Conv order: plens --seed S = the original with random.seed(S)', () => {
  for (const input of INPUTS) {
    for (const maker of MAKERS) {
      it(`${maker.script} on ${input.split('/').slice(-2).join('/')}`, () => {
        const users = Object.entries(JSON.parse(readFileSync(input, 'utf8')) as Record<string, UserPosts['posts']>).map(([user, posts]) => ({ user, posts }));
        for (const seed of [0, 14, 2025]) {
          const ours = maker.select(users, { fidelity: 'original', seed }).map((s) => s.targetReplyId);
          expect(ours, `seed ${seed}`).toEqual(runOriginal(maker.script, input, seed, maker.output));
        }
      });
    }
  }
});
