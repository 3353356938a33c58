// NP-Conv prompts on the hand-built fixture (test/fixtures/personabench/grouped.json): which
// post gives the example (offset 200), what each block shows and cuts, the order of the
// blocks, and each `fixed` correction. Pairings are worked out in selection.test.ts and
// restated in the comments.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildAllPrompts, buildPrompt } from '../../../src/benchmarks/personabench/build-prompts.js';
import type { RawPost, UserPosts } from '../../../src/benchmarks/personabench/corpus.js';
import { impactNpConvPrompt, replyNpConvExtras, replyNpConvPrompt, signNpConvPrompt } from '../../../src/benchmarks/personabench/np-conv-prompts.js';
import { PromptCorpus } from '../../../src/benchmarks/personabench/prompt-corpus.js';
import { selectImpactNpConv, selectReplyNpConv, selectReplySamples, selectSignNpConv } from '../../../src/benchmarks/personabench/selection.js';

const grouped = JSON.parse(readFileSync(new URL('../../fixtures/personabench/grouped.json', import.meta.url), 'utf8')) as Record<string, RawPost[]>;
const users: UserPosts[] = Object.entries(grouped).map(([user, posts]) => ({ user, posts }));
const original = { fidelity: 'original' as const, seed: 14 };
const fixed = { fidelity: 'fixed' as const, seed: 14 };
const corpus = new PromptCorpus(users);

/** Splits a prompt into its blocks (separated by blank lines) and returns their first lines. */
const headers = (prompt: string): string[] => prompt.split('\n\n').map((block) => block.split('\n')[0]!);

describe('PromptCorpus', () => {
  it('resolves every id scheme the makers use, with comment ids under that prefix', () => {
    expect(corpus.get('u1p2').byId.has('u1p2-c1-c2')).toBe(true);
    expect(corpus.get('task_u2p1').byId.get('task_u2p1-c1')!.author).toBe(corpus.get('u2p1').byId.get('u2p1-c1')!.author);
    // internal_p{n} is 1-based over all posts; orig_idx / ctx_idx are 0-based.
    expect(corpus.get('internal_p4').raw).toBe(corpus.get('u2p1').raw);
    expect(corpus.get('ctx_idx3').raw).toBe(corpus.get('u2p1').raw);
    expect(corpus.get('orig_idx0').byId.has('orig_idx0-c1-c2-c3-c4')).toBe(true);
    expect(() => corpus.get('u9p9')).toThrow(RangeError);
  });
});

describe('3.1 NP-Conv (3.1_RandPrompt)', () => {
  const samples = selectSignNpConv(users, original);
  /** A sample by its task post (the seeded shuffle decides the order). */
  const byPost = (list: ReturnType<typeof selectSignNpConv>, id: string) => list.find((s) => s.targetPostId === id)!;

  it('original: (g + 200) % 5 = g pairs task_u1p1 with itself, so the example is the task with its answer', () => {
    // task_u1p1's example is internal_p1-c1-c2 = the same reply, answer positive.
    const prompt = signNpConvPrompt(byPost(samples, 'task_u1p1'), corpus);
    expect(headers(prompt)).toEqual([
      '### FEW-SHOT EXAMPLE (Context from a DIFFERENT, unrelated post ID: internal_p1) ###',
      expect.stringMatching(/^IMPORTANT NOTE: .*COMPLETELY UNRELATED post/),
      '### CURRENT TASK (Post ID: task_u1p1) ###',
    ]);
    const [example, , task] = prompt.split('\n\n');
    expect(example).toContain('"Thanks, the sample was 200 people."');
    expect(example!.endsWith('Predicted score sentiment:\npositive')).toBe(true);
    // Example parent: first 100 characters plus "..." always; task parent: author, score, time, full body.
    expect(example).toContain('"Interesting study, how many people?..."');
    expect(task).toContain('u/u1 (score 10, posted 2023-03-01T10:30:00Z), which reads in full: "Interesting study, how many people?"');
    expect(task).toContain('"Thanks, the sample was 200 people."');
    expect(task!.endsWith('\nPredicted score sentiment:')).toBe(true);
    expect(task).not.toContain('\npositive');
  });

  it('the post summary keeps 150 characters of content, plus "..." only when cut', () => {
    const long = structuredClone(users);
    const content = 'a'.repeat(149) + 'BCDEFG';
    long[0]!.posts[0]!.content = content;
    const prompt = signNpConvPrompt(byPost(selectSignNpConv(long, original), 'task_u1p1'), new PromptCorpus(long));
    expect(prompt).toContain(`(up to 150 characters): ${'a'.repeat(149)}B...\n`);
    expect(prompt).not.toContain('BC');
    // Short content stays whole, with no "...".
    expect(signNpConvPrompt(byPost(samples, 'task_u2p2'), corpus)).toContain('(up to 150 characters): New record.\n');
  });

  it('fixed: the example comes from another user (task_u1p1 -> internal_p4, bob)', () => {
    const prompt = signNpConvPrompt(byPost(selectSignNpConv(users, fixed), 'task_u1p1'), corpus);
    expect(headers(prompt)[0]).toBe('### FEW-SHOT EXAMPLE (Context from a DIFFERENT, unrelated post ID: internal_p4) ###');
    expect(prompt.split('\n\n')[0]).not.toContain('Thanks, the sample was 200 people.');
  });

  it('with no example the fallback header answers positive', () => {
    const sample = { ...samples[0]!, fewShot: { type: 'default' as const, postId: null, replyId: null, label: 'positive' } };
    expect(signNpConvPrompt(sample, corpus).startsWith('### NO SUITABLE FEW-SHOT EXAMPLE FOUND ###\nPredicted score sentiment:\npositive\n\n')).toBe(true);
  });
});

