import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { fileStamp, fileStats } from '../core/file-stamps.js';
import { plensVersion } from '../core/version.js';
import type { LexicalProtocol } from '../stats/lexical.js';
import { speakerGroupsInOrder, type SpeakerGroup } from '../stats/speaker-groups.js';
import { stepCacheDir } from './step-cache.js';

/**
 * A warehouse is rebuilt only when something it is built from changed, as make decides: the
 * fingerprint of its inputs (every Parquet file of the workspace by path, size and mtime; the SQL
 * files by content; the plens version; Table 10's protocols and laps speaker groups) is recorded beside the database after
 * each build, with the database file's own stamp, in `<db>.steps/build.json`. A build whose inputs
 * and database are both as recorded has nothing to do.
 */

export interface WarehouseInputs {
  workspaceRoot: string;
  sqlDir: string;
  dbPath: string;
  lexical: readonly LexicalProtocol[];
  /** The laps protocol's speaker groups, in any order. */
  lapsSpeakers: readonly SpeakerGroup[];
}

interface BuildRecord {
  inputs: string;
  /** fileStamp of the database as the build left it: a database changed since is rebuilt too. */
  db: string;
}

const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 24);

/** The fingerprint of everything a build reads. */
export function warehouseInputs(o: WarehouseInputs): string {
  // The step cache may sit inside the workspace (a warehouse beside its data): its Parquet files are
  // the build's outputs, not its inputs. So are rendered tables and reports.
  const steps = relative(o.workspaceRoot, stepCacheDir(o.dbPath));
  const parquet = fileStats(
    o.workspaceRoot,
    (name) => name.endsWith('.parquet'),
    (dir) => dir === steps || dir === 'tables' || dir === 'report',
  );
  const sql = fileStats(o.sqlDir, (name) => name.endsWith('.sql')).map(([f]) => [f, sha(readFileSync(join(o.sqlDir, f), 'utf8'))]);
  const lexical = [...o.lexical].sort();
  // The laps speaker groups count only when laps runs.
  const laps = lexical.includes('laps') ? speakerGroupsInOrder(o.lapsSpeakers) : [];
  return sha(['warehouse', plensVersion, o.workspaceRoot, parquet, sql, lexical, laps]);
}

const recordFile = (dbPath: string) => join(stepCacheDir(dbPath), 'build.json');

/** Whether the database at `dbPath` is the one a build from exactly these inputs left. */
export function isBuildCurrent(dbPath: string, inputs: string): boolean {
  let record: BuildRecord;
  try {
    record = JSON.parse(readFileSync(recordFile(dbPath), 'utf8')) as BuildRecord;
  } catch {
    return false;
  }
  return record.inputs === inputs && record.db === fileStamp(dbPath);
}

/** Records a finished build; a record that cannot be written only costs the next build its shortcut. */
export async function recordBuild(dbPath: string, inputs: string): Promise<void> {
  const db = fileStamp(dbPath);
  if (db === null) return;
  try {
    await writeFileAtomic(recordFile(dbPath), JSON.stringify({ inputs, db } satisfies BuildRecord) + '\n');
  } catch {
    // As with the step cache: it only saves time.
  }
}
