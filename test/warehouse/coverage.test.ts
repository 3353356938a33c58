import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../helpers/cli.js';
import { A, B, handMadeWarehouse } from '../helpers/hand-experiment.js';

// The hand-made experiment of test/helpers/hand-experiment.ts: A base SD has d1 (tc 1), d2 (tc 0, coh_u
// unparsed) and d4 (the dialogue failed, never judged); A base MD has d3 (nat_u judgment failed).
describe('result_coverage: scored M of N, TCR worst and best case', () => {
  let db: string;
  const q = async (sql: string) => (await runCliJson<Array<Record<string, unknown>>>(['sql', sql, '--db', db])).json;

  beforeAll(async () => {
    db = (await handMadeWarehouse()).db;
  });

  it('counts the failed dialogue and the failed or unparsed judgments as planned but not scored', async () => {
    const rows = await q(
      `select assistant_model, setting, kind, dimension, scored, n_dialogues_failed, tcr, tcr_worst, tcr_best from result_coverage where dimension in ('TC', 'Coh (U)', 'Nat (U)') and setting = 'base'`,
    );
    expect(rows).toEqual([
      // SD: 1 completed of 2 scored of 3 planned: 50%, worst 1/3, best (1 + 1)/3.
      {
        assistant_model: A,
        setting: 'base',
        kind: 'SD',
        dimension: 'TC',
        scored: '2 of 3',
        n_dialogues_failed: 1,
        tcr: 50,
        tcr_worst: 100 / 3,
        tcr_best: 200 / 3,
      },
      {
        assistant_model: A,
        setting: 'base',
        kind: 'SD',
        dimension: 'Nat (U)',
        scored: '2 of 3',
        n_dialogues_failed: 1,
        tcr: null,
        tcr_worst: null,
        tcr_best: null,
      },
      {
        assistant_model: A,
        setting: 'base',
        kind: 'SD',
        dimension: 'Coh (U)',
        scored: '1 of 3',
        n_dialogues_failed: 1,
        tcr: null,
        tcr_worst: null,
        tcr_best: null,
      },
      { assistant_model: A, setting: 'base', kind: 'MD', dimension: 'TC', scored: '1 of 1', n_dialogues_failed: 0, tcr: 100, tcr_worst: 100, tcr_best: 100 },
      {
        assistant_model: A,
        setting: 'base',
        kind: 'MD',
        dimension: 'Nat (U)',
        scored: '0 of 1',
        n_dialogues_failed: 0,
        tcr: null,
        tcr_worst: null,
        tcr_best: null,
      },
      {
        assistant_model: A,
        setting: 'base',
        kind: 'MD',
        dimension: 'Coh (U)',
        scored: '0 of 1',
        n_dialogues_failed: 0,
        tcr: null,
        tcr_worst: null,
        tcr_best: null,
      },
      { assistant_model: B, setting: 'base', kind: 'SD', dimension: 'TC', scored: '1 of 1', n_dialogues_failed: 0, tcr: 100, tcr_worst: 100, tcr_best: 100 },
      {
        assistant_model: B,
        setting: 'base',
        kind: 'SD',
        dimension: 'Nat (U)',
        scored: '0 of 1',
        n_dialogues_failed: 0,
        tcr: null,
        tcr_worst: null,
        tcr_best: null,
      },
      {
        assistant_model: B,
        setting: 'base',
        kind: 'SD',
        dimension: 'Coh (U)',
        scored: '0 of 1',
        n_dialogues_failed: 0,
        tcr: null,
        tcr_worst: null,
        tcr_best: null,
      },
    ]);
  });

  it('gives the Wilson interval of the observed TCR (statsmodels proportion_confint(1, 2, method="wilson"))', async () => {
    const [r] = await q(
      `select tcr_wilson_lo, tcr_wilson_hi from result_coverage where assistant_model = '${A}' and setting = 'base' and kind = 'SD' and dimension = 'TC'`,
    );
    expect(Math.abs((r!['tcr_wilson_lo'] as number) - 100 * 0.09453120573423068)).toBeLessThan(1e-9);
    expect(Math.abs((r!['tcr_wilson_hi'] as number) - 100 * 0.9054687942657693)).toBeLessThan(1e-9);
  });

  it('is a table of plens tables', async () => {
    const r = await runCli(['tables', '--db', db, '--only', 'result_coverage', '--format', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('2 of 3');
  });
});
