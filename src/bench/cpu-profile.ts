import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** Self time per category (ms) over every profile in `dir`: the main thread's and each worker thread's (the HTTP workers'). */
export function cpuBreakdown(dir: string): Array<{ category: string; ms: number }> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no CPU profile in ${dir}`);
  const sum = new Map<string, number>();
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
    for (const { category, ms } of breakdownOf(profile)) sum.set(category, (sum.get(category) ?? 0) + ms);
  }
  return CPU_CATEGORIES.map((c) => ({ category: c.name, ms: sum.get(c.name) ?? 0 }));
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
