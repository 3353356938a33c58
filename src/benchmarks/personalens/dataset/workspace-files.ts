import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PlensError } from '../../../core/errors.js';
import { parseJsonText, readInputTextSync } from '../../../core/json-input.js';
import { assertValid } from '../../../core/validator.js';
import type { Workspace } from '../../../core/workspace.js';

/**
 * The format of a workspace's dataset/ folder (the tables of tables.ts): bumped whenever a dataset
 * table changes shape; later stages refuse an import of another format.
 */
export const DATASET_FORMAT = 2;

/** Where `plens import` writes the release's tables. */
export function datasetDir(ws: Workspace): string {
  return join(ws.root, 'dataset');
}

/** One imported table's Parquet file. */
export function datasetFile(ws: Workspace, table: string): string {
  return join(datasetDir(ws), `${table}.parquet`);
}

/** Where `plens scenarios` writes the selection. */
export function scenariosDir(ws: Workspace): string {
  return join(ws.root, 'scenarios');
}

/** The selected scenarios' Parquet file. */
export function scenariosFile(ws: Workspace): string {
  return join(scenariosDir(ws), 'scenarios.parquet');
}

/** The import's manifest, checked: a stage never builds on a missing or damaged import. */
export function requireDataset(ws: Workspace): void {
  const dir = datasetDir(ws);
  const file = join(dir, 'manifest.json');
  if (!existsSync(file)) {
    throw new PlensError('E_PREREQUISITE', `no imported dataset in ${dir}`, {
      hint: 'run `plens import --from <data dir>` first (or pass --workspace)',
    });
  }
  const manifest = parseJsonText(readInputTextSync(file), file);
  assertValid<{ dataset_format?: number; plens_version: string; tables: Record<string, { file: string }> }>('plens:manifest', manifest, { file });
  if (manifest.dataset_format !== DATASET_FORMAT) {
    throw new PlensError(
      'E_PREREQUISITE',
      `the import was made by plens ${manifest.plens_version} in another dataset format (${manifest.dataset_format ?? 1}, this plens reads ${DATASET_FORMAT})`,
      {
        location: { file },
        hint: 'rerun `plens import`; dialogue and judgment keys do not change',
      },
    );
  }
  for (const table of Object.values(manifest.tables)) {
    if (!existsSync(join(dir, table.file))) {
      throw new PlensError('E_PREREQUISITE', `the import is incomplete: ${table.file} is missing`, {
        location: { file },
        hint: 'rerun `plens import`',
      });
    }
  }
}
