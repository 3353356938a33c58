import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PlensError } from '../../core/errors.js';
import { parseJsonText, readInputTextSync } from '../../core/json-input.js';
import { formatFields, formatTemplateText, parsePythonFormat, type PythonFormatPart } from './python-format.js';
import { pythonStringConstants, type PythonConstant } from './python-literals.js';
import type { Setting } from './settings.js';

/**
 * `plens prompts import-original`: turns a local checkout of the original PersonaLens code into a
 * plens prompt set of Python-format templates, so its exact prompts can be run through plens.
 * plens ships none of those texts; they are read from the user's checkout.
 */

/** The source files the original keeps its prompts in. */
export const ORIGINAL_FILES = {
  userSd: 'src/generate_dialogue.py',
  userMd: 'src/generate_dialogue_md.py',
  assistant: 'util/assistant_prompts.py',
  judge: 'util/evaluation_prompts.py',
} as const;

/** The values plens fills in, rendered as the original renders them (see the prompts spec). */
export const CANONICAL_FIELDS = ['demographics', 'preferences', 'interactions', 'situation', 'intent', 'goal', 'conversation'] as const;
type Field = (typeof CANONICAL_FIELDS)[number];

/**
 * Which canonical value an original placeholder stands for, by its name. The original's exact
 * names are not known to plens: names are matched by meaning, in this order (a past-interaction
 * "history" is not the conversation history); anything else needs an entry in the mapping file.
 */
const FIELD_PATTERNS: Array<[RegExp, Field]> = [
  [/interact|past|summar/i, 'interactions'],
  [/conv|dialog|history|chat|messages|transcript/i, 'conversation'],
  [/goal/i, 'goal'],
  [/affinit|prefer/i, 'preferences'],
  [/demograph|profile|persona/i, 'demographics'],
  [/situat|context|environment|circumstance/i, 'situation'],
  [/intent|task/i, 'intent'],
];

/** One template of the prompt set the import writes, and what may fill it. */
interface Role {
  /** Template name in the prompt set (file name without extension). */
  template: string;
  /** Source file (key of ORIGINAL_FILES). */
  file: keyof typeof ORIGINAL_FILES;
  /** Fields the template may use. */
  allowed: readonly Field[];
  /** Fields it must use (a changed prompt that lost one is refused). */
  required: readonly Field[];
  /** Whether a missing constant is an error (false: the template is simply not written). */
  needed: boolean;
  /** Whether the original fills the text with str.format (system prompts are sent as written). */
  formatted: boolean;
  /** Written from this other template's constant when the original has none of its own (the markdown style's Vanilla prompts). */
  substitute?: string;
}

const USER_FIELDS: readonly Field[] = ['demographics', 'preferences', 'interactions', 'situation', 'intent', 'conversation'];
const JUDGE_P: readonly Field[] = ['demographics', 'preferences', 'intent', 'interactions', 'situation', 'conversation'];
const ASSISTANT_CONTEXT: Record<Setting, readonly Field[]> = {
  vanilla: [],
  base: [],
  'base+d': ['demographics'],
  'base+i': ['interactions'],
  'base+s': ['situation'],
  'base+all': ['demographics', 'interactions', 'situation'],
};

