import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { personaComparison } from '../../../src/benchmarks/personabench/comparison.js';
import { checkComparisonAlone } from '../../report/fixture.js';

type Row = Record<string, unknown>;

const MODELS = [
  'bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0',
  'openai:gpt-4o-mini-2024-07-18',
  'openai:gpt-4o',
  'anthropic:claude-3-haiku-20240307',
  'openai:llama-3.1-8b-instruct',
];
const SETTINGS = ['NP-Conv', 'P-Conv', 'P-NonConv'];

/** persona_result_intervals' rows for five models: one of them (the second) has 3.1 read with two parsers. */
function intervalRows(): Row[] {
  const rows: Row[] = [];
  const add = (model: string, setting: string, task: string, metric: string, parser: string | null, mode: string | null, value: number, n: number) =>
    rows.push({ task, metric, mode, setting, model, fidelity: 'original', parser, value, lo: value - 0.1, hi: value + 0.1, n_scored: BigInt(n) });
  MODELS.forEach((model, i) => {
    for (const [j, setting] of SETTINGS.entries()) {
      const v = 0.5 + i / 20 + j / 100;
      for (const metric of ['accuracy', 'f1', 'mcc']) add(model, setting, '3.1', metric, 'strict', null, v, 10);
      if (i === 1) for (const metric of ['accuracy', 'f1', 'mcc']) add(model, setting, '3.1', metric, 'lenient', null, v + 0.2, 12);
      for (const metric of ['mse', 'rmse', 'mae']) add(model, setting, '3.2', metric, 'float-then-last-number', null, 1 + v, 20);
      for (const metric of ['rouge1', 'rougeL']) {
        add(model, setting, '3.3', metric, null, 'best-of-n', v / 2, 30);
        add(model, setting, '3.3', metric, null, 'single-sample', v / 3, 30);
      }
    }
  });
  return rows;
}

describe("PERSONA-bench's models compared", () => {
  it("gives a row per model and, for each task's headline metric, a column per setting in the benchmark's order", async () => {
    const table = (await personaComparison([], async (sql) => (sql.includes('persona_result_intervals') ? intervalRows() : [])))!;
    expect(table.measures.map((m) => m.label)).toEqual([
      '3.1 Acc. P-Conv',
      '3.1 Acc. P-NonConv',
      '3.1 Acc. NP-Conv',
      '3.2 RMSE P-Conv',
      '3.2 RMSE P-NonConv',
      '3.2 RMSE NP-Conv',
      '3.3 ROUGE-L P-Conv',
      '3.3 ROUGE-L P-NonConv',
      '3.3 ROUGE-L NP-Conv',
    ]);
    expect(table.blocks).toHaveLength(1);
    const rows = table.blocks[0]!.rows;
    // Five models; the one read with two 3.1 parsers has a row per parser, its other tasks on its main row.
    expect(rows.map((r) => r.label)).toEqual([
      'anthropic:claude-3-haiku-20240307',
      'bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0',
      'openai:gpt-4o',
      'openai:gpt-4o-mini-2024-07-18',
      'openai:gpt-4o-mini-2024-07-18 (3.1 parser lenient)',
      'openai:gpt-4o-mini-2024-07-18 (3.1 parser strict)',
      'openai:llama-3.1-8b-instruct',
    ]);
    const gpt4o = rows.find((r) => r.label === 'openai:gpt-4o')!;
    // i = 2; P-Conv is j = 1, NP-Conv j = 0: v = 0.5 + i / 20 + j / 100. 3.3 in best-of-n mode (v / 2), not single-sample.
    expect(gpt4o.cells['3.1/P-Conv']!.value).toBeCloseTo(0.61, 12);
    expect(gpt4o.cells['3.1/P-Conv']!.lo).toBeCloseTo(0.51, 12);
    expect(gpt4o.cells['3.1/P-Conv']!.hi).toBeCloseTo(0.71, 12);
    expect(gpt4o.cells['3.1/NP-Conv']!.value).toBeCloseTo(0.6, 12);
    expect(gpt4o.cells['3.2/P-NonConv']!.value).toBeCloseTo(1.62, 12);
    expect(gpt4o.cells['3.3/P-Conv']!.value).toBeCloseTo(0.305, 12);
    // n: the predictions scored, each task once per setting (3.1 10, 3.2 20, 3.3 30).
    expect(gpt4o.n).toBe(3 * 60);
    const lenient = rows.find((r) => r.label.endsWith('(3.1 parser lenient)'))!;
    expect(Object.keys(lenient.cells).sort()).toEqual(['3.1/NP-Conv', '3.1/P-Conv', '3.1/P-NonConv']);
    expect(lenient.cells['3.1/P-Conv']!.value).toBeCloseTo(0.76, 12);
    expect(lenient.n).toBe(3 * 12);
    const main = rows.find((r) => r.label === 'openai:gpt-4o-mini-2024-07-18')!;
    expect(Object.keys(main.cells).some((k) => k.startsWith('3.1/'))).toBe(false);
    expect(table.caption).toContain('3.3 next-text ROUGE-L (best-of-n scores)');
  });

  it('leaves out a setting no model has, shows the values alone without the intervals view, and nothing without results', async () => {
    const results = intervalRows()
      .filter((r) => r['setting'] !== 'P-NonConv')
      .map(({ lo: _lo, hi: _hi, ...r }) => r);
    const table = (await personaComparison(results, null))!;
    expect(table.measures.map((m) => m.key)).toEqual(['3.1/P-Conv', '3.1/NP-Conv', '3.2/P-Conv', '3.2/NP-Conv', '3.3/P-Conv', '3.3/NP-Conv']);
    expect(table.blocks[0]!.rows[0]!.cells['3.1/P-Conv']).toEqual({ value: expect.any(Number), lo: null, hi: null });
    expect(await personaComparison([], null)).toBeNull();
  });

  it.skipIf(!existsSync('/usr/bin/chromium'))('fits the page at five models in headless Chromium', async () => {
    const check = await checkComparisonAlone((await personaComparison([], async () => intervalRows()))!);
    expect(check.problems).toEqual([]);
    expect(check.cutOff).toEqual([]);
  });
});
