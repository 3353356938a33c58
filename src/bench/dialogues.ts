import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Workspace } from '../core/workspace.js';
import { runImport } from '../dataset/import.js';
import { runScenarios } from '../scenarios/stage.js';
import type { BenchResult } from './report.js';

const LATENCY_MS = 50;
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

/**
 * The dialogues stage against the local mock (a separate process, fixed 50 ms latency), with
 * the call cache on. Every dialogue has one call in flight at a time, so the bound on calls/s is
 * concurrency / latency. Each configuration runs in its own process for its own peak RSS.
 */
export async function benchDialogues(dataDir: string): Promise<BenchResult> {
  if (!existsSync(join(dataDir, 'profile'))) throw new Error(`bench data not found at ${dataDir} (set PLENS_BENCH_DATA)`);
  const root = await mkdtemp(join(tmpdir(), 'plens-bench-dialogues-'));
  const mock = spawn(process.execPath, [here('../llm/mock-server-main.js'), '--port', '0', '--latency', String(LATENCY_MS), '--unique-replies'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      mock.on('error', reject);
      createInterface({ input: mock.stdout! }).once('line', (line) => resolve(line.replace(/^listening /, '').trim()));
    });
    const template = new Workspace(join(root, 'template'));
    await runImport({ from: dataDir, workspace: template, progress: false });

    const figures: BenchResult['figures'] = [];
    const run = async (scenarios: number, concurrency: number, capHeap: boolean) => {
      const ws = new Workspace(join(root, `run-${scenarios}-${concurrency}`));
      const { cp } = await import('node:fs/promises');
      await cp(template.datasetDir, ws.datasetDir, { recursive: true });
      await runScenarios(ws, { kind: 'all', random: scenarios, seed: 'bench' });
      const result = await worker(ws.root, concurrency, url, capHeap);
      if (result.failed) throw new Error(`${result.failed} dialogues failed in the benchmark`);
      return result;
    };

    for (const concurrency of [64, 256]) {
      const r = await run(5000, concurrency, false);
      const bound = concurrency / (LATENCY_MS / 1000);
      // Only calls that went over HTTP count towards the rate (the mock's replies are unique, so all do).
      const rate = r.http_calls / (r.wall_ms / 1000);
      figures.push({ name: `c=${concurrency}: calls/s (5k dialogues)`, value: rate, unit: 'calls/s' });
      figures.push({ name: `c=${concurrency}: share of bound ${bound}/s`, value: (100 * rate) / bound, unit: '%', min: 90 });
      figures.push({ name: `c=${concurrency}: CPU per call`, value: r.cpu_ms / r.http_calls, unit: 'ms', bound: 1 });
      figures.push({ name: `c=${concurrency}: peak RSS`, value: r.peak_rss_mib, unit: 'MiB' });
    }
    // Memory runs cap the old space, so a stage that held on to finished work would fail, not just grow.
    const small = await run(1000, 256, true);
    const large = await run(20000, 256, true);
    figures.push({ name: 'peak RSS, 1k dialogues (c=256)', value: small.peak_rss_mib, unit: 'MiB' });
    figures.push({ name: 'peak RSS, 20k dialogues (c=256)', value: large.peak_rss_mib, unit: 'MiB' });
    figures.push({ name: 'peak RSS growth 1k -> 20k', value: large.peak_rss_mib - small.peak_rss_mib, unit: 'MiB', bound: 64 });
    figures.push({ name: 'live JS heap after 1k (128 MiB cap)', value: small.heap_after_mib, unit: 'MiB' });
    figures.push({ name: 'live JS heap after 20k (128 MiB cap)', value: large.heap_after_mib, unit: 'MiB' });
    figures.push({ name: 'live heap growth 1k -> 20k', value: large.heap_after_mib - small.heap_after_mib, unit: 'MiB', bound: 16 });
    return {
      name: 'dialogues: plens dialogues against the local mock (50 ms latency, cache on)',
      context: `OpenAI-compatible mock in its own process on this machine; user and assistant both over HTTP; scenarios drawn from ${dataDir}`,
      figures,
    };
  } finally {
    mock.kill('SIGTERM');
    await rm(root, { recursive: true, force: true });
  }
}

interface WorkerResult {
  dialogues: number;
  failed: number;
  calls: number;
  http_calls: number;
  wall_ms: number;
  cpu_ms: number;
  peak_rss_mib: number;
  heap_after_mib: number;
}

function worker(ws: string, concurrency: number, url: string, capHeap: boolean): Promise<WorkerResult> {
  return new Promise((resolve, reject) => {
    const flags = capHeap ? ['--max-old-space-size=128', '--expose-gc'] : ['--expose-gc'];
    const child = spawn(process.execPath, [...flags, here('./dialogues-worker.js'), ws, String(concurrency), url], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as WorkerResult) : reject(new Error(`bench worker exited ${code}`))));
  });
}
