// Sample selection on a hand-built fixture (test/fixtures/personabench/grouped.json); every
// expected value below is worked out by hand from spec §2 in the comments.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cleanText, flattenCorpus, groupByAuthor, parseTimestamp, type RawPost, type UserPosts } from '../../../src/benchmarks/personabench/corpus.js';
import {
  downSamplePositives,
  eligibleReplies,
  qualifyingTreeCount,
  scoreTaskReplies,
  selectImpactNpConv,
  selectReplyNpConv,
  selectReplySamples,
  selectScoreSamples,
  selectSignNpConv,
} from '../../../src/benchmarks/personabench/selection.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/personabench/${name}`, import.meta.url), 'utf8'));
const grouped = fixture('grouped.json') as Record<string, RawPost[]>;
const users: UserPosts[] = Object.entries(grouped).map(([user, posts]) => ({ user, posts }));
const original = { fidelity: 'original' as const, seed: 14 };
const fixed = { fidelity: 'fixed' as const, seed: 14 };

describe('corpus: IDs, text and time', () => {
  it('assigns u{i}p{j} and depth-first -c{k} ids with one counter per post', () => {
    const posts = flattenCorpus(users);
    expect(posts.map((p) => p.id)).toEqual(['u1p1', 'u1p2', 'u1p3', 'u2p1', 'u2p2']);
    expect(posts[0]!.comments.map((c) => c.id)).toEqual(['u1p1-c1', 'u1p1-c1-c2', 'u1p1-c1-c2-c3', 'u1p1-c1-c2-c3-c4', 'u1p1-c5', 'u1p1-c5-c6', 'u1p1-c7']);
    expect(posts[0]!.comments.map((c) => c.depth)).toEqual([1, 2, 3, 4, 1, 2, 1]);
    expect(posts[0]!.comments[5]!.parentId).toBe('u1p1-c5');
    expect(posts[0]!.comments[5]!.topLevelId).toBe('u1p1-c5');
    expect(posts[2]!.comments.map((c) => c.id)).toEqual(['u1p3-c1', 'u1p3-c1-c2', 'u1p3-c3', 'u1p3-c3-c4', 'u1p3-c3-c5']);
  });

  it('groups the flat raw list by author in first-appearance order', () => {
    const raw = fixture('raw.json') as RawPost[];
    const regrouped = groupByAuthor(raw);
    expect(regrouped.map((u) => u.user)).toEqual(['alice', 'bob']);
    expect(regrouped[0]!.posts.map((p) => p.title)).toEqual(['Sleep study results', 'Best fantasy of the year', 'Patch notes']);
    expect(groupByAuthor([{ title: 'x' }, { title: 'y', author: null }]).map((u) => u.user)).toEqual(['UNKNOWN_AUTHOR', 'null']);
  });

  it('clean_text and timestamps as the prompt makers normalise them', () => {
    expect(cleanText(null)).toBe('');
    expect(cleanText(' a\nb\r\nc  d ')).toBe('a b  c  d');
    expect(parseTimestamp('2023-03-01T10:00:00Z')?.iso).toBe('2023-03-01T10:00:00Z');
    expect(parseTimestamp('2023-03-01 10:00:00')?.iso).toBe('2023-03-01T10:00:00Z');
    expect(parseTimestamp('2023-03-01T10:00:00.25+00:00')?.iso).toBe('2023-03-01T10:00:00.250000Z');
    expect(parseTimestamp('2023-03-01T12:00:00+02:00')!.time).toBe(parseTimestamp('2023-03-01T10:00:00Z')!.time);
    expect(parseTimestamp(1677664800)).toBeNull();
    expect(parseTimestamp('yesterday')).toBeNull();
    expect(parseTimestamp('2023-02-30T00:00:00Z')).toBeNull();
    // An offset is applied and the time printed in UTC with Z, as datetime_to_string prints it
    // (values from the original's parse_timestamp + datetime_to_string under /usr/bin/python3).
    expect(parseTimestamp('2023-03-01T10:00:00+02:00')?.iso).toBe('2023-03-01T08:00:00Z');
    expect(parseTimestamp('2023-03-01T23:30:00-01:00')?.iso).toBe('2023-03-02T00:30:00Z');
    expect(parseTimestamp('2023-03-01T10:00:00-05:30')?.iso).toBe('2023-03-01T15:30:00Z');
    expect(parseTimestamp('2023-03-01T10:00:00+0200')?.iso).toBe('2023-03-01T08:00:00Z');
    expect(parseTimestamp('2023-03-01T10:00:00+02')?.iso).toBe('2023-03-01T08:00:00Z');
    expect(parseTimestamp('2023-03-01T10:00:00+02:00:30')?.iso).toBe('2023-03-01T07:59:30Z');
    expect(parseTimestamp('0001-01-01T00:00:00')?.iso).toBe('0001-01-01T00:00:00Z');
    // What CPython 3.11's fromisoformat and the strptime fallbacks also take (ISO weeks, the basic
    // format, any separator, one-digit fields, a "." before Z), and refuse (hour 24, ordinal dates).
    expect(parseTimestamp('20230301')?.iso ?? null).toBe('2023-03-01T00:00:00Z');
    expect(parseTimestamp('20230301T101112')?.iso ?? null).toBe('2023-03-01T10:11:12Z');
    expect(parseTimestamp('2023-W09-3')?.iso ?? null).toBe('2023-03-01T00:00:00Z');
    expect(parseTimestamp('2023-W09')?.iso ?? null).toBe('2023-02-27T00:00:00Z');
    expect(parseTimestamp('2023-03-01X10:00:00')?.iso ?? null).toBe('2023-03-01T10:00:00Z');
    expect(parseTimestamp('2023-03-01T10:00:00 +02:00')?.iso ?? null).toBe('2023-03-01T08:00:00Z');
    expect(parseTimestamp('2023-3-1T10:00:00')?.iso ?? null).toBe('2023-03-01T10:00:00Z');
    expect(parseTimestamp('2023-03-01T10:00:00.Z')?.iso ?? null).toBe('2023-03-01T10:00:00Z');
    expect(parseTimestamp('2023-03-01T10:00:00+02:00:30.5')?.iso ?? null).toBe('2023-03-01T07:59:29.500000Z');
    expect(parseTimestamp('2023-03-01T24:00:00')?.iso ?? null).toBe(null);
    expect(parseTimestamp('2023-060')?.iso ?? null).toBe(null);
  });
});

