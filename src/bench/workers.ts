import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** What the bare-client ceiling worker (http-ceiling-worker.ts) prints. */
export interface CeilingResult {
  calls: number;
  wall_ms: number;
  cpu_ms: number;
  /** The mean size of the bodies it sent. */
  mean_body_bytes: number;
  /** Calls/s over the middle of the run (steady-rate.ts). */
  steady_rate: number | null;
}

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

/** Runs a bench worker script (a path relative to dist/bench) in a fresh node process (with `nodeFlags`, e.g. --cpu-prof) and parses the JSON line it prints. */
export function worker<T>(script: string, args: string[], capHeap: boolean, nodeFlags: readonly string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const flags = [...(capHeap ? ['--max-old-space-size=128', '--expose-gc'] : ['--expose-gc']), ...nodeFlags];
    const child = spawn(process.execPath, [...flags, here(script), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`bench worker ${script} exited ${code}`))));
  });
}

/** The local mock in its own process, as an endpoint would be; resolves to its URL once it listens. */
export function startMockProcess(mocks: ChildProcess[], latencyMs: number, ...flags: string[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const mock = spawn(
      process.execPath,
      [here('../testkit/mock-server-main.js'), '--port', '0', '--latency', String(latencyMs), '--unique-replies', ...flags],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    mocks.push(mock);
    mock.on('error', reject);
    createInterface({ input: mock.stdout! }).once('line', (line) => resolve(line.replace(/^listening /, '').trim()));
  });
}

/**
 * The bodies a mock started with `--sample-bodies file` has sampled so far, written to that file
 * now (it writes on SIGUSR2): what the ceiling worker replays.
 */
export async function takeBodySample(mock: ChildProcess, file: string): Promise<string> {
  rmSync(file, { force: true });
  mock.kill('SIGUSR2');
  for (let waited = 0; !existsSync(file); waited += 20) {
    if (waited > 10_000) throw new Error(`the mock wrote no body sample to ${file}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return file;
}
