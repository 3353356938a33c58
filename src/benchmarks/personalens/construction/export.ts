/**
 * Writes a built benchmark in the released layout, byte for byte as the released files are written
 * (checked against all of them by test/benchmarks/personalens/construction/export.test.ts):
 *
 *   <out>/data/profile/user<N>/profile.json   json.dump(indent=4): ASCII only (non-ASCII as \uXXXX),
 *   <out>/data/profile/user<N>/tasks.json     no newline at the end; profile keys affinities,
 *   <out>/data/profile/user<N>/tasks_md.json  demographics, interests, interactions; tasks "Task 1".. in order
 *   <out>/data/task/<Domain>/task.jsonl       json.dumps(line) + "\n" per task (", " and ": ", ASCII only)
 *   <out>/res/schema.json                     the schema's text as given, or json.dump(indent=4, ensure_ascii=False)
 *   <out>/.plens-build.json                   the marker: what wrote the folder, and the fingerprint of its files
 *
 * The folder is built beside `<out>` and renamed into place only when whole. An existing `<out>` is
 * replaced only when nothing in it is a user's: an empty folder, or an earlier export's whose files
 * are still exactly those it wrote (the marker's fingerprint); anything else is refused.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeStaleTempSiblings, replaceDirectoryAtomic } from '../../../core/atomic.js';
import { PlensError } from '../../../core/errors.js';
import { pythonJsonDumps } from '../../../core/python-format.js';
import { MULTI_DOMAIN_DIR } from '../dataset/domains.js';
import type { DomainSchema } from '../dataset/upstream/preference-schema.js';
import { mdTaskId, sdTaskId } from '../dataset/upstream/task-definitions.js';
import { DEMOGRAPHIC_FIELDS, SITUATION_FIELDS, type AssignedTask, type BuiltUser, type Situation, type TaskDefinition } from './types.js';

export const BUILD_MARKER = '.plens-build.json';
const WRITTEN_BY = 'plens personalens build';

export interface BenchmarkToExport {
  /**
   * The preference schema: its file's text, written as it is (the released schema.json has hand-made
   * spacing no json.dump writes), or its records, written as json.dump(indent=4, ensure_ascii=False).
   */
  schema: string | readonly DomainSchema[];
  /** SD task definitions per domain (task/<Domain>/task.jsonl), each in Task Number order. */
  sdTasks: ReadonlyMap<string, readonly TaskDefinition[]>;
  /** MD task definitions (task/Multi-Domain/task.jsonl). */
  mdTasks: readonly TaskDefinition[];
  /** The users, in the order to write them; each becomes profile/<user_id>/. */
  users: Iterable<BuiltUser> | AsyncIterable<BuiltUser>;
}

export interface ExportSummary {
  out: string;
  users: number;
  sd_scenarios: number;
  md_scenarios: number;
  /** Files written, the marker not counted. */
  files: number;
  /** sha256 over the written files' paths and contents (the marker's). */
  fingerprint: string;
  /** An earlier export (or an empty folder) was there and is replaced. */
  replaced: boolean;
}

interface Marker {
  written_by: string;
  fingerprint: string;
  files: number;
  users: number;
  sd_scenarios: number;
  md_scenarios: number;
}

const USER_ID = /^user(0|[1-9][0-9]{0,8})$/;

