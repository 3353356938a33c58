import type { Fingerprint, StepDef } from '../platform/benchmark.js';
import type { MakeState } from '../platform/make-state.js';
import type { Pipeline } from '../platform/pipeline.js';
import { benchmarkFor, benchmarks } from '../registry/registry.js';
import { sharedSteps } from './shared-steps.js';

/** A step `plens make` knows: a benchmark's, or one of the shared warehouse, tables and report. */
export type Step = string;

export { reportFileOf, reportInputs, tableStateKey, tablesInputs, warehouseInputs } from './shared-steps.js';

/**
 * Every step make knows, in the one order that respects every dependency: each registered
 * benchmark's steps, then the shared warehouse, tables and report. A pipeline has the steps of its
 * benchmark only (the others are not available to it).
 */
export function allSteps(): StepDef[] {
  return [...benchmarks().flatMap((b) => b.steps.map((s) => ({ ...s, available: (p: Pipeline) => p.benchmark === b.id && s.available(p) }))), ...sharedSteps];
}

/** The step table by name (a live view of the registry: a benchmark registered later is in it). */
export const STEP_TABLE: Record<string, StepDef> = new Proxy({} as Record<string, StepDef>, {
  get: (_target, name) => (typeof name === 'string' ? allSteps().find((s) => s.name === name) : undefined),
  has: (_target, name) => typeof name === 'string' && allSteps().some((s) => s.name === name),
  ownKeys: () => allSteps().map((s) => s.name),
  getOwnPropertyDescriptor: (_target, name) =>
    typeof name === 'string' && allSteps().some((s) => s.name === name) ? { enumerable: true, configurable: true } : undefined,
});

/** The names of every step, in order. */
export function stepNames(): string[] {
  return allSteps().map((s) => s.name);
}

function fingerprintOf(step: Step): Fingerprint {
  const f = STEP_TABLE[step]?.fingerprint;
  if (!f) throw new Error(`step ${step} has no fingerprint`);
  return f;
}

/** The fingerprint of a file step's inputs now. */
export function stepInputs(step: Step, p: Pipeline): string {
  return fingerprintOf(step).inputs(p);
}

/**
 * Whether a file step's last build is current by its own fingerprint (not looking upstream).
 * `inputs` when the caller has taken the fingerprint already; `tables` for the tables step.
 */
export function isCurrent(step: Step, p: Pipeline, state: MakeState, o: { inputs?: string; tables?: readonly string[] } = {}): boolean {
  const f = fingerprintOf(step);
  return f.current(p, state, { inputs: o.inputs ?? f.inputs(p), tables: o.tables ?? p.tables.only });
}

/**
 * Per file step of the pipeline, whether it and every file step before it are current: what
 * `status` calls done. Each fingerprint is taken once; steps of other benchmarks are absent.
 */
export function doneSteps(p: Pipeline, state: MakeState): Record<string, boolean> {
  const done: Record<string, boolean> = {};
  for (const s of allSteps()) {
    const f = s.fingerprint;
    if (!f || !s.available(p)) continue;
    const after = f.after?.(p);
    done[s.name] = (after === undefined || done[after] === true) && isCurrent(s.name, p, state);
  }
  return done;
}

/** Whether a step belongs to the pipeline (its benchmark, and the sections it has). */
export function stepAvailable(step: Step, p: Pipeline): boolean {
  return STEP_TABLE[step]?.available(p) ?? false;
}

export function outputExists(step: Step, p: Pipeline, state: MakeState): boolean {
  return fingerprintOf(step).exists(p, state);
}

/** The benchmark's steps the warehouse waits for. */
export function warehouseNeeds(p: Pipeline): string[] {
  return benchmarkFor(p).warehouse.needs(p);
}