describe('3.1 / 3.2 target selection (spec §2.0)', () => {
  const posts = flattenCorpus(users);

  it('eligible replies: author = OP, numeric score, live body, live parent; sorted by |score| then later first', () => {
    // u1p1: c2 (15), c6 (-8), c4 (-5).
    expect(eligibleReplies(posts[0]!).map((r) => r.node.id)).toEqual(['u1p1-c1-c2', 'u1p1-c5-c6', 'u1p1-c1-c2-c3-c4']);
    // u1p2: "Sure." (5) answers a [deleted] comment and is not eligible; -20, 2, 1 remain.
    expect(eligibleReplies(posts[1]!).map((r) => r.node.id)).toEqual(['u1p2-c1-c2', 'u1p2-c3-c4', 'u1p2-c7']);
    // u2p1: a2 and a3 tie on |score| 4; a3 (10:30) is later than a2 (10:20) and comes first.
    expect(eligibleReplies(posts[3]!).map((r) => r.node.id)).toEqual(['u2p1-c1-c2', 'u2p1-c5-c6', 'u2p1-c3-c4']);
  });

  it('filters: u1p3 has only 3 distinct authors (alice, u8, u9) and is skipped', () => {
    expect(scoreTaskReplies(posts[2]!)).toBeNull();
    expect(scoreTaskReplies(posts[0]!)).not.toBeNull();
  });

  it('positive down-sampling drops the low-|score| half of the positives, negatives first', () => {
    const samples = [{ score: 7 }, { score: -9 }, { score: 5 }, { score: 30 }, { score: -4 }, { score: 6 }, { score: 5 }];
    // Positives by |score|: 5, 5, 6, 7, 30; drop floor(5/2) = 2 (both 5s).
    expect(downSamplePositives(samples).map((s) => s.score)).toEqual([-9, -4, 6, 7, 30]);
  });

  it('3.1 P-Conv: targets, labels, order and the second reply as few-shot', () => {
    const samples = selectScoreSamples(users, '3.1', 'P-Conv', original);
    // Positives u1p1 (15), u2p1 (5), u2p2 (30): u2p1 is dropped; the negative u1p2 leads.
    expect(samples.map((s) => [s.targetPostId, s.targetReplyId, s.trueLabel, s.subreddit])).toEqual([
      ['u1p2', 'u1p2-c1-c2', 'negative', 'books'],
      ['u1p1', 'u1p1-c1-c2', 'positive', 'science'],
      ['u2p2', 'u2p2-c1-c2', 'positive', 'gaming'],
    ]);
    expect(samples.map((s) => [s.fewShot!.type, s.fewShot!.replyId, s.fewShot!.label])).toEqual([
      ['dynamic', 'u1p2-c3-c4', 'positive'],
      ['dynamic', 'u1p1-c5-c6', 'negative'],
      ['dynamic', 'u2p2-c3-c4', 'positive'],
    ]);
    expect(samples.map((s) => s.position)).toEqual([0, 1, 2]);
  });

  it('fixed: the few-shot must precede the target in time', () => {
    const samples = selectScoreSamples(users, '3.1', 'P-Conv', fixed);
    // u1p2: target 09:20; "Edit: added more" (09:05, score 1) is the only earlier eligible reply.
    // u1p1 and u2p2: every other eligible reply is later than the target -> default example.
    expect(samples.map((s) => [s.fewShot!.type, s.fewShot!.replyId, s.fewShot!.label])).toEqual([
      ['dynamic', 'u1p2-c7', 'positive'],
      ['default', 'default_fs_post1-c1-r1-ar1', 'positive'],
      ['default', 'default_fs_post1-c1-r1-ar1', 'positive'],
    ]);
    // The default example's ids are the original's: 3.2's lives under its own post id.
    const impact = selectScoreSamples(users, '3.2', 'P-Conv', fixed).filter((s) => s.fewShot!.type === 'default');
    expect(impact.map((s) => [s.fewShot!.postId, s.fewShot!.replyId, s.fewShot!.label])[0]).toEqual([
      'default_fs_post1_with_convo',
      'default_fs_post1_with_convo-c1-r1-ar1',
      25,
    ]);
  });

  it('3.2 uses the same targets with the raw score as label; P-NonConv has no few-shot', () => {
    const conv = selectScoreSamples(users, '3.2', 'P-Conv', original);
    expect(conv.map((s) => s.trueLabel)).toEqual([-20, 15, 30]);
    expect(conv.map((s) => s.fewShot!.label)).toEqual([2, -8, 2]);
    const nonConv = selectScoreSamples(users, '3.2', 'P-NonConv', original);
    expect(nonConv.map((s) => s.targetReplyId)).toEqual(conv.map((s) => s.targetReplyId));
    expect(nonConv.every((s) => s.fewShot === null)).toBe(true);
  });

  it('missing __sub__: "" in 3.1, "N/A" in 3.2', () => {
    const noSub = users.map((u) => ({ user: u.user, posts: u.posts.map((p) => ({ ...p, __sub__: undefined })) }));
    expect(selectScoreSamples(noSub, '3.1', 'P-NonConv', original)[0]!.subreddit).toBe('');
    expect(selectScoreSamples(noSub, '3.2', 'P-NonConv', original)[0]!.subreddit).toBe('N/A');
  });
});

