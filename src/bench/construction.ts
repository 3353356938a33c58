import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuSteal } from './cpu-steal.js';
import { profileFigures } from './cpu-profile.js';
import type { BenchResult } from './report.js';
import { steadyFigures } from './steady-rate.js';
import { startMockProcess, takeBodySample, worker, type CeilingResult } from './workers.js';

const LATENCY_MS = 50;
/** Units per run: several seconds of steady state at each concurrency. */
const UNITS: Record<number, number> = { 64: 10_000, 256: 30_000 };
/** Units of the profiled run (CPU per call by category). */
const PROFILED_UNITS = 10_000;

interface WorkerResult {
  ok: number;
  failed: number;
  calls: number;
  http_calls: number;
  wall_ms: number;
  work_ms: number;
  /** Calls/s over the middle of the run (steady-rate.ts). */
  steady_rate: number | null;
  cpu_ms: number;
  peak_rss_mib: number;
}

/**
 * A construction stage (past interactions: one call a unit, every reply a summary) against the
 * local mock (its own process, 50 ms latency), beside the bare client's ceiling on the same mock
 * in the same run (issue 31's bound: 90% of it).
 */
export async function benchConstruction(): Promise<BenchResult> {
  const root = await mkdtemp(join(tmpdir(), 'plens-bench-construction-'));
  const mocks: ChildProcess[] = [];
  try {
    // The mock samples the bodies the stage sends; the ceiling replays them (the same bytes, the same serialisation).
    const bodies = join(root, 'bodies.jsonl');
    const url = await startMockProcess(mocks, LATENCY_MS, '--sample-bodies', bodies);
    const figures: BenchResult['figures'] = [];
    for (const concurrency of [64, 256]) {
      const steal = CpuSteal.start();
      const units = UNITS[concurrency]!;
      const r = await worker<WorkerResult>('./construction-worker.js', [join(root, `c${concurrency}`), String(concurrency), url, String(units)], false);
      if (r.failed) throw new Error(`${r.failed} construction units failed in the benchmark`);
      const rate = r.http_calls / (r.work_ms / 1000);
      const bound = concurrency / (LATENCY_MS / 1000);
      const ceiling = await worker<CeilingResult>(
        './http-ceiling-worker.js',
        [url, String(concurrency), String(units), await takeBodySample(mocks[0]!, bodies)],
        false,
      );
      const ceilingRate = ceiling.calls / (ceiling.wall_ms / 1000);
      figures.push({ name: `c=${concurrency}: calls/s (${units / 1000}k units)`, value: rate, unit: 'calls/s' });
      figures.push({ name: `c=${concurrency}: same-body ceiling (bare transport)`, value: ceilingRate, unit: 'calls/s' });
      figures.push({ name: `c=${concurrency}: mean request body`, value: ceiling.mean_body_bytes / 1024, unit: 'KiB' });
      figures.push({ name: `c=${concurrency}: stage's share of same-body ceiling`, value: (100 * rate) / ceilingRate, unit: '%', min: 90 });
      figures.push(...steadyFigures(concurrency, r.steady_rate, ceiling.steady_rate));
      figures.push({ name: `c=${concurrency}: share of bound ${bound}/s`, value: (100 * rate) / bound, unit: '%' });
      figures.push({ name: `c=${concurrency}: CPU per call`, value: r.cpu_ms / r.http_calls, unit: 'ms', baseline: true });
      figures.push({ name: `c=${concurrency}: peak RSS`, value: r.peak_rss_mib, unit: 'MiB' });
      if (steal) figures.push({ name: `c=${concurrency}: CPU stolen by other guests`, value: steal.percent(), unit: '%' });
    }
    // Where the CPU goes, from a CPU profile of a run of its own (profiling slows it: its rate is not a figure).
    const profileDir = join(root, 'profile');
    const profiled = await worker<WorkerResult>('./construction-worker.js', [join(root, 'profiled'), '256', url, String(PROFILED_UNITS)], false, [
      '--cpu-prof',
      `--cpu-prof-dir=${profileDir}`,
    ]);
    figures.push(...profileFigures(profileDir, profiled.http_calls, 'c=256 profile'));
    return {
      name: 'construction: a build stage (past interactions) against the local mock (50 ms latency, cache on)',
      context:
        'OpenAI-compatible mock in its own process on this machine; one call a unit, ~1,500-character prompts; the bare-client ceiling measured on the same mock in the same run',
      figures,
    };
  } finally {
    for (const mock of mocks) mock.kill('SIGTERM');
    await rm(root, { recursive: true, force: true });
  }
}
