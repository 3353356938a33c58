import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { UserPosts } from '../../../src/benchmarks/personabench/corpus.js';
import { selectAll } from '../../../src/benchmarks/personabench/selection.js';
import { repoRoot, tempDir } from '../../helpers/cli.js';
import { drawCorpus, originalAvailable, runMaker } from './original.js';

/*
 * The nine prompt makers' data, field by field, against the original scripts: every maker of
 * PromptMakers/ runs unmodified with /usr/bin/python3 (seeded through a wrapper, as plens's --seed)
 * on our fixtures and on corpora drawn from a seeded generator (nested threads, the post author
 * among the commenters, deleted and removed bodies, zero, string and null scores, missing
 * subreddits, unparseable timestamps); plens's selection must give, line by line in the same
 * order, the same targets, labels, subreddits, users, few-shot ids and NP-Conv indices. The
 * prompt wording is plens's own and not compared here. Needs a checkout of the original in
 * PERSONABENCH_ORIGINAL (github.com/PERSONA-bench/PERSONA, branch Latest); skipped without one.
 */
const available = originalAvailable();

const FILES: Record<string, string> = {
  '3.1 P-Conv': 'WithConversationPrompts_ScorePrediction_Refactored.jsonl',
  '3.1 P-NonConv': 'WithoutConversationPrompts_ScorePrediction_Refactored.jsonl',
  '3.1 NP-Conv': 'WithConversationPrompts_ScorePrediction_PseudoRandomContext.jsonl',
  '3.2 P-Conv': 'WithConversationPrompts_ExactScorePrediction.jsonl',
  '3.2 P-NonConv': 'WithoutConversationPrompts_ExactScorePrediction.jsonl',
  '3.2 NP-Conv': 'WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl',
  '3.3 P-Conv': 'WithConversationPrompts_BodyPrediction_v2.jsonl',
  '3.3 P-NonConv': 'WithoutConversationPrompts_BodyPrediction_v2.jsonl',
  '3.3 NP-Conv': 'WithPseudoRandomConversationPrompts_BodyPrediction.jsonl',
};
const MAKERS = ['3.1PromptMaker.py', '3.1_RandPrompt.py', '3.2PromptMaker.py', '3.2_RandPrompt.py', '3.3PromptMaker.py', '3.3_RandPrompt.py'];

function runMakers(input: string, seed: number): Record<string, Array<Record<string, unknown>>> {
  const dir = tempDir('plens-pb-makers-');
  copyFileSync(input, join(dir, 'merged_posts_remapped.json'));
  for (const maker of MAKERS) {
    const r = runMaker(dir, maker, seed);
    if (r.status !== 0 && /Traceback/.test(r.stderr)) throw new Error(`${maker} crashed: ${r.stderr.slice(-2000)}`);
  }
  return Object.fromEntries(
    Object.entries(FILES).map(([k, f]) => [
      k,
      existsSync(join(dir, f))
        ? readFileSync(join(dir, f), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [],
    ]),
  );
}

/** The data-level fields of one line of the original's file, as plens's selection names them. */
function theirFields(key: string, line: Record<string, unknown>): unknown[] {
  if (key.startsWith('3.3')) {
    const np = key.endsWith('NP-Conv');
    return [line['user'], line['true_label'], line['subreddit'], np ? line['context_post_used_idx_global'] : null, np ? line['current_post_idx_global'] : null];
  }
  const pt = line['prediction_task'] as Record<string, unknown>;
  const fs = (pt['few_shot_info'] ?? {}) as Record<string, unknown>;
  const fsPost = fs['fs_post_ref_id'] ?? fs['fs_post_ref_id_in_store'] ?? fs['fs_context_provider_post_ref_id'] ?? null;
  const fsReply = fs['fs_reply_id_hidden_in_example'] ?? fs['fs_example_reply_id_in_fs_post'] ?? fs['fs_context_provider_reply_id_hidden_in_example'] ?? null;
  const none = (v: unknown) => (typeof v === 'string' && v.startsWith('N/A') ? null : v);
  return [pt['target_post_reference_id'], pt['target_reply_id'], pt['true_label'], pt['subreddit'], none(fsPost), none(fsReply)];
}

function ourFields(key: string, s: Record<string, unknown>): unknown[] {
  const fs = (s['fewShot'] ?? null) as { postId?: string | null; replyId?: string | null } | null;
  if (key.startsWith('3.3')) {
    const np = key.endsWith('NP-Conv');
    return [s['user'], s['trueLabel'], s['subreddit'], np ? s['contextPostIndex'] : null, np ? s['currentPostIndex'] : null];
  }
  return [s['targetPostId'], s['targetReplyId'], s['trueLabel'], s['subreddit'], fs?.postId ?? null, fs?.replyId ?? null];
}

function compare(input: string, seed: number): string[] {
  const theirs = runMakers(input, seed);
  const users: UserPosts[] = Object.entries(JSON.parse(readFileSync(input, 'utf8')) as Record<string, UserPosts['posts']>).map(([user, posts]) => ({
    user,
    posts,
  }));
  const all = selectAll(users, { fidelity: 'original', seed });
  const ours = [...all.score, ...all.reply] as unknown as Array<Record<string, unknown>>;
  const problems: string[] = [];
  for (const key of Object.keys(FILES)) {
    const [task, setting] = key.split(' ');
    const mine = ours.filter((s) => s['task'] === task && s['setting'] === setting).sort((a, b) => (a['position'] as number) - (b['position'] as number));
    const want = theirs[key]!;
    if (mine.length !== want.length) problems.push(`${key}: ${want.length} lines in the original's file, ${mine.length} in plens's`);
    want.forEach((line, i) => {
      const a = JSON.stringify(theirFields(key, line));
      const b = JSON.stringify(mine[i] ? ourFields(key, mine[i]!) : null);
      if (a !== b) problems.push(`${key} line ${i + 1}: original ${a}, plens ${b}`);
    });
  }
  return problems;
}

describe.skipIf(!available)('PERSONA-bench selection: the nine files, field by field, as the original makers write them', () => {
  it('on the hand-made fixture and the bundled sample', () => {
    for (const input of [
      join(repoRoot, 'test', 'fixtures', 'personabench', 'grouped.json'),
      join(repoRoot, 'data', 'personabench-sample', 'grouped.json'),
      join(repoRoot, 'test', 'fixtures', 'personabench', 'edge-cases.json'),
    ]) {
      expect(compare(input, 14), input).toEqual([]);
    }
  });

  it('on drawn corpora with the other shapes the original reads (body or selftext for content, missing keys, created_utc)', () => {
    const dir = tempDir('plens-pb-drawn-variants-');
    const seeds = (process.env['PLENS_PB_VARIANT_SEEDS'] ?? '101,102,103,104').split(',').map(Number);
    for (const seed of seeds) {
      const file = join(dir, `corpus-${seed}.json`);
      writeFileSync(file, JSON.stringify(drawCorpus(seed, true)));
      expect(compare(file, seed).slice(0, 5), `corpus seed ${seed}`).toEqual([]);
    }
  }, 300_000);

  it('on drawn corpora', () => {
    const dir = tempDir('plens-pb-drawn-');
    const seeds = (process.env['PLENS_PB_SEEDS'] ?? '1,2,3,4,5,6,7,8').split(',').map(Number);
    for (const seed of seeds) {
      const file = join(dir, `corpus-${seed}.json`);
      writeFileSync(file, JSON.stringify(drawCorpus(seed)));
      expect(compare(file, seed).slice(0, 5), `corpus seed ${seed}`).toEqual([]);
    }
  }, 300_000);
});
