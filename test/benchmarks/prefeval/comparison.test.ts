import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { prefevalComparison, prefevalMcqComparison } from '../../../src/benchmarks/prefeval/comparison.js';
import { barePage, checkComparisonAlone } from '../../report/fixture.js';

type Row = Record<string, unknown>;

const MODELS = ['openai:gpt-4o', 'anthropic:claude-3-haiku-20240307', 'bedrock:mistral.mistral-large-2402-v1:0', 'openai:gpt-4o-mini', 'openai:o1-mini'];
const FORMS = ['persona', 'explicit', 'choice'];
const BASELINES = ['rag', 'zero-shot', 'selfcritic', 'remind', 'cot'];

/** prefeval_results' rows: five models, three forms, five baselines, two turn counts; `judges` judges each. */
function resultRows(judges = ['sim:default']): Row[] {
  const rows: Row[] = [];
  for (const [i, model] of MODELS.entries())
    for (const judge_model of judges)
      for (const form of FORMS)
        for (const [b, baseline] of BASELINES.entries())
          for (const inter_turns of [10, 0]) {
            const accuracy = (i + b) / 10 + inter_turns / 100;
            rows.push({
              model,
              judge_model,
              form,
              baseline,
              inter_turns,
              n: BigInt(8 + b),
              accuracy,
              accuracy_lo: accuracy - 0.05,
              accuracy_hi: accuracy + 0.05,
            });
          }
  return rows;
}

describe("PrefEval's models compared", () => {
  it('gives a block per form and number of filler turns, a row per model and a column per baseline, in the README order', async () => {
    const table = (await prefevalComparison(resultRows()))!;
    expect(table.measures.map((m) => m.label)).toEqual(['Zero-shot', 'Reminder', 'CoT', 'Self-critic', 'RAG']);
    expect(table.blocks.map((b) => b.label)).toEqual([
      'Explicit preference, 0 filler turns',
      'Explicit preference, 10 filler turns',
      'Implicit preference (choice), 0 filler turns',
      'Implicit preference (choice), 10 filler turns',
      'Implicit preference (persona), 0 filler turns',
      'Implicit preference (persona), 10 filler turns',
    ]);
    const block = table.blocks[1]!;
    expect(block.rows.map((r) => r.label)).toEqual([...MODELS].sort((a, b) => a.localeCompare(b)));
    // gpt-4o is i = 0; CoT is b = 4 in the fixture's order: 0.4 + 0.1 at 10 turns.
    const gpt4o = block.rows.find((r) => r.label === 'openai:gpt-4o')!;
    expect(gpt4o.cells['cot']).toEqual({ value: 0.5, lo: 0.45, hi: 0.55 });
    // n: the responses judged over the baselines (8 + b each).
    expect(gpt4o.n).toBe(8 + 9 + 10 + 11 + 12);
  });

  it('names the judge when the warehouse holds more than one, and keeps an unknown baseline after the known ones', async () => {
    const rows = [...resultRows(['openai:gpt-4o', 'sim:default']), { ...resultRows()[0]!, baseline: 'my-baseline' }];
    const table = (await prefevalComparison(rows))!;
    expect(table.measures.at(-1)).toEqual({ key: 'my-baseline', label: 'my-baseline', digits: 2 });
    expect(table.blocks[0]!.rows.map((r) => r.label).slice(0, 2)).toEqual([
      'anthropic:claude-3-haiku-20240307 (judge openai:gpt-4o)',
      'anthropic:claude-3-haiku-20240307 (judge sim:default)',
    ]);
  });

  it('lays out the classification task the same way, and nothing without results', async () => {
    const mcq = resultRows().map(({ judge_model: _j, ...r }) => r);
    const table = (await prefevalMcqComparison(mcq))!;
    expect(table.id).toBe('prefeval-mcq');
    expect(table.blocks).toHaveLength(6);
    expect(table.blocks[0]!.rows[0]!.label).toBe('anthropic:claude-3-haiku-20240307');
    expect(await prefevalComparison([])).toBeNull();
    expect(await prefevalComparison(resultRows().map((r) => ({ ...r, accuracy: null })))).toBeNull();
  });

  it.skipIf(!existsSync('/usr/bin/chromium'))('shows its first blocks at five models and keeps the whole table one click away', async () => {
    const table = (await prefevalComparison(resultRows()))!;
    // 6 blocks of 5 models: the first block above (its heading and 5 rows), all 30 in <details>.
    expect(barePage({ comparisons: [table] })).toContain('<details class="more"><summary>All 30 rows (the first 5 are shown above)</summary>');
    const check = await checkComparisonAlone(table);
    expect(check.problems).toEqual([]);
    expect(check.cutOff).toEqual([]);
  });
});
