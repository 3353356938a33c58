/**
 * NP-Conv prompts (the "pseudo-random context" makers 3.1_RandPrompt, 3.2_RandPrompt and
 * 3.3_RandPrompt; spec §2.1.3, §2.2.3, §2.3.4): the example comes from another post, the one
 * 200 places on, and the task reply is shown with its parent in full. Our wording, the
 * original's structure, truncation lengths and order; section markers and cue lines exact.
 *
 * `original` keeps the makers' bugs and fallbacks: 3.2's example summary with `ID: N/A`, its task
 * summary with the post time as stored and the user's name, the two summaries' own N/A/None
 * fallbacks, and the sign hint; 3.3's literal `{post_author_name_fs}`, its ASCII-escaped JSON, the context post shown
 * from the raw record with its own latest reply still in it, and an empty parent body when
 * the target answers the post itself. `fixed` corrects each (FIXED_NP_CONV_PROMPTS).
 */
import { pythonStr } from '../../core/python-format.js';
import { cleanText, pyGet, type CommentNode, type FlatPost } from './corpus.js';
import type { PromptCorpus } from './prompt-corpus.js';
import { impactRules, show, SCORE_CUE, SIGN_CUE, SIGN_QUESTION, truncate } from './prompts.js';
import { assignIds, fewShotBranch, makerJson, serializable, toPython } from './maker-json.js';
import { postJson, pythonJson, truncatedBranch } from './reply-prompts.js';
import type { Fidelity, ReplySample, ScoreSample } from './selection.js';

export const NO_EXAMPLE_HEADER = '### NO SUITABLE FEW-SHOT EXAMPLE FOUND ###';
export const npReplyCue = (user: string): string => `Predicted reply body from '${user}':`;
/** The 3.3 NP-Conv few-shot's answer line; `original` prints the placeholder braces. */
export const npExampleAnswerLine = (author: string): string => `The actual reply body from '${author}' was:`;

export const FIXED_NP_CONV_PROMPTS = [
  'np-conv-3.2-id-and-time: both 3.2 NP-Conv summaries show the post id and the normalised post timestamp (the original\'s example summary prints "ID: N/A", its task summary the time as stored)',
  'np-conv-3.2-no-sign-hint: 3.2 NP-Conv asks for the score without the hint that gives its true sign away',
  'np-conv-3.3-name: the 3.3 NP-Conv example names its author (the original prints the literal {post_author_name_fs})',
  'np-conv-3.3-context-without-answer: the 3.3 NP-Conv context post is shown with ids and without its own latest author reply (the original removes it by id from a copy that has no ids, a no-op)',
  'np-conv-3.3-parent-post-text: a 3.3 NP-Conv target that answers the post itself shows the post text as its parent (the original shows "")',
  'np-conv-3.3-no-later-messages: the 3.3 NP-Conv example branch drops messages posted after the example reply (the original keeps later messages under its ancestors)',
] as const;

interface Parent {
  id: string;
  author: unknown;
  score: unknown;
  timestamp: string | null;
  timestampRaw: unknown;
  body: unknown;
  /** The node's own `body` key: 3.3_RandPrompt.py reads `.get('body', '')` of a post too. */
  bodyKey: unknown;
  isPost: boolean;
}

function parentOf(post: FlatPost, node: CommentNode): Parent | null {
  if (node.parentId === post.id) {
    return {
      id: post.id,
      author: post.author,
      score: post.score,
      timestamp: post.timestamp,
      timestampRaw: post.raw.timestamp,
      body: post.content,
      bodyKey: post.raw['body'],
      isPost: true,
    };
  }
  const parent = post.byId.get(node.parentId);
  if (!parent) return null;
  return {
    id: parent.id,
    author: parent.author,
    score: parent.score,
    timestamp: parent.timestamp,
    timestampRaw: parent.timestampRaw,
    body: parent.body,
    bodyKey: parent.body,
    isPost: false,
  };
}

const na = (value: unknown): string => (value === null || value === undefined ? 'N/A' : String(value));

// ---------------------------------------------------------------------------------------
// 3.1 NP-Conv

