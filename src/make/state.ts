import { ORIGINAL_MAKERS } from '../benchmarks/personabench/original-makers.js';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { fileStamp, fileStats } from '../core/file-stamps.js';
import { Workspace } from '../core/workspace.js';
import { plensVersion } from '../core/version.js';
import { DATASET_FORMAT } from '../benchmarks/personalens/dataset/tables.js';
import { Partition } from '../engine/partition.js';
import { DIALOGUES_FORMAT, JUDGMENTS_FORMAT } from '../benchmarks/personalens/records.js';
import { defaultSqlDir } from '../warehouse/build.js';
import { warehouseInputs as buildInputs } from '../warehouse/build-record.js';
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
  // With the original's makers, their scripts are inputs too: a changed checkout re-selects.
  const original =
    s.original === undefined
      ? []
      : [
          s.original,
          s.python ?? 'python3',
          ...ORIGINAL_MAKERS.map((m) => fileStamp(join(s.original!, 'PromptMakers', m.script))),
          fileStamp(join(s.original, 'Raw_Data_Process.py')),
        ];
  return hash(['persona-select', plensVersion, s.source, fileStamp(s.source), s.fidelity, s.seed, ...original]);
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
  return buildInputs({ workspaceRoot: p.workspace, sqlDir: defaultSqlDir, dbPath: p.warehouse, lexical: p.lexical, lapsSpeakers: p.lapsSpeakers });
}

/** A partition whose logs are newer than its compacted Parquet (e.g. a run was killed before compaction). */
export function needsCompaction(dir: string, output: 'dialogues' | 'judgments'): boolean {
  return new Partition(dir, output === 'dialogues' ? DIALOGUES_FORMAT : JUDGMENTS_FORMAT).needsCompaction();
}
