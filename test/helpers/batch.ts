import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonl } from '../../src/engine/jsonl-log.js';
import { cliPath, repoRoot } from './cli.js';

// What the batch-mode tests (OpenAI, Anthropic, Bedrock) share: reading a judge partition's logs,
// waiting on a mock, and a CLI run in its own process to be killed.

/** The lines of one of a partition's logs (`events.jsonl`, `batches.jsonl`, ...). */
export async function logLines(dir: string, file: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for await (const e of readJsonl<Record<string, unknown>>(join(dir, file))) out.push(e);
  return out;
}

/** The workspace's one judge partition ('' before there is one). */
export function judgePartition(ws: string): string {
  const root = join(ws, 'judgments');
  const dirs = existsSync(root) ? readdirSync(root) : [];
  return dirs.length ? join(root, dirs[0]!) : '';
}

/** How many records the judge partition's log holds. */
export function judgmentRecordLines(ws: string): number {
  const file = join(judgePartition(ws) || '/nonexistent', 'records.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

/** Polls `ok` every 20 ms for up to 90 s. */
export async function waitFor(what: string, ok: () => boolean): Promise<void> {
  const until = Date.now() + 90_000;
  while (!ok()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The CLI as a user's own process (to be killed); `exit` is its code, or -1 when a signal ended it. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [cliPath, ...args, '--no-progress'], {
    cwd: repoRoot,
    env: { ...process.env, PLENS_WORKSPACE: '', ...env },
    stdio: 'ignore',
  });
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null)));
  });
  return { child, exit };
}

/** The sim judge's replies: a verdict for task completion, a score for the rest. */
export function judgeReply(body: { messages: Array<{ content: string }> }): string {
  if (/VERDICT/.test(body.messages[0]!.content)) return 'VERDICT: True\nEXPLANATION: Everything the goal asks for was done.';
  return 'Score: 4\nJustification: reads naturally.';
}

/**
 * Rewrites the judge partition's batch ledger as a kill right after staging would have left it: its
 * `staged` lines only (each passed through `edit`). Returns the lines kept.
 */
export function keepStagedOnly(ws: string, edit: (line: string) => string = (l) => l): string[] {
  const file = join(judgePartition(ws), 'batches.jsonl');
  const staged = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"type":"staged"'))
    .map(edit);
  writeFileSync(file, `${staged.join('\n')}\n`);
  return staged;
}
