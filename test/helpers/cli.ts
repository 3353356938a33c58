import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { format } from 'node:util';

export const repoRoot = resolve(import.meta.dirname, '..', '..');
export const cliPath = join(repoRoot, 'dist', 'cli', 'main.js');
export const sampleDir = join(repoRoot, 'data', 'sample');
export const sharedPersonaLens = resolve(repoRoot, '..', 'shared', 'personalens');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Run the built CLI as a real process even where this process could run it. */
  subprocess?: boolean;
}

let inProcessBusy = false;

/**
 * Runs the CLI with its own environment and working directory. In this process (the same argv
 * parsing, handlers and error reporting as the built program, without starting Node and loading
 * DuckDB again) unless asked for a subprocess, PLENS_TEST_SUBPROCESS=1 is set, or another run is
 * in flight here (two at once run as two processes, as they would for a user).
 */
export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  args = withTestDefaults(args);
  if (options.subprocess || inProcessBusy || process.env['PLENS_TEST_SUBPROCESS'] === '1') return runCliProcess(args, options);
  inProcessBusy = true;
  return runCliInProcess(args, options).finally(() => {
    inProcessBusy = false;
  });
}

/**
 * Table 10 (lexical diversity) costs seconds and gigabytes in every warehouse build, and only the
 * tests of Table 10 look at it: a `plens warehouse` that does not choose `--lexical` builds without
 * it here. A test that wants it passes `--lexical laps|full`; the demo and make tests build it
 * from their pipelines.
 */
function withTestDefaults(args: string[]): string[] {
  if (args[0] !== 'warehouse' || args.some((a) => a === '--lexical' || a.startsWith('--lexical='))) return args;
  return [...args, '--lexical', 'none'];
}

/** Runs the built CLI as a real process (as a user would), with its own environment. */
export function runCliProcess(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: options.cwd ?? repoRoot,
      // PLENS_STATE_DIR=off: one test's make never becomes another's current project (docs/project.md).
      env: { ...process.env, PLENS_WORKSPACE: '', PLENS_WAREHOUSE: '', PLENS_STATE_DIR: 'off', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
  });
}

export function runCliJson<T = Record<string, unknown>>(args: string[], options?: RunOptions): Promise<CliResult & { json: T }> {
  return runCli([...args, '--json'], options).then((r) => {
    let json: T;
    try {
      json = JSON.parse(r.stdout) as T;
    } catch {
      throw new Error(`stdout is not JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
    }
    return { ...r, json };
  });
}

export function tempDir(prefix = 'plens-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Runs the CLI in this process: the same argv parsing, handlers and error reporting as the built
 * program, without starting Node (a subprocess costs about half a second of CPU). For tests where
 * a separate process adds nothing; one at a time (it swaps process-wide stdout, env and cwd).
 */
export async function runCliInProcess(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const { main } = await import('../../src/cli/main.js');
  const env: Record<string, string> = { PLENS_WORKSPACE: '', PLENS_WAREHOUSE: '', PLENS_STATE_DIR: 'off', ...options.env };
  const savedEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const savedCwd = process.cwd();
  const savedExitCode = process.exitCode;
  const out = { stdout: '', stderr: '' };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture = (stream: 'stdout' | 'stderr') =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      out[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
  Object.assign(process.env, env);
  process.exitCode = undefined;
  process.chdir(options.cwd ?? repoRoot);
  process.stdout.write = capture('stdout');
  process.stderr.write = capture('stderr');
  // yargs prints help and version with console.log, which the test runner takes over.
  const logs = { log: console.log, error: console.error, warn: console.warn };
  console.log = (...a: unknown[]) => void (out.stdout += format(...a) + '\n');
  console.error = console.warn = (...a: unknown[]) => void (out.stderr += format(...a) + '\n');
  try {
    const code = await main(args);
    return { code, ...out };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    Object.assign(console, logs);
    process.chdir(savedCwd);
    process.exitCode = savedExitCode;
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
