/**
 * Sample selection for the three PERSONA-bench tasks x three settings, following the
 * original prompt makers (spec §2): which reply is the target, its label, the few-shot
 * example, the filters, the positive down-sampling and the output order.
 *
 * `fidelity: 'original'` reproduces the makers, bugs included; their unseeded
 * `random.shuffle` calls draw from a CPython-exact MT19937 seeded with `seed`.
 * `fidelity: 'fixed'` applies the corrections listed in FIXED_CORRECTIONS.
 */
import { PlensError } from '../../core/errors.js';
import { PythonRandom } from '../../stats/python-random.js';
import {
  cleanText,
  flatCorpusOf,
  flattenPost,
  renameId,
  isDeletedLoose,
  isDeletedStrict,
  isNumericScore,
  scoreValue,
  type CommentNode,
  type FlatPost,
  type UserPosts,
} from './corpus.js';

export type Fidelity = 'original' | 'fixed';
export type Task = '3.1' | '3.2' | '3.3';
export type Setting = 'P-Conv' | 'P-NonConv' | 'NP-Conv';

export const NP_CONV_OFFSET = 200;

export const FIXED_CORRECTIONS = [
  'few-shot-before-target: the 3.1/3.2 P-Conv few-shot is the highest-|score| eligible reply of the same post posted before the target (the original takes the second-highest, which may be later)',
  'np-conv-other-user: an NP-Conv example or context post comes from another user (the original offset of 200 can land on the same user, or on the sample itself when N divides 200); the offset walks on to the next such post',
  'np-conv-redraw: a 3.3 NP-Conv context post that fails its filters is replaced by the next one that passes (the original skips the task)',
  'deleted-consistent: 3.3 treats "", "[deleted]" and "[removed]" in any case as deleted, for the target and the few-shot reply alike (the original 3.3 checks case-sensitively and never checks the few-shot)',
] as const;

export interface SelectionOptions {
  fidelity: Fidelity;
  /** Seed for the shuffles the original leaves unseeded (3.1 and 3.2 NP-Conv). */
  seed: number;
  /**
   * Instead of a seeded shuffle, put 3.1 / 3.2 NP-Conv in this order of target reply ids: the
   * order an earlier, unseeded run of the original wrote (persona select --replay-order).
   */
  replayOrder?: Partial<Record<'3.1' | '3.2', readonly string[]>>;
}

/**
 * The samples in the order of `ids` (their target reply ids), which must name each sample once:
 * the original's shuffle, replayed from its output file.
 */
function replayed<T extends { targetReplyId: string }>(items: T[], ids: readonly string[], task: string): T[] {
  const byId = new Map(items.map((item) => [item.targetReplyId, item]));
  const unknown = ids.find((id) => !byId.has(id));
  if (ids.length !== items.length || unknown !== undefined || new Set(ids).size !== ids.length)
    throw new PlensError(
      'E_INPUT_REFERENCE',
      `the replayed ${task} NP-Conv order names ${ids.length} target replies, plens selected ${items.length}${unknown !== undefined ? `; ${unknown} is not among them` : ''}`,
      { hint: 'replay an order written by the original makers on this same input file' },
    );
  return ids.map((id) => byId.get(id)!);
}

export interface ScoreSample {
  task: '3.1' | '3.2';
  setting: Setting;
  /** 0-based position in the output file. */
  position: number;
  targetPostId: string;
  targetReplyId: string;
  /** "positive" | "negative" for 3.1, the raw score for 3.2. */
  trueLabel: string | number;
  score: number;
  subreddit: string;
  user: string;
  fewShot: { type: 'dynamic' | 'default' | 'pseudo_random_context'; postId: string | null; replyId: string | null; label: string | number | null } | null;
}

export interface ReplySample {
  task: '3.3';
  setting: Setting;
  position: number;
  targetPostId: string;
  targetReplyId: string;
  trueLabel: string;
  subreddit: string;
  user: string;
  fewShot: { postId: string; replyId: string; label: string } | null;
  /** NP-Conv: the global index of the post whose conversation is shown. */
  contextPostIndex: number | null;
  currentPostIndex: number | null;
}

// ---------------------------------------------------------------------------------------
// 2.0 target selection shared by 3.1 and 3.2

export interface EligibleReply {
  node: CommentNode;
  score: number;
  time: number;
}

