import { existsSync } from 'node:fs';
import { Workspace } from '../core/workspace.js';
import type { Pipeline } from './pipeline.js';
import { fileStamp, hash, importInputs, manifestStamp, scenariosInputs, warehouseInputs, type MakeState } from './state.js';

/** The stages `plens make` knows, in the one order that respects every dependency. */
export const STEPS = ['import', 'scenarios', 'dialogues', 'judge', 'warehouse', 'tables', 'report'] as const;
export type Step = (typeof STEPS)[number];

/** The steps whose outputs are files, rebuilt when the fingerprint of their inputs changes. */
export type FileStep = Exclude<Step, 'dialogues' | 'judge'>;

/**
 * A file step's up-to-date rule. The LLM steps need none: their keys already say what is done,
 * and the stages' own dry runs (cells.ts) count it.
 */
interface Fingerprint {
  /** The fingerprint of what the step reads, as recorded in the make state after a build. */
  inputs(p: Pipeline): string;
  /** The recorded build is current: recorded with these inputs, and its outputs are still the ones on disk. */
  current(p: Pipeline, state: MakeState, o: { inputs: string; tables: readonly string[] }): boolean;
  /** Some output exists (current or not): status tells out-of-date from pending by it. */
  exists(p: Pipeline, state: MakeState): boolean;
  /**
   * The file step this one is current only after, for `status` (which runs nothing); `make`
   * instead reruns a step whose dependencies ran in the same make.
   */
  after?: FileStep;
}

interface StepEntry {
  /** What the step needs before it; a step a pipeline leaves out (no dialogues, no judge) is passed over. */
  needs(p: Pipeline): Step[];
  /** Whether the pipeline includes the step. */
  available(p: Pipeline): boolean;
  fingerprint?: Fingerprint;
}

const always = () => true;

/** The state key of one rendered table. */
export const tableStateKey = (table: string) => `table:${table}`;

export function tablesInputs(p: Pipeline): string {
  return hash(['tables', fileStamp(p.warehouse), p.tables.formats, p.tables.outDir]);
}

export function reportInputs(p: Pipeline): string {
  return hash(['report', fileStamp(p.warehouse), p.report?.title, p.report?.out]);
}

/** The report file the last build wrote, when it is still there. */
export function reportFileOf(state: MakeState): string | null {
  const out = state['report']?.output;
  return out && existsSync(out) ? out : null;
}

/** A step recorded with these inputs whose output stamp is still `stamp` (and there is an output). */
const recorded = (step: FileStep, state: MakeState, inputs: string, stamp: string | null) =>
  stamp !== null && state[step]?.inputs === inputs && state[step]?.output === stamp;

/** The one table of steps `make` runs and `status` reports: dependencies and up-to-date rules. */
export const STEP_TABLE: Record<Step, StepEntry> = {
  import: {
    needs: () => [],
    available: always,
    fingerprint: {
      inputs: importInputs,
      current: (p, state, o) => recorded('import', state, o.inputs, manifestStamp(new Workspace(p.workspace).datasetDir)),
      exists: (p) => manifestStamp(new Workspace(p.workspace).datasetDir) !== null,
    },
  },
  scenarios: {
    needs: () => ['import'],
    available: always,
    fingerprint: {
      inputs: scenariosInputs,
      current: (p, state, o) => recorded('scenarios', state, o.inputs, manifestStamp(new Workspace(p.workspace).scenariosDir)),
      exists: (p) => manifestStamp(new Workspace(p.workspace).scenariosDir) !== null,
      after: 'import',
    },
  },
  dialogues: { needs: () => ['scenarios'], available: (p) => Boolean(p.dialogues) },
  judge: { needs: () => ['dialogues'], available: (p) => Boolean(p.judge) },
  warehouse: {
    needs: (p) => (p.judge ? ['scenarios', 'judge'] : p.dialogues ? ['scenarios', 'dialogues'] : ['scenarios']),
    available: always,
    fingerprint: {
      inputs: warehouseInputs,
      current: (p, state, o) => recorded('warehouse', state, o.inputs, fileStamp(p.warehouse)),
      exists: (p) => fileStamp(p.warehouse) !== null,
      after: 'scenarios',
    },
  },
  tables: {
    needs: () => ['warehouse'],
    available: always,
    fingerprint: {
      inputs: tablesInputs,
      // Each table is recorded on its own: `make table3` renders only table 3.
      current: (_p, state, o) => o.tables.every((t) => state[tableStateKey(t)]?.inputs === o.inputs),
      exists: (p, state) => Boolean(state[tableStateKey(p.tables.only[0]!)]),
      after: 'warehouse',
    },
  },
  report: {
    needs: () => ['warehouse'],
    available: (p) => Boolean(p.report),
    fingerprint: {
      inputs: reportInputs,
      current: (p, state, o) => p.report !== undefined && state['report']?.inputs === o.inputs && reportFileOf(state) !== null,
      exists: (_p, state) => reportFileOf(state) !== null,
      after: 'warehouse',
    },
  },
};

/** The fingerprint of a file step's inputs now. */
export function stepInputs(step: FileStep, p: Pipeline): string {
  return STEP_TABLE[step].fingerprint!.inputs(p);
}

/**
 * Whether a file step's last build is current by its own fingerprint (not looking upstream).
 * `inputs` when the caller has taken the fingerprint already; `tables` for the tables step.
 */
export function isCurrent(step: FileStep, p: Pipeline, state: MakeState, o: { inputs?: string; tables?: readonly string[] } = {}): boolean {
  const f = STEP_TABLE[step].fingerprint!;
  return f.current(p, state, { inputs: o.inputs ?? f.inputs(p), tables: o.tables ?? p.tables.only });
}

/** Per file step, whether it and every file step before it are current: what `status` calls done. Each fingerprint is taken once. */
export function doneSteps(p: Pipeline, state: MakeState): Record<FileStep, boolean> {
  const done = {} as Record<FileStep, boolean>;
  for (const step of STEPS) {
    const f = STEP_TABLE[step].fingerprint;
    if (!f) continue;
    const s = step as FileStep;
    done[s] = (f.after === undefined || done[f.after]) && isCurrent(s, p, state);
  }
  return done;
}

export function outputExists(step: FileStep, p: Pipeline, state: MakeState): boolean {
  return STEP_TABLE[step].fingerprint!.exists(p, state);
}