describe('3.2 NP-Conv (3.2_RandPrompt)', () => {
  it("original: shuffled [u1p1, u2p2, u1p2], provider (i + 200) % 3 = (i + 2) % 3; the two summaries' ids and times, sign hint", () => {
    const raw = structuredClone(users);
    raw[0]!.posts[1]!.timestamp = '2023-04-01 09:00:00';
    const c = new PromptCorpus(raw);
    const samples = selectImpactNpConv(raw, original);
    // Sample 0 (u1p1, +15) gets u1p2's reply "Mistborn is overrated." (-20) as its example.
    const prompt = impactNpConvPrompt(samples[0]!, c, 'original');
    expect(headers(prompt).slice(1)).toEqual([
      '### FEW-SHOT EXAMPLE (Using Pseudo-Random Context from a Distant Post) ###',
      '### ACTUAL TASK (Predict Score for a Reply in a *Different* Post) ###',
    ]);
    const [, example, task] = prompt.split('\n\n');
    expect(example).toContain('Referenced Post (ID: N/A)');
    // The provider's summary normalises the post time (get_context_post_summary_string); the
    // task's prints it as stored, under the post's own id (checked on the third sample below).
    expect(example).toContain('at 2023-04-01T09:00:00Z;');
    expect(example).toContain('"Mistborn is overrated."');
    expect(example).toContain('"You forgot Mistborn...."');
    expect(example!.endsWith('Score:\n-20')).toBe(true);
    // Task: content cut to 300 with "..." always; parent in full with score and time; the hint leaks "+".
    expect(task).toContain('(up to 300 characters): We ran a small sleep study....\n');
    expect(task).toContain('u/u1 (score 10, posted 2023-03-01T10:30:00Z), which reads in full: "Interesting study, how many people?"');
    expect(task).toContain('Hint: expect a positive score.');
    expect(task!.endsWith('\nScore:')).toBe(true);
    // Sample 2 (u1p2, -20) gets sample 1 (u2p2, +30).
    const third = impactNpConvPrompt(samples[2]!, c, 'original');
    expect(third).toContain('Score:\n30\n\n');
    const thirdTask = third.slice(third.indexOf('### ACTUAL TASK'));
    expect(thirdTask).toContain('Referenced Post (ID: u1p2):');
    expect(thirdTask).toContain('posted by u/alice at 2023-04-01 09:00:00;');
    expect(third).toContain('Hint: expect a negative score.');
  });

  it('original: with N = 2 samples, 2 divides 200 and each sample is its own provider', () => {
    const two: UserPosts[] = [{ user: 'alice', posts: users[0]!.posts.slice(0, 2) }];
    // Samples: u1p2 (-20, negative first) and u1p1 (+15; one positive, floor(1/2) = 0 dropped).
    const samples = selectImpactNpConv(two, original);
    expect(samples.map((s) => [s.targetReplyId, s.fewShot!.replyId])).toEqual(samples.map((s) => [s.targetReplyId, s.targetReplyId]));
    const prompt = impactNpConvPrompt(samples.find((s) => s.targetPostId === 'u1p2')!, new PromptCorpus(two), 'original');
    expect(prompt).toContain('Score:\n-20\n\n');
  });

  it('fixed: post id shown, normalised time, no hint', () => {
    const raw = structuredClone(users);
    raw[0]!.posts[1]!.timestamp = '2023-04-01 09:00:00';
    const samples = selectImpactNpConv(raw, fixed);
    const prompt = impactNpConvPrompt(samples.find((s) => s.fewShot!.postId === 'u1p2') ?? samples[0]!, new PromptCorpus(raw), 'fixed');
    expect(prompt).not.toContain('ID: N/A');
    expect(prompt).not.toContain('Hint:');
    expect(prompt).not.toContain('2023-04-01 09:00:00');
    expect(prompt).toMatch(/Referenced Post \(ID: u\dp\d\)/);
  });
});

