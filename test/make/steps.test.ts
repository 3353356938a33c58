import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Workspace } from '../../src/core/workspace.js';
import { buildGraph } from '../../src/make/graph.js';
import { loadPipeline, type Pipeline } from '../../src/make/pipeline.js';
import type { MakeState } from '../../src/platform/make-state.js';
import { doneSteps, isCurrent, outputExists, STEP_TABLE, stepInputs, tableStateKey } from '../../src/make/steps.js';
import { tempDir } from '../helpers/cli.js';
import { datasetDir, scenariosDir } from '../../src/benchmarks/personalens/dataset/workspace-files.js';

/** A pipeline over a tiny data folder, with an imported dataset and a selection recorded as made. */
function built(extra = ''): { p: Pipeline; dir: string; state: MakeState } {
  const dir = tempDir('plens-steps-');
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', 'profiles.json'), '{}');
  const file = join(dir, 'p.yaml');
  writeFileSync(file, `name: steps\nworkspace: ${dir}/out\nwarehouse: ${dir}/w.duckdb\ndata:\n  from: ${dir}/data\nscenarios:\n  kind: md\n${extra}`);
  const p = loadPipeline(file, {});
  const ws = new Workspace(p.workspace);
  mkdirSync(datasetDir(ws), { recursive: true });
  mkdirSync(scenariosDir(ws), { recursive: true });
  writeFileSync(join(datasetDir(ws), 'manifest.json'), JSON.stringify({ created_at: '2026-01-01T00:00:00Z' }));
  writeFileSync(join(scenariosDir(ws), 'manifest.json'), JSON.stringify({ created_at: '2026-01-02T00:00:00Z' }));
  const state: MakeState = {
    import: { inputs: stepInputs('import', p), output: '2026-01-01T00:00:00Z' },
    scenarios: { inputs: stepInputs('scenarios', p), output: '2026-01-02T00:00:00Z' },
  };
  return { p, dir, state };
}

describe('the step table', () => {
  it('gives make its dependencies: the warehouse waits for the last LLM step the pipeline has', () => {
    const { p } = built();
    expect(STEP_TABLE.warehouse.needs(p)).toEqual(['scenarios']);
    expect(STEP_TABLE.warehouse.needs({ ...p, dialogues: { assistants: ['sim:default'], settings: ['base'], replicates: 1 } })).toEqual([
      'scenarios',
      'dialogues',
    ]);
    expect(buildGraph(['warehouse'], p).steps).toEqual(['import', 'scenarios', 'warehouse']);
    expect(() => buildGraph(['judge'], p)).toThrow(/does not include judge/);
  });

  it("statistics.laps_speakers picks Table 10's laps speaker groups (default both), and a change makes the warehouse step stale", () => {
    const { p } = built();
    expect(p.lexical).toEqual(['laps', 'full']);
    expect(p.lapsSpeakers).toEqual(['both']);
    const every = built('statistics:\n  laps_speakers: [assistant, user, both]\n').p;
    expect(every.lapsSpeakers).toEqual(['both', 'user', 'assistant']);
    expect(stepInputs('warehouse', { ...p, lapsSpeakers: every.lapsSpeakers })).not.toBe(stepInputs('warehouse', p));
    expect(stepInputs('warehouse', { ...p, lapsSpeakers: ['both'] })).toBe(stepInputs('warehouse', p));
    expect(() => built('statistics:\n  laps_speakers: [everyone]\n')).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/expected one of \["both","user","assistant"\]/),
        location: expect.objectContaining({ pointer: '/statistics/laps_speakers/0' }),
      }),
    );
  });

  it('a recorded build is current while its inputs and outputs are unchanged; status sees the chain', () => {
    const { p, dir, state } = built();
    expect(isCurrent('import', p, state)).toBe(true);
    expect(doneSteps(p, state)).toMatchObject({ import: true, scenarios: true, warehouse: false, tables: false });
    expect(outputExists('warehouse', p, state)).toBe(false);

    // New upstream data: the import is out of date, and so, for status, is everything after it,
    // though the selection's own record still matches.
    writeFileSync(join(dir, 'data', 'situations.json'), '{}');
    expect(isCurrent('import', p, state)).toBe(false);
    expect(isCurrent('scenarios', p, state)).toBe(true);
    expect(doneSteps(p, state)).toMatchObject({ import: false, scenarios: false });
    expect(outputExists('import', p, state)).toBe(true);

    // A selection rewritten by hand is a new output: not current.
    writeFileSync(join(scenariosDir(new Workspace(p.workspace)), 'manifest.json'), JSON.stringify({ created_at: '2026-02-01T00:00:00Z' }));
    expect(isCurrent('scenarios', p, state)).toBe(false);
  });

  it('tables are recorded one by one: make table3 makes table 3 current, not the others', () => {
    const { p, state } = built();
    state[tableStateKey('table3')] = { inputs: stepInputs('tables', p) };
    expect(isCurrent('tables', p, state, { tables: ['table3'] })).toBe(true);
    expect(isCurrent('tables', p, state)).toBe(false);
    expect(outputExists('tables', p, state)).toBe(p.tables.only[0] === 'table3');
  });

  it('the report is current only while the file it wrote is there', () => {
    const { p, dir, state } = built();
    const out = join(dir, 'report.html');
    state['report'] = { inputs: stepInputs('report', p), output: out };
    expect(isCurrent('report', p, state)).toBe(false);
    writeFileSync(out, '<html></html>');
    expect(isCurrent('report', p, state)).toBe(true);
    expect(isCurrent('report', { ...p, report: { title: 'another title', out } }, state)).toBe(false);
    const { report: _off, ...withoutReport } = p;
    expect(isCurrent('report', withoutReport, state)).toBe(false);
  });
});
