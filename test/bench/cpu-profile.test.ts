import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { breakdownOf, profileFigures, threadOf } from '../../src/bench/cpu-profile.js';

/** The bench's CPU breakdown: each sample's self time goes to the first category its frame matches. */
describe('breakdownOf', () => {
  it('sums self time per category from the samples and their time deltas', () => {
    const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url } });
    const profile = {
      nodes: [
        frame(1, '(idle)', ''),
        frame(2, 'getBinaryFast', 'file:///app/node_modules/lmdb/read.js'),
        frame(3, 'hashParts', 'file:///app/dist/engine/llm-stage.js'),
        frame(4, 'redact', 'file:///app/dist/core/redact.js'),
        frame(5, '(garbage collector)', ''),
        frame(6, 'append', 'file:///app/dist/engine/jsonl-log.js'),
        frame(7, 'something', 'file:///app/dist/report/report.js'),
      ],
      // Microseconds between samples: the delta at i is the time up to sample i.
      samples: [1, 2, 2, 3, 4, 5, 6, 7],
      timeDeltas: [1000, 500, 500, 2000, 300, 700, 400, 100],
    };
    const ms = Object.fromEntries(breakdownOf(profile).map((c) => [c.category, c.ms]));
    expect(ms['idle (waiting on the network)']).toBe(1);
    expect(ms['call cache (LMDB, msgpack)']).toBe(1);
    expect(ms['hashing (keys)']).toBe(2);
    expect(ms['redaction']).toBe(0.3);
    expect(ms['garbage collection']).toBe(0.7);
    expect(ms['records, logs and events (JSONL, checks)']).toBe(0.4);
    expect(ms['other']).toBe(0.1);
    expect(Object.values(ms).reduce((a, b) => a + b, 0)).toBeCloseTo(5.5, 9);
  });
});

describe('profileFigures', () => {
  const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url } });
  // Two samples a profile: idle, then 3 ms (main) or 5 ms (HTTP thread) in a category.
  const profile = (fn: string, url: string, ms: number) => ({
    nodes: [frame(1, '(idle)', ''), frame(2, fn, url)],
    samples: [1, 2],
    timeDeltas: [7000, ms * 1000],
  });

  it("adds every thread's profile per category, and gives the main thread's and the worker threads' totals apart", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plens-cpu-profile-'));
    try {
      // Named as `node --cpu-prof` names them: the main thread is thread 0.
      await writeFile(join(dir, 'CPU.20261128.142648.3501.0.001.cpuprofile'), JSON.stringify(profile('redact', 'file:///app/dist/core/redact.js', 3)));
      await writeFile(
        join(dir, 'CPU.20261128.142648.3501.1.002.cpuprofile'),
        JSON.stringify(profile('onResponseData', 'file:///app/node_modules/undici/lib/x.js', 5)),
      );
      const figures = Object.fromEntries(profileFigures(dir, 1000, 'p').map((f) => [f.name, f.value]));
      expect(figures['p: redaction']).toBe(3);
      expect(figures['p: HTTP client (undici, request and response)']).toBe(5);
      expect(figures['p, main thread: all of the above']).toBe(3);
      expect(figures['p, worker threads (HTTP): all of the above']).toBe(5);
      expect(Object.keys(figures).some((name) => name.includes('idle'))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads the thread from the profile file name', () => {
    expect(threadOf('CPU.20261128.142648.3501.0.001.cpuprofile')).toBe(0);
    expect(threadOf('CPU.20261128.142648.3501.12.013.cpuprofile')).toBe(12);
  });
});