function signExample(sample: ScoreSample, corpus: PromptCorpus): string {
  const fs = sample.fewShot;
  if (!fs || fs.postId === null || fs.replyId === null) return `${NO_EXAMPLE_HEADER}\n${SIGN_CUE}\npositive`;
  const { post, node: reply } = corpus.node(fs.postId, fs.replyId);
  const parent = parentOf(post, reply)!;
  return [
    `### FEW-SHOT EXAMPLE (Context from a DIFFERENT, unrelated post ID: ${fs.postId}) ###`,
    `- Community: r/${show(post.subreddit ?? '')}; posted by u/${show(post.author)} at ${post.timestamp ?? 'N/A'}; post score ${show(post.score)}`,
    `- Title: "${cleanText(post.raw.title)}"`,
    `- Opening of the post (up to 150 characters): ${truncate(cleanText(post.content), 150)}`,
    `The post author answered u/${cleanText(parent.author)}, whose message opens with: "${truncate(cleanText(parent.body), 100, true)}"`,
    `Their reply (posted ${reply.timestamp ?? 'N/A'}): "${cleanText(reply.body)}"`,
    SIGN_QUESTION,
    `${SIGN_CUE}\n${fs.label}`,
  ].join('\n');
}

/** The prompt of a 3.1 NP-Conv sample (3.1_RandPrompt.py). */
export function signNpConvPrompt(sample: ScoreSample, corpus: PromptCorpus): string {
  const { post, node: target } = corpus.node(sample.targetPostId, sample.targetReplyId);
  const parent = parentOf(post, target)!;
  const disclaimer =
    'IMPORTANT NOTE: the example above comes from a COMPLETELY UNRELATED post by someone else. It only shows the answer format; do not carry its content, people or outcome over to the task below.';
  const task = [
    `### CURRENT TASK (Post ID: ${sample.targetPostId}) ###`,
    `- Community: r/${show(post.subreddit ?? '')}; posted by u/${show(post.author)} at ${post.timestamp ?? 'N/A'}; post score ${show(post.score)}`,
    `- Title: "${cleanText(post.raw.title)}"`,
    `- Opening of the post (up to 150 characters): ${truncate(cleanText(post.content), 150)}`,
    `The post author answered a message by u/${cleanText(parent.author)} (score ${show(parent.score)}, posted ${parent.timestamp ?? 'None'}), which reads in full: "${cleanText(parent.body)}"`,
    `Their reply (posted ${target.timestamp ?? 'N/A'}): "${cleanText(target.body)}"`,
    SIGN_QUESTION,
    SIGN_CUE,
  ].join('\n');
  return `${signExample(sample, corpus)}\n\n${disclaimer}\n\n${task}`;
}

// ---------------------------------------------------------------------------------------
// 3.2 NP-Conv

/**
 * A 3.2 NP-Conv post summary. `original` reads the raw post as 3.2_RandPrompt.py does, with its
 * two summaries' own fallbacks (a missing key prints N/A, a null one None or ""): the example's
 * provider post (get_context_post_summary_string: id N/A, normalised time, content falling back
 * to body, "..." only past 300 characters) and the task's post (its id, the user's name, the time
 * as stored, content without the body fallback, "..." always). `fixed` normalises both.
 */
function impactPostLines(post: FlatPost, fidelity: Fidelity, role: 'provider' | 'task', user: string): string[] {
  const raw = post.raw;
  if (fidelity === 'original') {
    const provider = role === 'provider';
    const content = provider ? cleanText(pyGet(raw, 'content', pyGet(raw, 'body', 'N/A'))) : cleanText(pyGet(raw, 'content', 'N/A'));
    return [
      `Referenced Post (ID: ${provider ? pythonStr(pyGet(raw, 'id', 'N/A')) : post.id}):`,
      `- Community: r/${cleanText(pyGet(raw, '__sub__', 'N/A'))}; posted by u/${provider ? cleanText(pyGet(raw, 'author', 'N/A')) : user} at ${
        provider ? (post.timestamp ?? 'N/A') : pythonStr(pyGet(raw, 'timestamp', 'N/A'))
      }; post score ${pythonStr(pyGet(raw, 'score', 'N/A'))}`,
      `- Title: "${cleanText(pyGet(raw, 'title', 'N/A'))}"`,
      `- Opening of the post (up to 300 characters): ${truncate(content, 300, !provider)}`,
    ];
  }
  return [
    `Referenced Post (ID: ${post.id}):`,
    `- Community: r/${na(post.subreddit)}; posted by u/${na(post.author)} at ${post.timestamp ?? 'N/A'}; post score ${na(post.score)}`,
    `- Title: "${post.raw.title === undefined || post.raw.title === null ? 'N/A' : cleanText(post.raw.title)}"`,
    `- Opening of the post (up to 300 characters): ${truncate(cleanText(post.content), 300, role === 'task')}`,
  ];
}

