/**
 * Where a built benchmark's users come from: the demographics of an existing benchmark in the
 * released layout (the released 1,500 users by default, or the bundled sample), or a CSV / JSONL
 * file with PRISM-style fields; optionally a seeded sample of them. The users are numbered
 * user0, user1, ... in the source's order, as the released layout names them.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parse as parseCsv, CsvError } from 'csv-parse/sync';
import { PlensError } from '../../../core/errors.js';
import { parseJsonText } from '../../../core/json-input.js';
import { DEMOGRAPHIC_FIELDS, type Demographics } from './types.js';

/** A user as the source gave them, before numbering: the ten fields and where they came from. */
export interface SourceUser {
  /** The source's own id (a released user_id, a CSV/JSONL user_id, or `line N`). */
  source: string;
  fields: Record<(typeof DEMOGRAPHIC_FIELDS)[number], string>;
}

export interface DemographicsOptions {
  /** A folder in the released layout (its profile/user<N>/profile.json), or a .csv / .jsonl file. */
  from: string;
  /** Keep this many users, drawn with `seed` (all when absent). */
  users?: number;
  seed: number;
}

const HINT = `a folder in the released layout (profile/user<N>/profile.json), or a .csv / .jsonl file with the fields ${DEMOGRAPHIC_FIELDS.join(', ')} (an empty or missing value is "N/A")`;

const text = (v: unknown) => (v === undefined || v === null || (typeof v === 'string' && v.trim() === '') ? 'N/A' : String(v).trim());

/** A record's ten fields; a field of another type than text is an error at its place. */
function fieldsOf(o: Record<string, unknown>, file: string, where: { line?: number; pointer?: string }): SourceUser['fields'] {
  const out = {} as SourceUser['fields'];
  for (const f of DEMOGRAPHIC_FIELDS) {
    const v = o[f];
    if (v !== undefined && v !== null && typeof v !== 'string' && typeof v !== 'number')
      throw new PlensError('E_INPUT_SCHEMA', `${f} is not text`, {
        location: { file, ...where, ...(where.pointer ? { pointer: `${where.pointer}/${f}` } : {}) },
        hint: HINT,
      });
    out[f] = text(v);
  }
  return out;
}

function fromFolder(dir: string): SourceUser[] {
  const profiles = join(dir, 'profile');
  if (!existsSync(profiles)) throw new PlensError('E_INPUT_LAYOUT', `no profile/ folder in ${dir}`, { location: { file: dir }, hint: HINT });
  const users = readdirSync(profiles)
    .map((name) => /^user(\d+)$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  return users.map((m) => {
    const file = join(profiles, m[0], 'profile.json');
    const profile = parseJsonText(readFileSync(file, 'utf8'), file) as { demographics?: unknown };
    const d = profile.demographics;
    if (typeof d !== 'object' || d === null || Array.isArray(d))
      throw new PlensError('E_INPUT_SCHEMA', 'expected a demographics object', { location: { file, pointer: '/demographics' }, hint: HINT });
    return { source: m[0], fields: fieldsOf(d as Record<string, unknown>, file, { pointer: '/demographics' }) };
  });
}

function fromCsv(file: string): SourceUser[] {
  let rows: Array<Record<string, string>>;
  try {
    rows = parseCsv(readFileSync(file, 'utf8'), { columns: true, skip_empty_lines: true, bom: true, trim: true });
  } catch (error) {
    if (error instanceof CsvError)
      throw new PlensError('E_INPUT_SCHEMA', error.message, { location: { file, line: (error as { lines?: number }).lines ?? 0 }, hint: HINT });
    throw error;
  }
  const header = rows[0] ? Object.keys(rows[0]) : [];
  const missing = DEMOGRAPHIC_FIELDS.filter((f) => !header.includes(f));
  if (rows.length > 0 && missing.length === DEMOGRAPHIC_FIELDS.length)
    throw new PlensError('E_INPUT_SCHEMA', `the header names none of the demographic fields`, { location: { file, line: 1 }, hint: HINT });
  return rows.map((row, i) => ({ source: row['user_id'] || `line ${i + 2}`, fields: fieldsOf(row, file, { line: i + 2 }) }));
}

function fromJsonl(file: string): SourceUser[] {
  const out: SourceUser[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      const o = parseJsonText(line, file, i);
      if (typeof o !== 'object' || o === null || Array.isArray(o))
        throw new PlensError('E_INPUT_SCHEMA', 'expected an object a line', { location: { file, line: i + 1 }, hint: HINT });
      const r = o as Record<string, unknown>;
      out.push({ source: typeof r['user_id'] === 'string' ? r['user_id'] : `line ${i + 1}`, fields: fieldsOf(r, file, { line: i + 1 }) });
    });
  return out;
}

/** Every user of a source, in its order. */
export function readSourceUsers(from: string): SourceUser[] {
  if (!existsSync(from)) throw new PlensError('E_INPUT_NOT_FOUND', `no demographic source at ${from}`, { location: { file: from }, hint: HINT });
  if (statSync(from).isDirectory()) return fromFolder(from);
  const ext = extname(from).toLowerCase();
  if (ext === '.csv') return fromCsv(from);
  if (ext === '.jsonl') return fromJsonl(from);
  throw new PlensError('E_INPUT_SCHEMA', `a demographic source is a folder, a .csv or a .jsonl file, not ${ext || 'a file without extension'}`, {
    location: { file: from },
    hint: HINT,
  });
}

/**
 * The users a build starts from: the source's users, or `users` of them drawn with `seed` (each
 * ranked by sha256(seed, source id) and the first kept, then put back in the source's order), numbered
 * user0, user1, ... A draw of more users than the source has is an error.
 */
export function buildUsers(o: DemographicsOptions): Array<Demographics & { source: string }> {
  const all = readSourceUsers(o.from);
  if (all.length === 0) throw new PlensError('E_INPUT_SCHEMA', `no users in ${o.from}`, { location: { file: o.from }, hint: HINT });
  let kept = all.map((u, i) => ({ u, i }));
  if (o.users !== undefined) {
    if (o.users > all.length)
      throw new PlensError('E_USAGE', `build.demographics.users ${o.users}: the source has ${all.length} users`, {
        hint: `draw at most ${all.length}, or leave users out to take them all`,
      });
    const rank = (s: string) => createHash('sha256').update(`${o.seed}\u0000${s}`).digest('hex');
    kept = kept
      .map((x) => ({ ...x, r: rank(`${x.i}\u0000${x.u.source}`) }))
      .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0))
      .slice(0, o.users)
      .sort((a, b) => a.i - b.i);
  }
  return kept.map(({ u }, n) => ({ user_id: `user${n}`, ...u.fields, source: u.source }));
}
