/**
 * Prompts for tasks 3.1 and 3.2 in P-Conv and P-NonConv, in our own words, carrying the
 * information of the original prompt makers in the same structure (spec §2.1.1, §2.1.2,
 * §2.2.1, §2.2.2). Section markers and answer cue lines are format facts and stay exact:
 * `### FEW-SHOT EXAMPLE ... ###`, `### ACTUAL TASK ... ###`, `Predicted score sentiment:`,
 * `Score:`. Under `fixed`, 3.2 loses the sign hint (which leaks the true label) and shows
 * the post's real id instead of `N/A`.
 */
import { pythonStr } from '../../core/python-format.js';
import { cleanText, flattenCorpus, pyGet, type CommentNode, type FlatPost, type UserPosts } from './corpus.js';
import type { Fidelity, ScoreSample } from './selection.js';

export const SIGN_CUE = 'Predicted score sentiment:';
export const SCORE_CUE = 'Score:';

/** Our synthetic stand-in for the original's default few-shot (used when no second reply qualifies). */
const DEFAULT_EXAMPLE = {
  postId: 'default_fs_post1',
  subreddit: 'technology',
  author: 'DefaultAuthorOP',
  score: 57,
  timestamp: '2023-01-15T12:00:00Z',
  title: 'Should chatbots say when they are unsure?',
  content: 'I think assistants should flag low confidence instead of guessing. Curious what others think.',
  parentId: 'default_fs_post1-c1',
  parentAuthor: 'CuriousReader',
  parentBody: "Wouldn't that make them annoying to use for quick questions?",
  replyId: 'default_fs_post1-c1-c2',
  replyTimestamp: '2023-01-15T12:30:00Z',
  replyBody: 'Only a little, and knowing when to double-check is worth it.',
};

/** Our synthetic stand-in for the fixed 3.2 P-NonConv example (answer 18 in the original). */
const NON_CONV_IMPACT_EXAMPLE = {
  subreddit: 'askhistorians',
  postId: 'example_post',
  author: 'HistoryBuff23',
  title: 'How were letters delivered across medieval Europe?',
  content: 'Before national postal systems, how did an ordinary merchant get a letter from Venice to Bruges, and how long did it take?',
  reply: 'Mostly through merchant couriers and trading houses; weeks, not days.',
  answer: 18,
};

export const truncate = (text: string, n: number, alwaysEllipsis = false): string => {
  const chars = Array.from(text);
  return chars.length > n ? chars.slice(0, n).join('') + '...' : alwaysEllipsis ? text + '...' : text;
};

export const show = (value: unknown): string => (value === null || value === undefined ? 'None' : String(value));

interface PostView {
  id: string;
  subreddit: string;
  author: string;
  score: string;
  timestamp: string;
  title: string;
  content: string;
}

function postView(post: FlatPost, shownId: string): PostView {
  return {
    id: shownId,
    subreddit: show(post.subreddit ?? ''),
    author: show(post.author),
    score: show(post.score),
    timestamp: post.timestamp ?? 'N/A',
    title: cleanText(post.raw.title),
    content: cleanText(post.content),
  };
}

/**
 * 3.2PromptMaker.py summarises the raw post (a copy without ids): `get(key, "N/A")`, so a
 * missing key prints N/A and a null one "" (text) or None (score); content falls back to body.
 */
function rawPostView(post: FlatPost, shownId: string): PostView {
  const raw = post.raw;
  return {
    id: shownId,
    subreddit: cleanText(pyGet(raw, '__sub__', 'N/A')),
    author: cleanText(pyGet(raw, 'author', 'N/A')),
    score: pythonStr(pyGet(raw, 'score', 'N/A')),
    timestamp: post.timestamp ?? 'N/A',
    title: cleanText(pyGet(raw, 'title', 'N/A')),
    content: cleanText(pyGet(raw, 'content', pyGet(raw, 'body', 'N/A'))),
  };
}

function postSummary(view: PostView, contentLength: number): string {
  return [
    `Referenced Post (ID: ${view.id}):`,
    `- Community: r/${view.subreddit}; posted by u/${view.author} at ${view.timestamp}; post score ${view.score}`,
    `- Title: "${view.title}"`,
    `- Opening of the post (up to ${contentLength} characters): ${truncate(view.content, contentLength)}`,
    '- The whole comment tree of this post is held in the data store.',
  ].join('\n');
}

function replyBlock(parent: { id: string; author: string; body: string }, reply: { id: string; timestamp: string; body: string }): string {
  return [
    `The post author answered comment ${parent.id} by u/${parent.author}, which opens with: "${truncate(parent.body, 100, true)}"`,
    `Their reply (${reply.id}, posted ${reply.timestamp}): "${reply.body}"`,
    'The community score of this reply is hidden.',
  ].join('\n');
}

export const SIGN_QUESTION = "Will the community score of this reply end up positive or negative? Answer with just 'positive' or 'negative'.";

export function impactRules(): string {
  return [
    'How to answer:',
    '- Work out internally whether the score is positive or negative; do not state it.',
    '- The absolute value is at least 3.',
    '- Give only the integer, e.g. -7 or 5 or 25.',
  ].join('\n');
}

