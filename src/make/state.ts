import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { Workspace } from '../core/workspace.js';
import { plensVersion } from '../core/version.js';
import { DATASET_FORMAT } from '../benchmarks/personalens/dataset/tables.js';
import { Partition } from '../engine/partition.js';
import { DIALOGUES_FORMAT, JUDGMENTS_FORMAT } from '../benchmarks/personalens/records.js';
import { defaultSqlDir } from '../warehouse/build.js';
import { predictionsRoot, scoresRoot } from '../benchmarks/personabench/predict.js';
import { embeddingsStateOf } from '../llm/embedders.js';
import type { Pipeline } from './pipeline.js';

/**
 * What each non-keyed stage was last built from. The LLM stages need none of this: their keys
 * already say what is done. The others (import, scenarios, warehouse, tables, report) are rebuilt
 * when the fingerprint of their inputs changes.
 */
export interface MakeState {
  [step: string]: { inputs: string; output?: string } | undefined;
}

export function statePath(p: Pipeline): string {
  return join(p.workspace, 'make', `${p.name}.state.json`);
}

export function readState(p: Pipeline): MakeState {
  try {
    return JSON.parse(readFileSync(statePath(p), 'utf8')) as MakeState;
  } catch {
    return {};
  }
}

export async function writeState(p: Pipeline, state: MakeState): Promise<void> {
  await writeFileAtomic(statePath(p), JSON.stringify(state, null, 2) + '\n');
}

export function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/** Path, size and mtime of every file below `dir` (recursively) that passes `keep`. */
function fileStats(dir: string, keep: (name: string) => boolean = () => true): Array<[string, number, number]> {
  const out: Array<[string, number, number]> = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else if (keep(name)) out.push([relative(dir, p), st.size, Math.round(st.mtimeMs)]);
    }
  };
  walk(dir);
  return out;
}

export function fileStamp(file: string): string | null {
  const st = statSync(file, { throwIfNoEntry: false });
  return st ? `${st.size}:${Math.round(st.mtimeMs)}` : null;
}

/** A stage's manifest.json, or null when it is missing or unreadable (make then treats the stage as not done). */
export function readManifest<T = Record<string, unknown>>(dir: string): T | null {
  try {
    return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as T;
  } catch {
    return null;
  }
}

/** The `created_at` of a stage's manifest: a new import or selection, by us or by hand, changes it. */
export function manifestStamp(dir: string): string | null {
  return readManifest<{ created_at?: string }>(dir)?.created_at ?? null;
}

export function importInputs(p: Pipeline): string {
  const data = p.data!;
  const schema = data.schema ?? join(dirname(data.from), 'res', 'schema.json');
  return hash(['import', plensVersion, DATASET_FORMAT, data.from, data.schema ?? null, fileStats(data.from), existsSync(schema) ? fileStamp(schema) : null]);
}

export function scenariosInputs(p: Pipeline): string {
  return hash(['scenarios', p.selection, manifestStamp(new Workspace(p.workspace).datasetDir)]);
}

/** PERSONA-bench: the folder `plens persona select` writes for the pipeline's fidelity (the CLI's default too). */
export function personaSelectionDir(p: Pipeline): string {
  return join(p.workspace, 'persona', `selection-${p.persona!.fidelity}`);
}

/** The selection's summary.json, written last into its folder: its stamp says which selection is there. */
export function personaSelectionStamp(p: Pipeline): string | null {
  return fileStamp(join(personaSelectionDir(p), 'summary.json'));
}

/** What the selection reads: the input file and how it selects (tasks, settings and models choose among its prompts later). */
export function personaSelectInputs(p: Pipeline): string {
  const s = p.persona!;
  return hash(['persona-select', plensVersion, s.source, fileStamp(s.source), s.fidelity, s.seed]);
}

/** The metrics file the scores step writes. */
export function personaMetricsFile(p: Pipeline): string {
  return join(scoresRoot(p.workspace), 'metrics.parquet');
}

/** What scoring reads: every compacted predictions file in the workspace (it scores them all) and the SBERT endpoint or model folder. */
export function personaScoresInputs(p: Pipeline): string {
  const predictions = fileStats(predictionsRoot(p.workspace), (n) => n === 'predictions.parquet');
  return hash(['persona-scores', plensVersion, predictions, p.persona!.embeddings === undefined ? null : embeddingsStateOf(p.persona!.embeddings)]);
}

/** Everything the warehouse reads: the workspace's Parquet files, the SQL files, the statistics asked for. */
export function warehouseInputs(p: Pipeline): string {
  const parquet = fileStats(p.workspace, (n) => n.endsWith('.parquet')).filter(([f]) => !f.startsWith('tables') && !f.startsWith('report'));
  const sql = fileStats(defaultSqlDir, (n) => n.endsWith('.sql')).map(([f]) => [f, hash(readFileSync(join(defaultSqlDir, f), 'utf8'))]);
  return hash(['warehouse', plensVersion, parquet, sql, p.lexical]);
}

/** A partition whose logs are newer than its compacted Parquet (e.g. a run was killed before compaction). */
export function needsCompaction(dir: string, output: 'dialogues' | 'judgments'): boolean {
  return new Partition(dir, output === 'dialogues' ? DIALOGUES_FORMAT : JUDGMENTS_FORMAT).needsCompaction();
}
