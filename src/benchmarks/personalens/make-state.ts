import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileStamp, fileStats } from '../../core/file-stamps.js';
import { plensVersion } from '../../core/version.js';
import { Workspace } from '../../core/workspace.js';
import { hash, manifestStamp } from '../../platform/make-state.js';
import { DATASET_FORMAT } from './dataset/tables.js';
import type { PersonaLensPipeline } from './pipeline-section.js';
import { datasetDir } from './dataset/workspace-files.js';

export function importInputs(p: PersonaLensPipeline): string {
  const data = p.data!;
  const schema = data.schema ?? join(dirname(data.from), 'res', 'schema.json');
  return hash(['import', plensVersion, DATASET_FORMAT, data.from, data.schema ?? null, fileStats(data.from), existsSync(schema) ? fileStamp(schema) : null]);
}

export function scenariosInputs(p: PersonaLensPipeline): string {
  return hash(['scenarios', p.selection, manifestStamp(datasetDir(new Workspace(p.workspace)))]);
}
