/**
 * The PERSONA-bench corpus as the original prompt makers see it: users in first-appearance
 * order, each with their posts, and every post flattened depth-first with the original's
 * IDs (`u{i}p{j}`, then `{parent}-c{k}` with one pre-order counter per post), clean text,
 * and timestamps parsed as Python's `datetime.fromisoformat` (a trailing Z is UTC, naive
 * values are UTC). Spec: shared/spec/persona-bench.md §1.
 */
import { pythonStr } from '../../core/python-format.js';
import { makerParseTimestamp, makerTimestampString } from './python-datetime.js';

export interface RawComment {
  author?: unknown;
  body?: unknown;
  score?: unknown;
  timestamp?: unknown;
  created_utc?: unknown;
  replies?: RawComment[];
  [key: string]: unknown;
}

export interface RawPost {
  author?: unknown;
  title?: unknown;
  url?: unknown;
  content?: unknown;
  body?: unknown;
  __sub__?: unknown;
  score?: unknown;
  timestamp?: unknown;
  created_utc?: unknown;
  comments?: RawComment[];
  [key: string]: unknown;
}

export interface UserPosts {
  user: string;
  posts: RawPost[];
}

export interface CommentNode {
  id: string;
  parentId: string;
  /** 1 for a top-level comment. */
  depth: number;
  /** Pre-order position within the post, 0-based. */
  order: number;
  author: string | null;
  /** The raw body (null when absent). */
  body: unknown;
  score: unknown;
  timestampRaw: unknown;
  /** Epoch microseconds, or null when the timestamp does not parse. */
  time: number | null;
  /** Normalised ISO form (Z for UTC) or null. */
  timestamp: string | null;
  /** Id of the top-level comment this one hangs under (itself for a top-level comment). */
  topLevelId: string;
  children: CommentNode[];
  raw: RawComment;
}

export interface FlatPost {
  id: string;
  user: string;
  /** 1-based user position and post position within the user, as in `u{i}p{j}`. */
  userNumber: number;
  postNumber: number;
  /** 0-based position over all posts of all users. */
  globalIndex: number;
  author: string | null;
  content: unknown;
  subreddit: unknown;
  score: unknown;
  time: number | null;
  timestamp: string | null;
  comments: CommentNode[];
  byId: Map<string, CommentNode>;
  raw: RawPost;
  /** A comment has no timestamp but a created_utc, which only 3.3_RandPrompt falls back to. */
  createdUtcOnly: boolean;
}

