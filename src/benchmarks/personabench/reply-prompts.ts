/**
 * Task 3.3 prompts (next reply text) for P-Conv and P-NonConv, in our own words with the
 * original's structure (spec §2.3.2, §2.3.3): JSON dumps of the post (P-NonConv: without
 * comments; P-Conv: the whole tree minus the target's subtree), the truncated branch of the
 * few-shot reply, the parent sentence, and the exact cue line
 * `Predicted body text for <user>'s reply:`. `original` keeps the literal
 * `{main_author_name}` placeholder and Python's ASCII-escaped JSON; `fixed` names the
 * author and drops every message posted after the target from the shown conversation.
 */
import { pythonStr } from '../../core/python-format.js';
import { cleanText, type CommentNode, type FlatPost } from './corpus.js';
import { assignIds, fewShotBranch, makerJson, postDetails, postWithout } from './maker-json.js';
import type { Fidelity, ReplySample } from './selection.js';

export const replyCue = (user: string): string => `Predicted body text for ${user}'s reply:`;

/** Python `json.dumps(value, indent=2)` (ensure_ascii escapes non-ASCII as \uXXXX). */
export function pythonJson(value: unknown, ensureAscii: boolean): string {
  const text = JSON.stringify(value, null, 2);
  return ensureAscii ? text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}

const POST_KEYS = ['title', 'url', 'content', '__sub__', 'score', 'author', 'timestamp'] as const;
const COMMENT_KEYS = ['author', 'body', 'score', 'timestamp'] as const;

function commentJson(node: CommentNode, children: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node.raw)) if (key !== 'replies' && !(key.startsWith('_') && !key.startsWith('__'))) out[key] = value;
  for (const key of COMMENT_KEYS) if (!(key in out)) out[key] = null;
  if (node.timestamp !== null) out['timestamp'] = node.timestamp;
  out['replies'] = children;
  out['id'] = node.id;
  out['parent_id'] = node.parentId;
  out['type'] = 'comment';
  return out;
}

const byTime = (a: CommentNode, b: CommentNode): number => (a.time ?? -Infinity) - (b.time ?? -Infinity) || a.order - b.order;

/** The whole post as JSON data, without `removed` and its subtree, and (fixed) without anything later than `cutoff`. */
export function postJson(post: FlatPost, removed: CommentNode | null, cutoff: number | null, withComments: boolean): Record<string, unknown> {
  const keep = (node: CommentNode): boolean => node !== removed && (cutoff === null || (node.time !== null && node.time < cutoff));
  const tree = (node: CommentNode): Record<string, unknown> => commentJson(node, node.children.filter(keep).map(tree));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(post.raw)) if (key !== 'comments') out[key] = value;
  for (const key of POST_KEYS) if (!(key in out)) out[key] = null;
  if (post.timestamp !== null) out['timestamp'] = post.timestamp;
  if (withComments) {
    out['comments'] = post.comments.filter((n) => n.depth === 1 && keep(n)).map(tree);
    out['id'] = post.id;
    out['type'] = 'post';
  } else {
    out['type'] = 'post';
    out['id'] = post.id;
  }
  return out;
}

/**
 * The few-shot's branch: from its top-level comment down, children in time order; off-path
 * subtrees kept whole; at the reply's parent, children stop at the reply (the reply and every
 * later sibling go). A top-level few-shot reply is its own whole subtree, answer included, as
 * in the original (spec §2.3.2).
 */
