import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { fileStamp, fileStats } from '../core/file-stamps.js';
import { plensVersion } from '../core/version.js';
import type { LexicalProtocol } from '../stats/lexical.js';
import { speakerGroupsInOrder, type SpeakerGroup } from '../stats/speaker-groups.js';
import { stepCacheDir } from './step-cache.js';

/**
 * A warehouse is rebuilt only when something it is built from changed, as make decides: the
 * fingerprint of its inputs (every Parquet file and run record of the workspace by path, size and mtime; the SQL
 * files by content; the plens version; Table 10's protocols and laps speaker groups) is recorded beside the database after
 * each build, with the database file's own stamp, in `<db>.steps/build.json`. A build whose inputs
 * and database are both as recorded has nothing to do.
 */

export interface WarehouseInputs {
  workspaceRoot: string;
  /** The folders of SQL files the build runs. */
  sqlDirs: readonly string[];
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
  // Each folder's own files (a folder's subfolders are listed as folders of their own).
  const texts = o.sqlDirs.map((dir) => ({
    dir,
    files: fileStats(
      dir,
      (name) => name.endsWith('.sql'),
      () => true,
    ).map(([f]) => ({ name: f, text: readFileSync(join(dir, f), 'utf8') })),
  }));
  const sql = texts.map((d) => [d.dir, d.files.map((f) => [f.name, sha(f.text)])]);
  // Other files the SQL reads, as its `-- requires-file:` headers name them (run records in
  // runs/*.json, a plug-in's JSON): one started, finished or changed since changes the build.
  const patterns = [...new Set(texts.flatMap((d) => d.files.flatMap((f) => requiredFiles(f.text))).filter((pattern) => !pattern.endsWith('.parquet')))].sort();
  // A make run's own record (runs/make-*.json) is read but does not make a build stale: it is
  // finished after the make's warehouse step, and would otherwise make every make rebuild.
  const runs = patterns.map((pattern) => [pattern, matchingFiles(o.workspaceRoot, pattern).filter(([f]) => !/(^|\/)make-[^/]*$/.test(f))]);
  const lexical = [...o.lexical].sort();
  // The laps speaker groups count only when laps runs.
  const laps = lexical.includes('laps') ? speakerGroupsInOrder(o.lapsSpeakers) : [];
  return sha(['warehouse', plensVersion, o.workspaceRoot, parquet, runs, sql, lexical, laps]);
}

/** The workspace-relative patterns a SQL file's `-- requires-file:` headers name. */
function requiredFiles(sql: string): string[] {
  const out: string[] = [];
  for (const line of sql.split('\n')) {
    const m = /^--\s*requires-file:\s*(.+)$/.exec(line.trim());
    if (m)
      out.push(
        ...m[1]!
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      );
  }
  return out;
}

/** The files a workspace-relative pattern matches (`*` within one path segment), with their size and mtime. */
function matchingFiles(root: string, pattern: string): Array<[string, number, number]> {
  const [head, ...rest] = pattern.split('/');
  if (head === undefined) return [];
  const re = new RegExp(`^${head.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
  let names: string[];
  try {
    names = readdirSync(root)
      .filter((n) => re.test(n))
      .sort();
  } catch {
    return [];
  }
  return names.flatMap((n): Array<[string, number, number]> => {
    const path = join(root, n);
    if (rest.length) return matchingFiles(path, rest.join('/')).map(([f, size, mtime]) => [`${n}/${f}`, size, mtime]);
    const st = statSync(path, { throwIfNoEntry: false });
    return st?.isFile() ? [[n, st.size, Math.round(st.mtimeMs)]] : [];
  });
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
