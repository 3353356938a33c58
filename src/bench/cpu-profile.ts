import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult } from './report.js';

/**
 * Where a stage's CPU goes, from a V8 CPU profile (`node --cpu-prof`): each sample's self time is
 * put in the first category whose pattern matches its function's script URL or name, so a
 * regression in CPU per call points at its cause (issue 34's breakdown). The profile is taken in
 * a run of its own: profiling slows the run, so its rates are not the bench's figures.
 */
export const CPU_CATEGORIES: ReadonlyArray<{ name: string; test: (url: string, fn: string) => boolean }> = [
  { name: 'idle (waiting on the network)', test: (_u, fn) => fn === '(idle)' },
  { name: 'garbage collection', test: (_u, fn) => fn === '(garbage collector)' },
  {
    name: 'HTTP client (undici, request and response)',
    test: (u) =>
      /undici|\/llm\/(http|inline-transport|worker-transport|http-provider|openai|anthropic|bedrock)/.test(u) ||
      /^node:(net|http|_http|stream|internal\/streams)/.test(u),
  },
  { name: 'call cache (LMDB, msgpack)', test: (u) => /lmdb|msgpackr|\/llm\/call-cache/.test(u) },
  { name: 'hashing (keys)', test: (u, fn) => /node:internal\/crypto|\/engine\/llm-stage\.js/.test(u) && /hash|Hash|update|digest/.test(fn) },
  {
    name: 'records, logs and events (JSONL, checks)',
    test: (u) => /\/engine\/(jsonl-log|record-check|partition|stage-progress|run-record)|node:(fs|internal\/fs)/.test(u),
  },
  { name: 'redaction', test: (u, fn) => /\/core\/redact/.test(u) || fn.startsWith('RegExp:') },
  { name: 'retries and rate limits', test: (u) => /p-retry|\/llm\/(retry|token-bucket|aimd|errors)/.test(u) },
  { name: 'prompt rendering', test: (u) => /mustache|prompt-set|scenario-context|conversation|\/construction\/(prompts|build-stage)/.test(u) },
  { name: 'stage engine (client, kit, runner)', test: (u) => /\/engine\/|\/llm\/client/.test(u) },
  { name: 'V8 and Node internals (program, JSON)', test: (u, fn) => fn === '(program)' || u === '' || u.startsWith('node:') },
  { name: 'other', test: () => true },
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

/**
 * Self time per category (ms) over every profile in `dir`: the main thread's and each worker
 * thread's (the HTTP thread takes the profiling flags of its process), and each side's total
 * out of idle. V8's helper threads (background garbage collection, compilation) are in no profile.
 */
export function cpuBreakdown(dir: string): { categories: Array<{ category: string; ms: number }>; mainMs: number; workersMs: number } {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no CPU profile in ${dir}`);
  const sum = new Map<string, number>();
  let mainMs = 0;
  let workersMs = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
    let busyMs = 0;
    for (const { category, ms } of breakdownOf(profile)) {
      sum.set(category, (sum.get(category) ?? 0) + ms);
      if (!category.startsWith('idle')) busyMs += ms;
    }
    if (threadOf(file) === 0) mainMs += busyMs;
    else workersMs += busyMs;
  }
  return { categories: CPU_CATEGORIES.map((c) => ({ category: c.name, ms: sum.get(c.name) ?? 0 })), mainMs, workersMs };
}

/** A profiled run's figures, in µs per call: each category over all threads, then the main thread's and the worker threads' totals. */
export function profileFigures(dir: string, calls: number, label: string): BenchResult['figures'] {
  const { categories, mainMs, workersMs } = cpuBreakdown(dir);
  const perCall = (ms: number) => (1000 * ms) / calls;
  return [
    ...categories.filter((c) => !c.category.startsWith('idle')).map((c) => ({ name: `${label}: ${c.category}`, value: perCall(c.ms), unit: 'µs per call' })),
    { name: `${label}, main thread: all of the above`, value: perCall(mainMs), unit: 'µs per call' },
    { name: `${label}, worker threads (HTTP): all of the above`, value: perCall(workersMs), unit: 'µs per call' },
  ];
}

/** The thread of a profile from its file name, as `node --cpu-prof` names it (CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; 0 is the main thread). */
export function threadOf(file: string): number {
  const parts = file.split('.');
  return Number(parts[parts.length - 3]);
}

export function breakdownOf(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }): Array<{ category: string; ms: number }> {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totals = new Map(CPU_CATEGORIES.map((c) => [c.name, 0]));
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)?.callFrame ?? { functionName: '', url: '' };
    const category = CPU_CATEGORIES.find((c) => c.test(frame.url, frame.functionName))!;
    totals.set(category.name, totals.get(category.name)! + us / 1000);
  }
  return CPU_CATEGORIES.map((c) => ({ category: c.name, ms: totals.get(c.name)! }));
}
