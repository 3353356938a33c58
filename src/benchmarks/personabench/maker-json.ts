/**
 * The JSON objects the original 3.3 makers embed in their prompts, built the way they build
 * them (spec §2.3; issue #29 item 4), so that `--fidelity original` prompts carry the same data
 * byte for byte whatever the wording around them. The makers mutate Python dicts in place, so
 * key order follows their steps: a record keeps its own keys in place, keys it lacks are added
 * at the end, in the order the makers add them. Dicts are `Map`s here for that reason.
 * - ids (generate_unique_ids_for_post): the post gets `id`, `type`, then any missing standard
 *   key (`content` falling back to `body`); each comment `id`, `parent_id`, `type`, then any
 *   missing `body`, `author`, `score`, `timestamp`. 3.3_RandPrompt alone fills a null
 *   timestamp from `created_utc` (normalised); otherwise timestamps stay as stored.
 * - the few-shot branch: each node copied with `replies` moved last and rebuilt from its
 *   children in time order, stopping at the few-shot reply.
 * - serialising drops keys that start with one underscore (`_fetched_by`), keeps `__sub__`.
 */
import { pythonJsonDumps } from '../../core/python-format.js';
import { parseTimestamp } from './corpus.js';

/** A Python dict: a Map keeps insertion order whatever the keys. */
export type Dict = Map<string, unknown>;

export const isDict = (v: unknown): v is Dict => v instanceof Map;

/** A JSON value as Python holds it after json.load: objects become dicts (Maps). */
export function toPython(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPython);
  if (value !== null && typeof value === 'object') return new Map(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toPython(v)]));
  return value;
}

/** `deepcopy` of a value made of lists and dicts. */
export function deepcopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepcopy);
  if (isDict(value)) return new Map([...value].map(([k, v]) => [k, deepcopy(v)]));
  return value;
}

/** `d.setdefault(key, value)` (None by default). */
export const setdefault = (d: Dict, key: string, value: unknown = null): void => {
  if (!d.has(key)) d.set(key, value);
};
/** `d.get(key)`: None where the key is missing. */
export const get = (d: Dict, key: string): unknown => (d.has(key) ? d.get(key) : null);

/**
 * generate_unique_ids_for_post on a copy of the raw post: returns the post dict and its flat
 * nodes (the post, then the comments in pre-order; the same dict objects as in the tree).
 */
export function assignIds(rawPost: unknown, prefix: string, createdUtcFallback: boolean): { post: Dict; flat: Dict[] } {
  const post = toPython(rawPost) as Dict;
  post.set('id', prefix);
  post.set('type', 'post');
  for (const key of ['title', 'url', 'content', '__sub__', 'score', 'author', 'timestamp']) {
    setdefault(post, key);
    if (key === 'content' && get(post, 'content') === null) post.set('content', get(post, 'body'));
  }
  const fallback = (node: Dict): void => {
    if (!createdUtcFallback || get(node, 'timestamp') !== null || !node.has('created_utc')) return;
    const parsed = parseTimestamp(node.get('created_utc'));
    if (parsed) node.set('timestamp', parsed.iso);
  };
  fallback(post);
  const flat: Dict[] = [post];
  let counter = 1;
  const visit = (list: unknown, parentId: string): void => {
    if (!Array.isArray(list)) return;
    for (const comment of list) {
      if (!isDict(comment)) continue;
      const id = `${parentId}-c${counter++}`;
      comment.set('id', id);
      comment.set('parent_id', parentId);
      comment.set('type', 'comment');
      for (const key of ['body', 'author', 'score', 'timestamp']) setdefault(comment, key);
      fallback(comment);
      flat.push(comment);
      if (comment.has('replies') && Array.isArray(comment.get('replies'))) visit(comment.get('replies'), id);
    }
  };
  visit(get(post, 'comments') ?? [], prefix);
  return { post, flat };
}

/** convert_datetimes_to_strings_in_obj: keys with one leading underscore go (and `comments` for history). */
export function serializable(value: unknown, forHistory = false): unknown {
  if (Array.isArray(value)) return value.map((v) => serializable(v, forHistory));
  if (!isDict(value)) return value;
  const out: Dict = new Map();
  for (const [k, v] of value) {
    if (forHistory && k === 'comments') continue;
    if (k.startsWith('_') && !k.startsWith('__')) continue;
    out.set(k, serializable(v, forHistory));
  }
  return out;
}