describe('NP-Conv pairing', () => {
  it('3.1: pool index (g + 200) % 5 is the post itself here (5 divides 200); the output is shuffled with the seed', () => {
    const samples = selectSignNpConv(users, original);
    // Kept as 3.1_RandPrompt.py orders them before its shuffle: the kept positives by |score|, then the
    // negatives. The orders below are what the original script writes with random.seed(14) and
    // random.seed(0) on this fixture (run with /usr/bin/python3 and a checkout of the original).
    expect(samples.map((s) => s.targetPostId)).toEqual(['task_u2p2', 'task_u1p2', 'task_u1p1']);
    expect(samples.map((s) => s.targetReplyId)).toEqual(['task_u2p2-c1-c2', 'task_u1p2-c1-c2', 'task_u1p1-c1-c2']);
    // Pool = all 5 posts (u1p3 qualifies: 3 authors > 2); internal_p{global index + 1}.
    expect(samples.map((s) => [s.fewShot!.postId, s.fewShot!.replyId, s.fewShot!.label])).toEqual([
      ['internal_p5', 'internal_p5-c1-c2', 'positive'],
      ['internal_p2', 'internal_p2-c1-c2', 'negative'],
      ['internal_p1', 'internal_p1-c1-c2', 'positive'],
    ]);
    expect(selectSignNpConv(users, { ...original, seed: 0 }).map((s) => s.targetPostId)).toEqual(['task_u1p1', 'task_u1p2', 'task_u2p2']);
  });

  it('--replay-order: a given order of target replies replaces the shuffle (3.2 pairs after it); a wrong one is refused', () => {
    const order = ['task_u1p2-c1-c2', 'task_u2p2-c1-c2', 'task_u1p1-c1-c2'];
    expect(selectSignNpConv(users, { ...original, replayOrder: { '3.1': order } }).map((s) => s.targetReplyId)).toEqual(order);
    const seeded = selectImpactNpConv(users, original);
    const reversed = [...seeded].reverse().map((s) => s.targetReplyId);
    const replayed = selectImpactNpConv(users, { ...original, replayOrder: { '3.2': reversed } });
    expect(replayed.map((s) => s.targetReplyId)).toEqual(reversed);
    // The example is the sample (i + 200) % n places on in the replayed order.
    const n = replayed.length;
    replayed.forEach((s, i) => expect(s.fewShot!.replyId).toBe(replayed[(i + 200) % n]!.targetReplyId));
    expect(() => selectSignNpConv(users, { ...original, replayOrder: { '3.1': ['task_u1p2-c1-c2', 'nope', 'task_u1p1-c1-c2'] } })).toThrow(
      /names 3 target replies, plens selected 3; nope is not among them/,
    );
    expect(() => selectSignNpConv(users, { ...original, replayOrder: { '3.1': order.slice(1) } })).toThrow(/names 2 target replies, plens selected 3/);
  });

  it('3.1: no post qualifies for the few-shot pool: no samples (3.1_RandPrompt.py stops without writing its file)', () => {
    // One post whose thread has two authors only: it can neither be a pool post nor give an example.
    const lonely: UserPosts[] = [
      {
        user: 'solo',
        posts: [
          {
            author: 'solo',
            title: 't',
            score: 3,
            timestamp: '2023-01-01T00:00:00Z',
            comments: [
              {
                author: 'other',
                body: 'Hi?',
                score: 2,
                timestamp: '2023-01-01T01:00:00Z',
                replies: [{ author: 'solo', body: 'Hello.', score: 5, timestamp: '2023-01-01T02:00:00Z' }],
              },
            ],
          },
        ],
      },
    ];
    expect(selectSignNpConv(lonely, original)).toEqual([]);
  });

  it('3.1 fixed: the example comes from another user', () => {
    const samples = selectSignNpConv(users, fixed);
    // alice's posts walk on from their own index to internal_p4 (bob); bob's wrap to internal_p1 (alice).
    expect(samples.map((s) => [s.targetPostId, s.fewShot!.postId])).toEqual([
      ['task_u2p2', 'internal_p1'],
      ['task_u1p2', 'internal_p4'],
      ['task_u1p1', 'internal_p4'],
    ]);
  });

  it('3.2: shuffle first, then the sample (i + 200) % 3 places on provides the example', () => {
    const samples = selectImpactNpConv(users, original);
    expect(samples.map((s) => s.targetPostId)).toEqual(['u1p1', 'u2p2', 'u1p2']);
    // (i + 200) % 3 = (i + 2) % 3: 0 -> 2, 1 -> 0, 2 -> 1.
    expect(samples.map((s) => [s.fewShot!.postId, s.fewShot!.label])).toEqual([
      ['u1p2', -20],
      ['u1p1', 15],
      ['u2p2', 30],
    ]);
  });

  it('3.2 fixed: providers from another user', () => {
    const samples = selectImpactNpConv(users, fixed);
    expect(samples.map((s) => s.fewShot!.postId)).toEqual(['u2p2', 'u1p1', 'u2p2']);
  });
});

