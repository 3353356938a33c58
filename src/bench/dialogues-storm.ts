import type { BenchResult } from './report.js';

/** What the storm worker reports: each request to the mock as [model, ms since start, status]. */
export interface StormResult {
  dialogues: number;
  failed: number;
  wall_ms: number;
  events: Array<[string, number, number]>;
}

/**
 * The figures of a run through a 429 storm, timed from the first request: the storm's 429s; after
 * `settleMs` (the "after the first 10 s") the 429s per 1,000 requests; and the share of each
 * model's RPM limit used by successful calls from `settleMs` to `untilMs`, while every dialogue
 * still has work (the run's tail, a few calls in retry back-off, has no demand left to measure).
 */
export function stormFigures(r: StormResult, rpm: number, stormS: number, settleMs = 10_000, untilMs = 30_000): BenchResult['figures'] {
  const storm429 = r.events.filter(([, ms, s]) => ms < stormS * 1000 && s === 429).length;
  const after = r.events.filter(([, ms]) => ms >= settleMs);
  const throttled = after.filter(([, , s]) => s === 429).length;
  const models = [...new Set(r.events.map(([m]) => m))];
  const spanMin = (untilMs - settleMs) / 60_000;
  const shares = models.map((m) => (100 * after.filter(([model, ms, s]) => model === m && ms < untilMs && s === 200).length) / (spanMin * rpm));
  return [
    { name: `429 storm (${stormS} s, rpm ${rpm}/model): 429s during the storm`, value: storm429, unit: 'requests' },
    { name: `429 storm: 429s per 1,000 requests after 10 s`, value: after.length ? (1000 * throttled) / after.length : 0, unit: '‰', bound: 50 },
    { name: `429 storm: share of the RPM limit used 10-30 s (lowest model)`, value: Math.min(...shares), unit: '%', min: 90 },
    { name: `429 storm: dialogues failed`, value: r.failed, unit: 'dialogues', bound: 0 },
  ];
}