const PY_WHITESPACE = /[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/** Python `str.strip()`. */
export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_WHITESPACE.test(text[start]!)) start++;
  while (end > start && PY_WHITESPACE.test(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/** The prompt makers' `clean_text`: None -> "", CR/LF -> space, stripped; repeated spaces kept. */
export function cleanText(value: unknown): string {
  if (value === null || value === undefined) return '';
  // str(value): True, not true; 1e-05, not 0.00001.
  return pyStrip(pythonStr(value).replace(/[\n\r]/g, ' '));
}

/** Python `d.get(key, fallback)` on a record read from JSON: a key present with null gives null. */
export function pyGet(record: object, key: string, fallback: unknown): unknown {
  return Object.hasOwn(record, key) ? (record as Record<string, unknown>)[key] : fallback;
}

/** 3.1/3.2 deletion test: cleaned, lower-cased text is "", "[deleted]" or "[removed]". */
export function isDeletedLoose(value: unknown): boolean {
  const text = cleanText(value).toLowerCase();
  return text === '' || text === '[deleted]' || text === '[removed]';
}

/** 3.3 deletion test: cleaned text is exactly "[removed]" or "[deleted]" (case-sensitive). */
export function isDeletedStrict(value: unknown): boolean {
  const text = cleanText(value);
  return text === '[removed]' || text === '[deleted]';
}

/** Python `isinstance(x, (int, float))` for a JSON value (bools are ints in Python). */
export function isNumericScore(value: unknown): value is number | boolean {
  return typeof value === 'number' || typeof value === 'boolean';
}

export function scoreValue(value: unknown): number {
  return typeof value === 'boolean' ? (value ? 1 : 0) : (value as number);
}

/**
 * Parses a timestamp string the way the prompt makers do (parse_timestamp, python-datetime.ts:
 * `fromisoformat` as CPython 3.11 runs it, then the `strptime` fallbacks; naive = UTC) and prints
 * it as their datetime_to_string does (UTC, `Z`). Returns epoch microseconds and that string, or
 * null. Non-strings do not parse (the original crashes on them; we drop the message instead).
 */
export function parseTimestamp(value: unknown): { time: number; iso: string } | null {
  if (typeof value !== 'string') return null;
  const fast = parseCanonical(value);
  if (fast) return fast;
  const parsed = makerParseTimestamp(value);
  return parsed ? makerTimestampString(parsed) : null;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const digit = (text: string, i: number): number => text.charCodeAt(i) - 48;
const twoDigits = (text: string, i: number): number => {
  const a = digit(text, i);
  const b = digit(text, i + 1);
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
};

/**
 * The common form `YYYY-MM-DDTHH:MM:SSZ`, already normalised: parsed without the regex (the
 * release has hundreds of thousands of them). Anything else goes the general way.
 */
function parseCanonical(text: string): { time: number; iso: string } | null {
  if (text.length !== 20 || text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':' || text[19] !== 'Z') return null;
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  // Years below 100 go the general way: Date.UTC reads them as 19xx, and Python has no year 0.
  if (!(year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && hour <= 23 && minute <= 59 && second <= 59)) return null;
  return { time: Date.UTC(year, month - 1, day, hour, minute, second) * 1000, iso: text };
}

function authorOf(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

const isRecord = (value: unknown): value is RawComment => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The comments of a list as the makers walk it: not a list means none; entries that are not objects are skipped (no id used). */
export function commentList(value: unknown): RawComment[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** How many entries of the post's comment lists the makers skip, and how many lists are not lists. */
export function skippedCommentEntries(post: RawPost): { entries: number; lists: number } {
  let entries = 0;
  let lists = 0;
  const walk = (value: unknown): void => {
    if (value === undefined || value === null) return;
    if (!Array.isArray(value)) {
      lists++;
      return;
    }
    for (const item of value) {
      if (isRecord(item)) walk(item.replies);
      else entries++;
    }
  };
  walk(post.comments);
  return { entries, lists };
}

/**
 * Flattens one post with the original's IDs. `prefix` is the post id (`u{i}p{j}` for the
 * per-user makers, `task_u{i}p{j}`, `orig_idx{n}` ... for the NP-Conv makers).
 */
export function flattenPost(post: RawPost, prefix: string, timeFallbackCreatedUtc = false): { comments: CommentNode[]; byId: Map<string, CommentNode> } {
  const comments: CommentNode[] = [];
  const byId = new Map<string, CommentNode>();
  let counter = 0;
  const visit = (raw: RawComment, parentId: string, depth: number, topLevelId: string | null): CommentNode => {
    counter++;
    const id = `${parentId}-c${counter}`;
    const stamp = raw.timestamp ?? (timeFallbackCreatedUtc ? raw.created_utc : undefined);
    const parsed = parseTimestamp(stamp);
    const node: CommentNode = {
      id,
      parentId,
      depth,
      order: comments.length,
      author: authorOf(raw.author),
      body: raw.body ?? null,
      score: raw.score ?? null,
      timestampRaw: raw.timestamp ?? null,
      time: parsed?.time ?? null,
      timestamp: parsed?.iso ?? null,
      topLevelId: topLevelId ?? id,
      children: [],
      raw,
    };
    comments.push(node);
    byId.set(id, node);
    for (const reply of commentList(raw.replies)) node.children.push(visit(reply, id, depth + 1, node.topLevelId));
    return node;
  };
  for (const top of commentList(post.comments)) visit(top, prefix, 1, null);
  return { comments, byId };
}

/** Builds every post of the grouped corpus with `u{i}p{j}` ids, in dict order. */
export function flattenCorpus(users: readonly UserPosts[]): FlatPost[] {
  const posts: FlatPost[] = [];
  users.forEach((user, ui) => {
    user.posts.forEach((post, pj) => {
      const id = `u${ui + 1}p${pj + 1}`;
      const { comments, byId } = flattenPost(post, id);
      const parsed = parseTimestamp(post.timestamp);
      posts.push({
        id,
        user: user.user,
        userNumber: ui + 1,
        postNumber: pj + 1,
        globalIndex: posts.length,
        author: authorOf(post.author),
        content: post.content ?? null,
        subreddit: post.__sub__ ?? null,
        score: post.score ?? null,
        time: parsed?.time ?? null,
        timestamp: parsed?.iso ?? null,
        comments,
        byId,
        raw: post,
        createdUtcOnly: comments.some(
          (node) => (node.raw.timestamp === null || node.raw.timestamp === undefined) && node.raw.created_utc !== null && node.raw.created_utc !== undefined,
        ),
      });
    });
  });
  return posts;
}

const flatCache = new WeakMap<readonly UserPosts[], FlatPost[]>();

/**
 * flattenCorpus, once per corpus: every selection and the prompt builder share one flattened
 * copy (the corpus must not be changed after the first call).
 */
export function flatCorpusOf(users: readonly UserPosts[]): FlatPost[] {
  let posts = flatCache.get(users);
  if (!posts) flatCache.set(users, (posts = flattenCorpus(users)));
  return posts;
}

/**
 * The post under another id prefix (`task_u1p1`, `ctx_idx0`, ...): the same nodes with renamed
 * ids, without parsing anything again.
 */
export function renamePost(post: FlatPost, id: string): FlatPost {
  const byId = new Map<string, CommentNode>();
  const copies = new Map<CommentNode, CommentNode>();
  const comments = post.comments.map((node) => {
    const copy: CommentNode = {
      ...node,
      id: renameId(node.id, post.id, id),
      parentId: renameId(node.parentId, post.id, id),
      topLevelId: renameId(node.topLevelId, post.id, id),
      children: [],
    };
    copies.set(node, copy);
    byId.set(copy.id, copy);
    return copy;
  });
  for (const node of post.comments) copies.get(node)!.children = node.children.map((child) => copies.get(child)!);
  return { ...post, id, comments, byId };
}

/** The id `id` (of a node in a post flattened under `from`) as it reads under the prefix `to`. */
export function renameId(id: string, from: string, to: string): string {
  return to + id.slice(from.length);
}

/** Raw_Data_Process.py: group a flat list of posts by author, first-appearance order. */
export function groupByAuthor(posts: Iterable<RawPost>): UserPosts[] {
  const groups = new Map<string, RawPost[]>();
  for (const post of posts) {
    // post.get("author", "UNKNOWN_AUTHOR"): only a missing key falls back; a null author
    // becomes the key "null" once json.dump writes the dict.
    const author = post.author === undefined ? 'UNKNOWN_AUTHOR' : String(post.author);
    let list = groups.get(author);
    if (list === undefined) groups.set(author, (list = []));
    list.push(post);
  }
  return [...groups].map(([user, list]) => ({ user, posts: list }));
}