describe('3.3 next reply (spec §2.3)', () => {
  const posts = flattenCorpus(users);

  it('qualifying dialogue trees: a TLC with a direct reply and a message by the OP', () => {
    expect(posts.map((p) => qualifyingTreeCount(p))).toEqual([2, 3, 2, 3, 3]);
  });

  it('P-Conv: most recent OP reply is the target, the second most recent the few-shot; deleted share > 0.33 skips', () => {
    const samples = selectReplySamples(users, 'P-Conv', original);
    // u1p2 is skipped: its target "Sure." sits under a [deleted] TLC (1 of 2 = 0.5 > 0.33).
    expect(samples.map((s) => [s.targetPostId, s.targetReplyId, s.trueLabel, s.fewShot!.replyId])).toEqual([
      ['u1p1', 'u1p1-c1-c2-c3-c4', 'Yes, double blind.', 'u1p1-c5-c6'],
      ['u1p3', 'u1p3-c3-c5', 'fine', 'u1p3-c3-c4'],
      ['u2p1', 'u2p1-c1-c2', 'a1', 'u2p1-c5-c6'],
      ['u2p2', 'u2p2-c5-c6', 'tiny', 'u2p2-c3-c4'],
    ]);
    const nonConv = selectReplySamples(users, 'P-NonConv', original);
    expect(nonConv.map((s) => s.targetReplyId)).toEqual(samples.map((s) => s.targetReplyId));
    expect(nonConv.every((s) => s.fewShot === null)).toBe(true);
  });

  it('fewer than 2 candidates, a deleted target, or one qualifying tree skip the post', () => {
    const one = structuredClone(users);
    // Drop "Read the paper first." and delete "Thanks, ...": two candidates remain.
    one[0]!.posts[0]!.comments![1]!.replies = [];
    one[0]!.posts[0]!.comments![0]!.replies![0]!.body = '[removed]';
    const ids = selectReplySamples(one, 'P-Conv', original).map((s) => s.targetPostId);
    // u1p1: the most recent reply (13:00) is still live, but only the c1 tree qualifies now.
    expect(ids).not.toContain('u1p1');
    const deletedTarget = structuredClone(users);
    deletedTarget[1]!.posts[1]!.comments![2]!.replies![0]!.body = '[Deleted]';
    // The original's 3.3 check is case-sensitive: "[Deleted]" stays a target; fixed drops it.
    expect(selectReplySamples(deletedTarget, 'P-Conv', original).map((s) => s.trueLabel)).toContain('[Deleted]');
    expect(selectReplySamples(deletedTarget, 'P-Conv', fixed).map((s) => s.trueLabel)).not.toContain('[Deleted]');
  });

  it('NP-Conv original: context (c + 200) % 5 = c, the post itself; u1p2 is skipped because its context fails', () => {
    const samples = selectReplyNpConv(users, original);
    expect(samples.map((s) => [s.targetPostId, s.targetReplyId, s.contextPostIndex, s.fewShot!.replyId])).toEqual([
      ['orig_idx0', 'orig_idx0-c1-c2-c3-c4', 0, 'ctx_idx0-c5-c6'],
      ['orig_idx2', 'orig_idx2-c3-c5', 2, 'ctx_idx2-c3-c4'],
      ['orig_idx3', 'orig_idx3-c1-c2', 3, 'ctx_idx3-c5-c6'],
      ['orig_idx4', 'orig_idx4-c5-c6', 4, 'ctx_idx4-c3-c4'],
    ]);
  });

  it('NP-Conv fixed: contexts from another user, re-drawn when they fail; u1p2 gets one', () => {
    const samples = selectReplyNpConv(users, fixed);
    expect(samples.map((s) => [s.targetPostId, s.contextPostIndex])).toEqual([
      ['orig_idx0', 3],
      ['orig_idx1', 3],
      ['orig_idx2', 3],
      ['orig_idx3', 0],
      ['orig_idx4', 0],
    ]);
  });
});
