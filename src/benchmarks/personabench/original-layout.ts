/**
 * The nine prompt files' lines in the original makers' layout (issue #29 item 3), for any prompt
 * records (plens's own wording included): 3.1/3.2 `{post_data_store, prediction_task}` with each
 * maker's fields, 3.3 `{user, prompt, true_label, subreddit}` plus the NP-Conv fields. The data
 * store holds the posts as each maker builds them (spec §2.1.4, §2.2.4):
 * - 3.1PromptMaker: the post with ids (top-level comments get `parent_id` before `id`; missing
 *   keys added, `replies: []` included), the target's score hidden, every `_x` key but `__sub__`
 *   dropped; plus the default example's post on every P-Conv line;
 * - 3.2PromptMaker and 3.2_RandPrompt: the raw post (their copy has no ids, so nothing is
 *   hidden: the target's score is in the store, a leak the original has);
 * - 3.1_RandPrompt: a minimal context (the parent and the target, score hidden, the
 *   `_parent_*` fields kept) and the few-shot post with its example's score hidden.
 * The default example's post and the minimal context's placeholder sentence are plens's own.
 */
import { cleanText } from './corpus.js';
import { fewShotIds, type PromptRecord } from './build-prompts.js';
import { deepcopy, get, isDict, setdefault, toPython, type Dict } from './maker-json.js';
import type { PromptCorpus } from './prompt-corpus.js';
import { parseTimestamp } from './corpus.js';
import type { Setting, Task } from './selection.js';

/** Every file's name, task and setting, in the order `persona export` writes them. */
export const LAYOUT_FILES: ReadonlyArray<{ name: string; task: Task; setting: Setting }> = [
  { name: 'WithConversationPrompts_ScorePrediction_Refactored.jsonl', task: '3.1', setting: 'P-Conv' },
  { name: 'WithoutConversationPrompts_ScorePrediction_Refactored.jsonl', task: '3.1', setting: 'P-NonConv' },
  { name: 'WithConversationPrompts_ScorePrediction_PseudoRandomContext.jsonl', task: '3.1', setting: 'NP-Conv' },
  { name: 'WithConversationPrompts_ExactScorePrediction.jsonl', task: '3.2', setting: 'P-Conv' },
  { name: 'WithoutConversationPrompts_ExactScorePrediction.jsonl', task: '3.2', setting: 'P-NonConv' },
  { name: 'WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl', task: '3.2', setting: 'NP-Conv' },
  { name: 'WithConversationPrompts_BodyPrediction_v2.jsonl', task: '3.3', setting: 'P-Conv' },
  { name: 'WithoutConversationPrompts_BodyPrediction_v2.jsonl', task: '3.3', setting: 'P-NonConv' },
  { name: 'WithPseudoRandomConversationPrompts_BodyPrediction.jsonl', task: '3.3', setting: 'NP-Conv' },
];

/**
 * generate_unique_ids_for_post of the 3.1 makers, on a copy of the raw post: the tree and its flat
 * nodes. Not the 3.3 makers' (maker-json.ts's assignIds): these give every top-level comment its
 * `parent_id` first, add `comments: []` and `replies: []`, and keep flat copies without children.
 */
function ids31(rawPost: unknown, prefix: string): { post: Dict; flat: Dict[] } {
  const post = toPython(rawPost) as Dict;
  post.set('id', prefix);
  post.set('type', 'post');
  for (const key of ['title', 'url', 'content', '__sub__', 'score', 'author', 'timestamp', 'comments']) setdefault(post, key, key === 'comments' ? [] : null);
  const postFlat = deepcopy(post) as Dict;
  postFlat.delete('comments');
  const flat: Dict[] = [postFlat];
  const comments = post.get('comments');
  if (Array.isArray(comments)) for (const c of comments) if (isDict(c)) c.set('parent_id', prefix);
  let counter = 1;
  const visit = (list: unknown, parentId: string): void => {
    if (!Array.isArray(list)) return;
    for (const c of list) {
      if (!isDict(c)) continue;
      const id = `${parentId}-c${counter++}`;
      c.set('id', id);
      c.set('parent_id', parentId);
      c.set('type', 'comment');
      for (const key of ['body', 'author', 'score', 'timestamp', 'replies']) setdefault(c, key, key === 'replies' ? [] : null);
      const copy = deepcopy(c) as Dict;
      copy.delete('replies');
      flat.push(copy);
      if (Array.isArray(c.get('replies'))) visit(c.get('replies'), id);
    }
  };
  visit(get(post, 'comments') ?? [], prefix);
  return { post, flat };
}