/** The makers' `_parent_author` is `clean_text(parent.get('author', ''))`: a null author prints as "". */
function parentOf(post: FlatPost, node: CommentNode): { id: string; author: string; body: string } {
  if (node.parentId === post.id) return { id: post.id, author: cleanText(post.author), body: cleanText(post.content) };
  const parent = post.byId.get(node.parentId)!;
  return { id: parent.id, author: cleanText(parent.author), body: cleanText(parent.body) };
}

function replyOf(node: CommentNode): { id: string; timestamp: string; body: string } {
  return { id: node.id, timestamp: node.timestamp ?? 'N/A', body: cleanText(node.body) };
}

/** Indexes a corpus so prompts can be built from selected samples. */
export function corpusIndex(users: readonly UserPosts[]): Map<string, FlatPost> {
  return new Map(flattenCorpus(users).map((post) => [post.id, post]));
}

/** The prompt text of a 3.1 or 3.2 P-Conv / P-NonConv sample. */
export function scorePrompt(sample: ScoreSample, posts: Map<string, FlatPost>, fidelity: Fidelity): string {
  if (sample.setting === 'NP-Conv') throw new RangeError('NP-Conv prompts are not built yet');
  const post = posts.get(sample.targetPostId)!;
  const target = post.byId.get(sample.targetReplyId)!;
  const sign = sample.task === '3.1';
  // 3.2's summaries read "ID: N/A" in the original (ids were set on a copy).
  const shownId = !sign && fidelity === 'original' ? 'N/A' : post.id;
  const cue = sign ? SIGN_CUE : SCORE_CUE;
  const viewOf = !sign && fidelity === 'original' ? rawPostView : postView;
  const hint = !sign && fidelity === 'original' ? ` Hint: expect a ${sample.score > 0 ? 'positive' : 'negative'} score.` : '';
  const question = sign ? SIGN_QUESTION : `Predict the exact score this reply received.${hint}\n${impactRules()}`;

  if (sample.setting === 'P-NonConv') {
    const view: PostView =
      !sign && fidelity === 'original'
        ? {
            ...rawPostView(post, post.id),
            author: sample.user,
            // 3.2PromptMaker.py: get('content', 'N/A'), no fallback to body here.
            content: cleanText(pyGet(post.raw, 'content', 'N/A')),
          }
        : postView(post, post.id);
    const task = [
      'Consider this post:',
      `- Community: r/${view.subreddit}`,
      `- Post ID: ${view.id}; author: u/${view.author}`,
      `- Title: "${view.title}"`,
      `- Opening of the post (up to 500 characters): ${truncate(view.content, 500)}`,
      `Under this post, its author answered one of the comments with: "${cleanText(target.body)}"`,
      question,
      cue,
    ].join('\n');
    if (sign) return task;
    const e = NON_CONV_IMPACT_EXAMPLE;
    const example = [
      '### FEW-SHOT EXAMPLE (Without Full Conversation Context) ###',
      `- Community: r/${e.subreddit}; post ${e.postId} by u/${e.author}`,
      `- Title: "${e.title}"`,
      `- Opening of the post: ${truncate(e.content, 100, true)}`,
      `The author's reply: "${e.reply}"`,
      `${SCORE_CUE}\n${e.answer}`,
    ].join('\n');
    return `${example}\n\n### ACTUAL TASK (Without Full Conversation Context) ###\n${task}`;
  }

  const fewShotHeader = sign ? '### FEW-SHOT EXAMPLE ###' : '### FEW-SHOT EXAMPLE (With Full Conversation Context) ###';
  const taskHeader = sign ? '### ACTUAL TASK ###' : '### ACTUAL TASK (With Full Conversation Context) ###';
  let example: string;
  const fs = sample.fewShot!;
  if (fs.type === 'dynamic') {
    const node = post.byId.get(fs.replyId!)!;
    example = [
      postSummary(viewOf(post, shownId), 500),
      replyBlock(parentOf(post, node), replyOf(node)),
      sign ? SIGN_QUESTION : `Predict the exact score this reply received.\n${impactRules()}`,
      `${cue}\n${fs.label}`,
    ].join('\n');
  } else {
    const d = DEFAULT_EXAMPLE;
    // Our wording of the example, under the ids the sample carries (the original's).
    const postId = fs.postId ?? d.postId;
    const view: PostView = {
      id: postId,
      subreddit: d.subreddit,
      author: d.author,
      score: String(d.score),
      timestamp: d.timestamp,
      title: d.title,
      content: d.content,
    };
    example = [
      postSummary(view, 500),
      replyBlock(
        { id: fs.replyId ? fs.replyId.replace(/-ar1$/, '') : d.parentId, author: d.parentAuthor, body: d.parentBody },
        { id: fs.replyId ?? d.replyId, timestamp: d.replyTimestamp, body: d.replyBody },
      ),
      sign ? SIGN_QUESTION : `Predict the exact score this reply received.\n${impactRules()}`,
      `${cue}\n${fs.label}`,
    ].join('\n');
  }
  const task = [postSummary(viewOf(post, shownId), 500), replyBlock(parentOf(post, target), replyOf(target)), question, cue].join('\n');
  return `${fewShotHeader}\n${example}\n\n${taskHeader}\n${task}`;
}
