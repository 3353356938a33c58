import { describe, expect, it } from 'vitest';
import { breakdownOf } from '../../src/bench/cpu-profile.js';

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
