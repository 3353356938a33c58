import { statSync } from 'node:fs';

/** What one query of a result view gave. */
export interface ViewResult {
  rows: Record<string, unknown>[];
  notes: string[];
}

/**
 * The result views' rows one warehouse build gave, kept for the next reader of the same build: make's
 * tables step and its report step query the same views, and the result views' bootstrap intervals cost
 * about a second on the demo. Tied to the warehouse file (its inode, size and modification time): a
 * rebuilt warehouse, swapped into place, empties it.
 */
export class ViewRows {
  private stamp = '';
  private readonly views = new Map<string, ViewResult>();

  /** The rows kept for this warehouse file: none when it changed since they were kept. */
  of(dbPath: string): Map<string, ViewResult> {
    const s = statSync(dbPath);
    const stamp = `${s.ino}:${s.size}:${s.mtimeMs}`;
    if (stamp !== this.stamp) {
      this.views.clear();
      this.stamp = stamp;
    }
    return this.views;
  }
}
