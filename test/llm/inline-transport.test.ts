import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher, InlineTransport } from '../../src/llm/inline-transport.js';

/**
 * The inline transport drives undici's dispatch interface itself instead of `request()`. These
 * tests hold it to what `request()` + `body.text()` give on the same answers, over real sockets,
 * and check that a call that gives up while waiting for a connection is never sent.
 */

const TIMEOUTS = { connectMs: 2000, headersMs: 10_000, bodyMs: 10_000, deadlineMs: 10_000 };
const BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Hello.' }] });

let server: Server | undefined;
const transports: InlineTransport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A server whose answer is chosen by the request path; it records every request it receives. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ base: string; seen: string[] }> {
  const seen: string[] = [];
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What undici's request() reads from the same URL: the reference the transport must match. */
async function viaRequest(url: string): Promise<unknown> {
  const dispatcher = createDispatcher(TIMEOUTS, 1);
  try {
    const response = await request(url, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: BODY });
    const retryAfter = response.headers['retry-after'];
    return { status: response.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, text: await response.body.text() };
  } catch {
    return 'failed';
  } finally {
    await dispatcher.close();
  }
}

async function viaTransport(url: string): Promise<unknown> {
  const transport = new InlineTransport(TIMEOUTS, 1);
  transports.push(transport);
  return transport.post(url, {}, BODY, new AbortController().signal).catch(() => 'failed');
}

describe('inline transport', () => {
  it('reads every kind of answer exactly as undici request() does', async () => {
    const { base, seen } = await serve((req, res) => {
      const path = req.url ?? '';
      if (path.startsWith('/plain')) res.end('{"ok":true}');
      else if (path === '/bom') res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"é"}')]));
      else if (path === '/split') {
        // A two-byte and a four-byte character, each cut across two writes.
        const bytes = Buffer.from('{"text":"café 🍰 ok"}');
        const cut1 = bytes.indexOf(0xc3) + 1;
        const cut2 = bytes.indexOf(0xf0) + 2;
        res.write(bytes.subarray(0, cut1));
        setTimeout(() => {
          res.write(bytes.subarray(cut1, cut2));
          setTimeout(() => res.end(bytes.subarray(cut2)), 20);
        }, 20);
      } else if (path === '/hints') {
        res.writeEarlyHints({ link: '</style.css>; rel=preload' });
        res.end('{"after":"hints"}');
      } else if (path === '/busy') {
        res.writeHead(429, [
          ['retry-after', '7'],
          ['retry-after', '9'],
        ]);
        res.end('slow down');
      } else if (path === '/empty') {
        res.writeHead(500);
        res.end();
      } else if (path === '/cut') {
        res.writeHead(200, { 'content-length': '100' });
        res.write('{"partial":');
        setTimeout(() => res.destroy(), 20);
      }
    });
    const paths = ['/plain?api-version=2024-10-21', '/bom', '/split', '/hints', '/busy', '/empty', '/cut'];
    for (const path of paths) {
      const expected = await viaRequest(`${base}${path}`);
      expect(await viaTransport(`${base}${path}`), path).toEqual(expected);
    }
    expect(await viaTransport(`${base}/busy`)).toEqual({ status: 429, retryAfter: '7', text: 'slow down' });
    expect(await viaTransport(`${base}/split`)).toMatchObject({ text: '{"text":"café 🍰 ok"}' });
    // The query string travels with the path, as request() sends it.
    expect(seen.filter((p) => p.startsWith('/plain'))).toEqual(['/plain?api-version=2024-10-21', '/plain?api-version=2024-10-21']);
  });

  it('a call past its deadline fails as a retryable timeout and gives its connection back', async () => {
    const { base, seen } = await serve((req, res) => {
      if (req.url === '/hang') return; // holds the only connection
      res.end('{"ok":true}');
    });
    const transport = new InlineTransport({ ...TIMEOUTS, deadlineMs: 300 }, 1);
    transports.push(transport);
    const t0 = performance.now();
    await expect(transport.post(`${base}/hang`, {}, BODY, new AbortController().signal)).rejects.toMatchObject({ kind: 'timeout', retryable: true });
    expect(performance.now() - t0).toBeLessThan(2000);
    const after = await transport.post(`${base}/after`, {}, BODY, new AbortController().signal);
    expect(after.status).toBe(200);
    expect(seen).toEqual(['/hang', '/after']);
  });

  it('a call aborted by the caller while it waits for a connection fails at once as aborted and is never sent', async () => {
    const { base, seen } = await serve((req, res) => {
      if (req.url === '/hang') return;
      res.end('{"ok":true}');
    });
    const transport = new InlineTransport(TIMEOUTS, 1);
    transports.push(transport);
    const first = new AbortController();
    const hung = transport.post(`${base}/hang`, {}, BODY, first.signal).catch((e: unknown) => e);
    await sleep(50);
    const caller = new AbortController();
    const queued = transport.post(`${base}/queued`, {}, BODY, caller.signal).catch((e: unknown) => e);
    await sleep(50);
    caller.abort();
    expect(await queued).toMatchObject({ kind: 'aborted', retryable: false });
    first.abort();
    expect(await hung).toMatchObject({ kind: 'aborted' });
    const after = await transport.post(`${base}/after`, {}, BODY, new AbortController().signal);
    expect(after.status).toBe(200);
    expect(seen).toEqual(['/hang', '/after']);
  });

  it("calls on a run's one signal share one abort listener, and its abort fails every call in flight", async () => {
    const { base } = await serve((req, res) => {
      if (req.url === '/hang') return;
      res.end('{"ok":true}');
    });
    const transport = new InlineTransport(TIMEOUTS, 8);
    transports.push(transport);
    const run = new AbortController();
    for (let i = 0; i < 5; i++) expect((await transport.post(`${base}/ok`, {}, BODY, run.signal)).status).toBe(200);
    const hung = Array.from({ length: 8 }, () => transport.post(`${base}/hang`, {}, BODY, run.signal).catch((e: unknown) => e));
    await sleep(50);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    run.abort();
    for (const outcome of await Promise.all(hung)) expect(outcome).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it('an already aborted signal sends nothing', async () => {
    const { base, seen } = await serve((_req, res) => res.end('{}'));
    const transport = new InlineTransport(TIMEOUTS, 1);
    transports.push(transport);
    const controller = new AbortController();
    controller.abort();
    await expect(transport.post(`${base}/x`, {}, BODY, controller.signal)).rejects.toMatchObject({ kind: 'aborted' });
    await sleep(50);
    expect(seen).toEqual([]);
  });

  it('a URL that is not http(s) fails as a network error, as request() refuses it', async () => {
    const transport = new InlineTransport(TIMEOUTS, 1);
    transports.push(transport);
    await expect(transport.post('ftp://127.0.0.1/x', {}, BODY, new AbortController().signal)).rejects.toMatchObject({ kind: 'network', retryable: true });
  });
});
