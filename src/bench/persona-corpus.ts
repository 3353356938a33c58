import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPersonaImport } from '../benchmarks/personabench/import.js';
import { runPersonaSelect } from '../benchmarks/personabench/select-stage.js';
import { MemorySampler } from './memory-sampler.js';
import { stageTimer, type BenchResult } from './report.js';
import { mulberry32 } from './persona-pairs.js';

/** The release's size (README / paper; spec §1.4). */
export const RELEASE = { users: 3_878, posts: 19_215, conversations: 111_239 } as const;
const SUBREDDITS = ['worldnews', 'science', 'politics', 'technology', 'gaming', 'life', 'movies', 'books', 'entrepreneur', 'art'];

/**
 * Writes a synthetic raw file (`Raw_Data_Postized.json` shape) of the release's size:
 * `users` authors with `posts` posts between them, `conversations` top-level comment trees
 * (1 to 7 messages each; the post author answers in about two of three), Zipf-like words,
 * scores with a long tail and a few `[deleted]` bodies. Deterministic for a given seed.
 */
export async function writeSyntheticPersonaCorpus(
  file: string,
  size: { users: number; posts: number; conversations: number } = RELEASE,
  seed = 14,
): Promise<{ comments: number }> {
  const random = mulberry32(seed);
  const int = (n: number): number => Math.floor(random() * n);
  const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
  const words = (lo: number, hi: number): string => {
    const n = lo + int(hi - lo + 1);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(vocabulary[Math.floor(Math.exp(random() * Math.log(vocabulary.length))) - 1]!);
    return out.join(' ') + '.';
  };
  const score = (): number => {
    const magnitude = Math.floor(Math.exp(random() * 6.5)) - 1;
    return random() < 0.22 ? -magnitude : magnitude;
  };
  // Each user gets one post, the rest are spread at random; each post one tree, the rest spread.
  const postUser = Array.from({ length: size.posts }, (_, p) => (p < size.users ? p : int(size.users)));
  const trees = new Array<number>(size.posts).fill(1);
  for (let i = size.posts; i < size.conversations; i++) trees[int(size.posts)]!++;

  const out = createWriteStream(file);
  let buffer = '[';
  const flush = async (): Promise<void> => {
    if (!out.write(buffer)) await once(out, 'drain');
    buffer = '';
  };
  let comments = 0;
  const start = Date.UTC(2023, 0, 1);
  for (let p = 0; p < size.posts; p++) {
    const author = `user${postUser[p]}`;
    let minute = int(500_000);
    const stamp = (): string => new Date(start + minute * 60_000).toISOString().replace('.000Z', 'Z');
    const postTime = stamp();
    const comment = (who: string, replies: unknown[]): Record<string, unknown> => {
      comments++;
      minute += 1 + int(90);
      return { author: who, body: random() < 0.03 ? '[deleted]' : words(3, 30), score: score(), timestamp: stamp(), replies };
    };
    const top: unknown[] = [];
    for (let t = 0; t < trees[p]!; t++) {
      const depth = 1 + int(7);
      const opAnswers = random() < 0.67;
      // A chain: commenter, post author, commenter, ... (or commenters only).
      const chain: Array<Record<string, unknown>> = [];
      for (let d = 0; d < depth; d++) chain.push(comment(opAnswers && d % 2 === 1 ? author : `c${int(40_000)}`, []));
      for (let d = depth - 1; d > 0; d--) (chain[d - 1]!['replies'] as unknown[]).push(chain[d]);
      top.push(chain[0]);
    }
    const post = {
      title: words(3, 12),
      url: `https://example.invalid/p/${p}`,
      content: words(0, 120),
      __sub__: SUBREDDITS[p % SUBREDDITS.length],
      score: score(),
      author,
      timestamp: postTime,
      comments: top,
    };
    buffer += (p ? ',' : '') + JSON.stringify(post);
    if (buffer.length > 1 << 20) await flush();
  }
  buffer += ']';
  await flush();
  out.end();
  await once(out, 'close');
  return { comments };
}

/**
 * PERSONA-bench import + prompt building on a synthetic corpus of the release's size:
 * `persona import` (stream, validate, Parquet through DuckDB) and `persona select` (every task x
 * setting, original fidelity, with every prompt written) timed together against 30 s.
 */
export async function benchPersonaCorpus(): Promise<BenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'plens-bench-persona-'));
  try {
    const file = join(dir, 'Raw_Data_Postized.json');
    const { stages, time } = stageTimer();
    const { comments } = await time('generate', () => writeSyntheticPersonaCorpus(file));
    const megabytes = (await stat(file)).size / 1024 / 1024;
    const memory = new MemorySampler();
    const cpu0 = process.cpuUsage();
    await time('import', () => runPersonaImport({ from: file, out: join(dir, 'persona') }));
    const selected = await time('prompts', () => runPersonaSelect({ from: file, out: join(dir, 'selection'), fidelity: 'original', seed: 0 }));
    const peaks = memory.stop();
    const cpu = process.cpuUsage(cpu0);
    const seconds = Object.fromEntries(stages);
    const prompts = Object.values(selected.counts).reduce((a, b) => a + b, 0);
    const promptMiB = (await stat(selected.prompts_file!)).size / 1024 / 1024;
    return {
      name: 'persona-corpus',
      context: `synthetic raw file of the release's size: ${RELEASE.users.toLocaleString('en')} users, ${RELEASE.posts.toLocaleString('en')} posts, ${RELEASE.conversations.toLocaleString('en')} conversations, ${comments.toLocaleString('en')} comments (${megabytes.toFixed(0)} MiB); ${prompts.toLocaleString('en')} prompts (${promptMiB.toFixed(0)} MiB) over the 9 task x setting files; generated in ${seconds['generate']!.toFixed(1)} s`,
      figures: [
        { name: 'import (users/posts/comments Parquet)', value: seconds['import']!, unit: 's' },
        { name: 'select + build prompts (original)', value: seconds['prompts']!, unit: 's' },
        { name: 'import + prompt building', value: seconds['import']! + seconds['prompts']!, unit: 's', bound: 30 },
        // On a shared machine wall time stretches with the load; CPU time shows the work itself.
        { name: 'import + prompt building: CPU (user+sys)', value: (cpu.user + cpu.system) / 1e6, unit: 's' },
        { name: 'peak RSS', value: peaks.rssMiB, unit: 'MiB', bound: 2048 },
        ...(peaks.anonMiB !== undefined ? [{ name: 'peak anonymous memory', value: peaks.anonMiB, unit: 'MiB' }] : []),
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
