/**
 * Reading the construction stages' replies (../shared/spec/personalens-construction.md; paper
 * Figures 6, 7, 9, 10, 11, 21). One parser per stage, `(text, context) => ParseResult<V>`: the
 * value and what was noticed (`notes`), or a refusal with its {@link ParseState}, which the stage
 * records (and `--retry-failed` asks again). A parser never throws and never returns an object
 * whose keys came from the reply: every output is built from the schema's (or the profile's)
 * names, in their order, so keys like `__proto__` or `constructor` in a reply are only ever
 * refused as unknown.
 *
 * Formats (plens's own; the prompts ask for exactly these):
 * - domain mask: a JSON object, every schema domain -> 0 | 1 ({@link parseMask});
 * - preferences: a JSON object, every preference type of the domain -> a string, or a list of
 *   strings for `has_multiple_values` types ({@link parsePreferences});
 * - past interactions: plain text ({@link parseInteractions});
 * - SD tasks: a JSON array of N objects with "Task Description", "User Intent", "Task Goal",
 *   "Relevant Affinity Types" ({@link parseSdTasks});
 * - MD tasks: XML, `<response>` with N `<task>` elements ({@link parseMdTasks});
 * - situations: labelled lines, `Location: ...` then `Justification: ...`, and so on for the five
 *   variables ({@link parseSituation});
 * - consistency check: XML, `<domain name="...">` elements and one `<cross_domain>`
 *   ({@link parseConsistency}).
 *
 * Common rules:
 * - JSON: the reply may hold the JSON inside a ``` fence (```json or bare) or with prose around
 *   it; the first balanced object (or array) that JSON.parse accepts is taken, trying at most
 *   {@link MAX_JSON_CANDIDATES} starting brackets. Nesting deeper than {@link MAX_JSON_DEPTH} is
 *   refused outright (`not_json`).
 * - A reply longer than {@link MAX_REPLY_CHARS} is refused (`not_json` / `not_xml` by the stage's
 *   format, `bad_value` for the plain-text stages).
 * - Every kept string is trimmed; one holding a control character (other than tab, newline,
 *   carriage return) is refused as `bad_value`, as is one that is empty after trimming.
 * - Names (domains, preference types, JSON keys) are matched exactly, as the prompt gives them.
 *   Exceptions, each noted in `notes.reshaped`: situation values (case-insensitive against their
 *   closed set), a mask key with markdown emphasis around a domain name, a task's affinity type
 *   written as `Type (Domain)`, and "Relevant Preference Types" for "Relevant Affinity Types".
 * - `notes.reshaped` entries read `<name>: <what was done>`; `notes.off_list` entries
 *   `<type>: <value>`.
 */
import type { DomainSchema, PreferenceType } from '../dataset/upstream/preference-schema.js';
import {
  SITUATION_FIELDS,
  SITUATION_VALUES,
  type ConsistencyVerdict,
  type DomainMask,
  type DomainPreferences,
  type GeneratedSituation,
  type ParseNotes,
  type ParseResult,
  type ParseState,
  type PreferenceValue,
  type Situation,
  type SituationField,
  type TaskDefinition,
} from './types.js';

/** The longest reply read; a longer one is refused (the longest real reply, 25 MD tasks, is about 30,000 characters). */
export const MAX_REPLY_CHARS = 400_000;
/** The deepest JSON nesting read (a valid reply nests 3 deep). */
export const MAX_JSON_DEPTH = 32;
/** How many opening brackets are tried before a JSON reply is given up as `not_json`. */
export const MAX_JSON_CANDIDATES = 10;

