import { beforeAll, describe, expect, it } from 'vitest';
import { runCliJson } from '../helpers/cli.js';
import { A, B, handMadeWarehouse } from '../helpers/hand-experiment.js';

// The hand-made experiment (test/helpers/hand-experiment.ts): every expected value below is computed by hand from its table.
describe('result views on a hand-made experiment', () => {
  let db: string;
  const q = async (sql: string) => (await runCliJson<Array<Record<string, unknown>>>(['sql', sql, '--db', db])).json;

  beforeAll(async () => {
    db = (await handMadeWarehouse()).db;
  });

  it('table3: base setting per assistant and kind, failures and unparsed counted but not scored', async () => {
    const rows = await q('select assistant_model, kind, n_dialogues, n_tc, tcr, p, nat, coh, n_failed, n_unparsed from table3');
    expect(rows).toEqual([
      { assistant_model: A, kind: 'SD', n_dialogues: 2, n_tc: 2, tcr: 50, p: 2, nat: 3.5, coh: 4.5, n_failed: 0, n_unparsed: 1 },
      { assistant_model: A, kind: 'MD', n_dialogues: 1, n_tc: 1, tcr: 100, p: 2, nat: 5, coh: 5, n_failed: 1, n_unparsed: 0 },
      { assistant_model: B, kind: 'SD', n_dialogues: 1, n_tc: 1, tcr: 100, p: 4, nat: null, coh: null, n_failed: 0, n_unparsed: 0 },
    ]);
    const [a] = await q(`select tcr_lo, tcr_hi, p_lo, p_hi from table3 where assistant_model = '${A}' and kind = 'SD'`);
    // The interval contains the mean.
    expect(a!['p_lo'] as number).toBeLessThanOrEqual(2);
    expect(a!['p_hi'] as number).toBeGreaterThanOrEqual(2);
  });

  it('table4: the settings of one assistant side by side', async () => {
    const rows = await q(`select setting, sd_n, sd_tcr, sd_p, md_n, md_tcr, md_p from table4 where assistant_model = '${A}'`);
    expect(rows).toEqual([
      { setting: 'base', sd_n: 2, sd_tcr: 50, sd_p: 2, md_n: 1, md_tcr: 100, md_p: 2 },
      { setting: 'base+all', sd_n: 1, sd_tcr: 100, sd_p: 4, md_n: null, md_tcr: null, md_p: null },
    ]);
  });

  it("table12: the user agent's scores, skipping failed and unparsed judgments", async () => {
    // SD and MD apart: A's MD dialogue d3 has no user judgment that scored (naturalness failed).
    expect(await q(`select kind, n_nat, nat, n_coh, coh from table12 where assistant_model = '${A}'`)).toEqual([
      { kind: 'SD', n_nat: 2, nat: 4.5, n_coh: 1, coh: 4 },
      { kind: 'MD', n_nat: 0, nat: null, n_coh: 0, coh: null },
    ]);
  });

  it('figure4: an MD dialogue counts towards each of its domains', async () => {
    const rows = await q(`select kind, domain, n_tc, tcr, p from figure4 where assistant_model = '${A}' and setting = 'base'`);
    expect(rows).toEqual([
      { kind: 'SD', domain: 'Alarm', n_tc: 1, tcr: 100, p: 3 },
      { kind: 'SD', domain: 'Books', n_tc: 1, tcr: 0, p: 1 },
      { kind: 'MD', domain: 'Flights', n_tc: 1, tcr: 100, p: 2 },
      { kind: 'MD', domain: 'Hotels', n_tc: 1, tcr: 100, p: 2 },
      { kind: 'MD', domain: 'Rental Cars', n_tc: 1, tcr: 100, p: 2 },
    ]);
  });

  it('figure5: mean personalization per assistant turn', async () => {
    expect(await q('select method, domain, turn, n, p from figure5')).toEqual([
      { method: 'per_prefix', domain: 'Alarm', turn: 1, n: 1, p: 2 },
      { method: 'per_prefix', domain: 'Alarm', turn: 2, n: 1, p: 3 },
    ]);
  });

  it('table13: finished dialogues only; rounds per dialogue and output tokens per utterance', async () => {
    expect(
      await q(
        `select kind, n_dialogues, turns_per_dialogue, tokens_per_turn, assistant_tokens_per_turn from table13 where assistant_model = '${A}' and setting = 'base'`,
      ),
    ).toEqual([
      // assistant utterances: d1 20 and 30, d2 40 -> 30; MD: d3 50.
      { kind: 'SD', n_dialogues: 2, turns_per_dialogue: 1.5, tokens_per_turn: 20, assistant_tokens_per_turn: 30 },
      { kind: 'MD', n_dialogues: 1, turns_per_dialogue: 1, tokens_per_turn: 30, assistant_tokens_per_turn: 50 },
    ]);
  });

  it('paired_differences: b - a on the scenarios both cells judged', async () => {
    expect(await q("select cell_a, cell_b, n_p, d_tcr, d_p from paired_differences where kind = 'SD'")).toEqual([
      { cell_a: `${A} | base`, cell_b: `${A} | base+all`, n_p: 1, d_tcr: 0, d_p: 1 },
      { cell_a: `${A} | base`, cell_b: `${B} | base`, n_p: 1, d_tcr: 0, d_p: 1 },
      { cell_a: `${A} | base+all`, cell_b: `${B} | base`, n_p: 1, d_tcr: 0, d_p: 0 },
    ]);
  });
});
