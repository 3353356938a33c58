import { AsyncLocalStorage } from 'node:async_hooks';
import { basename } from 'node:path';
import cliProgress from 'cli-progress';

/** What a stage's progress shows, after each finished unit of work. */
export interface ProgressState {
  ok: number;
  failed: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** One stage run as a progress view sees it: told after each unit, and once at its end. */
export interface ProgressTask {
  tick(s: ProgressState): void;
  stop(): void;
}

/**
 * Where the stages of a longer run (`plens make`) send their progress: one view over every stage
 * running at once, instead of a bar per stage. `where` names what the stage writes (its partition,
 * e.g. a grid cell), so the view can tell two runs of one stage apart.
 */
export interface ProgressSink {
  open(stage: string, total: number, where: string): ProgressTask;
}

const sinks = new AsyncLocalStorage<ProgressSink>();

/** Runs `fn` with `sink` taking the progress of every stage it starts (and of what they start). */
export function withProgressSink<T>(sink: ProgressSink, fn: () => Promise<T>): Promise<T> {
  return sinks.run(sink, fn);
}

/**
 * A stage's progress. Under a sink (withProgressSink) it goes there, whatever `enabled` says: the
 * sink decides what to show. Alone, it is a bar on stderr (done/total, rate, ETA, errors, tokens,
 * cost) when `enabled`, for a terminal only.
 */
export function createStageProgress(stage: string, total: number, enabled: boolean, partitions: readonly string[] = []): ProgressTask {
  const sink = sinks.getStore();
  if (total === 0) return { tick: () => {}, stop: () => {} };
  if (sink) return sink.open(stage, total, partitionLabel(partitions));
  if (!enabled) return { tick: () => {}, stop: () => {} };
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${stage} [{bar}] {value}/{total} | {rate}/s | ETA {eta_formatted} | failed {failed} | {tokens} tok | $` + '{cost}',
      hideCursor: true,
      etaBuffer: 100,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { rate: '0', failed: 0, tokens: '0', cost: '0.00' });
  return {
    tick(s: ProgressState) {
      const done = s.ok + s.failed;
      const seconds = (Date.now() - started) / 1000;
      bar.update(done, {
        rate: seconds > 0 ? (done / seconds).toFixed(1) : '0',
        failed: s.failed,
        tokens: compactCount(s.input_tokens + s.output_tokens),
        cost: s.cost_usd.toFixed(2),
      });
    },
    stop() {
      bar.stop();
    },
  };
}

/**
 * A partition's folder as a label: `base+all__gpt-4o__1a2b3c4d` reads `base+all | gpt-4o` (the
 * trailing hash only tells configurations apart). Several partitions: the first and how many more.
 */
export function partitionLabel(partitions: readonly string[]): string {
  if (partitions.length === 0) return '';
  const name = basename(partitions[0]!)
    .replace(/__[0-9a-f]{6,}$/, '')
    .split('__')
    .join(' | ');
  return partitions.length === 1 ? name : `${name} (+${partitions.length - 1} more)`;
}

/** 1234 reads 1.2k, 2500000 reads 2.5M. */
export function compactCount(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}
