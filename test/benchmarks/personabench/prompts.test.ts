// 3.1 / 3.2 prompts built from the hand-built fixture: structure, cue lines, truncation,
// few-shot answers, and the fixed corrections (no sign hint, no "ID: N/A").
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RawPost, UserPosts } from '../../../src/benchmarks/personabench/corpus.js';
import { corpusIndex, scorePrompt, SCORE_CUE, SIGN_CUE } from '../../../src/benchmarks/personabench/prompts.js';
import { selectScoreSamples } from '../../../src/benchmarks/personabench/selection.js';

const grouped = JSON.parse(readFileSync(new URL('../../fixtures/personabench/grouped.json', import.meta.url), 'utf8')) as Record<string, RawPost[]>;
const users: UserPosts[] = Object.entries(grouped).map(([user, posts]) => ({ user, posts }));
const index = corpusIndex(users);
const original = { fidelity: 'original' as const, seed: 0 };
const fixed = { fidelity: 'fixed' as const, seed: 0 };

describe('3.1 prompts', () => {
  it('P-Conv: few-shot with its answer, then the task ending on the exact cue', () => {
    const [sample] = selectScoreSamples(users, '3.1', 'P-Conv', original).filter((s) => s.targetPostId === 'u1p1');
    const prompt = scorePrompt(sample!, index, 'original');
    expect(prompt.startsWith('### FEW-SHOT EXAMPLE ###\nReferenced Post (ID: u1p1):')).toBe(true);
    const [example, task] = prompt.split('\n\n### ACTUAL TASK ###\n');
    // The few-shot is "Read the paper first." (-8), answered negative.
    expect(example).toContain('"Read the paper first."');
    expect(example!.endsWith(`${SIGN_CUE}\nnegative`)).toBe(true);
    expect(task).toContain('u1p1-c1-c2');
    expect(task).toContain('"Thanks, the sample was 200 people."');
    // Parent snippet: first 100 characters plus "..." always.
    expect(task).toContain('"Interesting study, how many people?..."');
    expect(task!.endsWith(`\n${SIGN_CUE}`)).toBe(true);
    expect(prompt).not.toContain('15');
  });

  it('P-NonConv: no few-shot, no parent, the reply in full', () => {
    const [sample] = selectScoreSamples(users, '3.1', 'P-NonConv', original);
    const prompt = scorePrompt(sample!, index, 'original');
    expect(prompt).not.toContain('FEW-SHOT');
    expect(prompt).toContain('"Mistborn is overrated."');
    expect(prompt).not.toContain('You forgot Mistborn');
    expect(prompt.endsWith(`\n${SIGN_CUE}`)).toBe(true);
  });

  it('fixed: the default example replaces a later few-shot', () => {
    const [sample] = selectScoreSamples(users, '3.1', 'P-Conv', fixed).filter((s) => s.targetPostId === 'u1p1');
    const prompt = scorePrompt(sample!, index, 'fixed');
    expect(prompt).toContain('Referenced Post (ID: default_fs_post1)');
    expect(prompt).not.toContain('Read the paper first.');
  });
});

describe('3.2 prompts', () => {
  it('original: "ID: N/A" and a sign hint that gives the true sign away', () => {
    const samples = selectScoreSamples(users, '3.2', 'P-Conv', original);
    const negative = scorePrompt(samples[0]!, index, 'original');
    expect(negative).toContain('Referenced Post (ID: N/A)');
    expect(negative).toContain('expect a negative score');
    expect(negative.startsWith('### FEW-SHOT EXAMPLE (With Full Conversation Context) ###')).toBe(true);
    expect(negative).toContain('### ACTUAL TASK (With Full Conversation Context) ###');
    // Few-shot "Thanks!" scored 2.
    expect(negative).toContain(`${SCORE_CUE}\n2\n\n###`);
    expect(negative.endsWith(`\n${SCORE_CUE}`)).toBe(true);
    expect(scorePrompt(samples[1]!, index, 'original')).toContain('expect a positive score');
  });

  it('fixed: real post id, no hint', () => {
    const samples = selectScoreSamples(users, '3.2', 'P-Conv', fixed);
    const prompt = scorePrompt(samples[0]!, index, 'fixed');
    expect(prompt).toContain('Referenced Post (ID: u1p2)');
    expect(prompt).not.toContain('expect a');
  });

  it('P-NonConv: the fixed synthetic example answered 18, then the task', () => {
    const [sample] = selectScoreSamples(users, '3.2', 'P-NonConv', original);
    const prompt = scorePrompt(sample!, index, 'original');
    expect(prompt.startsWith('### FEW-SHOT EXAMPLE (Without Full Conversation Context) ###')).toBe(true);
    expect(prompt).toContain(`${SCORE_CUE}\n18\n\n### ACTUAL TASK (Without Full Conversation Context) ###`);
    expect(prompt.endsWith(`\n${SCORE_CUE}`)).toBe(true);
  });
});

describe("3.2 prompts: the makers' fallbacks for missing data (original)", () => {
  // u1p1 without its subreddit key, with a null title, its text under `body`; its target's parent
  // (u1p1-c1) with a null author.
  const edited = structuredClone(users);
  const post = edited[0]!.posts[0]! as unknown as Record<string, unknown>;
  delete post['__sub__'];
  post['title'] = null;
  post['body'] = post['content'];
  delete post['content'];
  (post['comments'] as Array<Record<string, unknown>>)[0]!['author'] = null;
  const idx = corpusIndex(edited);

  it('P-Conv summarises the raw post: a missing key prints N/A, a null one "", content falls back to body; a null parent author is ""', () => {
    const [sample] = selectScoreSamples(edited, '3.2', 'P-Conv', original).filter((s) => s.targetPostId === 'u1p1');
    const task = scorePrompt(sample!, idx, 'original').split('### ACTUAL TASK')[1]!;
    expect(task).toContain('- Community: r/N/A; posted by u/alice');
    expect(task).toContain('- Title: ""');
    expect(task).toContain('(up to 500 characters): We ran a small sleep study.');
    expect(task).toContain('The post author answered comment u1p1-c1 by u/, which opens with');
  });

  it('P-NonConv names the user and reads content without the body fallback (N/A)', () => {
    const [sample] = selectScoreSamples(edited, '3.2', 'P-NonConv', original).filter((s) => s.targetPostId === 'u1p1');
    const task = scorePrompt(sample!, idx, 'original').split('### ACTUAL TASK')[1]!;
    expect(task).toContain('- Community: r/N/A\n');
    expect(task).toContain('- Post ID: u1p1; author: u/alice');
    expect(task).toContain('(up to 500 characters): N/A\n');
  });
});