/** convert_datetimes_to_strings_in_obj of 3.1/3.2: every key starting with "_" goes but those kept. */
function convert(value: unknown, keep: readonly string[] = ['__sub__']): unknown {
  if (Array.isArray(value)) return value.map((v) => convert(v, keep));
  if (!isDict(value)) return value;
  const out: Dict = new Map();
  for (const [k, v] of value) {
    if (k.startsWith('_') && !keep.includes(k)) continue;
    out.set(k, convert(v, keep));
  }
  return out;
}

/** build_dialogue_tree_with_hidden_score: the node with that id (breadth first) gets "[SCORE_TO_PREDICT]". */
function hideScore(post: Dict, id: string): Dict {
  const copy = deepcopy(post) as Dict;
  if (get(copy, 'id') === id && copy.has('score')) copy.set('score', '[SCORE_TO_PREDICT]');
  const queue: unknown[] = Array.isArray(copy.get('comments')) ? (copy.get('comments') as unknown[]).filter(isDict) : [];
  while (queue.length) {
    const node = queue.shift() as Dict;
    if (get(node, 'id') === id && node.has('score')) node.set('score', '[SCORE_TO_PREDICT]');
    const replies = node.get('replies');
    if (Array.isArray(replies)) queue.push(...replies.filter(isDict));
  }
  return copy;
}

/** get_node_by_id of 3.1_RandPrompt (breadth first). */
function nodeById(post: Dict, id: string): Dict | null {
  if (get(post, 'id') === id) return post;
  const queue: unknown[] = Array.isArray(post.get('comments')) ? (post.get('comments') as unknown[]).filter(isDict) : [];
  while (queue.length) {
    const node = queue.shift() as Dict;
    if (get(node, 'id') === id) return node;
    const replies = node.get('replies');
    if (Array.isArray(replies)) queue.push(...replies.filter(isDict));
  }
  return null;
}

/** The reply as find_author_replies_in_post_for_score_prediction records it: its flat node and `_parent_*` fields. */
function replyDetails(flat: readonly Dict[], replyId: string): Dict | null {
  const node = flat.find((n) => get(n, 'id') === replyId);
  if (!node) return null;
  const parentId = get(node, 'parent_id');
  const parent = flat.find((n) => get(n, 'id') === parentId);
  if (!parent) return null;
  const isPost = get(parent, 'type') === 'post';
  const details = deepcopy(node) as Dict;
  const score = get(node, 'score');
  details.set('_parsed_timestamp', null);
  details.set('_abs_score', typeof score === 'number' ? Math.abs(score) : score);
  details.set('_parent_id', parentId);
  details.set('_parent_body', cleanText(parent.has(isPost ? 'content' : 'body') ? parent.get(isPost ? 'content' : 'body') : ''));
  details.set('_parent_author', cleanText(parent.has('author') ? parent.get('author') : ''));
  details.set('_parent_score', get(parent, 'score'));
  details.set('_parent_timestamp', get(parent, 'timestamp'));
  return details;
}