function rolesFor(styles: string[]): Role[] {
  const roles: Role[] = [];
  for (const [kind, file] of [
    ['sd', 'userSd'],
    ['md', 'userMd'],
  ] as const) {
    roles.push({ template: `user-system.${kind}`, file, allowed: USER_FIELDS, required: [], needed: true, formatted: false });
    roles.push({ template: `user-first-turn.${kind}`, file, allowed: USER_FIELDS, required: ['intent'], needed: true, formatted: true });
    roles.push({ template: `user-turn.${kind}`, file, allowed: USER_FIELDS, required: ['intent', 'conversation'], needed: true, formatted: true });
  }
  for (const style of styles) {
    const suffix = style ? `.${style}` : '';
    // The original has Vanilla prompts for Claude only (and its scripts never select them): the
    // markdown style's are written from the XML ones when its own are missing.
    const vanilla = style === 'markdown' && styles.includes('xml') ? { needed: false, substitute: true } : { needed: true, substitute: false };
    roles.push({
      template: `assistant-system-vanilla${suffix}`,
      file: 'assistant',
      allowed: [],
      required: [],
      needed: vanilla.needed,
      formatted: false,
      ...(vanilla.substitute ? { substitute: 'assistant-system-vanilla.xml' } : {}),
    });
    roles.push({ template: `assistant-system-base${suffix}`, file: 'assistant', allowed: [], required: [], needed: true, formatted: false });
    for (const [setting, fields] of Object.entries(ASSISTANT_CONTEXT)) {
      const isVanilla = setting === 'vanilla';
      roles.push({
        template: `assistant-turn.${setting}${suffix}`,
        file: 'assistant',
        allowed: [...fields, 'conversation'],
        required: [...fields, 'conversation'],
        needed: isVanilla ? vanilla.needed : true,
        formatted: true,
        ...(isVanilla && vanilla.substitute ? { substitute: 'assistant-turn.vanilla.xml' } : {}),
      });
    }
  }
  roles.push({
    template: 'judge-task-completion',
    file: 'judge',
    allowed: ['conversation', 'goal'],
    required: ['conversation', 'goal'],
    needed: true,
    formatted: true,
  });
  roles.push({ template: 'judge-personalization', file: 'judge', allowed: JUDGE_P, required: ['conversation'], needed: true, formatted: true });
  roles.push({ template: 'judge-personalization-chain', file: 'judge', allowed: JUDGE_P, required: ['conversation'], needed: false, formatted: true });
  for (const d of ['naturalness', 'coherence']) {
    for (const who of ['user', 'assistant'])
      roles.push({ template: `judge-${d}.${who}`, file: 'judge', allowed: ['conversation'], required: ['conversation'], needed: true, formatted: true });
  }
  return roles;
}

/** The optional mapping file: which constant fills a template, and which canonical value an unknown placeholder stands for. */
export interface ImportMapping {
  /** template name -> constant name (`NAME` or `Class.NAME`) in that template's source file. */
  templates?: Record<string, string>;
  /** original placeholder name -> canonical field. */
  placeholders?: Record<string, Field>;
}

interface Found {
  constant: PythonConstant;
  /** Null when the text is not a valid format template (then it can only be a prompt sent as written). */
  parts: PythonFormatPart[] | null;
  /** Original placeholder names. */
  fields: string[];
}

export interface ImportSummary {
  source: string;
  out: string;
  /** `substitute_for`: the template was written from another one's constant, since the original has none of its own. */
  templates: Array<{ template: string; file: string; constant: string; line: number; fields: Record<string, string>; substitute_for?: string }>;
  /** Templates the original has no prompt for, and what plens writes in their place. */
  lacking: Array<{ template: string; used: string }>;
  /** Constants that fill no template, and why, where known (`file:Class.NAME`). */
  skipped: string[];
  /** Remarks on the source: constants left out because they equal imported ones, and the like. */
  notes: string[];
  dry_run: boolean;
}

const qualified = (c: PythonConstant) => (c.className ? `${c.className}.${c.name}` : c.name);

/** Classifies a constant by what it is: the role it can fill, from its markers, placeholders and name. */
function classify(file: keyof typeof ORIGINAL_FILES, c: Found, fieldOf: (n: string) => Field | undefined, styles: string[]): string | undefined {
  const name = c.constant.name.toUpperCase();
  const text = c.constant.value;
  const fields = new Set(c.fields.map(fieldOf));
  if (file === 'judge') {
    const speaker = /USER/.test(name) ? 'user' : /ASSIST|AGENT|SYSTEM|BOT/.test(name) ? 'assistant' : undefined;
    if (text.includes('Naturalness Score')) return speaker && `judge-naturalness.${speaker}`;
    if (text.includes('Coherence Score')) return speaker && `judge-coherence.${speaker}`;
    if (text.includes('Personalization Score')) return /CHAIN|TURN/.test(name) ? 'judge-personalization-chain' : 'judge-personalization';
    if (/VERDICT/.test(text) && fields.has('goal')) return 'judge-task-completion';
    return undefined;
  }
  if (file === 'assistant') {
    const style = /CLAUDE/.test(name) ? 'xml' : /LLAMA/.test(name) ? 'markdown' : /MISTRAL/.test(name) ? 'mistral' : '';
    if (style === 'mistral' || !styles.includes(style)) return undefined;
    const suffix = style ? `.${style}` : '';
    const vanilla = /VANILLA/.test(name);
    if (c.fields.length === 0) return `assistant-system-${vanilla ? 'vanilla' : 'base'}${suffix}`;
    if (!fields.has('conversation')) return undefined;
    if (vanilla) return `assistant-turn.vanilla${suffix}`;
    const d = fields.has('demographics');
    const i = fields.has('interactions');
    const s = fields.has('situation');
    const setting =
      d && i && s ? 'base+all' : d && !i && !s ? 'base+d' : i && !d && !s ? 'base+i' : s && !d && !i ? 'base+s' : !d && !i && !s ? 'base' : undefined;
    return setting && `assistant-turn.${setting}${suffix}`;
  }
  const kind = file === 'userSd' ? 'sd' : 'md';
  if (c.fields.length === 0) return text.includes('TERMINATE') && text.length > 200 ? `user-system.${kind}` : undefined;
  if (fields.has('conversation')) return `user-turn.${kind}`;
  if (fields.has('intent')) return `user-first-turn.${kind}`;
  return undefined;
}