function parentText(post: FlatPost, node: CommentNode): { exists: boolean; text: unknown } {
  if (node.parentId === post.id) return { exists: true, text: post.content };
  const parent = post.byId.get(node.parentId);
  return parent ? { exists: true, text: parent.body } : { exists: false, text: null };
}

/**
 * Per-post results every selection asks for again (3.1 and 3.2 share targets; NP-Conv asks
 * for every post): computed once per flattened post. Posts are never changed after flattening.
 */
function memo<T>(compute: (post: FlatPost) => T): (post: FlatPost) => T {
  const cache = new WeakMap<FlatPost, { value: T }>();
  return (post) => {
    let hit = cache.get(post);
    if (!hit) cache.set(post, (hit = { value: compute(post) }));
    return hit.value;
  };
}

/** Eligible author replies sorted by (|score|, time) descending, ties in pre-order. */
export const eligibleReplies = memo(eligibleRepliesOf);

function eligibleRepliesOf(post: FlatPost): EligibleReply[] {
  const replies: EligibleReply[] = [];
  for (const node of post.comments) {
    if (node.author === null || node.author !== post.author) continue;
    if (!isNumericScore(node.score)) continue;
    if (isDeletedLoose(node.body)) continue;
    const parent = parentText(post, node);
    if (!parent.exists || isDeletedLoose(parent.text)) continue;
    if (node.time === null) continue;
    replies.push({ node, score: scoreValue(node.score), time: node.time });
  }
  // Python's sorted(..., reverse=True) is stable: equal keys keep their order.
  return replies
    .map((reply, i) => ({ reply, i }))
    .sort((a, b) => Math.abs(b.reply.score) - Math.abs(a.reply.score) || b.reply.time - a.reply.time || a.i - b.i)
    .map(({ reply }) => reply);
}

const distinctAuthors = memo(distinctAuthorsOf);
function distinctAuthorsOf(post: FlatPost): number {
  const authors = new Set<string>();
  if (post.author !== null) authors.add(post.author);
  for (const node of post.comments) if (node.author !== null) authors.add(node.author);
  return authors.size;
}

const authorLiveComments = memo(authorLiveCommentsOf);
function authorLiveCommentsOf(post: FlatPost): number {
  let count = 0;
  for (const node of post.comments) if (node.author !== null && node.author === post.author && !isDeletedLoose(node.body)) count++;
  return count;
}

/** The 2.0 filters; returns the sorted eligible replies when the post qualifies. */
export const scoreTaskReplies = memo(scoreTaskRepliesOf);
function scoreTaskRepliesOf(post: FlatPost): EligibleReply[] | null {
  if (distinctAuthors(post) <= 3) return null;
  if (authorLiveComments(post) <= 2) return null;
  const replies = eligibleReplies(post);
  if (replies.length === 0 || Math.abs(replies[0]!.score) <= 3) return null;
  return replies;
}

/** Positive down-sampling: all negatives in input order, then the upper half of the positives by |score|. */
export function downSamplePositives<T extends { score: number }>(samples: readonly T[], order: 'negatives-first' | 'positives-first' = 'negatives-first'): T[] {
  const negatives = samples.filter((s) => !(s.score > 0));
  const positives = samples
    .filter((s) => s.score > 0)
    .map((s, i) => ({ s, i }))
    .sort((a, b) => Math.abs(a.s.score) - Math.abs(b.s.score) || a.i - b.i)
    .map(({ s }) => s);
  const kept = positives.slice(Math.floor(positives.length / 2));
  return order === 'negatives-first' ? [...negatives, ...kept] : [...kept, ...negatives];
}

function subredditOf(post: FlatPost, missing: string): string {
  return post.subreddit === null || post.subreddit === undefined ? missing : String(post.subreddit);
}

const signOf = (score: number): 'positive' | 'negative' => (score > 0 ? 'positive' : 'negative');

/** The post id of the default few-shot example each P-Conv maker falls back to. */
export const DEFAULT_FEW_SHOT_POST = { '3.1': 'default_fs_post1', '3.2': 'default_fs_post1_with_convo' } as const;