/** Our own stand-in for the default few-shot post every 3.1/3.2 P-Conv line carries (same ids and shape as the original's). */
function defaultStorePost(id: string): Dict {
  const c = (cid: string, parent: string, author: string, body: string, score: unknown, timestamp: string, replies: unknown[]): Dict =>
    new Map<string, unknown>([
      ['id', cid],
      ['type', 'comment'],
      ['parent_id', parent],
      ['author', author],
      ['body', body],
      ['score', score],
      ['timestamp', timestamp],
      ['replies', replies],
    ]);
  const reply = c(
    `${id}-c1-r1-ar1`,
    `${id}-c1-r1`,
    'DefaultAuthorOP',
    'Only a little, and knowing when to double-check is worth it.',
    '[SCORE_TO_PREDICT]',
    '2023-01-15T12:30:00Z',
    [],
  );
  const parent = c(`${id}-c1-r1`, `${id}-c1`, 'CuriousReader', "Wouldn't that make them annoying to use for quick questions?", 6, '2023-01-15T12:20:00Z', [
    reply,
  ]);
  const top = c(`${id}-c1`, id, 'FirstCommenter', 'Agreed, a guess stated as fact is worse.', 12, '2023-01-15T12:10:00Z', [parent]);
  return new Map<string, unknown>([
    ['id', id],
    ['type', 'post'],
    ['author', 'DefaultAuthorOP'],
    ['title', 'Should chatbots say when they are unsure?'],
    ['content', 'I think assistants should flag low confidence instead of guessing. Curious what others think.'],
    ['score', 57],
    ['timestamp', '2023-01-15T12:00:00Z'],
    ['__sub__', 'technology'],
    ['url', 'https://example.invalid/r/technology/default'],
    ['comments', [top]],
  ]);
}

/** The original's default few-shot post id of each P-Conv maker. */
const DEFAULT_POST = { '3.1': 'default_fs_post1', '3.2': 'default_fs_post1_with_convo' } as const;

/** Our stand-in for the sentence 3.1_RandPrompt writes as the content of a minimal context. */
const MINIMAL_CONTEXT_NOTE = 'Context holder: the parent message and the reply to predict are in the comments.';