/** A parent's fields as 3.2_RandPrompt.py prints them: clean author, score and time as Python prints None. */
function impactParent(parent: Parent, fidelity: Fidelity): { author: string; score: string; time: string } {
  if (fidelity === 'original') return { author: cleanText(parent.author), score: pythonStr(parent.score ?? null), time: parent.timestamp ?? 'None' };
  return { author: na(parent.author), score: na(parent.score), time: parent.timestamp ?? 'N/A' };
}

/** The prompt of a 3.2 NP-Conv sample (3.2_RandPrompt.py). */
export function impactNpConvPrompt(sample: ScoreSample, corpus: PromptCorpus, fidelity: Fidelity): string {
  const post = corpus.get(sample.targetPostId);
  const target = post.byId.get(sample.targetReplyId)!;
  const parent = parentOf(post, target)!;
  const intro =
    'You will predict the community score of a Reddit reply. The worked example below is taken from a distant, unrelated post; it shows the format of the answer, not anything about the task.';
  const fs = sample.fewShot;
  let example: string;
  if (fs && fs.postId !== null && fs.replyId !== null) {
    const provider = corpus.get(fs.postId);
    const reply = provider.byId.get(fs.replyId)!;
    const pParent = parentOf(provider, reply)!;
    const p = impactParent(pParent, fidelity);
    example = [
      '### FEW-SHOT EXAMPLE (Using Pseudo-Random Context from a Distant Post) ###',
      ...impactPostLines(provider, fidelity, 'provider', sample.user),
      `The post author answered u/${p.author} (score ${p.score}, posted ${p.time}), whose message opens with: "${truncate(cleanText(pParent.body), 100, true)}"`,
      `Their reply (posted ${reply.timestamp ?? 'N/A'}): "${cleanText(reply.body)}"`,
      impactRules(),
      `${SCORE_CUE}\n${fs.label}`,
    ].join('\n');
  } else {
    example = NO_EXAMPLE_HEADER;
  }
  const hint = fidelity === 'original' ? ` Hint: expect a ${sample.score > 0 ? 'positive' : 'negative'} score.` : '';
  const t = impactParent(parent, fidelity);
  const task = [
    '### ACTUAL TASK (Predict Score for a Reply in a *Different* Post) ###',
    'Remember: the post below has nothing to do with the example above.',
    ...impactPostLines(post, fidelity, 'task', sample.user),
    `The post author answered a message by u/${t.author} (score ${t.score}, posted ${t.time}), which reads in full: "${cleanText(parent.body)}"`,
    `Their reply (posted ${target.timestamp ?? 'N/A'}): "${cleanText(target.body)}"`,
    `Predict the exact score this reply received.${hint}`,
    impactRules(),
    SCORE_CUE,
  ].join('\n');
  return `${intro}\n\n${example}\n\n${task}`;
}

// ---------------------------------------------------------------------------------------
// 3.3 NP-Conv

/** Newest author candidate of a post (the context post's own "target"), as the selection orders them. */
function latestAuthorReply(post: FlatPost): CommentNode | null {
  let best: CommentNode | null = null;
  for (const node of post.comments) {
    if (node.author === null || node.author !== post.author || node.body === null || node.time === null) continue;
    if (best === null || node.time > best.time!) best = node;
  }
  return best;
}

function parentFields(parent: Parent | null, postAsEmpty: boolean): { id: string; author: string; score: unknown; body: string } {
  if (!parent) return { id: '', author: '', score: null, body: '' };
  return {
    id: parent.id,
    // get('author', 'Unknown User'): a null author prints as None.
    author: show(parent.author),
    score: parent.score ?? null,
    body: parent.isPost && postAsEmpty ? cleanText(parent.bodyKey) : cleanText(parent.body),
  };
}

