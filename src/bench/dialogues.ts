import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Workspace } from '../core/workspace.js';
import { runImport } from '../benchmarks/personalens/dataset/import.js';
import { runScenarios } from '../benchmarks/personalens/scenarios/stage.js';
import { CpuSteal } from './cpu-steal.js';
import { stormFigures, type StormResult } from './dialogues-storm.js';
import type { BenchResult } from './report.js';
import { profileFigures } from './cpu-profile.js';
import { steadyFigures } from './steady-rate.js';
import { ThreadCpu } from './thread-cpu.js';
import { startMockProcess, takeBodySample, worker, type CeilingResult } from './workers.js';
import { datasetDir } from '../benchmarks/personalens/dataset/workspace-files.js';

const LATENCY_MS = 50;
const JITTER_MS = 25;
/** The 429 storm run (issue 17): each model's quota, the storm's length, the dialogues. */
const STORM_RPM = 1200;
const STORM_S = 5;
const STORM_DIALOGUES = 400;
/** Calls for the bare-client ceiling: several seconds of steady state at each concurrency. */
const CEILING_CALLS: Record<number, number> = { 64: 10_000, 256: 20_000 };
/** Issue 34's bounds: the stage's share of the same-body ceiling, and its CPU per call (ms). */
const SHARE_OF_CEILING: Record<number, number> = { 64: 95, 256: 90 };
const CPU_PER_CALL_MS: Record<number, number> = { 64: 0.55, 256: 0.35 };
/** Dialogues of the profiled run (CPU per call by category). */
const PROFILED_DIALOGUES = 3000;

/**
 * The dialogues stage against the local mock (a separate process, fixed 50 ms latency), with
 * the call cache on. Every dialogue has one call in flight at a time, so the bound on calls/s is
 * concurrency / latency. Each configuration runs in its own process for its own peak RSS.
 */
