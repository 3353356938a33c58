// 3.3 prompts on the hand-built fixture: the truncated few-shot branch, the context without
// the target's subtree, the cue line, and the fixed corrections.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RawPost, UserPosts } from '../../../src/benchmarks/personabench/corpus.js';
import { corpusIndex } from '../../../src/benchmarks/personabench/prompts.js';
import { pythonJson, replyCue, replyPrompt } from '../../../src/benchmarks/personabench/reply-prompts.js';
import { selectReplySamples } from '../../../src/benchmarks/personabench/selection.js';

const grouped = JSON.parse(readFileSync(new URL('../../fixtures/personabench/grouped.json', import.meta.url), 'utf8')) as Record<string, RawPost[]>;
const base: UserPosts[] = Object.entries(grouped).map(([user, posts]) => ({ user, posts }));
const opts = (fidelity: 'original' | 'fixed') => ({ fidelity, seed: 0 });

function promptFor(users: UserPosts[], setting: 'P-Conv' | 'P-NonConv', fidelity: 'original' | 'fixed', postId = 'u1p1'): string {
  const sample = selectReplySamples(users, setting, opts(fidelity)).find((s) => s.targetPostId === postId)!;
  return replyPrompt(sample, corpusIndex(users), fidelity);
}

/** The JSON block that follows a given line of the prompt. */
function jsonAfter(prompt: string, marker: string): unknown {
  const start = prompt.indexOf('\n', prompt.indexOf(marker)) + 1;
  const open = prompt[start]!;
  const close = open === '[' ? ']' : '}';
  const end = prompt.indexOf(`\n${close}`, start) + 2;
  return JSON.parse(prompt.slice(start, end));
}

describe('3.3 P-Conv prompt', () => {
  it('few-shot: the top-level branch cut at the few-shot reply, answered with its body', () => {
    const prompt = promptFor(base, 'P-Conv', 'original');
    const branch = jsonAfter(prompt, 'everything posted after it in that branch:') as Array<Record<string, unknown>>;
    // "Read the paper first." answers "I doubt this." (u1p1-c5): the branch is c5 with no replies.
    expect(branch).toEqual([
      { author: 'u3', body: 'I doubt this.', score: 4, timestamp: '2023-03-01T10:40:00Z', replies: [], id: 'u1p1-c5', parent_id: 'u1p1', type: 'comment' },
    ]);
    expect(prompt).toContain(`${replyCue('alice')}\nRead the paper first.\n\n### ACTUAL TASK ###`);
    expect(prompt.endsWith(`\n${replyCue('alice')}`)).toBe(true);
    expect(prompt).toContain("reply by '{main_author_name}'");
  });

  it('task: the whole post without the target subtree; the few-shot answer stays (original leak)', () => {
    const prompt = promptFor(base, 'P-Conv', 'original');
    const post = jsonAfter(prompt, 'reply to predict left out:') as {
      id: string;
      comments: Array<{ id: string; replies: Array<{ replies: Array<{ id: string; replies: unknown[] }> }> }>;
    };
    expect(post.id).toBe('u1p1');
    expect(post.comments.map((c) => c.id)).toEqual(['u1p1-c1', 'u1p1-c5', 'u1p1-c7']);
    // c1 -> c2 -> c3, whose reply (the target, c4) is gone.
    expect(post.comments[0]!.replies[0]!.replies[0]!.id).toBe('u1p1-c1-c2-c3');
    expect(post.comments[0]!.replies[0]!.replies[0]!.replies).toEqual([]);
    expect(prompt.split('Read the paper first.').length - 1).toBe(2);
    expect(prompt).not.toContain('Yes, double blind.');
    expect(prompt).toContain('(ID u1p1-c1-c2-c3-c4)');
    expect(prompt).toContain('"Was it randomized?"');
  });

  it('fixed: the author is named and messages after the target leave the context', () => {
    const users = structuredClone(base);
    users[0]!.posts[0]!.comments![2]!.replies = [{ author: 'u9', body: 'Later remark.', score: 1, timestamp: '2023-03-01T14:00:00Z', replies: [] }];
    expect(promptFor(users, 'P-Conv', 'original')).toContain('Later remark.');
    const fixed = promptFor(users, 'P-Conv', 'fixed');
    expect(fixed).not.toContain('Later remark.');
    expect(fixed).not.toContain('{main_author_name}');
    expect(fixed).toContain("reply by 'alice'");
  });
});

describe('3.3 P-NonConv prompt', () => {
  it('the post without comments, the parent in full, the cue', () => {
    const prompt = promptFor(base, 'P-NonConv', 'original');
    const post = jsonAfter(prompt, "written by 'alice'") as Record<string, unknown>;
    expect(Object.keys(post)).toEqual(['title', 'url', 'content', '__sub__', 'score', 'author', 'timestamp', 'type', 'id']);
    expect(post['id']).toBe('u1p1');
    expect(prompt).toContain('"Was it randomized?"');
    expect(prompt).not.toContain('Read the paper first.');
    expect(prompt.endsWith(`\n${replyCue('alice')}`)).toBe(true);
  });

  it('original escapes non-ASCII in the JSON as Python json.dumps does; fixed keeps it', () => {
    const users = structuredClone(base);
    users[0]!.posts[0]!.title = 'Café study';
    expect(promptFor(users, 'P-NonConv', 'original')).toContain('"title": "Caf\\u00e9 study"');
    expect(promptFor(users, 'P-NonConv', 'fixed')).toContain('"title": "Café study"');
    expect(pythonJson({ a: '😀' }, true)).toBe('{\n  "a": "\\ud83d\\ude00"\n}');
  });
});
