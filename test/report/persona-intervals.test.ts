import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { repoRoot, runCli, tempDir } from '../helpers/cli.js';
import { chartSvg, countMarks } from './fixture.js';

// PERSONA-bench's bars with their intervals: the persona demo (sim:default on the bundled sample,
// 4 users, n = 5-6 predictions a cell for 3.1 and 3.2) made into a temporary workspace.

interface IntervalRow {
  model: string;
  task: string;
  metric: string;
  mode: string | null;
  setting: string;
  value: number;
  lo: number | null;
  hi: number | null;
  method: string | null;
  n_users: number | null;
  n_scored: number;
}

/** statsmodels' proportion_confint(x, n, method='wilson'), by hand. */
function wilson(x: number, n: number): [number, number] {
  const z = 1.959963984540054;
  const p = x / n;
  const center = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const dist = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return [Math.max(0, center - dist), Math.min(1, center + dist)];
}

describe('PERSONA-bench results with 95% intervals', () => {
  let rows: IntervalRow[];
  let html: string;

  beforeAll(async () => {
    const dir = tempDir('plens-persona-ci-');
    const env = { PLENS_PERSONA_WORKSPACE: join(dir, 'out'), PLENS_PERSONA_WAREHOUSE: join(dir, 'w.duckdb') };
    const made = await runCli(['make', 'all', '-p', join(repoRoot, 'pipelines', 'persona-demo.yaml')], { env });
    expect(made.code, made.stderr).toBe(0);
    const db = await Database.open(env.PLENS_PERSONA_WAREHOUSE, { readOnly: true });
    try {
      rows = (await db.all<IntervalRow>('SELECT * FROM persona_result_intervals')).map((r) => ({
        ...r,
        n_users: r.n_users === null ? null : Number(r.n_users),
      }));
    } finally {
      db.close();
    }
    html = readFileSync(join(env.PLENS_PERSONA_WORKSPACE, 'report.html'), 'utf8');
  });

  it('gives accuracy its Wilson interval over the scored predictions', () => {
    const accuracy = rows.filter((r) => r.metric === 'accuracy');
    expect(accuracy).toHaveLength(3);
    for (const r of accuracy) {
      expect(r.method).toBe('Wilson');
      expect(r.n_scored).toBeLessThanOrEqual(6);
      const [lo, hi] = wilson(Math.round(r.value * r.n_scored), r.n_scored);
      expect(r.lo).toBeCloseTo(lo, 12);
      expect(r.hi).toBeCloseTo(hi, 12);
    }
  });

  it('gives every other charted metric a bootstrap over users that holds the value', () => {
    const boot = rows.filter(
      (r) => ['f1', 'mcc', 'mse', 'rmse', 'mae', 'rouge1', 'rougeL', 'meteor', 'bleu'].includes(r.metric) && r.mode !== 'best-of-n-filtered',
    );
    expect(boot.length).toBeGreaterThanOrEqual(27);
    for (const r of boot) {
      expect(r.method, `${r.task} ${r.metric} ${r.setting}`).toBe('user-clustered bootstrap');
      expect(r.n_users).toBeGreaterThanOrEqual(2);
      expect(r.lo!, `${r.metric} ${r.setting}`).toBeLessThanOrEqual(r.value + 1e-9);
      expect(r.hi!, `${r.metric} ${r.setting}`).toBeGreaterThanOrEqual(r.value - 1e-9);
    }
    // RMSE's interval is the square root of MSE's, draw by draw.
    for (const rmse of rows.filter((r) => r.metric === 'rmse')) {
      const mse = rows.find((r) => r.metric === 'mse' && r.setting === rmse.setting)!;
      expect(rmse.lo).toBeCloseTo(Math.sqrt(mse.lo!), 12);
      expect(rmse.hi).toBeCloseTo(Math.sqrt(mse.hi!), 12);
    }
    // Weighted F1 has none.
    expect(rows.filter((r) => r.metric === 'f1_weighted').every((r) => r.lo === null && r.hi === null)).toBe(true);
  });

  it("opens the report with the models compared: each task's headline metric per setting, as persona_result_intervals has it", () => {
    const table = html.match(/<div class="table comparison" id="comparison-persona">[\s\S]*?<\/table>/)![0];
    expect(html.indexOf('id="comparison-persona"')).toBeLessThan(html.indexOf('<section id="summary">'));
    const heads = [...table.matchAll(/<th class="num">([^<]*)<\/th>/g)].map((m) => m[1]);
    const settings = ['P-Conv', 'P-NonConv', 'NP-Conv'];
    const headline = [
      ['3.1', 'accuracy', '3.1 Acc.'],
      ['3.2', 'rmse', '3.2 RMSE'],
      ['3.3', 'rougeL', '3.3 ROUGE-L'],
    ] as const;
    expect(heads).toEqual(['n', ...headline.flatMap(([, , label]) => settings.map((s) => `${label} ${s}`))]);
    const model = [...new Set(rows.map((r) => r.model))];
    expect(model).toHaveLength(1);
    const row = table.match(new RegExp(`<tr><th scope="row">${model[0]!.replace(/[.:]/g, '\\$&')}</th>([\\s\\S]*?)</tr>`))![1]!;
    const cells = [...row.matchAll(/<td class="num">([^<]*)(?:<span class="ci">([^<]*)<\/span>)?<\/td>/g)].map((m) => [m[1], m[2] ?? null]);
    const fixed = (v: number | null) => (v === null ? '' : v.toFixed(3));
    const expected = headline.flatMap(([task, metric]) =>
      settings.map((setting) => {
        // 3.3 in the charted mode, best-of-n (the paper's).
        const r = rows.find((x) => x.task === task && x.metric === metric && x.setting === setting && (task !== '3.3' || x.mode === 'best-of-n'))!;
        return [fixed(r.value), r.lo === null ? null : `[${fixed(r.lo)}, ${fixed(r.hi)}]`];
      }),
    );
    // n: the predictions scored over the three tasks and settings.
    const n = headline.reduce(
      (sum, [task, metric]) =>
        sum +
        rows.filter((x) => x.task === task && x.metric === metric && (task !== '3.3' || x.mode === 'best-of-n')).reduce((k, x) => k + Number(x.n_scored), 0),
      0,
    );
    expect(cells).toEqual([[String(n), null], ...expected]);
  });

  it('draws each bar of the results chart with its interval', () => {
    const svg = chartSvg(html, 'persona-results');
    const bars = countMarks(svg, 'bar');
    // accuracy, F1, MCC, RMSE, MAE and the four 3.3 scores, for three settings and one model.
    expect(bars).toBe(9 * 3);
    expect(countMarks(svg, 'rule mark')).toBe(bars);
    expect(html).toContain('accuracy a Wilson interval, the other metrics a bootstrap over users');
  });
});
