import { join } from 'node:path';
import { fileStamp, fileStats } from '../../core/file-stamps.js';
import { plensVersion } from '../../core/version.js';
import { embeddingsStateOf } from '../../llm/embeddings-spec.js';
import { hash } from '../../platform/make-state.js';
import { ORIGINAL_MAKERS } from './original-makers.js';
import type { PersonaBenchPipeline } from './pipeline-settings.js';
import { predictionsRoot, scoresRoot } from './workspace-paths.js';

/** The folder `plens persona select` writes for the pipeline's fidelity (the CLI's default too). */
export function personaSelectionDir(p: PersonaBenchPipeline): string {
  return join(p.workspace, 'persona', `selection-${p.persona.fidelity}`);
}

/** The selection's summary.json, written last into its folder: its stamp says which selection is there. */
export function personaSelectionStamp(p: PersonaBenchPipeline): string | null {
  return fileStamp(join(personaSelectionDir(p), 'summary.json'));
}

/** What the selection reads: the input file and how it selects (tasks, settings and models choose among its prompts later). */
export function personaSelectInputs(p: PersonaBenchPipeline): string {
  const s = p.persona;
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
export function personaMetricsFile(p: PersonaBenchPipeline): string {
  return join(scoresRoot(p.workspace), 'metrics.parquet');
}

/** What scoring reads: every compacted predictions file in the workspace (it scores them all) and the SBERT endpoint or model folder. */
export function personaScoresInputs(p: PersonaBenchPipeline): string {
  const predictions = fileStats(predictionsRoot(p.workspace), (n) => n === 'predictions.parquet');
  return hash(['persona-scores', plensVersion, predictions, p.persona.embeddings === undefined ? null : embeddingsStateOf(p.persona.embeddings)]);
}
