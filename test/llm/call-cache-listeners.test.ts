import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CallCache } from '../../src/llm/call-cache.js';
import { interruptSignal } from '../../src/platform/interrupt.js';
import { tempDir } from '../helpers/cli.js';

describe('process-wide listeners of many open caches and a busy run signal', () => {
  it('twelve open call caches add one unhandledRejection listener, removed when the last closes', async () => {
    // npm test runs many files in one process: a cache another file left open may already hold the
    // shared listener. What must hold either way: twelve caches add at most that one listener, and
    // closing them leaves the listeners as they were.
    const before = process.listeners('unhandledRejection');
    const dir = tempDir('plens-cache-listeners-');
    const caches = Array.from({ length: 12 }, (_, i) => CallCache.open(join(dir, `c${i}`), 'on'));
    const open = process.listeners('unhandledRejection');
    const added = open.filter((l) => !before.includes(l));
    const shared = (l: (...args: never[]) => unknown) => l.name === 'onUnhandledRejection';
    // The first of them added the shared listener, unless an open cache had already.
    expect(added).toHaveLength(before.some(shared) ? 0 : 1);
    expect(added.every(shared)).toBe(true);
    for (const c of caches.slice(0, 11)) await c.close();
    expect(process.listeners('unhandledRejection')).toEqual(open);
    await caches[11]!.close();
    expect(process.listeners('unhandledRejection')).toEqual(before);
  });

  it("the run's signal takes a listener per call in flight without Node's leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const stop = interruptSignal(() => {});
    try {
      const listeners = Array.from({ length: 64 }, () => () => {});
      for (const l of listeners) stop.signal.addEventListener('abort', l);
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
      for (const l of listeners) stop.signal.removeEventListener('abort', l);
    } finally {
      stop.dispose();
      process.off('warning', onWarning);
    }
  });
});
