import { usageError } from '../core/errors.js';
import type { Pipeline } from '../platform/pipeline.js';
import { tableCatalog } from '../registry/registry.js';
import { allSteps, type Step } from './steps.js';

export type { Step };

/** Every table any registered benchmark has: each is a target of its own (`plens make table3`). */
export function tableTargets(): string[] {
  return tableCatalog().flatMap((g) => g.tables.map((t) => t.name));
}

/** Every target: the steps, the tables, and `all`. */
export function targets(): string[] {
  return [...allSteps().map((s) => s.name), ...tableTargets(), 'all'];
}

export interface MakePlanGraph {
  steps: Step[];
  /** The tables to render: all the pipeline's, or only those named as targets. */
  tables: string[];
  dependsOn: Record<Step, Step[]>;
}

/** Targets -> the steps to consider (with everything they depend on), in dependency order. */
export function buildGraph(wantedTargets: string[], p: Pipeline): MakePlanGraph {
  const steps = allSteps();
  const byName = new Map(steps.map((s) => [s.name, s]));
  const tableNames = tableTargets();
  const wanted = new Set<Step>();
  const tables = new Set<string>();
  for (const t of wantedTargets.length ? wantedTargets : ['all']) {
    const s = byName.get(t);
    if (t === 'all') {
      for (const x of steps) if (x.available(p)) wanted.add(x.name);
      for (const name of p.tables.only) tables.add(name);
    } else if (s) {
      if (!s.available(p)) throw usageError(`target "${t}": pipeline ${p.name} does not include ${t}`, `see ${p.file}`);
      wanted.add(t);
      if (t === 'tables') for (const name of p.tables.only) tables.add(name);
    } else if (tableNames.includes(t)) {
      wanted.add('tables');
      tables.add(t);
    } else {
      throw usageError(`unknown target "${t}"`, `targets: ${targets().join(', ')}`);
    }
  }
  const closure = new Set<Step>();
  const add = (s: Step) => {
    if (closure.has(s)) return;
    closure.add(s);
    for (const d of byName.get(s)!.needs(p)) add(d);
  };
  for (const s of wanted) add(s);
  const dependsOn = Object.fromEntries(steps.map((s) => [s.name, s.needs(p)])) as Record<Step, Step[]>;
  return { steps: steps.filter((s) => closure.has(s.name)).map((s) => s.name), tables: tableNames.filter((t) => tables.has(t)), dependsOn };
}
