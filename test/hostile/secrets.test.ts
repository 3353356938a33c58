import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database, sqlString } from '../../src/db/database.js';
import { defaultReply, startMockLlm, type MockLlmServer, type MockRequest } from '../../src/testkit/mock-server.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { filesUnder, sampleWorkspace } from '../helpers/workspace.js';

// Two keys no pattern would recognise as keys: only the redactor's knowledge of the values can cut them.
const USER_KEY = 'plain-openai-value-7f3a9c';
const GATEWAY_KEY = 'gw_q8ZrT2mVx4LpN6sD';
const KEYS = [USER_KEY, GATEWAY_KEY];
const TERMINATE = /TERMINATE/;
const ENV = { OPENAI_API_KEY: USER_KEY, MY_GATEWAY: GATEWAY_KEY };

/** What the server got in its credential headers, echoed back. */
const echoed = (r: MockRequest) => `authorization=${String(r.headers['authorization'])} x-api-key=${String(r.headers['x-api-key'])}`;

/**
 * A hostile endpoint: error bodies echo the request's credentials, some calls always fail with
 * such a body, the assistant's answers quote the key, and the judge's unreadable replies (kept raw
 * as parse errors) quote it too.
 */
describe('secrets never leave the process (echo server)', () => {
  let server: MockLlmServer;
  let root: string;
  let ws: string;
  let db: string;
  const outputs: CliResult[] = [];

  beforeAll(async () => {
    let n = 0;
    server = await startMockLlm({
      requireAuth: true,
      reply: (r) => {
        const prompt = r.messages.map((m) => m.content).join('\n');
        if (/VERDICT/.test(prompt)) return `VERDICT: True\nEXPLANATION: fine (${echoed(r)})`;
        if (/Personalization Score/.test(prompt)) return `I cannot say. ${echoed(r)}`;
        const base = defaultReply(r);
        return TERMINATE.test(r.system) ? base : `${base} (${echoed(r)})`;
      },
      // One call in five fails for good with a 400 that echoes the credentials; one in seven with a 500, once.
      fault: (r) => {
        n++;
        if (n % 5 === 0) return { kind: 'status', status: 400, body: JSON.stringify({ error: { message: `rejected: ${echoed(r)}` } }) };
        if (n % 7 === 0 && r.attempt === 0) return { kind: 'status', status: 500, body: `upstream said ${echoed(r)}` };
        return undefined;
      },
    });
    ws = await sampleWorkspace(['--users', '0']);
    root = join(ws, '..');
    db = join(root, 'w.duckdb');
    const endpoint = `base_url=${server.url}/v1`;
    const run = async (args: string[]) => {
      const r = await runCli(args, { env: ENV });
      outputs.push(r);
      return r;
    };
    const common = ['--retry-delay-ms', '1', '--retries', '1', '--no-progress'];
    const d = await run([
      'dialogues',
      '-w',
      ws,
      '--assistant',
      `openai:gw-model?${endpoint}&key_env=MY_GATEWAY`,
      '--user',
      `openai:user-model?${endpoint}`,
      ...common,
    ]);
    expect(d.code, d.stderr).toBe(0);
    // Failures print their reasons; the run also goes through --json output.
    await run([
      'dialogues',
      '-w',
      ws,
      '--assistant',
      `openai:gw-model?${endpoint}&key_env=MY_GATEWAY`,
      '--user',
      `openai:user-model?${endpoint}`,
      '--retry-failed',
      '--json',
      ...common,
    ]);
    const j = await run([
      'judge',
      '-w',
      ws,
      '--judge',
      `openai:judge?${endpoint}&key_env=MY_GATEWAY`,
      '--dimensions',
      'task_completion',
      'personalization',
      ...common,
    ]);
    expect(j.code, j.stderr).toBe(0);
    await run([
      'judge',
      '-w',
      ws,
      '--judge',
      `openai:judge?${endpoint}&key_env=MY_GATEWAY`,
      '--dimensions',
      'task_completion',
      'personalization',
      '--retry-failed',
      '--reask',
      '--json',
      ...common,
    ]);
    const w = await run(['warehouse', '-w', ws, '--db', db, '--lexical', 'none']);
    expect(w.code, w.stderr).toBe(0);
    await run(['report', '-w', ws, '--db', db, '--out', join(root, 'report.html')]);
    for (const q of ['select * from dialogues', 'select * from judgments', "select error, raw from judgments where status <> 'ok'"]) {
      await run(['sql', q, '--db', db, '--format', 'json']);
      await run(['sql', q, '--db', db]);
    }
    // A query that spells out the value of a key variable (OPENAI_API_KEY) is still redacted on the terminal.
    await run(['sql', `select ${sqlString(USER_KEY)} AS k`, '--db', db]);
  }, 240_000);

  afterAll(async () => {
    await server?.close();
  });

  it('the hostile server really echoed the keys (the test can fail)', () => {
    const echoedKeys =
      server.requests.some((r) => String(r.headers['authorization']).includes(USER_KEY)) &&
      server.requests.some((r) => String(r.headers['authorization']).includes(GATEWAY_KEY));
    expect(echoedKeys).toBe(true);
  });

  it('failures from echoing error bodies were recorded (redacted), and answers quoting the key kept their text', async () => {
    const d = await Database.open(db, { readOnly: true });
    try {
      const failed = await d.all<{ n: number }>(`select count(*)::INTEGER AS n from dialogues where status = 'failed' and error.message like '%REDACTED%'`);
      expect(failed[0]!.n).toBeGreaterThan(0);
      const quoted = await d.all<{ n: number }>(
        `select count(*)::INTEGER AS n from dialogues, unnest(messages) AS m(msg) where msg.content like '%authorization=Bearer [REDACTED]%'`,
      );
      expect(quoted[0]!.n).toBeGreaterThan(0);
    } finally {
      d.close();
    }
  });

  it('no key in the terminal output of any command', () => {
    expect(outputs.length).toBeGreaterThan(8);
    for (const r of outputs) for (const key of KEYS) expect(r.stdout + r.stderr).not.toContain(key);
    expect(outputs.at(-1)!.stdout).toContain('[REDACTED]');
  });

  it('no key in any file: logs, Parquet, the call cache, the warehouse, the report', async () => {
    const files = [...filesUnder(ws), db, join(root, 'report.html')];
    expect(files.some((f) => f.endsWith('.parquet'))).toBe(true);
    const probe = await Database.open(':memory:');
    try {
      for (const file of files) {
        // Bytes first: compressed formats are read back through their own readers below.
        for (const key of KEYS) expect(readFileSync(file).includes(Buffer.from(key)), file).toBe(false);
        if (file.endsWith('.parquet')) {
          const rows = await probe.all(`select * from read_parquet(${sqlString(file)})`);
          for (const key of KEYS) expect(JSON.stringify(rows), file).not.toContain(key);
        }
      }
      await probe.run(`ATTACH ${sqlString(db)} AS w (READ_ONLY)`);
      const tables = await probe.all<{ name: string }>(`select table_name AS name from information_schema.tables where table_catalog = 'w'`);
      expect(tables.length).toBeGreaterThan(5);
      for (const { name } of tables) {
        const rows = await probe.all(`select * from w."${name}"`);
        for (const key of KEYS) expect(JSON.stringify(rows), name).not.toContain(key);
      }
    } finally {
      probe.close();
    }
    const cache = open<unknown, string>({ path: join(ws, 'cache', 'llm'), compression: true, readOnly: true });
    let entries = 0;
    for (const { value } of cache.getRange()) {
      entries++;
      for (const key of KEYS) expect(JSON.stringify(value)).not.toContain(key);
    }
    await cache.close();
    expect(entries).toBeGreaterThan(0);
  });
});
