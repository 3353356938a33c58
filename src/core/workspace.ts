import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PlensError } from './errors.js';

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

  requireDataset(): void {
    if (!existsSync(join(this.datasetDir, 'manifest.json'))) {
      throw new PlensError('E_PREREQUISITE', `no imported dataset in ${this.datasetDir}`, {
        hint: 'run `plens import --from <data dir>` first (or pass --workspace)',
      });
    }
  }
}
