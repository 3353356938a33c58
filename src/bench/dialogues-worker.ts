import { Workspace } from '../core/workspace.js';
import { runDialogues } from '../benchmarks/personalens/dialogues-stage.js';
import { MemorySampler } from './memory-sampler.js';
import { answerTimes, steadyRate } from './steady-rate.js';
import { ThreadCpu } from './thread-cpu.js';

/**
 * One benchmark run in a fresh process (so its peak RSS is its own):
 *   node dist/bench/dialogues-worker.js <workspace> <concurrency> <mock url>
 * Prints one JSON line with calls (HTTP and cached), wall and CPU time of the stage, and peak
 * memory (resident set, and its anonymous and file-backed parts), and how long its threads waited
 * for a core (null off Linux).
 */
const [ws, concurrency, url] = process.argv.slice(2);
const memory = new MemorySampler();
const threads = ThreadCpu.open('self')?.every(200);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const summary = await runDialogues({
  workspace: new Workspace(ws!),
  assistants: [`openai:bench-assistant?base_url=${url}/v1`],
  user: `openai:bench-user?base_url=${url}/v1`,
  settings: ['base'],
  cache: 'on',
  concurrency: Number(concurrency),
  signal: new AbortController().signal,
  env: { OPENAI_API_KEY: 'sk-bench' },
});
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const peaks = memory.stop();
const waited = threads?.stop();
// Read after the run's clocks stopped: the stage's calls, when each was answered.
const steady = steadyRate(await answerTimes(summary.partitions));
// The live JS set after the run (a full GC first when exposed): what grows if the stage holds on to work.
(globalThis as { gc?: () => void }).gc?.();
process.stdout.write(
  JSON.stringify({
    dialogues: summary.ok,
    failed: summary.failed,
    calls: summary.calls,
    http_calls: summary.calls - summary.cached_calls,
    wall_ms: wallMs,
    work_ms: summary.work_ms,
    steady_rate: steady,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    run_queue_ms: waited?.waitMs ?? null,
    peak_rss_mib: peaks.rssMiB,
    peak_anon_mib: peaks.anonMiB ?? null,
    peak_file_mib: peaks.fileMiB ?? null,
    heap_after_mib: process.memoryUsage().heapUsed / 1024 / 1024,
  }) + '\n',
);
