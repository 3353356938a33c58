import { usageError } from '../core/errors.js';
import { PAPER_TABLES } from '../tables/catalog.js';
import type { Pipeline } from './pipeline.js';
import { STEP_TABLE, STEPS, type Step } from './steps.js';

export { STEPS, type Step };

export const TABLE_TARGETS = PAPER_TABLES.map((t) => t.name);
export const TARGETS = [...STEPS, ...TABLE_TARGETS, 'all'];

/** What one step needs before it, from the one step table. */
function dependencies(step: Step, p: Pipeline): Step[] {
  return STEP_TABLE[step].needs(p);
}

export interface MakePlanGraph {
  steps: Step[];
  /** The tables to render: all the pipeline's, or only those named as targets. */
  tables: string[];
  dependsOn: Record<Step, Step[]>;
}

/** Targets -> the steps to consider (with everything they depend on), in dependency order. */
export function buildGraph(targets: string[], p: Pipeline): MakePlanGraph {
  const wanted = new Set<Step>();
  const tables = new Set<string>();
  for (const t of targets.length ? targets : ['all']) {
    if (t === 'all') {
      for (const s of STEPS) if (available(s, p)) wanted.add(s);
      for (const name of p.tables.only) tables.add(name);
    } else if ((STEPS as readonly string[]).includes(t)) {
      const s = t as Step;
      if (!available(s, p)) throw usageError(`target "${t}": pipeline ${p.name} does not include ${s}`, `see ${p.file}`);
      wanted.add(s);
      if (s === 'tables') for (const name of p.tables.only) tables.add(name);
    } else if (TABLE_TARGETS.includes(t)) {
      wanted.add('tables');
      tables.add(t);
    } else {
      throw usageError(`unknown target "${t}"`, `targets: ${TARGETS.join(', ')}`);
    }
  }
  const closure = new Set<Step>();
  const add = (s: Step) => {
    if (closure.has(s)) return;
    closure.add(s);
    for (const d of dependencies(s, p)) add(d);
  };
  for (const s of wanted) add(s);
  const dependsOn = Object.fromEntries(STEPS.map((s) => [s, dependencies(s, p)])) as Record<Step, Step[]>;
  return { steps: STEPS.filter((s) => closure.has(s)), tables: TABLE_TARGETS.filter((t) => tables.has(t)), dependsOn };
}

function available(step: Step, p: Pipeline): boolean {
  return STEP_TABLE[step].available(p);
}
