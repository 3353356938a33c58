import { describe, expect, it } from 'vitest';
import { assignIds, fewShotBranch, makerJson, postDetails, postWithout, serializable, toPython } from '../../../src/benchmarks/personabench/maker-json.js';
import { pythonJsonDumps } from '../../../src/core/python-format.js';

// The objects the original 3.3 makers embed, key by key, on a hand-made post (expected values
// written from the makers' steps; the makers themselves are compared in
// test/differential/personabench/original-route.test.ts).
const post = {
  title: 'T',
  comments: [
    {
      author: 'u1',
      body: 'first',
      replies: [
        { author: 'op', body: 'older reply', timestamp: '2023-01-01T00:02:00Z', _fetched_by: 'crawler', __kind: 't1' },
        { author: 'u2', body: 'later', timestamp: '2023-01-01T00:01:00Z', replies: [{ author: 'op', body: 'newest', timestamp: '2023-01-01T00:03:00+00:00' }] },
      ],
      timestamp: '2023-01-01T00:00:00Z',
    },
    'not a comment',
  ],
  selftext: 'the text',
  timestamp: null,
  created_utc: '2023-01-01 00:00:00',
};

const keys = (v: unknown): string[] => [...(v as Map<string, unknown>).keys()];

describe("the 3.3 makers' embedded JSON", () => {
  it('ids: the record keeps its keys in place; id, type (or id, parent_id, type) then the missing standard keys', () => {
    const { post: p, flat } = assignIds(post, 'u1p1', false);
    expect(keys(p)).toEqual(['title', 'comments', 'selftext', 'timestamp', 'created_utc', 'id', 'type', 'url', 'content', '__sub__', 'score', 'author']);
    expect(p.get('content')).toBeNull(); // content falls back to body only, not selftext
    expect(p.get('timestamp')).toBeNull(); // 3.3PromptMaker: no created_utc fallback
    expect(flat.map((n) => n.get('id'))).toEqual(['u1p1', 'u1p1-c1', 'u1p1-c1-c2', 'u1p1-c1-c3', 'u1p1-c1-c3-c4']);
    expect(keys(flat[1])).toEqual(['author', 'body', 'replies', 'timestamp', 'id', 'parent_id', 'type', 'score']);
    // 3.3_RandPrompt fills the null timestamp from created_utc, normalised.
    expect(assignIds(post, 'ctx_idx0', true).post.get('timestamp')).toBe('2023-01-01T00:00:00Z');
  });

  it('the few-shot branch: replies last, children by time, stopping at the reply; one underscore dropped', () => {
    const { flat } = assignIds(post, 'u1p1', false);
    const branch = fewShotBranch(flat, 'u1p1-c1-c3-c4') as Array<Map<string, unknown>>;
    const top = branch[0]!;
    expect(keys(top)).toEqual(['author', 'body', 'timestamp', 'id', 'parent_id', 'type', 'score', 'replies']);
    const children = top.get('replies') as Array<Map<string, unknown>>;
    // u2's message (00:01) before the older reply (00:02); under u2 the reply itself is cut.
    expect(children.map((c) => c.get('id'))).toEqual(['u1p1-c1-c3', 'u1p1-c1-c2']);
    expect(children[0]!.get('replies')).toEqual([]);
    expect(keys(children[1])).toEqual(['author', 'body', 'timestamp', '__kind', 'id', 'parent_id', 'type', 'score', 'replies']);
  });

  it('the P-Conv context drops the target and non-dict entries; P-NonConv details take content from body, then selftext', () => {
    const { post: p } = assignIds(post, 'u1p1', false);
    const context = postWithout(p, 'u1p1-c1-c2') as Map<string, unknown>;
    const comments = context.get('comments') as Array<Map<string, unknown>>;
    expect(comments).toHaveLength(1);
    expect((comments[0]!.get('replies') as Array<Map<string, unknown>>).map((r) => r.get('id'))).toEqual(['u1p1-c1-c3']);
    const details = postDetails(post, 'u1p1', 'op') as Map<string, unknown>;
    expect(keys(details)).toEqual(['title', 'selftext', 'timestamp', 'created_utc', 'url', 'content', '__sub__', 'score', 'author', 'type', 'id']);
    expect(details.get('content')).toBe('the text');
    expect(details.get('author')).toBe('op');
  });

  it('json.dumps: indent 2, ASCII escapes, Python floats, empty containers, dict order', () => {
    const value = serializable(toPython({ b: 1, a: [1.5, 1e-7, 3, {}, []], é: 'ünï 😀', _x: 1 }));
    expect(makerJson(value)).toBe(
      '{\n  "b": 1,\n  "a": [\n    1.5,\n    1e-07,\n    3,\n    {},\n    []\n  ],\n  "\\u00e9": "\\u00fcn\\u00ef \\ud83d\\ude00"\n}',
    );
    expect(
      pythonJsonDumps(
        new Map<string, unknown>([
          ['z', 1],
          ['1', null],
        ]),
      ),
    ).toBe('{"z": 1, "1": null}');
  });
});
