import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '..', '..');
export const cliPath = join(repoRoot, 'dist', 'cli', 'main.js');
export const sampleDir = join(repoRoot, 'data', 'sample');
export const sharedPersonaLens = resolve(repoRoot, '..', 'shared', 'personalens');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a real process (as a user would), with its own environment. */
export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, PLENS_WORKSPACE: '', PLENS_WAREHOUSE: '', ...options.env },
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

export function runCliJson<T = Record<string, unknown>>(args: string[], options?: { cwd?: string }): Promise<CliResult & { json: T }> {
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