/** One line of an original prompt file for a record, as a Python dict (dumped with json.dumps). */
export function originalLine(record: PromptRecord, corpus: PromptCorpus): Dict {
  const line = (entries: Array<[string, unknown]>): Dict => new Map(entries);
  if (record.task === '3.3') {
    return line([
      ['user', record.user],
      ['prompt', record.prompt],
      ['true_label', record.trueLabel],
      ['subreddit', record.subreddit],
      ...(record.extra ? Object.entries(record.extra) : []),
    ]);
  }
  const postId = record.targetPostId!;
  const replyId = record.targetReplyId!;
  const post = corpus.get(postId);
  const fs = fewShotIds(record);
  const task: Array<[string, unknown]> = [
    ['prompt_text', record.prompt],
    ['target_post_reference_id', postId],
    ['target_reply_id', replyId],
    ['true_label', record.trueLabel],
    ['subreddit', record.subreddit],
  ];
  const store: Dict = new Map();
  if (record.setting === 'P-Conv') {
    if (record.task === '3.1') store.set(postId, hideScore(convert(ids31(post.raw, postId).post) as Dict, replyId));
    else store.set(postId, convert(toPython(post.raw)));
    const def = DEFAULT_POST[record.task];
    if (!store.has(def)) store.set(def, defaultStorePost(def));
    task.push([
      'few_shot_info',
      line([
        ['type', fs.type === 'dynamic' ? 'dynamic' : 'default'],
        ['fs_post_ref_id', fs.postId ?? def],
        ['fs_reply_id_hidden_in_example', fs.replyId ?? `${def}-c1-r1-ar1`],
      ]),
    ]);
  } else if (record.setting === 'P-NonConv') {
    const full = (record.task === '3.1' ? convert(ids31(post.raw, postId).post) : convert(toPython(post.raw))) as Dict;
    store.set(postId, new Map([...full].filter(([k]) => k !== 'comments' && k !== 'replies')));
  } else if (record.task === '3.1') {
    const made = ids31(post.raw, postId);
    const structured = convert(made.post) as Dict;
    const target = replyDetails(made.flat, replyId);
    const parent = target ? nodeById(structured, get(target, '_parent_id') as string) : null;
    if (target && parent) store.set(postId, minimalContext(structured, target, parent));
    if (fs.postId !== null && fs.replyId !== null) {
      const pool = corpus.get(fs.postId);
      store.set(fs.postId, hideScore(convert(ids31(pool.raw, fs.postId).post) as Dict, fs.replyId));
    }
    task.push([
      'few_shot_info',
      line([
        ['fs_post_ref_id_in_store', fs.postId !== null && fs.replyId !== null ? fs.postId : 'N/A_FS_NOT_FOUND'],
        ['fs_example_reply_id_in_fs_post', fs.postId !== null && fs.replyId !== null ? fs.replyId : 'N/A'],
      ]),
    ]);
  } else {
    store.set(postId, convert(toPython(post.raw)));
    if (fs.postId !== null && !store.has(fs.postId)) store.set(fs.postId, convert(toPython(corpus.get(fs.postId).raw)));
    // The parent, as 3.2_RandPrompt's reply details record it.
    const made = ids31(post.raw, postId);
    const details = replyDetails(made.flat, replyId);
    const parentTime = details ? (parseTimestamp(get(details, '_parent_timestamp'))?.iso ?? null) : null;
    const target = made.flat.find((n) => get(n, 'id') === replyId);
    task.push(
      [
        'few_shot_info',
        line([
          ['type', 'pseudo_random_context_distant_post'],
          ['fs_context_provider_post_ref_id', fs.postId],
          ['fs_context_provider_reply_id_hidden_in_example', fs.replyId],
        ]),
      ],
      ['target_reply_body', cleanText(target ? get(target, 'body') : null)],
      [
        'target_reply_parent_info',
        line([
          ['parent_id', details ? get(details, '_parent_id') : null],
          ['parent_author', details ? get(details, '_parent_author') : null],
          ['parent_score', details ? get(details, '_parent_score') : null],
          ['parent_timestamp', parentTime],
          ['parent_body', details ? cleanText(get(details, '_parent_body')) : null],
        ]),
      ],
    );
  }
  return line([
    ['post_data_store', store],
    ['prediction_task', line(task)],
  ]);
}

/** build_minimal_context_for_prediction of 3.1_RandPrompt. */
function minimalContext(structured: Dict, target: Dict, parentNode: Dict): Dict {
  const reply = deepcopy(target) as Dict;
  const parent = deepcopy(parentNode) as Dict;
  if (reply.has('score')) reply.set('score', '[SCORE_TO_PREDICT]');
  reply.delete('_abs_score');
  reply.delete('_parsed_timestamp');
  if (parent.has('comments')) parent.set('comments', []);
  if (parent.has('replies')) parent.set('replies', []);
  if (reply.has('replies')) reply.set('replies', []);
  let entry: Dict = new Map<string, unknown>([
    ['id', get(structured, 'id')],
    ['type', 'post'],
    ['author', get(structured, 'author')],
    ['title', get(structured, 'title')],
    ['__sub__', get(structured, '__sub__')],
    ['comments', []],
  ]);
  if (get(parent, 'type') === 'post') {
    entry = parent;
    entry.set('comments', [reply]);
    if (!entry.has('score') && structured.has('score')) entry.set('score', structured.get('score'));
  } else if (get(parent, 'type') === 'comment') {
    parent.set('replies', [reply]);
    entry.set('comments', [parent]);
    entry.set('score', get(structured, 'score'));
    entry.set('timestamp', get(structured, 'timestamp'));
    entry.set('content', MINIMAL_CONTEXT_NOTE);
  }
  return convert(entry, [
    '__sub__',
    '_parsed_timestamp',
    '_abs_score',
    '_parent_id',
    '_parent_body',
    '_parent_author',
    '_parent_score',
    '_parent_timestamp',
  ]) as Dict;
}