describe('3.3 NP-Conv (3.3_RandPrompt)', () => {
  it('original: context (c + 200) % 5 = c, the raw record with no ids and its latest reply still in; literal braces', () => {
    const [sample] = selectReplyNpConv(users, original);
    const prompt = replyNpConvPrompt(sample!, corpus, 'original');
    expect(headers(prompt)).toEqual(['### FEW-SHOT EXAMPLE ###', '### CONTEXT FOR PREDICTION TASK ###', '### PREDICTION TASK ###']);
    const [example, context, task] = prompt.split(/\n\n(?=###)/);
    // Example: the branch of "Read the paper first." (ctx_idx0-c5-c6), cut at the reply; the answer after the literal line.
    expect(example).toContain('"id": "ctx_idx0-c5"');
    expect(example).not.toContain('"id": "ctx_idx0-c5-c6"');
    expect(example!.endsWith("The actual reply body from '{post_author_name_fs}' was:\nRead the paper first.")).toBe(true);
    expect(example).toContain("answers a message by 'u3' (ID ctx_idx0-c5, score 4)");
    // Context: the post itself, as stored: no ids, and the target's own answer is in it (the no-op removal).
    expect(context).not.toContain('"id"');
    expect(context).toContain('"body": "Yes, double blind."');
    expect(JSON.parse(context!.slice(context!.indexOf('{')))).toEqual(grouped['alice']![0]);
    expect(task).toContain("'alice' is replying to a message by 'u2' (ID orig_idx0-c1-c2-c3, score 2), which reads: \"Was it randomized?\"");
    expect(task!.endsWith("\nPredicted reply body from 'alice':")).toBe(true);
  });

  it('original: non-ASCII is escaped in the JSON dumps, as json.dumps does', () => {
    const accented = structuredClone(users);
    accented[0]!.posts[0]!.title = 'Café study';
    const [sample] = selectReplyNpConv(accented, original);
    expect(replyNpConvPrompt(sample!, new PromptCorpus(accented), 'original')).toContain('"title": "Caf\\u00e9 study"');
  });

  it('record extras: the target parent and the context post target parent', () => {
    const [sample] = selectReplyNpConv(users, original);
    expect(replyNpConvExtras(sample!, corpus, 'original')).toEqual({
      target_reply_parent_author: 'u2',
      target_reply_parent_body: 'Was it randomized?',
      target_reply_parent_id: 'orig_idx0-c1-c2-c3',
      target_reply_parent_score: 2,
      context_post_author_for_prompt: 'alice',
      // The context post's latest author reply is "Yes, double blind." (13:00), under u2's message.
      context_post_target_parent_author: 'u2',
      context_post_target_parent_body: 'Was it randomized?',
      context_post_target_parent_id: 'ctx_idx0-c1-c2-c3',
      context_post_target_parent_score: 2,
      context_post_used_idx_global: 0,
      current_post_idx_global: 0,
    });
  });

  it('original: a target answering the post itself shows an empty parent body; fixed shows the post text', () => {
    const top = structuredClone(users);
    // Alice answers her own post at 14:00: the most recent candidate, so the NP-Conv target.
    top[0]!.posts[0]!.comments!.push({ author: 'alice', body: 'Update: paper is out.', score: 3, timestamp: '2023-03-01T14:00:00Z', replies: [] });
    const c = new PromptCorpus(top);
    const sample = selectReplyNpConv(top, original)[0]!;
    expect(sample.targetReplyId).toBe('orig_idx0-c8');
    expect(replyNpConvPrompt(sample, c, 'original')).toContain('a message by \'alice\' (ID orig_idx0, score 120), which reads: ""\n');
    const fixedSample = selectReplyNpConv(top, fixed)[0]!;
    expect(replyNpConvPrompt(fixedSample, c, 'fixed')).toContain('(ID orig_idx0, score 120), which reads: "We ran a small sleep study."\n');
  });

  it('fixed: context from bob (ctx_idx3) with ids and without his latest reply; his name instead of the braces', () => {
    const [sample] = selectReplyNpConv(users, fixed);
    expect(sample!.contextPostIndex).toBe(3);
    const prompt = replyNpConvPrompt(sample!, corpus, 'fixed');
    const [example, context] = prompt.split(/\n\n(?=###)/);
    expect(example!.endsWith("The actual reply body from 'bob' was:\na3")).toBe(true);
    expect(prompt).not.toContain('{post_author_name_fs}');
    // bob's latest reply in u2p1 is "a1" (ctx_idx3-c1-c2): gone, with its id.
    expect(context).toContain('"id": "ctx_idx3"');
    expect(context).not.toContain('"body": "a1"');
    expect(context).toContain('"body": "a2"');
  });
});

describe('buildAllPrompts', () => {
  it('gives every selected sample of every task x setting a prompt ending on its cue', () => {
    for (const options of [original, fixed]) {
      const records = buildAllPrompts(users, options);
      const settings = new Set(records.map((r) => `${r.task} ${r.setting}`));
      expect(settings.size).toBe(9);
      for (const r of records) {
        const cue =
          r.task === '3.1'
            ? 'Predicted score sentiment:'
            : r.task === '3.2'
              ? 'Score:'
              : r.setting === 'NP-Conv'
                ? `Predicted reply body from '${r.user}':`
                : `Predicted body text for ${r.user}'s reply:`;
        expect(r.prompt.endsWith(cue)).toBe(true);
        expect(r.sampleId).toBe(`${r.task}/${r.setting}/${r.position}`);
      }
      expect(new Set(records.map((r) => r.sampleId)).size).toBe(records.length);
    }
  });

  it('buildPrompt dispatches NP-Conv samples to the NP-Conv makers', () => {
    const [sample] = selectSignNpConv(users, original);
    expect(buildPrompt(sample!, corpus, 'original')).toBe(signNpConvPrompt(sample!, corpus));
  });
});

describe('created_utc fallback (3.3_RandPrompt only, spec §4.2b.5)', () => {
  it('a comment with no timestamp but a created_utc is a 3.3 NP-Conv candidate only; its prompt shows the NP-Conv ids', () => {
    const fallback = structuredClone(users);
    // "Yes, double blind." (u1p1-c1-c2-c3-c4, 13:00) loses its timestamp but keeps a created_utc.
    const reply = fallback[0]!.posts[0]!.comments![0]!.replies![0]!.replies![0]!.replies![0]!;
    delete reply.timestamp;
    reply['created_utc'] = '2023-03-01T13:00:00Z';
    // P-Conv / P-NonConv: not a candidate, so the most recent is "Read the paper first." (12:00).
    expect(selectReplySamples(fallback, 'P-Conv', original).find((s) => s.targetPostId === 'u1p1')?.targetReplyId).toBe('u1p1-c5-c6');
    // NP-Conv: created_utc counts, the target stays c4, and the prompt corpus resolves it under orig_idx0.
    const [sample] = selectReplyNpConv(fallback, original);
    expect(sample!.targetReplyId).toBe('orig_idx0-c1-c2-c3-c4');
    expect(sample!.trueLabel).toBe('Yes, double blind.');
    const c = new PromptCorpus(fallback);
    expect(c.get('orig_idx0').byId.get('orig_idx0-c1-c2-c3-c4')!.time).not.toBeNull();
    expect(c.get('u1p1').byId.get('u1p1-c1-c2-c3-c4')!.time).toBeNull();
    expect(replyNpConvPrompt(sample!, c, 'original')).toContain("'alice' is replying to a message by 'u2' (ID orig_idx0-c1-c2-c3, score 2)");
  });
});
