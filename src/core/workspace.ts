import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { assertValid } from './validator.js';
import { PlensError } from './errors.js';
import { parseJsonText, readInputTextSync } from './json-input.js';

/**
 * The format of the dataset/ folder (the tables of benchmarks/personalens/dataset/tables.ts): bumped
 * whenever a dataset table changes shape; later stages refuse an import of another format.
 */
export const DATASET_FORMAT = 2;

/**
 * The workspace holds every stage's outputs (default ./out): dataset/ from import,
 * scenarios/ from the scenarios stage; later stages add their own folders.
 */
export class Workspace {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  get datasetDir(): string {
    return join(this.root, 'dataset');
  }
  get scenariosDir(): string {
    return join(this.root, 'scenarios');
  }
  datasetFile(table: string): string {
    return join(this.datasetDir, `${table}.parquet`);
  }
  get scenariosFile(): string {
    return join(this.scenariosDir, 'scenarios.parquet');
  }

  /** The import's manifest, checked: a stage never builds on a missing or damaged import. */
  requireDataset(): void {
    const file = join(this.datasetDir, 'manifest.json');
    if (!existsSync(file)) {
      throw new PlensError('E_PREREQUISITE', `no imported dataset in ${this.datasetDir}`, {
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
      if (!existsSync(join(this.datasetDir, table.file))) {
        throw new PlensError('E_PREREQUISITE', `the import is incomplete: ${table.file} is missing`, {
          location: { file },
          hint: 'rerun `plens import`',
        });
      }
    }
  }
}