export async function exportBenchmark(out: string, benchmark: BenchmarkToExport): Promise<ExportSummary> {
  await removeStaleTempSiblings(out);
  const replaced = await checkReplaceable(out);
  const before = await treeListing(out);
  const known = new Set<string>();
  for (const [domain, list] of benchmark.sdTasks) for (const d of list) known.add(sdTaskId(domain, d['Task Number']));
  for (const d of benchmark.mdTasks) known.add(mdTaskId(d['Task Number']));

  let summary: ExportSummary | undefined;
  await replaceDirectoryAtomic(out, async (staging) => {
    const hashes = new Map<string, string>();
    const write = (rel: string, text: string) => {
      writeFileSync(join(staging, rel), text);
      hashes.set(rel, sha256(text));
    };
    mkdirSync(join(staging, 'res'));
    write('res/schema.json', typeof benchmark.schema === 'string' ? benchmark.schema : schemaJson(benchmark.schema));
    for (const [domain, list] of [...benchmark.sdTasks, [MULTI_DOMAIN_DIR, benchmark.mdTasks] as const]) {
      if (!/^[A-Za-z][A-Za-z -]*$/.test(domain) || (domain === MULTI_DOMAIN_DIR && list !== benchmark.mdTasks)) {
        throw new PlensError('E_INPUT_DOMAIN', `"${domain}" cannot name a task folder (a domain name is letters and spaces, and not ${MULTI_DOMAIN_DIR})`);
      }
      mkdirSync(join(staging, 'data', 'task', domain), { recursive: true });
      write(`data/task/${domain}/task.jsonl`, taskJsonl(list));
    }
    mkdirSync(join(staging, 'data', 'profile'), { recursive: true });
    const seen = new Set<string>();
    let sd = 0;
    let md = 0;
    for await (const user of benchmark.users) {
      const id = user.demographics.user_id;
      if (!USER_ID.test(id)) throw new PlensError('E_INPUT_SCHEMA', `user_id "${id}" is not user<N>: the released layout names each user's folder by it`);
      if (seen.has(id)) throw new PlensError('E_INPUT_DUPLICATE', `user "${id}" comes twice`);
      seen.add(id);
      for (const task of [...user.sd, ...user.md]) {
        if (!known.has(task.task_id)) throw new PlensError('E_INPUT_REFERENCE', `${id}'s task "${task.task_id}" is not among the task definitions exported`);
      }
      mkdirSync(join(staging, 'data', 'profile', id));
      write(`data/profile/${id}/profile.json`, profileJson(user));
      write(`data/profile/${id}/tasks.json`, userTasksJson(user.sd, 'SD'));
      write(`data/profile/${id}/tasks_md.json`, userTasksJson(user.md, 'MD'));
      sd += user.sd.length;
      md += user.md.length;
    }
    if (seen.size === 0) throw new PlensError('E_INPUT_LAYOUT', 'no users to export');
    const fingerprint = await treeFingerprint(staging, hashes);
    const marker: Marker = { written_by: WRITTEN_BY, fingerprint, files: hashes.size, users: seen.size, sd_scenarios: sd, md_scenarios: md };
    writeFileSync(join(staging, BUILD_MARKER), `${JSON.stringify(marker, null, 2)}\n`);
    // Checked again just before the swap: the folder may have been made, or changed, while this one was written.
    if ((await treeListing(out)) !== before) await checkReplaceable(out);
    summary = { out, users: seen.size, sd_scenarios: sd, md_scenarios: md, files: hashes.size, fingerprint, replaced };
  });
  return summary!;
}

/** profile.json: json.dump(profile, indent=4) with the keys affinities, demographics, interests, interactions. */
export function profileJson(user: BuiltUser): string {
  const demographics: Record<string, string> = { user_id: user.demographics.user_id };
  for (const field of DEMOGRAPHIC_FIELDS) demographics[field] = user.demographics[field];
  const profile = { affinities: user.affinities, demographics, interests: user.interests, interactions: user.interactions };
  return dumpIndented(profile);
}

/**
 * tasks.json (SD) / tasks_md.json (MD): `Task 1`.. in order, each with the released fields in the
 * released order (SD: Relevant Domains last; MD: Relevant Domains after Task Goal).
 */
export function userTasksJson(tasks: ReadonlyArray<AssignedTask & { situations: Situation }>, kind: 'SD' | 'MD'): string {
  const out: Record<string, unknown> = {};
  tasks.forEach((task, i) => {
    const d = task.definition;
    const situations: Record<string, string> = {};
    for (const field of SITUATION_FIELDS) situations[field] = task.situations[field];
    out[`Task ${i + 1}`] =
      kind === 'SD'
        ? {
            'Task Description': d['Task Description'],
            'User Intent': d['User Intent'],
            'Task Goal': d['Task Goal'],
            'Relevant Affinity Types': d['Relevant Affinity Types'],
            task_id: task.task_id,
            situations,
            'Relevant Domains': task.domains,
          }
        : {
            'Task Description': d['Task Description'],
            'User Intent': d['User Intent'],
            'Task Goal': d['Task Goal'],
            'Relevant Domains': task.domains,
            'Relevant Affinity Types': d['Relevant Affinity Types'],
            task_id: task.task_id,
            situations,
          };
  });
  return dumpIndented(out);
}

/**
 * json.dump(value, indent=4) as Python writes it (ensure_ascii: every character past `~` as a
 * lower-case \uXXXX, a surrogate pair for one past U+FFFF). JSON.stringify with an indent of 4 writes
 * the same layout and escapes, and is several times faster than pythonJsonDumps on 220 MB; it would
 * write a float another way (`1` for 1.0), but the profiles and task lists hold strings and the
 * 0 / 1 of the mask only.
 */
