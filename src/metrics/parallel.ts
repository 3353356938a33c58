/**
 * The four lexical 3.3 metrics over many (reference, candidate) pairs, spread over worker
 * threads: each thread keeps its own scorer (WordNet, stem and synonym caches), takes the
 * next chunk when it finishes one, and sends back one Float64Array per chunk. Scores are
 * the same numbers `GenerationScorer.score` gives, in input order.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { GENERATION_METRICS, GenerationScorer, type GenerationMetric } from './generation.js';

export interface ReplyPair {
  reference: string;
  candidate: string;
}

export type PairScores = Record<GenerationMetric, Float64Array>;

export interface ScorePairsOptions {
  /** Threads; default: the machine's parallelism, at most 8, and one per 2,000 pairs. 1 scores on the calling thread. */
  workers?: number;
  /** Pairs per message to a worker. */
  chunkSize?: number;
  /** Called after each finished chunk with the number of pairs scored so far. */
  onProgress?: (done: number) => void;
}

/** What a worker receives: one chunk, as two parallel lists. */
export interface ScoreChunk {
  id: number;
  references: string[];
  candidates: string[];
}

/** What a worker sends back: metric-major scores (all rouge1, then all rougeL, ...) or an error. */
export type ScoredChunk = { id: number; scores: Float64Array } | { id: number; error: string };

/** Below this many pairs a second WordNet load costs more than the thread saves. */
const MIN_PAIRS_PER_WORKER = 2_000;

export function scoreChunk(scorer: GenerationScorer, references: readonly string[], candidates: readonly string[]): Float64Array {
  const n = references.length;
  const out = new Float64Array(n * GENERATION_METRICS.length);
  for (let i = 0; i < n; i++) {
    const scores = scorer.score(references[i]!, candidates[i]!);
    GENERATION_METRICS.forEach((metric, m) => (out[m * n + i] = scores[metric]));
  }
  return out;
}

export async function scorePairs(pairs: readonly ReplyPair[], options: ScorePairsOptions = {}): Promise<PairScores> {
  const n = pairs.length;
  const result = Object.fromEntries(GENERATION_METRICS.map((metric) => [metric, new Float64Array(n)])) as PairScores;
  const chunkSize = options.chunkSize ?? 1_000;
  // An explicit count is honoured; the default leaves small inputs to fewer threads.
  const workers = Math.max(1, options.workers ?? Math.min(availableParallelism(), 8, Math.ceil(n / MIN_PAIRS_PER_WORKER)));
  const place = (start: number, count: number, scores: Float64Array) => {
    GENERATION_METRICS.forEach((metric, m) => result[metric].set(scores.subarray(m * count, (m + 1) * count), start));
  };
  if (workers === 1 || n === 0) {
    const scorer = new GenerationScorer();
    for (let start = 0; start < n; start += chunkSize) {
      const chunk = pairs.slice(start, start + chunkSize);
      place(
        start,
        chunk.length,
        scoreChunk(
          scorer,
          chunk.map((p) => p.reference),
          chunk.map((p) => p.candidate),
        ),
      );
      options.onProgress?.(Math.min(n, start + chunkSize));
    }
    return result;
  }
  const entry = workerEntry();
  const threads = Array.from({ length: workers }, () => new Worker(entry, { execArgv: [] }));
  try {
    await new Promise<void>((resolve, reject) => {
      let next = 0;
      let done = 0;
      const starts = new Map<number, number>();
      const send = (worker: Worker) => {
        if (next >= n) return;
        const start = next;
        const chunk = pairs.slice(start, start + chunkSize);
        next += chunk.length;
        starts.set(start, chunk.length);
        worker.postMessage({ id: start, references: chunk.map((p) => p.reference), candidates: chunk.map((p) => p.candidate) } satisfies ScoreChunk);
      };
      for (const worker of threads) {
        worker.on('message', (message: ScoredChunk) => {
          if ('error' in message) return reject(new Error(`metrics worker: ${message.error}`));
          const count = starts.get(message.id)!;
          place(message.id, count, message.scores);
          done += count;
          options.onProgress?.(done);
          if (done === n) resolve();
          else send(worker);
        });
        worker.on('error', reject);
        worker.on('exit', (code) => done < n && reject(new Error(`metrics worker exited (code ${code}) before finishing`)));
        // Two chunks in flight per thread, so none waits on the round trip.
        send(worker);
        send(worker);
      }
    });
  } finally {
    await Promise.all(threads.map((worker) => worker.terminate()));
  }
  return result;
}

function workerEntry(): URL {
  const beside = new URL('./score-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  // Running from the TypeScript sources (the tests): the thread runs the build of the same module.
  const built = new URL('../../dist/metrics/score-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return built;
  throw new Error(`the metrics worker module is missing (${fileURLToPath(beside)}); run npm run build`);
}
