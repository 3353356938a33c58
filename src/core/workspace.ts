import { resolve } from 'node:path';

/**
 * The workspace holds every stage's outputs (default ./out). Each benchmark lays out its own
 * folders in it (PersonaLens: benchmarks/personalens/dataset/workspace-files.ts).
 */
export class Workspace {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }
}
