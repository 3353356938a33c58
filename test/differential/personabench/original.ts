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
