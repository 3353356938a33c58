import { existsSync } from 'node:fs';
import { Workspace } from '../core/workspace.js';
import type { Pipeline } from './pipeline.js';
import { fileStamp } from '../core/file-stamps.js';
import {
  hash,
  importInputs,
  manifestStamp,
  personaMetricsFile,
  personaScoresInputs,
  personaSelectInputs,
  personaSelectionStamp,
  scenariosInputs,
  warehouseInputs,
  type MakeState,
} from './state.js';

/**
 * The stages `plens make` knows, in the one order that respects every dependency: PersonaLens's
 * (import ... judge) and PERSONA-bench's (select, predictions, scores), then the shared warehouse,
 * tables and report. A pipeline has the steps of its benchmark only.
 */
export const STEPS = ['import', 'scenarios', 'dialogues', 'judge', 'select', 'predictions', 'scores', 'warehouse', 'tables', 'report'] as const;
export type Step = (typeof STEPS)[number];

/** The steps whose outputs are files, rebuilt when the fingerprint of their inputs changes. */
export type FileStep = Exclude<Step, 'dialogues' | 'judge' | 'predictions'>;

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
  after?: (p: Pipeline) => FileStep;
}

interface StepEntry {
  /** What the step needs before it; a step a pipeline leaves out (no dialogues, no judge) is passed over. */
  needs(p: Pipeline): Step[];
  /** Whether the pipeline includes the step. */
  available(p: Pipeline): boolean;
  fingerprint?: Fingerprint;
}

const always = () => true;
const personalens = (p: Pipeline) => p.benchmark === 'personalens';
const personaBench = (p: Pipeline) => p.benchmark === 'persona-bench';

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
    available: personalens,
    fingerprint: {
      inputs: importInputs,
      current: (p, state, o) => recorded('import', state, o.inputs, manifestStamp(new Workspace(p.workspace).datasetDir)),
      exists: (p) => manifestStamp(new Workspace(p.workspace).datasetDir) !== null,
    },
  },
  scenarios: {
    needs: () => ['import'],
    available: personalens,
    fingerprint: {
      inputs: scenariosInputs,
      current: (p, state, o) => recorded('scenarios', state, o.inputs, manifestStamp(new Workspace(p.workspace).scenariosDir)),
      exists: (p) => manifestStamp(new Workspace(p.workspace).scenariosDir) !== null,
      after: () => 'import',
    },
  },
  dialogues: { needs: () => ['scenarios'], available: (p) => personalens(p) && Boolean(p.dialogues) },
  judge: { needs: () => ['dialogues'], available: (p) => personalens(p) && Boolean(p.judge) },
  // PERSONA-bench: the selection writes every task x setting's prompts; predictions are keyed
  // LLM work (planned by the stage's dry run, as the dialogues are); scores are rebuilt when the
  // compacted predictions change.
  select: {
    needs: () => [],
    available: personaBench,
    fingerprint: {
      inputs: personaSelectInputs,
      current: (p, state, o) => recorded('select', state, o.inputs, personaSelectionStamp(p)),
      exists: (p) => personaSelectionStamp(p) !== null,
    },
  },
  predictions: { needs: () => ['select'], available: personaBench },
  scores: {
    needs: () => ['predictions'],
    available: personaBench,
    fingerprint: {
      inputs: personaScoresInputs,
      current: (p, state, o) => recorded('scores', state, o.inputs, fileStamp(personaMetricsFile(p))),
      exists: (p) => fileStamp(personaMetricsFile(p)) !== null,
      after: () => 'select',
    },
  },
  warehouse: {
    needs: (p) => (personaBench(p) ? ['scores'] : p.judge ? ['scenarios', 'judge'] : p.dialogues ? ['scenarios', 'dialogues'] : ['scenarios']),
    available: always,
    fingerprint: {
      inputs: warehouseInputs,
      current: (p, state, o) => recorded('warehouse', state, o.inputs, fileStamp(p.warehouse)),
      exists: (p) => fileStamp(p.warehouse) !== null,
      after: (p) => (personaBench(p) ? 'scores' : 'scenarios'),
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
      after: () => 'warehouse',
    },
  },
  report: {
    needs: () => ['warehouse'],
    available: (p) => Boolean(p.report),
    fingerprint: {
      inputs: reportInputs,
      current: (p, state, o) => p.report !== undefined && state['report']?.inputs === o.inputs && reportFileOf(state) !== null,
      exists: (_p, state) => reportFileOf(state) !== null,
      after: () => 'warehouse',
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

/**
 * Per file step of the pipeline, whether it and every file step before it are current: what
 * `status` calls done. Each fingerprint is taken once; steps of the other benchmark are absent.
 */
export function doneSteps(p: Pipeline, state: MakeState): Partial<Record<FileStep, boolean>> {
  const done: Partial<Record<FileStep, boolean>> = {};
  for (const step of STEPS) {
    const f = STEP_TABLE[step].fingerprint;
    if (!f || !STEP_TABLE[step].available(p)) continue;
    const s = step as FileStep;
    const after = f.after?.(p);
    done[s] = (after === undefined || done[after] === true) && isCurrent(s, p, state);
  }
  return done;
}

/** Whether a step belongs to the pipeline (its benchmark, and the sections it has). */
export function stepAvailable(step: Step, p: Pipeline): boolean {
  return STEP_TABLE[step].available(p);
}

export function outputExists(step: FileStep, p: Pipeline, state: MakeState): boolean {
  return STEP_TABLE[step].fingerprint!.exists(p, state);
}