export function importOriginal(options: { source: string; out: string; mapping?: string; force?: boolean; dryRun?: boolean }): ImportSummary {
  const source = resolve(options.source);
  if (!existsSync(source)) throw new PlensError('E_INPUT_NOT_FOUND', 'original PersonaLens checkout does not exist', { location: { file: source } });
  let mapping: ImportMapping = {};
  if (options.mapping) {
    if (!existsSync(options.mapping)) throw new PlensError('E_INPUT_NOT_FOUND', 'mapping file does not exist', { location: { file: options.mapping } });
    // The input policy of every plens reader: strict UTF-8, no duplicate keys, lines and columns in errors.
    mapping = parseJsonText(readInputTextSync(options.mapping), options.mapping) as ImportMapping;
    for (const [k, v] of Object.entries(mapping.placeholders ?? {})) {
      if (!(CANONICAL_FIELDS as readonly string[]).includes(v)) {
        throw new PlensError('E_INPUT_SCHEMA', `placeholder "${k}" maps to "${v}"; use one of ${CANONICAL_FIELDS.join(', ')}`, {
          location: { file: options.mapping, pointer: `/placeholders/${k}` },
        });
      }
    }
  }
  const fieldOf = (n: string): Field | undefined => mapping.placeholders?.[n] ?? FIELD_PATTERNS.find(([re]) => re.test(n))?.[1];

  // Read every constant of the four files.
  const constants = new Map<keyof typeof ORIGINAL_FILES, Found[]>();
  for (const [key, rel] of Object.entries(ORIGINAL_FILES) as Array<[keyof typeof ORIGINAL_FILES, string]>) {
    const file = join(source, rel);
    if (!existsSync(file))
      throw new PlensError('E_INPUT_NOT_FOUND', `the original keeps its prompts in ${rel}, which this checkout lacks`, { location: { file } });
    const found: Found[] = [];
    // Bytes that are not UTF-8 are refused with their place (Python refuses them in a source file too), never read as U+FFFD.
    for (const constant of pythonStringConstants(readInputTextSync(file), file)) {
      let parts: PythonFormatPart[] | null = null;
      try {
        parts = parsePythonFormat(constant.value, file);
      } catch {
        // Not a format template: only a prompt sent as written (a system prompt) can be this.
      }
      found.push({ constant, parts, fields: parts ? formatFields(parts) : [] });
    }
    constants.set(key, found);
  }
  // The prompt styles the assistant file has: one per model family named in its constants, or one shared set.
  const assistantNames = constants.get('assistant')!.map((c) => c.constant.name.toUpperCase());
  const styles = [
    ...(assistantNames.some((n) => n.includes('CLAUDE')) ? ['xml'] : []),
    ...(assistantNames.some((n) => n.includes('LLAMA')) ? ['markdown'] : []),
  ];
  const roles = rolesFor(styles.length ? styles : ['']);

  const chosen = new Map<string, Found>();
  const skipped: string[] = [];
  const explicit = mapping.templates ?? {};
  for (const [template, constantName] of Object.entries(explicit)) {
    const role = roles.find((r) => r.template === template);
    if (!role)
      throw new PlensError('E_INPUT_SCHEMA', `unknown template "${template}"; known: ${roles.map((r) => r.template).join(', ')}`, {
        location: { file: options.mapping!, pointer: `/templates/${template}` },
      });
    const c = constants.get(role.file)!.find((f) => qualified(f.constant) === constantName || f.constant.name === constantName);
    if (!c) {
      throw new PlensError('E_INPUT_REFERENCE', `constant ${constantName} (for ${template}) is not a string constant of ${ORIGINAL_FILES[role.file]}`, {
        location: { file: join(source, ORIGINAL_FILES[role.file]) },
      });
    }
    chosen.set(template, c);
  }
  const claimed = new Set([...chosen.values()]);
  for (const [key, found] of constants) {
    for (const c of found) {
      if (claimed.has(c)) continue;
      const template = classify(key, c, fieldOf, styles.length ? styles : ['']);
      if (!template) {
        skipped.push(`${ORIGINAL_FILES[key]}:${qualified(c.constant)}`);
        continue;
      }
      if (template in explicit) continue;
      const other = chosen.get(template);
      if (other) {
        throw new PlensError(
          'E_INPUT_SCHEMA',
          `both ${qualified(other.constant)} (line ${other.constant.line}) and ${qualified(c.constant)} (line ${c.constant.line}) look like the ${template} prompt`,
          {
            location: { file: join(source, ORIGINAL_FILES[key]), line: c.constant.line },
            hint: `name the right one in a mapping file: {"templates": {"${template}": "CONSTANT"}} and pass it with --map`,
          },
        );
      }
      chosen.set(template, c);
    }
  }

  const written: ImportSummary['templates'] = [];
  const lacking: ImportSummary['lacking'] = [];
  const files = new Map<string, string>();
  for (const role of roles) {
    let c = chosen.get(role.template);
    const file = join(source, ORIGINAL_FILES[role.file]);
    const substitute = !c && role.substitute ? chosen.get(role.substitute) : undefined;
    if (substitute) {
      c = substitute;
      lacking.push({ template: role.template, used: `${role.substitute} (${qualified(substitute.constant)})` });
    }
    if (!c) {
      if (!role.needed) continue;
      throw new PlensError('E_INPUT_SCHEMA', `no constant found for the ${role.template} prompt in ${ORIGINAL_FILES[role.file]}`, {
        location: { file },
        hint: `the file may have changed; name the constant in a mapping file: {"templates": {"${role.template}": "CONSTANT"}} and pass it with --map`,
      });
    }
    const where = { file, line: c.constant.line };
    const rename: Record<string, string> = {};
    if (role.formatted && !c.parts) {
      throw new PlensError(
        'E_INPUT_SCHEMA',
        `${qualified(c.constant)} (${role.template}) is not a str.format template plens can fill (only {name} fields and {{ }} braces)`,
        { location: where },
      );
    }
    if (role.formatted) {
      for (const f of c.fields) {
        const canonical = fieldOf(f);
        if (!canonical) {
          throw new PlensError('E_INPUT_SCHEMA', `${qualified(c.constant)} (${role.template}) has placeholder {${f}}, which plens does not know`, {
            location: where,
            hint: `map it in a mapping file: {"placeholders": {"${f}": "<one of ${CANONICAL_FIELDS.join('|')}>"}} and pass it with --map`,
          });
        }
        if (!role.allowed.includes(canonical)) {
          throw new PlensError(
            'E_INPUT_SCHEMA',
            `${qualified(c.constant)} (${role.template}) has placeholder {${f}} (${canonical}), which this prompt does not get; allowed: ${role.allowed.join(', ') || 'none'}`,
            { location: where },
          );
        }
        rename[f] = canonical;
      }
      const have = new Set(Object.values(rename));
      const missing = role.required.filter((r) => !have.has(r));
      if (missing.length) {
        throw new PlensError(
          'E_INPUT_SCHEMA',
          `${qualified(c.constant)} (${role.template}) lacks a placeholder for ${missing.join(', ')}; the original prompt seems to have changed`,
          { location: where },
        );
      }
    }
    // Placeholders renamed to plens's fields; literal braces stay literal. A prompt the original
    // sends without formatting is written so that it renders to exactly its text.
    const parts: PythonFormatPart[] = role.formatted ? c.parts!.map((p) => ('field' in p ? { field: rename[p.field]! } : p)) : [{ text: c.constant.value }];
    files.set(`${role.template}.pyfmt`, formatTemplateText(parts));
    written.push({
      template: role.template,
      file: ORIGINAL_FILES[role.file],
      constant: qualified(c.constant),
      line: c.constant.line,
      fields: rename,
      ...(substitute ? { substitute_for: role.substitute! } : {}),
    });
  }
  const notes = sameAsImported(constants.get('assistant')!, written, skipped);

  const out = resolve(options.out);
  if (options.dryRun) return { source, out, templates: written, lacking, skipped, notes, dry_run: true };
  // Written to a temporary folder and moved into place: a failed import leaves nothing half-written.
  if (existsSync(out) && readdirSync(out).length && !options.force) {
    throw new PlensError('E_USAGE', `output folder is not empty`, { location: { file: out }, hint: 'choose another --out, or pass --force to replace it' });
  }
  const hash = createHash('sha256');
  for (const [name, text] of [...files].sort()) hash.update(`${name}\u0000${text}\u0000`);
  const tmp = `${out}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  for (const [name, text] of files) writeFileSync(join(tmp, name), text);
  writeFileSync(join(tmp, 'VERSION'), `personalens-original-${hash.digest('hex').slice(0, 8)}\n`);
  writeFileSync(join(tmp, 'prompt-set.json'), JSON.stringify({ fallback: false, imported_from: source, templates: written, lacking, notes }, null, 2) + '\n');
  mkdirSync(dirname(out), { recursive: true });
  rmSync(out, { recursive: true, force: true });
  renameSync(tmp, out);
  return { source, out, templates: written, lacking, skipped, notes, dry_run: false };
}

/**
 * The assistant file's constants of a family plens does not import (Mistral's) checked against the
 * imported family's of the same name (Llama's): equal texts are the same prompts, so the markdown
 * style serves both families exactly; a difference is said, never hidden.
 */
function sameAsImported(found: Found[], written: ImportSummary['templates'], skipped: string[]): string[] {
  const byName = new Map(found.map((f) => [f.constant.name, f.constant.value]));
  // The constants the markdown style was imported from (the family a skipped one would share a style with).
  const imported = new Set(written.filter((w) => w.template.endsWith('.markdown') && !w.substitute_for).map((w) => w.constant));
  const notes: string[] = [];
  const family = (n: string) => /^([A-Z]+)_/.exec(n)?.[1];
  const groups = new Map<string, string[]>();
  for (const f of found) {
    const fam = family(f.constant.name);
    if (!fam || !skipped.includes(`${ORIGINAL_FILES.assistant}:${qualified(f.constant)}`)) continue;
    groups.set(fam, [...(groups.get(fam) ?? []), f.constant.name]);
  }
  for (const [fam, names] of groups) {
    for (const other of new Set([...imported].map(family).filter((x): x is string => !!x && x !== fam))) {
      const pairs = names.map((n) => [n, `${other}${n.slice(fam.length)}`] as const).filter(([, o]) => imported.has(o));
      if (!pairs.length) continue;
      const differ = pairs.filter(([n, o]) => byName.get(n) !== byName.get(o));
      notes.push(
        differ.length
          ? `${fam}_* differ from ${other}_* in ${differ.map(([n]) => n).join(', ')}: the ${fam.toLowerCase()} family's own texts are not imported (the markdown style uses ${other}_*)`
          : `${fam}_* (${pairs.length} constants) are identical to ${other}_*: the markdown style serves both families exactly`,
      );
    }
  }
  return notes;
}

export function formatImportSummary(s: ImportSummary): string {
  const lines = [
    `${s.dry_run ? 'would import' : 'imported'} ${s.templates.length} prompt templates from ${s.source} into ${s.out}${s.dry_run ? ' (dry run: nothing written)' : ''}`,
  ];
  for (const t of s.templates)
    lines.push(`  ${t.template.padEnd(34)} ${t.file}:${t.line} ${t.constant}${t.substitute_for ? ` (in place of a prompt the original lacks)` : ''}`);
  for (const l of s.lacking) lines.push(`  the original has no ${l.template} prompt: plens uses ${l.used} in its place`);
  for (const n of s.notes) lines.push(`  note: ${n}`);
  if (s.skipped.length) lines.push(`  not prompts (skipped): ${s.skipped.join(', ')}`);
  lines.push(`use it with --prompts ${s.out}`);
  return lines.join('\n');
}
