import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The PERSONA-bench differential tests' shared parts: where the original's checkout is, how one of
 * its prompt makers runs (unmodified, with Python's random seeded first, as plens's --seed), and a
 * seeded stream of numbers for drawn inputs.
 */
export const ORIGINAL = process.env['PERSONABENCH_ORIGINAL'] ?? '';
export const originalAvailable = (file = join('PromptMakers', '3.1PromptMaker.py')): boolean => ORIGINAL !== '' && existsSync(join(ORIGINAL, file));

/** Runs PromptMakers/<maker> in `dir` (which holds merged_posts_remapped.json) after random.seed(seed). */
export function runMaker(dir: string, maker: string, seed: number): { status: number | null; stderr: string } {
  const r = spawnSync(
    '/usr/bin/python3',
    [
      '-c',
      'import random, runpy, sys; random.seed(int(sys.argv[1])); runpy.run_path(sys.argv[2], run_name="__main__")',
      String(seed),
      join(ORIGINAL, 'PromptMakers', maker),
    ],
    { cwd: dir, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1' } },
  );
  return { status: r.status, stderr: r.stderr };
}

/** A seeded stream of numbers in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A corpus {author: [posts]} drawn from a seeded stream (mulberry32). */
export function drawCorpus(seed: number, variants = false): Record<string, unknown[]> {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pad = (n: number) => String(n).padStart(2, '0');
  const ts = () => {
    const r = rand();
    if (r < 0.05) return null;
    if (r < 0.08) return '2023-13-01T00:00:00Z';
    return `2023-${pad(int(1, 12))}-${pad(int(1, 28))}T${pad(int(0, 23))}:${pad(int(0, 59))}:${pad(int(0, 59))}Z`;
  };
  const body = () => {
    const r = rand();
    if (r < 0.07) return '[deleted]';
    if (r < 0.1) return '[removed]';
    if (r < 0.12) return '';
    return pick(['Nice.', 'I disagree with that take entirely.', 'Source?', 'This is the way.', 'Long comment '.repeat(int(1, 30))]);
  };
  const score = () => {
    const r = rand();
    if (r < 0.03) return null;
    if (r < 0.05) return String(int(-5, 50));
    return pick([0, 1, 2, 5, -1, -3, 10, 25, -20, 100, int(-50, 200)]);
  };
  const others = ['user0', 'user1', 'user2', 'user3', '[deleted]', null];
  const comment = (depth: number, op: string): Record<string, unknown> => {
    const c: Record<string, unknown> = { author: rand() < 0.35 ? op : pick(others), body: body(), score: score(), timestamp: ts() };
    if (depth < 5 && rand() < 0.55) c['replies'] = Array.from({ length: int(1, 3) }, () => comment(depth + 1, op));
    else if (variants && rand() < 0.3) c['replies'] = [];
    // The other fields the original reads: a missing score key; no timestamp, with created_utc (as
    // a time string: 3.3_RandPrompt.py crashes on a number there).
    if (variants && rand() < 0.05) delete c['score'];
    if (variants && rand() < 0.1) {
      c['created_utc'] = c['timestamp'] ?? ts();
      c['timestamp'] = null;
    }
    return c;
  };
  const corpus: Record<string, unknown[]> = {};
  for (let u = 0, users = int(3, 6); u < users; u++) {
    const name = `author${u}`;
    corpus[name] = Array.from({ length: int(1, 4) }, (_, p) => {
      const post: Record<string, unknown> = {
        title: `Post ${u}-${p}`,
        url: `https://example.invalid/${u}/${p}`,
        content: pick(['', 'Some content here.', 'x'.repeat(300)]),
        score: score(),
        author: name,
        timestamp: ts(),
        comments: Array.from({ length: int(0, 5) }, () => comment(1, name)),
      };
      const sub = pick(['books', 'movies', 'gaming', 'science', null]);
      if (sub !== null) post['__sub__'] = sub;
      if (variants) {
        // body or selftext instead of content; no url; no score key.
        const r = rand();
        if (r < 0.15) {
          post['body'] = post['content'];
          delete post['content'];
        } else if (r < 0.3) {
          post['selftext'] = post['content'];
          delete post['content'];
        }
        if (rand() < 0.1) delete post['url'];
        if (rand() < 0.1) delete post['score'];
      }
      return post;
    });
  }
  return corpus;
}