function dumpIndented(value: unknown): string {
  const text = JSON.stringify(value, null, 4);
  return NON_ASCII.test(text) ? text.replace(NON_ASCII_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}
const NON_ASCII = /[\u007f-\uffff]/;
const NON_ASCII_ALL = /[\u007f-\uffff]/g;

/** task.jsonl: one json.dumps(task) a line, each ending in "\n"; Relevant Domains (MD tasks) before the affinity types. */
export function taskJsonl(definitions: readonly TaskDefinition[]): string {
  return definitions
    .map((d) => {
      const line = {
        'Task Number': d['Task Number'],
        'Task Description': d['Task Description'],
        'User Intent': d['User Intent'],
        'Task Goal': d['Task Goal'],
        ...(d['Relevant Domains'] === undefined ? {} : { 'Relevant Domains': d['Relevant Domains'] }),
        'Relevant Affinity Types': d['Relevant Affinity Types'],
      };
      return `${pythonJsonDumps(line, { ensureAscii: true })}\n`;
    })
    .join('');
}

/** schema.json from its records: json.dump(indent=4, ensure_ascii=False), keys in the released order. */
export function schemaJson(domains: readonly DomainSchema[]): string {
  const ordered = domains.map((d) => ({
    domain: d.domain,
    ...(d.description === undefined ? {} : { description: d.description }),
    ...(d.tasks === undefined ? {} : { tasks: d.tasks.map((t) => ({ name: t.name, ...(t.description === undefined ? {} : { description: t.description }) })) }),
    affinities: d.affinities.map((a) => ({
      name: a.name,
      ...(a.description === undefined ? {} : { description: a.description }),
      is_categorical: a.is_categorical,
      has_multiple_values: a.has_multiple_values,
      possible_values: a.possible_values,
    })),
  }));
  return pythonJsonDumps(ordered, { indent: 4, ensureAscii: false });
}

/**
 * Whether `out` may be replaced: absent (no), an empty folder or an earlier export left as it wrote
 * it (yes); anything else is a user's, and refused.
 */
async function checkReplaceable(out: string): Promise<boolean> {
  const refuse = (why: string, hint = 'export to a new or empty folder, or move this one away first') =>
    new PlensError('E_USAGE', `${out} ${why}; nothing was written`, { location: { file: out }, hint });
  let isDir: boolean;
  try {
    isDir = (await lstat(out)).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  if (!isDir) throw refuse('exists and is not a folder');
  const names = await readdir(out);
  if (names.length === 0) return true;
  if (!names.includes(BUILD_MARKER)) throw refuse(`already exists and was not written by ${WRITTEN_BY} (it has no ${BUILD_MARKER})`);
  let marker: Partial<Marker>;
  try {
    marker = JSON.parse(await readFile(join(out, BUILD_MARKER), 'utf8')) as Partial<Marker>;
  } catch {
    marker = {};
  }
  if (marker.written_by !== WRITTEN_BY || typeof marker.fingerprint !== 'string') throw refuse(`has a ${BUILD_MARKER} that ${WRITTEN_BY} did not write`);
  if ((await treeFingerprint(out)) !== marker.fingerprint) {
    throw refuse(
      'was written by an earlier export, but its files have changed since (edited, added or removed)',
      'move what you changed or added out of it, or export to another folder',
    );
  }
  return true;
}

type Entry = { path: string; kind: 'dir' | 'file' | 'symlink' | 'other' };

/** Everything under root but the marker, as paths relative to it, sorted. */
async function treeEntries(root: string): Promise<Entry[]> {
  const out: Entry[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true })) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (path === BUILD_MARKER) continue;
      out.push({ path, kind: e.isDirectory() ? 'dir' : e.isFile() ? 'file' : e.isSymbolicLink() ? 'symlink' : 'other' });
      if (e.isDirectory()) await walk(path);
    }
  };
  await walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * sha256 over a folder's entries (the marker excepted): a folder as `path/`, a file as `path` and
 * its content's sha256 (from `known` where given, else read), anything else by its kind.
 */
async function treeFingerprint(root: string, known?: ReadonlyMap<string, string>): Promise<string> {
  const lines: string[] = [];
  for (const { path, kind } of await treeEntries(root)) {
    if (kind === 'dir') lines.push(`${path}/`);
    else if (kind === 'file') lines.push(`${path}\0${known?.get(path) ?? sha256(await readFile(join(root, path)))}`);
    else lines.push(`${path}\0${kind}`);
  }
  return sha256(lines.join('\n'));
}

/** What is in a folder by name, size and time (cheap, to see that nothing changed since a check); '' where there is none. */
async function treeListing(root: string): Promise<string> {
  let entries: Entry[];
  try {
    entries = await treeEntries(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
  const lines = ['.'];
  for (const { path, kind } of [...entries, { path: BUILD_MARKER, kind: 'file' }]) {
    const st = await lstat(join(root, path)).catch(() => undefined);
    lines.push(`${path}\0${kind}\0${st?.size ?? '-'}\0${st?.mtimeMs ?? '-'}`);
  }
  return lines.join('\n');
}

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