export function truncatedBranch(post: FlatPost, reply: CommentNode, cutoff: number | null): Record<string, unknown> {
  const path = new Set<string>();
  for (let id: string | undefined = reply.id; id && id !== post.id; id = post.byId.get(id)?.parentId) path.add(id);
  const top = post.byId.get(reply.topLevelId)!;
  const visible = (n: CommentNode): boolean => cutoff === null || (n.time !== null && n.time < cutoff);
  const whole = (node: CommentNode): Record<string, unknown> => commentJson(node, [...node.children].filter(visible).sort(byTime).map(whole));
  const build = (node: CommentNode): Record<string, unknown> => {
    const children: unknown[] = [];
    for (const child of [...node.children].sort(byTime)) {
      if (node.id === reply.parentId && child.id === reply.id) break;
      if (!visible(child)) continue;
      children.push(path.has(child.id) ? build(child) : whole(child));
    }
    return commentJson(node, children);
  };
  return top === reply ? whole(top) : build(top);
}

/** The 3.3 makers print the parent's author as stored (`get('author', "")`, None for a null one). */
function parentInfo(post: FlatPost, node: CommentNode): { id: string; author: string; body: string } {
  // A post parent's text is its content, else its body (generate_unique_ids_for_post fills one from the other).
  if (node.parentId === post.id) return { id: post.id, author: pythonStr(post.author ?? null), body: cleanText(post.content ?? post.raw['body'] ?? null) };
  const parent = post.byId.get(node.parentId);
  return parent ? { id: parent.id, author: pythonStr(parent.author ?? null), body: cleanText(parent.body) } : { id: '', author: '', body: '' };
}

function parentSentence(post: FlatPost, node: CommentNode): string {
  const parent = parentInfo(post, node);
  return `This reply by the post's author (ID ${node.id}) answers a message by '${parent.author}' (ID ${parent.id}), which reads: "${parent.body}"`;
}

/** The prompt text of a 3.3 P-Conv or P-NonConv sample. */
export function replyPrompt(sample: ReplySample, posts: Map<string, FlatPost>, fidelity: Fidelity): string {
  if (sample.setting === 'NP-Conv') throw new RangeError('NP-Conv prompts are not built yet');
  const post = posts.get(sample.targetPostId)!;
  const target = post.byId.get(sample.targetReplyId)!;
  const ascii = fidelity === 'original';
  const name = fidelity === 'original' ? '{main_author_name}' : sample.user;
  const cue = replyCue(sample.user);
  if (sample.setting === 'P-NonConv') {
    const parent = parentInfo(post, target);
    return [
      `Here is the current post written by '${sample.user}':`,
      ascii ? makerJson(postDetails(post.raw, post.id, sample.user)) : pythonJson(postJson(post, null, null, false), false),
      `Under the post "${cleanText(post.raw.title)}", the author is answering a message by '${parent.author}', which reads: "${parent.body}"`,
      `What will '${sample.user}' write? Respond ONLY with the predicted text content of the body.`,
      cue,
    ].join('\n');
  }
  const cutoff = fidelity === 'fixed' ? target.time : null;
  const fewShotNode = post.byId.get(sample.fewShot!.replyId)!;
  // original: the objects as the maker builds them (maker-json.ts); fixed: plens's own, normalised.
  const made = ascii ? assignIds(post.raw, post.id, false) : null;
  const fewShotJson = made ? makerJson(fewShotBranch(made.flat, fewShotNode.id)) : pythonJson([truncatedBranch(post, fewShotNode, fewShotNode.time)], false);
  const contextJson = made ? makerJson(postWithout(made.post, target.id)) : pythonJson(postJson(post, target, cutoff, true), false);
  const example = [
    '### FEW-SHOT EXAMPLE ###',
    "In the branch below the author's reply is left out, and so is everything posted after it in that branch:",
    fewShotJson,
    parentSentence(post, fewShotNode),
    `Predict the body text of this reply by '${name}'.`,
    `${cue}\n${cleanText(fewShotNode.body)}`,
  ].join('\n');
  const task = [
    '### ACTUAL TASK ###',
    "Now here is the conversation of the whole post, with the author's reply to predict left out:",
    contextJson,
    parentSentence(post, target),
    `Predict the body text of this reply by '${name}'. Respond ONLY with the predicted text content of the body.`,
    cue,
  ].join('\n');
  return `${example}\n\n${task}`;
}
