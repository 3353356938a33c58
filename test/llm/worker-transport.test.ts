import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { LlmCallError } from '../../src/llm/errors.js';
import { HttpWorkerHost, profilingFlags } from '../../src/llm/http-worker-host.js';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';
import { WorkerTransport } from '../../src/llm/worker-transport.js';
import { repoRoot } from '../helpers/cli.js';

const TIMEOUTS = { connectMs: 2000, headersMs: 30_000, bodyMs: 30_000, deadlineMs: 30_000 };
const body = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello there.' }], max_tokens: 16 });
const signal = () => new AbortController().signal;

let server: MockLlmServer | undefined;
const transports: WorkerTransport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  await server?.close();
  server = undefined;
});

async function setup(connections = 4) {
  server = await startMockLlm({
    fault: (r) => (r.model === 'hang' ? { kind: 'hang' } : r.model === 'busy' ? { kind: 'status', status: 429, retryAfterSeconds: 7 } : undefined),
  });
  const transport = new WorkerTransport(TIMEOUTS, connections);
  transports.push(transport);
  return { transport, url: `${server.url}/v1/chat/completions` };
}

describe('HTTP worker transport', () => {
  it('returns the status, Retry-After and body text from the worker thread', async () => {
    const { transport, url } = await setup();
    const ok = await transport.post(url, { authorization: 'Bearer sk-x' }, body('m'), signal());
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).choices[0].message.content.length).toBeGreaterThan(0);
    const busy = await transport.post(url, {}, body('busy'), signal());
    expect(busy).toMatchObject({ status: 429, retryAfter: '7' });
    expect(server!.requests[0]!.headers['authorization']).toBe('Bearer sk-x');
  });

  it('answers that come back together (one message from the thread) each reach their own call', async () => {
    const { transport, url } = await setup(32);
    const models = Array.from({ length: 32 }, (_, i) => (i % 3 === 0 ? 'busy' : `m${i}`));
    const replies = await Promise.all(models.map((m) => transport.post(url, {}, body(m), signal())));
    expect(replies.map((r) => r.status)).toEqual(models.map((m) => (m === 'busy' ? 429 : 200)));
    expect(replies.filter((r) => r.status === 429).every((r) => r.retryAfter === '7')).toBe(true);
  });

  it('an aborted call fails as aborted and its request is dropped on the thread, freeing the connection', async () => {
    // One connection: if the thread kept waiting on the hung request, the next call could never go out.
    const { transport, url } = await setup(1);
    const controller = new AbortController();
    const hung = transport.post(url, {}, body('hang'), controller.signal);
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    await expect(hung).rejects.toMatchObject({ kind: 'aborted', retryable: false });
    // Well inside the 30 s call deadline that would otherwise free the connection.
    const next = await transport.post(url, {}, body('m'), AbortSignal.timeout(5000));
    expect(next.status).toBe(200);
  });

  it('a dead thread fails the calls waiting on it as retryable network errors, and the next call starts a new one', async () => {
    const { transport, url } = await setup();
    const hung = transport.post(url, {}, body('hang'), signal());
    await new Promise((r) => setTimeout(r, 200));
    const worker = (HttpWorkerHost.shared() as unknown as { worker: Worker }).worker;
    await worker.terminate();
    const error = await hung.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect((error as Error).message).toMatch(/HTTP worker thread exited/);
    const next = await transport.post(url, {}, body('m'), signal());
    expect(next.status).toBe(200);
  });

  it('a closed transport refuses to send', async () => {
    const { transport, url } = await setup();
    await transport.close();
    await expect(transport.post(url, {}, body('m'), signal())).rejects.toMatchObject({ kind: 'config' });
  });
});

describe('profilingFlags', () => {
  it("keeps a CPU profile's flags, with a value given apart, and nothing else", () => {
    expect(profilingFlags(['--input-type=module', '--cpu-prof', '--cpu-prof-dir=/p', '--cpu-prof-name', 'x.cpuprofile', '--max-old-space-size=128'])).toEqual([
      '--cpu-prof',
      '--cpu-prof-dir=/p',
      '--cpu-prof-name',
      'x.cpuprofile',
    ]);
    expect(profilingFlags(['--expose-gc', '--input-type=module'])).toEqual([]);
  });
});

describe('HTTP worker thread and the process', () => {
  const run = promisify(execFile);
  // A child process (the built module, as the CLI runs it): the thread must neither keep it
  // alive when idle nor let it end while a close still waits (exit code 13).
  const script = (url: string, closeThem: boolean) => `
    const { WorkerTransport } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist/llm/worker-transport.js')).href)});
    const timeouts = ${JSON.stringify(TIMEOUTS)};
    const a = new WorkerTransport(timeouts, 2), b = new WorkerTransport(timeouts, 2);
    const post = (t) => t.post(${JSON.stringify(url)}, {}, ${JSON.stringify(body('m'))}, new AbortController().signal);
    const [ra, rb] = await Promise.all([post(a), post(b)]);
    ${closeThem ? 'await Promise.all([a.close(), b.close()]);' : ''}
    process.stdout.write('done ' + ra.status + ' ' + rb.status);
  `;
  // A fresh process: no thread until the first transport opens one, and it comes up before any request.
  const started = (url: string) => `
    const dist = (m) => import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist/llm')).href)} + '/' + m);
    const { WorkerTransport } = await dist('worker-transport.js');
    const { HttpWorkerHost } = await dist('http-worker-host.js');
    const transport = new WorkerTransport(${JSON.stringify(TIMEOUTS)}, 2);
    const worker = HttpWorkerHost.shared().worker;
    await new Promise((resolve) => worker.once('online', resolve));
    const reply = await transport.post(${JSON.stringify(url)}, {}, ${JSON.stringify(body('m'))}, new AbortController().signal);
    await transport.close();
    process.stdout.write('online ' + reply.status);
  `;
  // A transport opened and never used (a dry run, an all-cached run): its thread must not hold the process.
  const unused = `
    const { WorkerTransport } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist/llm/worker-transport.js')).href)});
    new WorkerTransport(${JSON.stringify(TIMEOUTS)}, 2);
    process.stdout.write('opened');
  `;

  it('starts the thread when the first pool opens, before any request, and serves that pool on it', async () => {
    server = await startMockLlm();
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', started(`${server.url}/v1/chat/completions`)], { timeout: 30_000 });
    expect(stdout).toBe('online 200');
  });

  it('a CPU-profiled process profiles the thread too (the bench breakdown counts its CPU), with no other flag of its own', async () => {
    server = await startMockLlm();
    const dir = await mkdtemp(join(tmpdir(), 'plens-worker-prof-'));
    try {
      const { stdout } = await run(
        process.execPath,
        ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--input-type=module', '-e', started(`${server.url}/v1/chat/completions`)],
        {
          timeout: 30_000,
        },
      );
      expect(stdout).toBe('online 200');
      // One profile for the main thread, one for the HTTP thread.
      expect((await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'))).toHaveLength(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits when a transport was opened and never used', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', unused], { timeout: 30_000 });
    expect(stdout).toBe('opened');
  });

  it.each([
    ['closes two transports together and exits', true],
    ['exits once idle even if a transport is never closed', false],
  ])('%s', async (_name, closeThem) => {
    server = await startMockLlm({ latencyMs: 50 });
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script(`${server.url}/v1/chat/completions`, closeThem)], { timeout: 30_000 });
    expect(stdout).toBe('done 200 200');
  });
});
