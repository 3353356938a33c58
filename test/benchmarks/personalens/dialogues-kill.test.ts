import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJsonl } from '../../../src/engine/jsonl-log.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { cliPath, repoRoot, runCliJson } from '../../helpers/cli.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Starts the stage and SIGKILLs it, with no chance to clean up, once the endpoint has seen
 * `calls` more requests: mid-run however long start-up takes on a busy machine.
 */
function runAndKill(args: string[], calls: number, env: Record<string, string>): Promise<{ signal: string | null }> {
  return new Promise((resolve, reject) => {
    const start = server!.stats().requests;
    const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: 'ignore' });
    const poll = setInterval(() => {
      if (server!.stats().requests - start >= calls) child.kill('SIGKILL');
    }, 5);
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearInterval(poll);
      resolve({ signal });
    });
  });
}

describe('plens dialogues killed with SIGKILL', () => {
  it('resumes after repeated kills: exactly one dialogue per key, no torn line', async () => {
    // Slow replies keep dialogues in flight, so each kill lands mid-write or mid-dialogue.
    server = await startMockLlm({ latencyMs: 25 });
    const ws = await sampleWorkspace();
    const env = { OPENAI_API_KEY: 'sk-kill-test' };
    const args = [
      'dialogues',
      '-w',
      ws,
      '--assistant',
      `openai:a?base_url=${server.url}/v1`,
      '--user',
      `openai:u?base_url=${server.url}/v1`,
      '--setting',
      'base',
      '--concurrency',
      '6',
      '--cache',
      'off',
    ];
    // 49 dialogues of 6 calls: each kill lands after some dialogues are done, with others in flight.
    for (const calls of [40, 25, 55, 30]) {
      const r = await runAndKill(args, calls, env);
      expect(r.signal).toBe('SIGKILL');
    }

    const finish = await runCliJson<{ ok: number; failed: number; already_done: number; planned: number }>(args, { env });
    expect(finish.code, finish.stderr).toBe(0);
    expect(finish.json.failed).toBe(0);
    // Some work survived the kills and was not redone.
    expect(finish.json.already_done).toBeGreaterThan(0);
    expect(finish.json.already_done + finish.json.ok).toBe(49);

    const cell = readdirSync(join(ws, 'dialogues'))[0]!;
    const file = join(ws, 'dialogues', cell, 'records.jsonl');
    const text = readFileSync(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const keys: string[] = [];
    for await (const r of readJsonl<{ key: string; status: string }>(file)) {
      expect(r.status).toBe('ok');
      keys.push(r.key);
    }
    expect(keys).toHaveLength(49);
    expect(new Set(keys).size).toBe(49);
    // The lock left by the killed processes was taken over, and released at the end.
    expect(readdirSync(join(ws, 'dialogues', cell)).filter((f) => f.startsWith('.lock'))).toEqual([]);
  });
});
