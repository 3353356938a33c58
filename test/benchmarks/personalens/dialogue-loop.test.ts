import { afterEach, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { startMockLlm, type MockLlmServer, type MockRequest } from '../../../src/testkit/mock-server.js';
import { runCliJson } from '../../helpers/cli.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const isUser = (r: MockRequest) => r.system.includes('TERMINATE');
const assistantTurns = (r: MockRequest) => (r.messages[0]!.content.match(/^\[ASSISTANT\]: /gm) ?? []).length;

async function run(kind: 'sd' | 'md', reply: (r: MockRequest) => string, assistant = 'llama-mock') {
  server = await startMockLlm({ reply, keepRequests: true });
  const ws = await sampleWorkspace(['--users', '0', '--kind', kind, '--random', '1']);
  const base = `base_url=${server.url}/v1`;
  const r = await runCliJson(
    ['dialogues', '-w', ws, '--assistant', `openai:${assistant}?${base}`, '--user', `openai:user-mock?${base}`, '--setting', 'base'],
    {},
  );
  expect(r.code, r.stderr).toBe(0);
  const db = await Database.open(':memory:');
  try {
    const [row] = await db.all<{ end_reason: string; rounds: number; messages: Array<{ role: string; content: string }> }>(
      `SELECT end_reason, rounds, messages FROM read_parquet('${ws}/dialogues/*/dialogues.parquet')`,
    );
    return { row: row!, requests: server.requests };
  } finally {
    db.close();
  }
}

describe('the dialogue loop, as the original runs it', () => {
  it('SD: 20 rounds end on the user message, 41 messages, no final assistant call', async () => {
    const { row, requests } = await run('sd', (r) => (isUser(r) ? `  user line ${assistantTurns(r)}` : `assistant line`));
    expect(row.end_reason).toBe('round_limit');
    expect(row.messages).toHaveLength(41);
    expect(row.messages.at(-1)!.role).toBe('user');
    expect(row.messages.filter((m) => m.role === 'assistant')).toHaveLength(20);
    expect(requests).toHaveLength(41);
    // A non-Claude model's reply loses its leading whitespace (the original's Llama/Mistral handling).
    expect(row.messages[2]!.content).toBe('user line 1');
  });

  it('MD: 30 rounds, 61 messages', async () => {
    const { row } = await run('md', (r) => (isUser(r) ? `user line ${assistantTurns(r)}` : 'assistant line'));
    expect(row.end_reason).toBe('round_limit');
    expect(row.messages).toHaveLength(61);
    expect(row.messages.at(-1)!.role).toBe('user');
  });

  it('a TERMINATE-only reply is kept as an empty user message, then the final answer; the opening is never checked', async () => {
    const { row, requests } = await run(
      'sd',
      (r) => (isUser(r) ? (assistantTurns(r) === 0 ? 'Hi TERMINATE there' : assistantTurns(r) === 2 ? 'TERMINATE' : 'more please') : ' assistant line'),
      'claude-mock',
    );
    expect(row.end_reason).toBe('terminated');
    expect(row.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hi TERMINATE there'],
      // Claude replies are stored as returned.
      ['assistant', ' assistant line'],
      ['user', 'more please'],
      ['assistant', ' assistant line'],
      ['user', ''],
      ['assistant', ' assistant line'],
    ]);
    // The final assistant call sees the empty user turn as "User: " (trailing space).
    expect(requests.at(-1)!.messages[0]!.content).toContain('\nUser: \n');
  });
});