function pythonShuffle<T>(items: T[], rng: PythonRandom): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.randbelow(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** 3.1 / 3.2, P-Conv and P-NonConv (same targets, same order; only P-Conv has a few-shot). */
export function selectScoreSamples(
  users: readonly UserPosts[],
  task: '3.1' | '3.2',
  setting: 'P-Conv' | 'P-NonConv',
  options: SelectionOptions,
): ScoreSample[] {
  const samples: ScoreSample[] = [];
  for (const post of flatCorpusOf(users)) {
    const replies = scoreTaskReplies(post);
    if (replies === null) continue;
    const target = replies[0]!;
    let fewShot: ScoreSample['fewShot'] = null;
    if (setting === 'P-Conv') {
      const candidate = options.fidelity === 'fixed' ? replies.slice(1).find((r) => r.time < target.time) : replies[1];
      const usable = candidate !== undefined && (task === '3.2' || Math.abs(candidate.score) > 0);
      fewShot = usable
        ? { type: 'dynamic', postId: post.id, replyId: candidate.node.id, label: task === '3.1' ? signOf(candidate.score) : candidate.score }
        : // The original's default example and its ids: default_fs_post1 (3.1) or
          // default_fs_post1_with_convo (3.2), the hidden reply at -c1-r1-ar1 under them.
          {
            type: 'default',
            postId: DEFAULT_FEW_SHOT_POST[task],
            replyId: `${DEFAULT_FEW_SHOT_POST[task]}-c1-r1-ar1`,
            label: task === '3.1' ? 'positive' : 25,
          };
    }
    samples.push({
      task,
      setting,
      position: 0,
      targetPostId: post.id,
      targetReplyId: target.node.id,
      trueLabel: task === '3.1' ? signOf(target.score) : target.score,
      score: target.score,
      // 3.1 writes a missing __sub__ as "", 3.2 as "N/A" (spec §4.2b).
      subreddit: subredditOf(post, task === '3.1' ? '' : 'N/A'),
      user: post.user,
      fewShot,
    });
  }
  return downSamplePositives(samples).map((s, position) => ({ ...s, position }));
}

/** 3.1 NP-Conv (3.1_RandPrompt.py). */
export function selectSignNpConv(users: readonly UserPosts[], options: SelectionOptions): ScoreSample[] {
  const flat = flatCorpusOf(users);
  // Pass 1: the few-shot pool, looser filters, ids internal_p{n} (n = 1-based global post counter).
  // Selection runs on the u{i}p{j} copy; only the ids written out are renamed (same tree, same order).
  const pool: Array<{ postId: string; user: string; replyId: string; score: number; globalIndex: number }> = [];
  for (const post of flat) {
    const postId = `internal_p${post.globalIndex + 1}`;
    if (distinctAuthors(post) <= 2 || authorLiveComments(post) < 1) continue;
    const replies = eligibleReplies(post);
    if (replies.length === 0 || Math.abs(replies[0]!.score) <= 1) continue;
    pool.push({ postId, user: post.user, replyId: renameId(replies[0]!.node.id, post.id, postId), score: replies[0]!.score, globalIndex: post.globalIndex });
  }
  // 3.1_RandPrompt.py stops without writing its file when no post qualifies for the pool.
  if (pool.length === 0) return [];
  const samples: ScoreSample[] = [];
  for (const post of flat) {
    const postId = `task_u${post.userNumber}p${post.postNumber}`;
    const replies = scoreTaskReplies(post);
    if (replies === null) continue;
    const target = replies[0]!;
    let k = (post.globalIndex + NP_CONV_OFFSET) % pool.length;
    if (options.fidelity === 'fixed') {
      let steps = 0;
      while (pool[k]!.user === post.user && steps < pool.length) {
        k = (k + 1) % pool.length;
        steps++;
      }
      if (steps === pool.length) k = -1;
    }
    const example = k >= 0 ? pool[k]! : undefined;
    const fewShot: ScoreSample['fewShot'] = example
      ? { type: 'pseudo_random_context', postId: example.postId, replyId: example.replyId, label: signOf(example.score) }
      : { type: 'default', postId: null, replyId: null, label: 'positive' };
    samples.push({
      task: '3.1',
      setting: 'NP-Conv',
      position: 0,
      targetPostId: postId,
      targetReplyId: renameId(target.node.id, post.id, postId),
      trueLabel: signOf(target.score),
      score: target.score,
      subreddit: subredditOf(post, ''),
      user: post.user,
      fewShot,
    });
  }
  // 3.1_RandPrompt.py shuffles the kept positives (ascending |score|) followed by the negatives
  // (3.2_RandPrompt.py the other way round): the seeded order depends on it.
  let kept = downSamplePositives(samples, 'positives-first');
  const order = options.replayOrder?.['3.1'];
  if (order) kept = replayed(kept, order, '3.1');
  else pythonShuffle(kept, new PythonRandom(options.seed));
  return kept.map((s, position) => ({ ...s, position }));
}

/** 3.2 NP-Conv (3.2_RandPrompt.py): shuffle first, then the sample 200 places on gives the example. */
export function selectImpactNpConv(users: readonly UserPosts[], options: SelectionOptions): ScoreSample[] {
  const base = selectScoreSamples(users, '3.2', 'P-NonConv', options).map((s) => ({ ...s, setting: 'NP-Conv' as const }));
  const order = options.replayOrder?.['3.2'];
  const shuffled = order ? replayed(base, order, '3.2') : pythonShuffle([...base], new PythonRandom(options.seed));
  const n = shuffled.length;
  return shuffled.map((sample, i) => {
    let k = (i + NP_CONV_OFFSET) % n;
    if (options.fidelity === 'fixed') {
      let steps = 0;
      while (shuffled[k]!.user === sample.user && steps < n) {
        k = (k + 1) % n;
        steps++;
      }
      if (steps === n) k = -1;
    }
    const provider = k >= 0 ? shuffled[k]! : undefined;
    return {
      ...sample,
      position: i,
      fewShot: provider
        ? { type: 'pseudo_random_context' as const, postId: provider.targetPostId, replyId: provider.targetReplyId, label: provider.score }
        : { type: 'default' as const, postId: null, replyId: null, label: null },
    };
  });
}

function withPrefix(post: FlatPost, prefix: string, createdUtcFallback = false): FlatPost {
  const { comments, byId } = flattenPost(post.raw, prefix, createdUtcFallback);
  return { ...post, id: prefix, comments, byId };
}

// ---------------------------------------------------------------------------------------
// 3.3 next reply

interface ReplyCandidates {
  /** Author comments with a body and a parseable timestamp, most recent first. */
  candidates: CommentNode[];
}

const replyCandidates = memo(replyCandidatesOf);
function replyCandidatesOf(post: FlatPost): ReplyCandidates {
  const candidates = post.comments
    .filter((node) => node.author !== null && node.author === post.author && node.body !== null && node.time !== null)
    .map((node, i) => ({ node, i }))
    .sort((a, b) => b.node.time! - a.node.time! || a.i - b.i)
    .map(({ node }) => node);
  return { candidates };
}

/** Top-level subtrees with a message by the post author (the TLC counts) and a direct reply to the TLC. */
export const qualifyingTreeCount = memo(qualifyingTreeCountOf);
function qualifyingTreeCountOf(post: FlatPost): number {
  let count = 0;
  for (const node of post.comments) {
    if (node.depth !== 1 || node.children.length === 0) continue;
    if (subtree(node).some((n) => n.author !== null && n.author === post.author)) count++;
  }
  return count;
}

function subtree(node: CommentNode): CommentNode[] {
  const out: CommentNode[] = [node];
  for (const child of node.children) out.push(...subtree(child));
  return out;
}

function deletedShare(post: FlatPost, node: CommentNode, deleted: (v: unknown) => boolean): number {
  const nodes = subtree(post.byId.get(node.topLevelId)!);
  return nodes.filter((n) => deleted(n.body)).length / nodes.length;
}

/** 3.3 P-Conv and P-NonConv (3.3PromptMaker.py): same samples, input order. */
export function selectReplySamples(users: readonly UserPosts[], setting: 'P-Conv' | 'P-NonConv', options: SelectionOptions): ReplySample[] {
  const deleted = options.fidelity === 'fixed' ? isDeletedLoose : isDeletedStrict;
  const samples: ReplySample[] = [];
  for (const post of flatCorpusOf(users)) {
    const { candidates } = replyCandidates(post);
    if (candidates.length < 2) continue;
    const target = candidates[0]!;
    if (deleted(target.body)) continue;
    if (qualifyingTreeCount(post) <= 1) continue;
    if (deletedShare(post, target, deleted) > 0.33) continue;
    const fewShotNode = candidates[1]!;
    if (options.fidelity === 'fixed' && deleted(fewShotNode.body)) continue;
    samples.push({
      task: '3.3',
      setting,
      position: samples.length,
      targetPostId: post.id,
      targetReplyId: target.id,
      trueLabel: cleanText(target.body),
      subreddit: subredditOf(post, ''),
      user: post.user,
      fewShot: setting === 'P-Conv' ? { postId: post.id, replyId: fewShotNode.id, label: cleanText(fewShotNode.body) } : null,
      contextPostIndex: null,
      currentPostIndex: null,
    });
  }
  return samples;
}

/** 3.3 NP-Conv (3.3_RandPrompt.py): the conversation of the post 200 places on, looser target filter. */
export function selectReplyNpConv(users: readonly UserPosts[], options: SelectionOptions): ReplySample[] {
  const flat = flatCorpusOf(users);
  const total = flat.length;
  const deleted = options.fidelity === 'fixed' ? isDeletedLoose : isDeletedStrict;
  const emptyOrDeleted = (v: unknown): boolean => cleanText(v) === '' || deleted(v);
  // 3.3_RandPrompt alone falls back to created_utc: only posts that need it are re-flattened.
  // Ids stay u{i}p{j} while selecting and are renamed orig_idx{n} / ctx_idx{n} on the way out.
  const views = new Map<number, FlatPost>();
  const view = (post: FlatPost): FlatPost => {
    if (!post.createdUtcOnly) return post;
    let v = views.get(post.globalIndex);
    if (!v) views.set(post.globalIndex, (v = withPrefix(post, post.id, true)));
    return v;
  };
  const usable = new Map<number, CommentNode | null>();
  const contextUsable = (index: number): CommentNode | null => {
    if (usable.has(index)) return usable.get(index)!;
    const ctx = view(flat[index]!);
    let result: CommentNode | null = null;
    const { candidates } = replyCandidates(ctx);
    if (candidates.length >= 2) {
      const [latest, fewShot] = [candidates[0]!, candidates[1]!];
      if (
        !emptyOrDeleted(fewShot.body) &&
        !emptyOrDeleted(latest.body) &&
        qualifyingTreeCount(ctx) > 1 &&
        deletedShare(ctx, fewShot, deleted) <= 0.33 &&
        deletedShare(ctx, latest, deleted) <= 0.33
      )
        result = fewShot;
    }
    usable.set(index, result);
    return result;
  };
  const samples: ReplySample[] = [];
  for (const base of flat) {
    const post = view(base);
    const { candidates } = replyCandidates(post);
    if (candidates.length < 1) continue;
    const target = candidates[0]!;
    if (emptyOrDeleted(target.body)) continue;
    let c = (post.globalIndex + NP_CONV_OFFSET) % total;
    let fewShot = contextUsable(c);
    if (options.fidelity === 'fixed') {
      let steps = 0;
      while ((fewShot === null || flat[c]!.user === post.user) && steps < total) {
        c = (c + 1) % total;
        fewShot = contextUsable(c);
        steps++;
      }
      if (steps === total) fewShot = null;
    }
    if (fewShot === null) continue;
    const context = flat[c]!;
    const postId = `orig_idx${post.globalIndex}`;
    const contextId = `ctx_idx${c}`;
    samples.push({
      task: '3.3',
      setting: 'NP-Conv',
      position: samples.length,
      targetPostId: postId,
      targetReplyId: renameId(target.id, post.id, postId),
      trueLabel: cleanText(target.body),
      subreddit: subredditOf(post, ''),
      user: post.user,
      fewShot: { postId: contextId, replyId: renameId(fewShot.id, context.id, contextId), label: cleanText(fewShot.body) },
      contextPostIndex: c,
      currentPostIndex: post.globalIndex,
    });
  }
  return samples;
}

/** Every task x setting, in a fixed order. */
export function selectAll(users: readonly UserPosts[], options: SelectionOptions): { score: ScoreSample[]; reply: ReplySample[] } {
  return {
    score: [
      ...selectScoreSamples(users, '3.1', 'P-Conv', options),
      ...selectScoreSamples(users, '3.1', 'P-NonConv', options),
      ...selectSignNpConv(users, options),
      ...selectScoreSamples(users, '3.2', 'P-Conv', options),
      ...selectScoreSamples(users, '3.2', 'P-NonConv', options),
      ...selectImpactNpConv(users, options),
    ],
    reply: [...selectReplySamples(users, 'P-Conv', options), ...selectReplySamples(users, 'P-NonConv', options), ...selectReplyNpConv(users, options)],
  };
}
