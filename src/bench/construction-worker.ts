import { Workspace } from '../core/workspace.js';
import { runBuildStage, type BuildUnit } from '../benchmarks/personalens/construction/build-stage.js';
import { parseInteractions } from '../benchmarks/personalens/construction/parse.js';
import { MemorySampler } from './memory-sampler.js';
import { answerTimes, steadyRate } from './steady-rate.js';

/**
 * One construction-stage run in a fresh process (its peak RSS its own):
 *   node dist/bench/construction-worker.js <workspace> <concurrency> <mock url> <units>
 * The past-interactions stage (any non-empty reply is a summary, so the mock's replies all parse)
 * over <units> units of a ~1,500-character prompt each. Prints one JSON line.
 */
const [ws, concurrency, url, n] = process.argv.slice(2);
const filler = 'The user lives in a mid-sized city, works full-time and likes to plan ahead. '.repeat(18);
const units: BuildUnit[] = Array.from({ length: Number(n) }, (_, i) => ({
  unit: `user${i}/Music`,
  user_id: `user${i}`,
  domain: 'Music',
  user: `Write a summary of past interactions for user ${i}.\n${filler}`,
  simulated: '',
}));
const memory = new MemorySampler();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const summary = await runBuildStage('interactions', units, (text) => parseInteractions(text), {
  workspace: new Workspace(ws!),
  model: `openai:bench-builder?base_url=${url}/v1`,
  promptsHash: 'bench',
  maxTokens: 500,
  temperature: 1,
  cache: 'on',
  concurrency: Number(concurrency),
  signal: new AbortController().signal,
  env: { OPENAI_API_KEY: 'sk-bench' },
});
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const peaks = memory.stop();
// Read after the run's clocks stopped: the stage's calls, when each was answered.
const steady = steadyRate(await answerTimes(summary.partitions));
process.stdout.write(
  `${JSON.stringify({
    ok: summary.ok,
    failed: summary.failed,
    calls: summary.calls,
    http_calls: summary.calls - summary.cached_calls,
    wall_ms: wallMs,
    work_ms: summary.work_ms,
    steady_rate: steady,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    peak_rss_mib: peaks.rssMiB,
  })}\n`,
);
