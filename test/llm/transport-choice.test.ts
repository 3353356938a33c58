import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS, type HttpTransport } from '../../src/llm/http-transport.js';
import { InlineTransport } from '../../src/llm/inline-transport.js';
import { INLINE_MAX_CONNECTIONS, openTransport } from '../../src/llm/transport-choice.js';
import { WorkerTransport } from '../../src/llm/worker-transport.js';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';

const open: HttpTransport[] = [];
const auto = (connections: number) => {
  const t = openTransport('auto', DEFAULT_TIMEOUTS, connections);
  open.push(t);
  return t;
};
let server: MockLlmServer | undefined;
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
  await server?.close();
  server = undefined;
});

describe('the auto transport', () => {
  it('runs pools inline up to INLINE_MAX_CONNECTIONS in the process, then on the worker thread; a closed pool frees its share', async () => {
    const half = INLINE_MAX_CONNECTIONS / 2;
    const a = auto(half);
    const b = auto(half);
    const c = auto(1);
    expect(a).toBeInstanceOf(InlineTransport);
    expect(b).toBeInstanceOf(InlineTransport);
    expect(c).toBeInstanceOf(WorkerTransport);
    // One pool larger than the whole allowance never runs inline.
    expect(auto(INLINE_MAX_CONNECTIONS + 1)).toBeInstanceOf(WorkerTransport);
    await a.close();
    // Closing twice frees its share once.
    await a.close();
    expect(auto(half)).toBeInstanceOf(InlineTransport);
    expect(auto(1)).toBeInstanceOf(WorkerTransport);
  });

  it('honours an explicit kind whatever the allowance', async () => {
    const t = openTransport('worker', DEFAULT_TIMEOUTS, 1);
    const u = openTransport('inline', DEFAULT_TIMEOUTS, INLINE_MAX_CONNECTIONS * 4);
    open.push(t, u);
    expect(t).toBeInstanceOf(WorkerTransport);
    expect(u).toBeInstanceOf(InlineTransport);
    // An explicit inline pool takes no share of auto's allowance.
    expect(auto(INLINE_MAX_CONNECTIONS)).toBeInstanceOf(InlineTransport);
  });

  it('an inline pool chosen by auto sends and answers as the worker thread does', async () => {
    server = await startMockLlm({});
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    const url = `${server.url}/v1/chat/completions`;
    const inline = auto(2);
    const worker = openTransport('worker', DEFAULT_TIMEOUTS, 2);
    open.push(worker);
    expect(inline).toBeInstanceOf(InlineTransport);
    const [a, b] = await Promise.all([inline, worker].map((t) => t.post(url, {}, body, new AbortController().signal)));
    expect(a!.status).toBe(200);
    expect({ ...a, text: JSON.parse(a!.text).object }).toEqual({ ...b, text: JSON.parse(b!.text).object });
  });
});
