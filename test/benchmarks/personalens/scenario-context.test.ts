import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioContextSource, type ScenarioContext, type ScenarioRow } from '../../../src/benchmarks/personalens/scenario-context.js';
import { Workspace } from '../../../src/core/workspace.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

let source: ScenarioContextSource;
/** Every selected scenario of the sample (all its users), in stored order. */
let rows: ScenarioRow[];

beforeAll(async () => {
  source = await ScenarioContextSource.open(new Workspace(await sampleWorkspace([])));
  rows = [];
  for await (const row of source.scenarios()) rows.push(row);
});
afterAll(() => source?.close());

async function streamed(): Promise<Array<{ row: ScenarioRow; context: ScenarioContext }>> {
  const out: Array<{ row: ScenarioRow; context: ScenarioContext }> = [];
  for await (const x of source.withContext(source.scenarios())) out.push(x);
  return out;
}

describe('context loaded a batch at a time', () => {
  it('gives every scenario once, in order, with the context it has loaded alone', async () => {
    // 180 scenarios: batches of 32 and 64, then a short last one of 84.
    expect(rows.length).toBeGreaterThan(32 + 64);
    const out = await streamed();
    expect(out.map((x) => x.row.scenario_id)).toEqual(rows.map((r) => r.scenario_id));
    for (const { row, context } of out) expect(context, row.scenario_id).toEqual(await source.contextFor(row));
  });
});
