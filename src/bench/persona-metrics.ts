import { availableParallelism, loadavg } from 'node:os';
import { GENERATION_METRICS } from '../metrics/generation.js';
import { scorePairs } from '../metrics/parallel.js';
import { CpuSteal } from './cpu-steal.js';
import { MemorySampler } from './memory-sampler.js';
import { syntheticPairs } from './persona-pairs.js';
import type { BenchResult } from './report.js';

const PAIRS = 100_000;
const BOUND_S = 60;
const BOUND_RSS_MIB = 1_024;

/**
 * PERSONA-bench 3.3 lexical metrics at scale: ROUGE-1, ROUGE-L, BLEU-4 and METEOR over
 * 100,000 synthetic (reference, candidate) pairs with every thread the machine has, timed
 * from the call to the last score (worker start-up and each thread's WordNet load included).
 */
export async function benchPersonaMetrics(): Promise<BenchResult> {
  const pairs = syntheticPairs(PAIRS, 1);
  const words = pairs.reduce((sum, p) => sum + p.reference.split(' ').length + p.candidate.split(' ').length, 0);
  const load = loadavg()[0]!;
  const threads = Math.min(availableParallelism(), 8);
  const memory = new MemorySampler();
  const steal = CpuSteal.start();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const scores = await scorePairs(pairs);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const peaks = memory.stop();
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const means = GENERATION_METRICS.map((metric) => `${metric} ${(scores[metric].reduce((a, b) => a + b, 0) / PAIRS).toFixed(4)}`).join(', ');
  return {
    name: 'persona-metrics',
    context: `ROUGE-1/L + BLEU-4 + METEOR over ${PAIRS.toLocaleString('en')} synthetic reply pairs (${(words / PAIRS / 2).toFixed(0)} words a text on average), ${threads} worker threads; means: ${means}`,
    figures: [
      { name: 'total time', value: seconds, unit: 's', bound: BOUND_S },
      { name: 'pairs/s', value: PAIRS / seconds, unit: 'pairs/s', min: Math.ceil(PAIRS / BOUND_S) },
      { name: 'CPU time, all threads', value: cpuSeconds, unit: 's' },
      // On a shared machine the wall time depends on the neighbours; CPU time and the share of
      // the cores the run got say how much of it was this code.
      { name: 'CPU time per 1,000 pairs', value: (1000 * cpuSeconds) / PAIRS, unit: 's' },
      { name: `share of ${threads} cores this run got`, value: (100 * cpuSeconds) / (seconds * threads), unit: '%' },
      { name: 'load average (1 min) at start', value: load, unit: '' },
      { name: 'peak RSS', value: peaks.rssMiB, unit: 'MiB', bound: BOUND_RSS_MIB },
      ...(steal ? [{ name: 'CPU stolen by other guests', value: steal.percent(), unit: '%' }] : []),
    ],
  };
}