/** The makers' sort key: the parsed timestamp, datetime.min when it does not parse (a stable sort). */
const timeOf = (node: Dict): number => parseTimestamp(get(node, 'timestamp'))?.time ?? Number.NEGATIVE_INFINITY;

/**
 * get_truncated_dialogue_tree_for_body_fewshot: the few-shot reply's top-level thread, each node
 * with `replies` last, children in time order, stopping at the reply. Null where the reply has
 * no thread (the maker then uses its default example).
 */
export function fewShotBranch(flat: readonly Dict[], replyId: string): unknown[] | null {
  const byId = new Map(flat.map((n) => [get(n, 'id') as string, n]));
  const rootId = get(flat[0]!, 'id');
  const path = [replyId];
  let top: string | null = null;
  for (let id: string | null = replyId; id !== null; ) {
    const node = byId.get(id);
    if (!node || get(node, 'type') === 'post') break;
    const parentId = get(node, 'parent_id') as string | null;
    const parent = parentId === null ? undefined : byId.get(parentId);
    if (!parent || parentId === rootId || get(parent, 'type') === 'post') {
      top = id;
      break;
    }
    path.push(parentId!);
    id = parentId;
  }
  if (top === null) return null;
  path.reverse();
  const build = (id: string, exclude: string | null, exclusionPath: readonly string[]): Dict | null => {
    const original = byId.get(id);
    if (!original) return null;
    const copy = deepcopy(original) as Dict;
    copy.delete('replies');
    const replies: unknown[] = [];
    copy.set('replies', replies);
    const children = flat.filter((n) => get(n, 'parent_id') === id);
    const times = new Map(children.map((c) => [c, timeOf(c)]));
    children.sort((a, b) => times.get(a)! - times.get(b)! || 0);
    for (const child of children) {
      const childId = get(child, 'id') as string;
      if (exclude !== null && childId === exclude) break;
      const at = exclusionPath.indexOf(id);
      const onPath = exclude !== null && exclusionPath.includes(childId) && at !== -1 && exclusionPath[at + 1] === childId;
      const branch = build(childId, onPath ? exclude : null, onPath ? exclusionPath : []);
      if (branch) replies.push(branch);
    }
    return copy;
  };
  const tree = build(top, replyId, path);
  return tree ? [serializable(tree)] : null;
}

/** build_post_context_excluding_node (3.3PromptMaker): the post with one reply and its subtree gone; non-dict entries dropped. */
export function postWithout(post: Dict, removeId: string): unknown {
  const context = deepcopy(post) as Dict;
  if (context.has('comments')) {
    const top = context.get('comments');
    context.set(
      'comments',
      (Array.isArray(top) ? top : []).filter((c) => isDict(c) && get(c, 'id') !== removeId),
    );
  }
  const queue: unknown[] = [...((context.get('comments') as unknown[] | undefined) ?? [])];
  while (queue.length > 0) {
    const node = queue.shift();
    if (!isDict(node)) continue;
    const replies = node.get('replies');
    if (node.has('replies') && truthy(replies)) {
      const kept = (Array.isArray(replies) ? replies : []).filter((r) => isDict(r) && get(r, 'id') !== removeId);
      node.set('replies', kept);
      queue.push(...kept);
    }
  }
  return serializable(context);
}

const truthy = (v: unknown): boolean =>
  !(v === null || v === undefined || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isDict(v) && v.size === 0));

/** 3.3 P-NonConv's current-post details: the raw post without comments, standard keys ensured, its id. */
export function postDetails(rawPost: unknown, prefix: string, mainAuthor: string): unknown {
  const details = toPython(rawPost) as Dict;
  details.delete('comments');
  for (const key of ['title', 'url', 'content', '__sub__', 'score', 'author', 'timestamp', 'type']) {
    if (key === 'content' && !details.has('content')) details.set('content', details.has('body') ? details.get('body') : get(details, 'selftext'));
    setdefault(details, key);
  }
  if (get(details, 'type') === null) details.set('type', 'post');
  if (get(details, 'author') === null) details.set('author', mainAuthor);
  details.set('id', prefix);
  return serializable(details, true);
}

/** json.dumps(value, indent=2) with ensure_ascii, as the makers write their embedded JSON. */
export const makerJson = (value: unknown): string => pythonJsonDumps(value, { indent: 2, ensureAscii: true });