/** The extra record fields 3.3_RandPrompt writes next to the prompt (spec §2.3.4). */
export function replyNpConvExtras(sample: ReplySample, corpus: PromptCorpus, fidelity: Fidelity): Record<string, unknown> {
  const post = corpus.get(sample.targetPostId);
  const target = post.byId.get(sample.targetReplyId)!;
  const context = corpus.get(sample.fewShot!.postId);
  const latest = latestAuthorReply(context);
  const original = fidelity === 'original';
  const parentNode = parentOf(post, target);
  const parent = parentFields(parentNode, original);
  // The context post's own target is its latest author reply (the one the original fails to remove).
  const ctxNode = latest && parentOf(context, latest);
  const ctxParent = parentFields(ctxNode, original);
  // The maker writes the parents' author and score as stored (None stays null), its fallbacks
  // where a node is missing, and the context's user as grouped (not the post's author field).
  return {
    target_reply_parent_author: original ? (parentNode ? (parentNode.author ?? null) : 'Unknown User') : parent.author,
    target_reply_parent_body: parent.body,
    target_reply_parent_id: original && !parentNode ? 'unknown_id' : parent.id,
    target_reply_parent_score: original && !parentNode ? 'N/A' : parent.score,
    context_post_author_for_prompt: original ? context.user : show(context.author ?? ''),
    context_post_target_parent_author: original ? (ctxNode ? (ctxNode.author ?? null) : 'N/A') : ctxParent.author,
    context_post_target_parent_body: original && !ctxNode ? 'N/A' : ctxParent.body,
    context_post_target_parent_id: original && !ctxNode ? 'N/A' : ctxParent.id,
    context_post_target_parent_score: original && !ctxNode ? 'N/A' : ctxParent.score,
    context_post_used_idx_global: sample.contextPostIndex,
    current_post_idx_global: sample.currentPostIndex,
  };
}

/** The prompt of a 3.3 NP-Conv sample (3.3_RandPrompt.py). */
export function replyNpConvPrompt(sample: ReplySample, corpus: PromptCorpus, fidelity: Fidelity): string {
  const original = fidelity === 'original';
  const post = corpus.get(sample.targetPostId);
  const target = post.byId.get(sample.targetReplyId)!;
  const context = corpus.get(sample.fewShot!.postId);
  const example = context.byId.get(sample.fewShot!.replyId)!;
  const exampleParent = parentFields(parentOf(context, example), original);
  const contextAuthor = show(context.author ?? '');
  const exampleBlock = [
    '### FEW-SHOT EXAMPLE ###',
    `From a previous post: a conversation branch in which the post author '${contextAuthor}' replied; the reply is left out, and so is everything after it in that branch:`,
    original
      ? makerJson(fewShotBranch(assignIds(context.raw, context.id, true).flat, example.id))
      : pythonJson([truncatedBranch(context, example, example.time)], false),
    `The reply (ID ${example.id}) answers a message by '${exampleParent.author}' (ID ${exampleParent.id}, score ${show(exampleParent.score)}), which reads: "${exampleParent.body}"`,
    `${npExampleAnswerLine(original ? '{post_author_name_fs}' : contextAuthor)}\n${cleanText(example.body)}`,
  ].join('\n');
  // The original dumps the raw record (no ids) and "removes" the latest reply by id: nothing goes.
  const contextJson = original ? makerJson(serializable(toPython(context.raw))) : pythonJson(postJson(context, latestAuthorReply(context), null, true), false);
  const contextBlock = [
    '### CONTEXT FOR PREDICTION TASK ###',
    'The conversation below comes from a different, unrelated post. Use it only as an impression of how threads unfold, not as information about the task:',
    contextJson,
  ].join('\n');
  const parent = parentFields(parentOf(post, target), original);
  const taskBlock = [
    '### PREDICTION TASK ###',
    `'${sample.user}' is replying to a message by '${parent.author}' (ID ${parent.id}, score ${show(parent.score)}), which reads: "${parent.body}"`,
    `Write the reply '${sample.user}' posts. Respond ONLY with the predicted text content of the body.`,
    npReplyCue(sample.user),
  ].join('\n');
  return `${exampleBlock}\n\n${contextBlock}\n\n${taskBlock}`;
}