/** What the parsers need of the preference schema ({@link PreferenceSchema} has it). */
export interface SchemaLike {
  readonly domains: readonly DomainSchema[];
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

type Refusal = { ok: false; state: ParseState; error: string };

function refuse(state: ParseState, error: string): Refusal {
  return { ok: false, state, error };
}

function isRefusal(v: unknown): v is Refusal {
  return isObject(v) && v['ok'] === false;
}

function accept<V>(value: V, notes: ParseNotes): ParseResult<V> {
  return { ok: true, value, notes };
}

function newNotes(): ParseNotes {
  return { off_list: [], reshaped: [] };
}

/** A value for an error message: quoted, escaped, cut to 60 characters. */
function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? v.slice(0, 57) + '...' : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return String(v);
}

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** A kept string: trimmed, non-empty, no control characters; otherwise null. */
function cleanString(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const s = v.trim();
  if (s === '' || CONTROL.test(s)) return null;
  return s;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An own property only (never one inherited from Object.prototype). */
function own(o: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

/** Runs a parser so that nothing escapes it: an unexpected exception becomes a refusal. */
function guarded<V>(fallback: ParseState, text: unknown, parse: (text: string) => ParseResult<V>): ParseResult<V> {
  if (typeof text !== 'string') return refuse(fallback, 'the reply is not text');
  if (text.length > MAX_REPLY_CHARS) return refuse(fallback, `the reply is too long (${text.length} characters, at most ${MAX_REPLY_CHARS})`);
  try {
    return parse(text);
  } catch (e) {
    return refuse(fallback, `unreadable reply (${e instanceof Error ? e.message : String(e)})`);
  }
}

// ---------------------------------------------------------------------------------------------
// JSON

type Extracted = { value: unknown } | { error: string };

/** Where the balanced bracket opened at `start` closes (exclusive), 'deep' past the depth limit, or -1. */
function balancedEnd(s: string, start: number): number | 'deep' {
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > MAX_JSON_DEPTH) return 'deep';
    } else if (c === 125 || c === 93) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

function firstBalanced(s: string, opens: string): Extracted | null {
  let from = 0;
  for (let attempt = 0; attempt < MAX_JSON_CANDIDATES; attempt++) {
    let start = -1;
    for (const o of opens) {
      const i = s.indexOf(o, from);
      if (i >= 0 && (start < 0 || i < start)) start = i;
    }
    if (start < 0) return null;
    const end = balancedEnd(s, start);
    if (end === 'deep') return { error: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` };
    if (end > 0) {
      try {
        return { value: JSON.parse(s.slice(start, end)) as unknown };
      } catch {
        // prose in brackets, or broken JSON: try the next bracket
      }
    }
    from = start + 1;
  }
  return null;
}

const FENCE = /```[ \t]*(?:json|JSON|js|javascript)?[ \t]*\r?\n([\s\S]*?)```/;

/**
 * The reply's JSON: the first fenced block's if it holds one, else the first balanced object or
 * array (by `opens`) in the reply that parses.
 */
function extractJson(text: string, opens: '{' | '[' | '{['): Extracted {
  const fence = FENCE.exec(text);
  if (fence) {
    const inFence = firstBalanced(fence[1]!, opens);
    if (inFence) return inFence;
  }
  return firstBalanced(text, opens) ?? { error: `no JSON ${opens === '[' ? 'array' : opens === '{' ? 'object' : 'value'} found` };
}

// ---------------------------------------------------------------------------------------------
// Domain mask

/**
 * The domain mask: a JSON object mapping every schema domain to 0 or 1 (1 = interested).
 *
 * Decisions:
 * - A key that is not a schema domain: `unknown_domain`. A schema domain with no key: also
 *   `unknown_domain` (there is no `missing_domain` state; the error says "missing").
 * - A key with markdown emphasis or spaces around a domain's name ("Buses**": one released
 *   profile, user874, has it) is read as that domain, noted in `reshaped`; two keys for one
 *   domain: `bad_value`.
 * - Values 0 and 1 are taken; `true`/`false` and the strings "0"/"1" (trimmed) are taken too and
 *   noted in `reshaped` (`Books: true -> 1`); anything else is `bad_value`.
 * - Every domain 0: `empty`.
 * - The result lists the domains in the schema's order.
 */
export function parseMask(text: string, schema: SchemaLike): ParseResult<DomainMask> {
  return guarded('not_json', text, (t) => {
    const got = extractJson(t, '{');
    if ('error' in got) return refuse('not_json', got.error);
    if (!isObject(got.value)) return refuse('not_json', 'the reply is not a JSON object');
    const obj = got.value;
    const names = new Set(schema.domains.map((d) => d.domain));
    const notes = newNotes();
    // domain -> the reply's key for it
    const keyOf = new Map<string, string>();
    for (const key of Object.keys(obj)) {
      const name = names.has(key) ? key : key.replace(/^[\s*_`]+|[\s*_`]+$/g, '');
      if (!names.has(name)) return refuse('unknown_domain', `unknown domain ${show(key)}`);
      if (keyOf.has(name)) return refuse('bad_value', `domain ${show(name)} given twice`);
      if (name !== key) notes.reshaped.push(`${key}: key -> ${name}`);
      keyOf.set(name, key);
    }
    const mask: DomainMask = {};
    let kept = 0;
    for (const { domain } of schema.domains) {
      const key = keyOf.get(domain);
      if (key === undefined) return refuse('unknown_domain', `domain ${show(domain)} missing`);
      const v = obj[key];
      const loose = typeof v === 'string' ? v.trim() : v;
      let bit: 0 | 1;
      if (v === 0 || v === 1) bit = v;
      else if (loose === true || loose === '1' || loose === false || loose === '0') {
        bit = loose === true || loose === '1' ? 1 : 0;
        notes.reshaped.push(`${domain}: ${JSON.stringify(v)} -> ${bit}`);
      } else return refuse('bad_value', `domain ${show(domain)}: ${show(v)} is not 0 or 1`);
      mask[domain] = bit;
      kept += bit;
    }
    if (kept === 0) return refuse('empty', 'every domain is masked');
    return accept(mask, notes);
  });
}

// ---------------------------------------------------------------------------------------------
// Preferences

export interface PreferencesOptions {
  /**
   * Take an empty list for a multi-valued type (default false: `bad_value`, as the paper asks
   * for at least one value). The released data has 446 empty lists in 1,500 profiles (389 of
   * them Restaurants "Dietary Restrictions", i.e. none); set this to keep such replies.
   */
  allowEmptyList?: boolean;
}

function readPreference(type: PreferenceType, raw: unknown, notes: ParseNotes, options: PreferencesOptions): PreferenceValue | Refusal {
  const name = type.name;
  const badItem = (v: unknown) => refuse('bad_value', `${show(name)}: ${show(v)} is not a non-empty string`);
  let value: PreferenceValue;
  if (type.has_multiple_values) {
    if (typeof raw === 'string') {
      const s = cleanString(raw);
      if (s === null) return badItem(raw);
      value = [s];
      notes.reshaped.push(`${name}: one value -> list`);
    } else if (Array.isArray(raw)) {
      if (raw.length === 0 && !options.allowEmptyList) return refuse('bad_value', `${show(name)}: empty list`);
      const list: string[] = [];
      for (const item of raw) {
        const s = cleanString(item);
        if (s === null) return badItem(item);
        list.push(s);
      }
      value = list;
    } else return badItem(raw);
  } else if (typeof raw === 'string') {
    const s = cleanString(raw);
    if (s === null) return badItem(raw);
    value = s;
  } else if (Array.isArray(raw)) {
    if (raw.length !== 1) return refuse('bad_value', `${show(name)} takes one value, got a list of ${raw.length}`);
    const s = cleanString(raw[0]);
    if (s === null) return badItem(raw[0]);
    value = s;
    notes.reshaped.push(`${name}: list of one -> value`);
  } else return badItem(raw);
  if (type.is_categorical) {
    const known = new Set(type.possible_values.map((p) => p.trim().toLowerCase()));
    for (const v of typeof value === 'string' ? [value] : value) {
      if (!known.has(v.toLowerCase())) notes.off_list.push(`${name}: ${v}`);
    }
  }
  return value;
}

/**
 * A user's preferences in one domain: a JSON object mapping every preference type of the domain
 * to a string (single-valued types) or a list of strings (`has_multiple_values`).
 *
 * Decisions:
 * - A key the domain lacks: `unknown_type` (checked first, so a misspelt type reads as unknown);
 *   a type of the domain with no key: `missing_type`.
 * - If the object's only key is the domain's name (and not one of its types) and holds an object,
 *   that object is read, noted in `reshaped` (`<Domain>: unwrapped`).
 * - Values: a single string for a multi-valued type is wrapped in a list, a one-element list for
 *   a single-valued type unwrapped (both noted in `reshaped`); a longer list for a single-valued
 *   type, an empty string, a non-string, a nested object, or an empty list (see
 *   {@link PreferencesOptions.allowEmptyList}) is `bad_value`.
 * - Categorical values outside `possible_values` are kept (the paper allows going beyond the list)
 *   and noted in `off_list` as `Type: value`. The comparison ignores case: the released data
 *   writes "Ryanair" for the schema's "RyanAir", "Vegetarian" for "vegetarian" (152 of its 1,110
 *   off-list categorical values, out of 221,098, differ from the list only by case); the value is
 *   kept as written, as the released data keeps it.
 * - The result lists the types in the schema's order.
 */
export function parsePreferences(text: string, domain: DomainSchema, options: PreferencesOptions = {}): ParseResult<DomainPreferences> {
  return guarded('not_json', text, (t) => {
    const got = extractJson(t, '{');
    if ('error' in got) return refuse('not_json', got.error);
    if (!isObject(got.value)) return refuse('not_json', 'the reply is not a JSON object');
    let obj = got.value;
    const notes = newNotes();
    const types = new Set(domain.affinities.map((a) => a.name));
    const keys = Object.keys(obj);
    if (keys.length === 1 && keys[0] === domain.domain && !types.has(domain.domain) && isObject(obj[domain.domain])) {
      obj = obj[domain.domain] as Record<string, unknown>;
      notes.reshaped.push(`${domain.domain}: unwrapped`);
    }
    for (const key of Object.keys(obj)) {
      if (!types.has(key)) return refuse('unknown_type', `${show(domain.domain)} has no preference type ${show(key)}`);
    }
    const prefs: DomainPreferences = {};
    for (const type of domain.affinities) {
      if (!Object.hasOwn(obj, type.name)) return refuse('missing_type', `preference type ${show(type.name)} missing`);
      const value = readPreference(type, obj[type.name], notes, options);
      if (isRefusal(value)) return value;
      prefs[type.name] = value;
    }
    return accept(prefs, notes);
  });
}

// ---------------------------------------------------------------------------------------------
// Past interactions

const SUMMARY_LABEL =
  /^(?:#{1,6}[ \t]*)?[*_]{0,3}[ \t]*(?:past[ \t]+)?interaction[ \t]+summary(?:[ \t]*\([^)\n]{0,80}\))?[ \t]*[*_]{0,3}[ \t]*:[ \t]*[*_]{0,3}/i;

/**
 * A past-interaction summary: plain text, kept as written (paragraph breaks included, CRLF made
 * LF), trimmed.
 *
 * Decisions:
 * - A leading label, which the prompt ends with and a model may repeat, is dropped: "Interaction
 *   Summary:" in any case, optionally "Past", a parenthesis ("Interaction Summary (Movies):"),
 *   markdown emphasis or a heading mark around it. Not noted (no value was reshaped).
 * - Nothing left: `empty`. A control character: `bad_value`.
 */
export function parseInteractions(text: string): ParseResult<string> {
  return guarded('bad_value', text, (t) => {
    let s = t.replace(/\r\n?/g, '\n').trim();
    s = s.replace(SUMMARY_LABEL, '').trim();
    if (s === '') return refuse('empty', 'the reply holds no summary');
    if (CONTROL.test(s)) return refuse('bad_value', 'the summary holds a control character');
    return accept(s, newNotes());
  });
}

// ---------------------------------------------------------------------------------------------
// Tasks (SD and MD)

/**
 * Reads an affinity-type name against the task's domains: the exact name of a type of one of
 * them, or `Type (Domain)` with Domain among them and Type one of its types (the released MD
 * tasks write "Preferred Genres (Media)"), then normalised to `Type` and noted.
 */
function resolveType(name: string, domains: readonly DomainSchema[], notes: ParseNotes, where: string): string | null {
  if (domains.some((d) => d.affinities.some((a) => a.name === name))) return name;
  const m = /^(.*\S)\s*\(([^()]+)\)$/.exec(name);
  if (m) {
    const d = domains.find((x) => x.domain === m[2]!.trim());
    if (d?.affinities.some((a) => a.name === m[1])) {
      notes.reshaped.push(`${where}: ${name} -> ${m[1]}`);
      return m[1]!;
    }
  }
  return null;
}

/**
 * Splits a comma-separated list of names. Where a known name itself holds a comma (none does in
 * the released schema), the longest run of pieces that spells a known name is kept together.
 */
function splitNames(s: string, known: ReadonlySet<string>): string[] {
  const pieces = s.split(/,|\n/).map((p) => p.trim());
  const out: string[] = [];
  for (let i = 0; i < pieces.length; ) {
    let name = pieces[i]!;
    let next = i + 1;
    for (let j = pieces.length; j > i + 1; j--) {
      const joined = [pieces.slice(i, j).join(', '), pieces.slice(i, j).join(',')].find((x) => known.has(x));
      if (joined !== undefined) {
        name = joined;
        next = j;
        break;
      }
    }
    if (name !== '') out.push(name);
    i = next;
  }
  return out;
}

const TASK_TEXT_FIELDS = ['Task Description', 'User Intent', 'Task Goal'] as const;

/**
 * The SD tasks of one domain: a JSON array of N objects with "Task Description", "User Intent",
 * "Task Goal" and "Relevant Affinity Types" (a list of the domain's preference types).
 *
 * Decisions:
 * - Not N tasks: `wrong_count` (checked before the tasks' fields). A "Task Number" in the reply is
 *   ignored: the tasks are numbered 1..N in the reply's order. Other extra keys are ignored.
 * - A text field missing, empty or not a string, an element that is not an object, no affinity
 *   type: `bad_value`. An affinity type the domain lacks: `unknown_type`.
 * - Taken and noted in `reshaped`: "Relevant Preference Types" for "Relevant Affinity Types" (the
 *   paper's Figure 9 uses that name), the types as one comma-separated string, `Type (Domain)`
 *   for this domain, one task object instead of an array, and an object whose only key holds the
 *   array (`{"tasks": [...]}`).
 */
export function parseSdTasks(text: string, domain: DomainSchema, n: number): ParseResult<TaskDefinition[]> {
  return guarded('not_json', text, (t) => {
    const got = extractJson(t, '{[');
    if ('error' in got) return refuse('not_json', got.error);
    const notes = newNotes();
    let list: unknown[];
    if (Array.isArray(got.value)) list = got.value;
    else if (isObject(got.value)) {
      const keys = Object.keys(got.value);
      const only = keys.length === 1 ? got.value[keys[0]!] : undefined;
      if (Object.hasOwn(got.value, 'Task Description')) {
        list = [got.value];
        notes.reshaped.push('tasks: one object -> list');
      } else if (Array.isArray(only)) {
        list = only;
        notes.reshaped.push(`tasks: unwrapped from ${show(keys[0])}`);
      } else return refuse('bad_value', 'the reply is a JSON object, not an array of tasks');
    } else return refuse('not_json', 'the reply is not a JSON array');
    if (list.length !== n) return refuse('wrong_count', `${list.length} tasks, asked for ${n}`);
    const known = new Set(domain.affinities.map((a) => a.name));
    const tasks: TaskDefinition[] = [];
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      const where = `task ${i + 1}`;
      if (!isObject(item)) return refuse('bad_value', `${where} is not an object`);
      const texts: string[] = [];
      for (const f of TASK_TEXT_FIELDS) {
        const s = cleanString(own(item, f));
        if (s === null) return refuse('bad_value', `${where}: ${show(f)} missing or empty`);
        texts.push(s);
      }
      let rawTypes = own(item, 'Relevant Affinity Types');
      if (rawTypes === undefined && Object.hasOwn(item, 'Relevant Preference Types')) {
        rawTypes = own(item, 'Relevant Preference Types');
        notes.reshaped.push(`${where}: "Relevant Preference Types" -> "Relevant Affinity Types"`);
      }
      let names: unknown[];
      if (typeof rawTypes === 'string') {
        names = splitNames(rawTypes, known);
        notes.reshaped.push(`${where}: affinity types as one string -> list`);
      } else if (Array.isArray(rawTypes)) names = rawTypes;
      else return refuse('bad_value', `${where}: "Relevant Affinity Types" missing`);
      if (names.length === 0) return refuse('bad_value', `${where}: no affinity type`);
      const types: string[] = [];
      for (const raw of names) {
        const s = cleanString(raw);
        if (s === null) return refuse('bad_value', `${where}: affinity type ${show(raw)} is not a non-empty string`);
        const resolved = resolveType(s, [domain], notes, where);
        if (resolved === null) return refuse('unknown_type', `${where}: ${show(domain.domain)} has no preference type ${show(s)}`);
        types.push(resolved);
      }
      tasks.push({ 'Task Number': i + 1, 'Task Description': texts[0]!, 'User Intent': texts[1]!, 'Task Goal': texts[2]!, 'Relevant Affinity Types': types });
    }
    return accept(tasks, notes);
  });
}

// ---------------------------------------------------------------------------------------------
// XML

interface Element {
  attrs: string;
  inner: string;
}

/**
 * The complete `<tag ...>...</tag>` elements of `s`, in order (case-insensitive; same-name
 * nesting is not read: an element ends at the first closing tag). Linear in `s`: an opening tag
 * with no closing tag after it ends the scan.
 */
function elements(s: string, tag: string): Element[] {
  const open = new RegExp(`<${tag}(\\s[^<>]{0,500})?>`, 'gi');
  const close = new RegExp(`</${tag}\\s*>`, 'gi');
  const out: Element[] = [];
  for (let m = open.exec(s); m; m = open.exec(s)) {
    close.lastIndex = open.lastIndex;
    const c = close.exec(s);
    if (!c) break;
    out.push({ attrs: m[1] ?? '', inner: s.slice(open.lastIndex, c.index) });
    open.lastIndex = close.lastIndex;
  }
  return out;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,4});/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return Object.hasOwn(ENTITIES, body.toLowerCase()) ? ENTITIES[body.toLowerCase()]! : whole;
  });
}

/** An element's text: CDATA unwrapped, entities decoded, whitespace runs made one space, trimmed. */
function xmlText(inner: string): string {
  const s = inner.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1');
  return decodeEntities(s)
    .replace(/[ \t\r\n]+/g, ' ')
    .trim();
}

/** The first `<tag>` element's text, or null when there is none. */
function childText(inner: string, tag: string): string | null {
  const e = elements(inner, tag)[0];
  return e ? xmlText(e.inner) : null;
}

/** The text inside the first `<response>`: to its `</response>`, or to the end of the reply if unclosed; null with no `<response>`. */
function responseRegion(text: string): string | null {
  const open = /<response(\s[^<>]{0,500})?>/i.exec(text);
  if (!open) return null;
  const start = open.index + open[0].length;
  const close = /<\/response\s*>/i.exec(text.slice(start));
  return close ? text.slice(start, start + close.index) : text.slice(start);
}

/** A list element's items: one per `<item>` child if any, else its text split on commas. */
function listItems(inner: string, itemTag: string, known: ReadonlySet<string>): string[] {
  const items = elements(inner, itemTag);
  if (items.length > 0) return items.map((e) => xmlText(e.inner)).filter((s) => s !== '');
  return splitNames(xmlText(inner), known);
}

/**
 * The MD tasks: `<response>` holding N `<task>` elements, each with `<task_description>`,
 * `<user_intent>`, `<task_goal>`, `<relevant_domains>` and `<relevant_affinity_types>`.
 *
 * Decisions:
 * - Prose before or after `<response>` is ignored; tag names are read in any case; entities and
 *   CDATA are decoded; whitespace runs in a text become one space. An unclosed `<response>` runs
 *   to the end of the reply (an unclosed last `<task>` is then not counted: `wrong_count`).
 * - Lists: comma-separated names, or (if present) one `<domain>` / `<type>` child per name. No
 *   released domain or type name holds a comma; should a schema's do, the comma-separated form
 *   still reads it (the longest run of pieces spelling a known name is kept together).
 * - No `<response>`: `not_xml`. Not N complete tasks: `wrong_count`. A text missing or empty, fewer
 *   than 2 distinct domains, a control character: `bad_value`. A domain not in the schema:
 *   `unknown_domain`. A type in none of the task's domains: `unknown_type`, except `Type (Domain)`
 *   (Domain among the task's, Type one of its types), taken as `Type` and noted in `reshaped`.
 * - A domain named twice is kept once (noted). "Relevant Domains" keeps the order given.
 */
export function parseMdTasks(text: string, schema: SchemaLike, n: number): ParseResult<TaskDefinition[]> {
  return guarded('not_xml', text, (t) => {
    const region = responseRegion(t);
    if (region === null) return refuse('not_xml', 'no <response> element');
    const taskEls = elements(region, 'task');
    if (taskEls.length !== n) return refuse('wrong_count', `${taskEls.length} tasks, asked for ${n}`);
    const notes = newNotes();
    const byName = new Map(schema.domains.map((d) => [d.domain, d]));
    const allTypes = new Set(schema.domains.flatMap((d) => d.affinities.map((a) => a.name)));
    const tasks: TaskDefinition[] = [];
    for (let i = 0; i < taskEls.length; i++) {
      const inner = taskEls[i]!.inner;
      const where = `task ${i + 1}`;
      const texts: string[] = [];
      for (const tag of ['task_description', 'user_intent', 'task_goal']) {
        const s = childText(inner, tag);
        if (s === null || s === '') return refuse('bad_value', `${where}: <${tag}> missing or empty`);
        if (CONTROL.test(s)) return refuse('bad_value', `${where}: <${tag}> holds a control character`);
        texts.push(s);
      }
      const domainsEl = elements(inner, 'relevant_domains')[0];
      if (!domainsEl) return refuse('bad_value', `${where}: <relevant_domains> missing`);
      const domains: DomainSchema[] = [];
      for (const name of listItems(domainsEl.inner, 'domain', new Set(byName.keys()))) {
        const d = byName.get(name);
        if (!d) return refuse('unknown_domain', `${where}: unknown domain ${show(name)}`);
        if (domains.includes(d)) notes.reshaped.push(`${where}: domain ${name} given twice -> once`);
        else domains.push(d);
      }
      if (domains.length < 2) return refuse('bad_value', `${where}: ${domains.length} relevant domain(s), a multi-domain task needs 2 or more`);
      const typesEl = elements(inner, 'relevant_affinity_types')[0];
      if (!typesEl) return refuse('bad_value', `${where}: <relevant_affinity_types> missing`);
      const types: string[] = [];
      for (const name of listItems(typesEl.inner, 'type', allTypes)) {
        if (CONTROL.test(name)) return refuse('bad_value', `${where}: an affinity type holds a control character`);
        const resolved = resolveType(name, domains, notes, where);
        if (resolved === null) return refuse('unknown_type', `${where}: ${show(name)} is a preference type of none of its domains`);
        types.push(resolved);
      }
      if (types.length === 0) return refuse('bad_value', `${where}: no affinity type`);
      tasks.push({
        'Task Number': i + 1,
        'Task Description': texts[0]!,
        'User Intent': texts[1]!,
        'Task Goal': texts[2]!,
        'Relevant Domains': domains.map((d) => d.domain),
        'Relevant Affinity Types': types,
      });
    }
    return accept(tasks, notes);
  });
}

// ---------------------------------------------------------------------------------------------
// Situations

const LABEL_LINE =
  /^[ \t]*(?:#{1,6}[ \t]*)?(?:[-*+•][ \t]+)?(?:\d{1,2}[.)][ \t]*)?[*_]{0,3}[ \t]*(location|device|time[ \t]+of[ \t]+day|day[ \t]+of[ \t]+(?:the[ \t]+)?week|environment|justification)[ \t]*[*_]{0,3}[ \t]*:[ \t]*[*_]{0,3}[ \t]*(.*)$/i;

function fieldOf(label: string): SituationField | 'Justification' {
  const l = label.toLowerCase().replace(/\s+/g, ' ');
  if (l === 'location') return 'Location';
  if (l === 'device') return 'Device';
  if (l === 'time of day') return 'Time of Day';
  if (l.startsWith('day of')) return 'Day of the Week';
  if (l === 'environment') return 'Environment';
  return 'Justification';
}

/** A justification without markdown emphasis around it. */
function stripEmphasis(s: string): string {
  return s
    .trim()
    .replace(/^[*_]+|[*_]+$/g, '')
    .trim();
}

/** A value without markdown emphasis, backticks, surrounding quotes or a trailing period. */
function stripMarkup(s: string): string {
  return s
    .trim()
    .replace(/^[*_`]+|[*_`]+$/g, '')
    .replace(/^["“'](.*)["”']$/, '$1')
    .replace(/\.$/, '')
    .trim();
}

/**
 * One situation: a labelled line per variable, each followed by its justification:
 * `Location: <value>` / `Justification: <text>`, then Device, Time of Day, Day of the Week,
 * Environment.
 *
 * Decisions:
 * - Labels are read at a line's start, in any case, after an optional heading mark, bullet or
 *   number ("1. Location:", "1) ..."), with markdown emphasis around the label or the value
 *   ("**Location:** X", "**Location**: X"); "Day of Week" is read as "Day of the Week". Other
 *   lines (a "Situation Context:" heading, prose) are ignored. A value on the line below its
 *   label is read. A variable given twice: the first is kept.
 * - The justification is the text after the first "Justification:" following the variable's
 *   line, up to the next label or a blank line, lines joined with a space; a "Justification:"
 *   inline after the value ("Laptop (Justification: ...)") is read too. None: `bad_value`.
 * - Values lose emphasis, backticks, surrounding quotes and a trailing period silently. A value of
 *   a closed set (Device, Time of Day, Day of the Week, Environment) is matched to it ignoring
 *   case and surrounding square brackets ("[Quiet]", the prompt's placeholder echoed) and
 *   written in the canonical spelling, noted in `reshaped` when that changed it; not in the set:
 *   `off_set` (the released data has 1.2% of scenarios with such a value, e.g. Device "Smart TV",
 *   Time of Day "Late Afternoon"). Location is open: any non-empty text.
 * - A variable missing or empty, or a control character: `bad_value`.
 */
export function parseSituation(text: string): ParseResult<GeneratedSituation> {
  return guarded('bad_value', text, (t) => {
    const values: Partial<Record<SituationField, string>> = {};
    const justifications: Partial<Record<SituationField, string>> = {};
    // The variable last labelled (null after a repeated one), whether its value is still to come
    // (a label alone on its line), and the justification lines being read for it.
    let current: SituationField | null = null;
    let awaitingValue = false;
    let collected: string[] | null = null;
    const finish = (): void => {
      const j = collected?.join(' ').trim();
      if (current && j && justifications[current] === undefined) justifications[current] = j;
      collected = null;
    };
    for (const line of t.split(/\r\n?|\n/)) {
      const m = LABEL_LINE.exec(line);
      if (!m) {
        const s = line.trim();
        if (collected !== null) {
          if (s !== '') collected.push(stripEmphasis(s));
          else if (collected.join('').trim() !== '') finish();
        } else if (awaitingValue && current && s !== '') {
          values[current] = stripMarkup(s);
          awaitingValue = false;
        }
        continue;
      }
      finish();
      const field = fieldOf(m[1]!);
      const rest = m[2]!.trim();
      awaitingValue = false;
      if (field === 'Justification') {
        if (current && justifications[current] === undefined) collected = [stripEmphasis(rest)];
        continue;
      }
      if (values[field] !== undefined) {
        current = null;
        continue;
      }
      current = field;
      const inline = rest.search(/\bjustification[ \t]*:/i);
      if (inline >= 0) {
        const j = rest
          .slice(inline)
          .replace(/^justification[ \t]*:/i, '')
          .replace(/\)\s*$/, '')
          .trim();
        values[field] = stripMarkup(rest.slice(0, inline).replace(/[\s(\-–—,;]+$/, ''));
        if (j !== '') justifications[field] = stripEmphasis(j);
      } else if (stripMarkup(rest) === '') awaitingValue = true;
      else values[field] = stripMarkup(rest);
    }
    finish();
    const notes = newNotes();
    const outValues = {} as Situation;
    const outJust = {} as Record<SituationField, string>;
    for (const field of SITUATION_FIELDS) {
      const raw = values[field];
      if (raw === undefined || raw === '') return refuse('bad_value', `${show(field)} missing`);
      if (CONTROL.test(raw)) return refuse('bad_value', `${show(field)} holds a control character`);
      const just = justifications[field];
      if (just === undefined || just === '') return refuse('bad_value', `${show(field)}: justification missing`);
      if (CONTROL.test(just)) return refuse('bad_value', `${show(field)}: the justification holds a control character`);
      const set = SITUATION_VALUES[field];
      let value = raw;
      if (set) {
        const bare = raw.replace(/^\[(.*)\]$/, '$1').trim();
        const canonical = set.find((v) => v.toLowerCase() === bare.toLowerCase());
        if (canonical === undefined) return refuse('off_set', `${show(field)}: ${show(raw)} is not one of ${set.join(', ')}`);
        if (canonical !== raw) notes.reshaped.push(`${field}: ${raw} -> ${canonical}`);
        value = canonical;
      }
      outValues[field] = value;
      outJust[field] = just;
    }
    return accept({ values: outValues, justifications: outJust }, notes);
  });
}

// ---------------------------------------------------------------------------------------------
// Consistency check

function readVerdict(inner: string, where: string): { label: 0 | 1; explanation: string } | Refusal {
  const label = childText(inner, 'label');
  if (label === null) return refuse('bad_value', `${where}: <label> missing`);
  if (label !== '0' && label !== '1') return refuse('bad_value', `${where}: label ${show(label)} is not 0 or 1`);
  const explanation = childText(inner, 'explanation');
  if (explanation === null || explanation === '') return refuse('bad_value', `${where}: <explanation> missing or empty`);
  if (CONTROL.test(explanation)) return refuse('bad_value', `${where}: the explanation holds a control character`);
  return { label: label === '1' ? 1 : 0, explanation };
}

/**
 * The consistency check of one profile (paper Figure 21): one
 * `<domain name="<Domain>"><label>0|1</label><explanation>...</explanation></domain>` per domain
 * of the profile (its unmasked domains), and one `<cross_domain>` with a label and an explanation.
 * 1 = a conflict.
 *
 * Decisions:
 * - Read inside `<response>` if the reply has one, else the whole reply; prose around is ignored;
 *   tag names in any case; the name attribute in single or double quotes, entities decoded.
 * - No `<domain>` and no `<cross_domain>` element: `not_xml`.
 * - A domain not among the profile's: `unknown_domain`. A profile domain with no element: also
 *   `unknown_domain` (no `missing_domain` state; the error says "no verdict").
 * - A domain given twice, a `<domain>` with no name, a label other than 0/1 (after trimming), an
 *   explanation missing or empty, no `<cross_domain>`: `bad_value`.
 * - `domains` lists the profile's domains in the order given to the parser.
 */
export function parseConsistency(text: string, profileDomains: readonly string[]): ParseResult<ConsistencyVerdict> {
  return guarded('not_xml', text, (t) => {
    const region = responseRegion(t) ?? t;
    const domainEls = elements(region, 'domain');
    const crossEls = elements(region, 'cross_domain');
    if (domainEls.length === 0 && crossEls.length === 0) return refuse('not_xml', 'no <domain> or <cross_domain> element');
    const wanted = new Set(profileDomains);
    const found = new Map<string, { label: 0 | 1; explanation: string }>();
    for (const el of domainEls) {
      const m = /\bname\s*=\s*(?:"([^"]*)"|'([^']*)')/i.exec(el.attrs);
      if (!m) return refuse('bad_value', '<domain> without a name');
      const name = decodeEntities(m[1] ?? m[2] ?? '').trim();
      if (!wanted.has(name)) return refuse('unknown_domain', `${show(name)} is not one of the profile's domains`);
      if (found.has(name)) return refuse('bad_value', `domain ${show(name)} given twice`);
      const verdict = readVerdict(el.inner, `domain ${show(name)}`);
      if (isRefusal(verdict)) return verdict;
      found.set(name, verdict);
    }
    const domains: ConsistencyVerdict['domains'] = {};
    for (const d of profileDomains) {
      const v = found.get(d);
      if (!v) return refuse('unknown_domain', `domain ${show(d)} has no verdict`);
      domains[d] = v;
    }
    const cross = crossEls[0];
    if (!cross) return refuse('bad_value', '<cross_domain> missing');
    const crossVerdict = readVerdict(cross.inner, 'cross_domain');
    if (isRefusal(crossVerdict)) return crossVerdict;
    return accept({ domains, cross_domain: crossVerdict }, newNotes());
  });
}
