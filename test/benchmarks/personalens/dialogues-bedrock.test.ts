import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../helpers/cli.js';
import { isolatedAwsEnv, startMockBedrock, type MockBedrockServer } from '../../helpers/mock-bedrock.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

/*
 * `plens dialogues` and `plens judge` with Bedrock models named as the original names them,
 * end to end through the CLI against a mock Converse endpoint that checks every signature.
 */
const CREDS = { accessKeyId: 'AKIAPLENSCLITEST0001', secretAccessKey: 'plensCliSecret/abcdefghijklmnopqrstuvwxyz0123' };
// Nothing from the machine: no profile, no instance metadata (not 127.0.0.1).
const BASE_ENV = isolatedAwsEnv();

let server: MockBedrockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('plens dialogues with bedrock models', () => {
  it('--dry-run prices the original short names with no credentials', async () => {
    const ws = await sampleWorkspace();
    const r = await runCliInProcess(
      [
        'dialogues',
        '-w',
        ws,
        '--assistant',
        'bedrock:llama-3-1-70b-instruct-v1',
        '--user',
        'bedrock:claude-3-sonnet-v1',
        '--setting',
        'base',
        '--dry-run',
        '--json',
      ],
      {
        env: { ...BASE_ENV, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_REGION: '' },
      },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as { planned: number; estimate: { costUsd: number }; price_unknown: string[] };
    expect(json.planned).toBe(49);
    expect(json.estimate.costUsd).toBeGreaterThan(0);
    expect(json.price_unknown).toEqual([]);
  });

  it('runs dialogues against a signed mock Converse endpoint, and keeps the secret out of every output', async () => {
    server = await startMockBedrock({
      credentials: CREDS,
      reply: (r) => (r.body.system?.[0]?.text.includes('TERMINATE') ? 'Thanks, that is all. TERMINATE' : ' Here is a suggestion for you.'),
    });
    const ws = await sampleWorkspace();
    const spec = (m: string) => `bedrock:${m}?base_url=${server!.url}`;
    const env = { ...BASE_ENV, AWS_ACCESS_KEY_ID: CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey, AWS_REGION: 'us-west-2' };
    const r = await runCliInProcess(
      [
        'dialogues',
        '-w',
        ws,
        '--assistant',
        spec('mistral-7b-instruct-v2'),
        '--user',
        spec('claude-3-sonnet-v1'),
        '--setting',
        'base',
        '--limit',
        '2',
        '--no-progress',
        '--json',
      ],
      { env },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(server.requests.length).toBeGreaterThanOrEqual(4);
    expect(server.requests.every((q) => q.signatureValid && q.authorization?.region === 'us-west-2')).toBe(true);
    expect(new Set(server.requests.map((q) => q.modelId))).toEqual(new Set(['mistral.mistral-7b-instruct-v0:2', 'anthropic.claude-3-sonnet-20240229-v1:0']));
    // Mistral 7B takes no system prompt through Converse (Bedrock refuses it; the mock too): its
    // requests are the original's completion prompt through InvokeModel, the user agent's Converse.
    const mistral = server.requests.filter((q) => q.modelId.startsWith('mistral.'));
    expect(mistral.length).toBeGreaterThanOrEqual(2);
    for (const q of mistral) {
      expect(q.operation).toBe('invoke');
      expect(q.invoke).toMatchObject({ prompt: expect.stringMatching(/^<s>\[INST\][\s\S]*\[\/INST\]$/), max_tokens: 800, temperature: 0 });
    }
    expect(server.requests.filter((q) => q.modelId.startsWith('anthropic.')).every((q) => q.operation === 'converse')).toBe(true);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(JSON.stringify(summary)).not.toContain(CREDS.secretAccessKey);
    expect(r.stderr).not.toContain(CREDS.secretAccessKey);
    // Every file the run wrote (logs, Parquet, the call cache), as bytes.
    const files = readdirSync(ws, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
    let records = '';
    for (const f of files) {
      const bytes = readFileSync(join(f.parentPath, f.name));
      expect(bytes.includes(CREDS.secretAccessKey), f.name).toBe(false);
      if (f.name.endsWith('.jsonl') && f.parentPath.includes('dialogues')) records += bytes.toString('utf8');
    }
    expect(records).toContain('bedrock:mistral-7b-instruct-v2');
    // Stored as the original stores a Mistral reply: without its leading whitespace.
    expect(records).toContain('"content":"Here is a suggestion for you."');
  });
});