export async function benchDialogues(dataDir: string): Promise<BenchResult> {
  if (!existsSync(join(dataDir, 'profile'))) throw new Error(`bench data not found at ${dataDir} (set PLENS_BENCH_DATA)`);
  const root = await mkdtemp(join(tmpdir(), 'plens-bench-dialogues-'));
  const mocks: ChildProcess[] = [];
  // Each mock in its own process, as an endpoint would be.
  const startMock = (...flags: string[]) => startMockProcess(mocks, LATENCY_MS, ...flags);
  try {
    // The mock samples the bodies the stage sends; the ceiling replays them (the same bytes, the same serialisation).
    const bodies = join(root, 'bodies.jsonl');
    const url = await startMock('--sample-bodies', bodies);
    const sampler = mocks[0]!;
    const template = new Workspace(join(root, 'template'));
    await runImport({ from: dataDir, workspace: template, progress: false });

    const figures: BenchResult['figures'] = [];
    let runs = 0;
    const run = async (scenarios: number, concurrency: number, capHeap: boolean, endpoint = url, nodeFlags: string[] = []) => {
      // A fresh workspace (and call cache) per run: nothing is ever served from an earlier one.
      const ws = new Workspace(join(root, `run-${++runs}-${scenarios}-${concurrency}`));
      const { cp } = await import('node:fs/promises');
      await cp(datasetDir(template), datasetDir(ws), { recursive: true });
      await runScenarios(ws, { kind: 'all', random: scenarios, seed: 'bench' });
      const result = await worker<WorkerResult>('./dialogues-worker.js', [ws.root, String(concurrency), endpoint], capHeap, nodeFlags);
      if (result.failed) throw new Error(`${result.failed} dialogues failed in the benchmark`);
      return result;
    };

    for (const concurrency of [64, 256]) {
      const steal = CpuSteal.start();
      // The endpoint's CPU: the mock shares the cores with the stage, as no real endpoint would.
      const mockDuringStage = ThreadCpu.open(sampler.pid!);
      const r = await run(5000, concurrency, false);
      const mockStage = mockDuringStage?.stop();
      const bound = concurrency / (LATENCY_MS / 1000);
      // Only calls that went over HTTP count towards the rate (the mock's replies are unique, so all
      // do), over the time the dialogues ran; the whole command adds start-up and compaction.
      const rate = r.http_calls / (r.work_ms / 1000);
      const wholeRate = r.http_calls / (r.wall_ms / 1000);
      const bodySample = await takeBodySample(sampler, bodies);
      const mockDuringCeiling = ThreadCpu.open(sampler.pid!);
      const ceiling = await worker<CeilingResult>(
        './http-ceiling-worker.js',
        [url, String(concurrency), String(CEILING_CALLS[concurrency]!), bodySample],
        false,
      );
      const mockCeiling = mockDuringCeiling?.stop();
      const ceilingRate = ceiling.calls / (ceiling.wall_ms / 1000);
      figures.push({ name: `c=${concurrency}: calls/s (5k dialogues)`, value: rate, unit: 'calls/s' });
      figures.push({ name: `c=${concurrency}: share of bound ${bound}/s`, value: (100 * rate) / bound, unit: '%', min: 90 });
      figures.push({ name: `c=${concurrency}: share of bound, whole command`, value: (100 * wholeRate) / bound, unit: '%' });
      figures.push({ name: `c=${concurrency}: start-up + compaction`, value: (r.wall_ms - r.work_ms) / 1000, unit: 's' });
      figures.push({
        name: `c=${concurrency}: CPU per call`,
        value: r.cpu_ms / r.http_calls,
        unit: 'ms',
        bound: CPU_PER_CALL_MS[concurrency]!,
        baseline: true,
      });
      figures.push({ name: `c=${concurrency}: peak RSS`, value: r.peak_rss_mib, unit: 'MiB' });
      figures.push({ name: `c=${concurrency}: same-body ceiling (bare transport)`, value: ceilingRate, unit: 'calls/s' });
      figures.push({ name: `c=${concurrency}: mean request body`, value: ceiling.mean_body_bytes / 1024, unit: 'KiB' });
      figures.push({ name: `c=${concurrency}: ceiling's share of bound`, value: (100 * ceilingRate) / bound, unit: '%' });
      figures.push({
        name: `c=${concurrency}: stage's share of same-body ceiling`,
        value: (100 * rate) / ceilingRate,
        unit: '%',
        min: SHARE_OF_CEILING[concurrency]!,
      });
      figures.push(...steadyFigures(concurrency, r.steady_rate, ceiling.steady_rate));
      figures.push({ name: `c=${concurrency}: bare client CPU per call`, value: ceiling.cpu_ms / ceiling.calls, unit: 'ms' });
      if (mockStage && mockCeiling) figures.push(...machineFigures(concurrency, r, mockStage.runMs, ceiling, mockCeiling.runMs));
      if (steal) figures.push({ name: `c=${concurrency}: CPU stolen by other guests`, value: steal.percent(), unit: '%' });
    }
    // Where the CPU goes, from a CPU profile of a run of its own (profiling slows it: its rate is not a figure).
    const profileDir = join(root, 'profile');
    const profiled = await run(PROFILED_DIALOGUES, 256, false, url, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
    figures.push(...profileFigures(profileDir, profiled.http_calls, 'c=256 profile'));
    // Fixed latency answers in bursts (requests sent together come back together), so every
    // burst waits on the client's CPU; real endpoints vary. The same run with latency spread
    // evenly over 25-75 ms (same mean, same bound) shows how much of the gap is that convoy.
    const jittered = await run(5000, 64, false, await startMock('--jitter', String(JITTER_MS)));
    const jitteredRate = jittered.http_calls / (jittered.work_ms / 1000);
    figures.push({ name: `c=64, latency ${LATENCY_MS}±${JITTER_MS} ms: calls/s`, value: jitteredRate, unit: 'calls/s' });
    figures.push({ name: `c=64, latency ${LATENCY_MS}±${JITTER_MS} ms: share of bound`, value: (100 * jitteredRate) / (64 / (LATENCY_MS / 1000)), unit: '%' });
    // A 429 storm: the endpoint refuses everything for STORM_S seconds, then enforces STORM_RPM per
    // model per second (a bucket of one second, as endpoints enforce a minute's limit); adaptive
    // concurrency and the RPM buckets must ride it out and then use the quota.
    const stormWs = new Workspace(join(root, 'storm'));
    await (await import('node:fs/promises')).cp(datasetDir(template), datasetDir(stormWs), { recursive: true });
    await runScenarios(stormWs, { kind: 'all', random: STORM_DIALOGUES, seed: 'bench' });
    const storm = await worker<StormResult>('./dialogues-storm-worker.js', [stormWs.root, String(STORM_RPM), String(STORM_S), '64', '1'], false);
    figures.push(...stormFigures(storm, STORM_RPM, STORM_S));
    // Memory runs cap the old space, so a stage that held on to finished work would fail, not just grow.
    const small = await run(1000, 256, true);
    const large = await run(20000, 256, true);
    figures.push({ name: 'peak RSS, 1k dialogues (c=256)', value: small.peak_rss_mib, unit: 'MiB' });
    figures.push({ name: 'peak RSS, 20k dialogues (c=256)', value: large.peak_rss_mib, unit: 'MiB' });
    figures.push({ name: 'peak RSS growth 1k -> 20k', value: large.peak_rss_mib - small.peak_rss_mib, unit: 'MiB' });
    if (small.peak_anon_mib !== null && large.peak_anon_mib !== null && small.peak_file_mib !== null && large.peak_file_mib !== null) {
      figures.push({ name: '  of it file-backed (LMDB cache pages)', value: large.peak_file_mib - small.peak_file_mib, unit: 'MiB' });
      figures.push({ name: 'peak anonymous RSS, 1k dialogues', value: small.peak_anon_mib, unit: 'MiB' });
      figures.push({ name: 'peak anonymous RSS, 20k dialogues', value: large.peak_anon_mib, unit: 'MiB' });
      figures.push({ name: 'peak anonymous RSS growth 1k -> 20k', value: large.peak_anon_mib - small.peak_anon_mib, unit: 'MiB', bound: 64 });
    } else {
      figures.push({ name: 'peak RSS growth 1k -> 20k (no /proc: total)', value: large.peak_rss_mib - small.peak_rss_mib, unit: 'MiB', bound: 64 });
    }
    figures.push({ name: 'live JS heap after 1k (128 MiB cap)', value: small.heap_after_mib, unit: 'MiB' });
    figures.push({ name: 'live JS heap after 20k (128 MiB cap)', value: large.heap_after_mib, unit: 'MiB' });
    figures.push({ name: 'live heap growth 1k -> 20k', value: large.heap_after_mib - small.heap_after_mib, unit: 'MiB', bound: 16 });
    return {
      name: 'dialogues: plens dialogues against the local mock (50 ms latency, cache on)',
      context: `OpenAI-compatible mock in its own process on this machine; user and assistant both over HTTP; scenarios drawn from ${dataDir}`,
      figures,
    };
  } finally {
    for (const mock of mocks) mock.kill('SIGTERM');
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * How full the machine was: the mock's CPU per call, the share of all cores the stage and the mock
 * used together (and the bare client and the mock), and how long the stage's threads waited for a
 * core per call. A stage near 100% with a long wait is limited by the cores, not by its own code
 * path's latency: a rate it loses there comes back only with less CPU per call.
 */
function machineFigures(concurrency: number, r: WorkerResult, mockMs: number, ceiling: CeilingResult, mockCeilingMs: number): BenchResult['figures'] {
  const cores = availableParallelism();
  const figures: BenchResult['figures'] = [
    { name: `c=${concurrency}: mock (endpoint) CPU per call`, value: mockMs / r.http_calls, unit: 'ms' },
    { name: `c=${concurrency}: all cores in use, stage + mock`, value: (100 * (r.cpu_ms + mockMs)) / r.wall_ms / cores, unit: '%' },
    { name: `c=${concurrency}: all cores in use, bare client + mock`, value: (100 * (ceiling.cpu_ms + mockCeilingMs)) / ceiling.wall_ms / cores, unit: '%' },
  ];
  if (r.run_queue_ms !== null)
    figures.push({ name: `c=${concurrency}: stage's threads waiting for a core, per call`, value: r.run_queue_ms / r.http_calls, unit: 'ms' });
  return figures;
}

interface WorkerResult {
  dialogues: number;
  failed: number;
  calls: number;
  http_calls: number;
  wall_ms: number;
  /** The stage's time running dialogues: wall_ms less start-up, counting and compaction. */
  work_ms: number;
  /** Calls/s over the middle of the run (steady-rate.ts). */
  steady_rate: number | null;
  cpu_ms: number;
  /** Time the stage's threads were ready to run but waited for a core (null off Linux). */
  run_queue_ms: number | null;
  peak_rss_mib: number;
  peak_anon_mib: number | null;
  peak_file_mib: number | null;
  heap_after_mib: number;
}
