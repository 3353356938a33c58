import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mustache from 'mustache';
import { PlensError, usageError } from '../../core/errors.js';
import { packageRoot } from '../../core/paths.js';
import { parsePythonFormat, renderPythonFormat, type PythonFormatPart } from './python-format.js';
import type { Setting } from './settings.js';

export const DEFAULT_PROMPTS_DIR = join(packageRoot, 'pipelines', 'prompts', 'personalens');

/**
 * The prompt roles. A template file is `<role>[.<variant>...].md` (Mustache) or `.pyfmt` (Python
 * `str.format`, as the original code fills its prompts); variants narrow a role to a scenario kind
 * (`sd`, `md`), an assistant setting (`vanilla`, `base+d`, ...), a prompt style (`xml`, `markdown`)
 * or a judged speaker (`user`, `assistant`). The most specific file present wins.
 */
export const TEMPLATE_NAMES = [
  'user-system',
  'user-first-turn',
  'user-turn',
  'assistant-system-vanilla',
  'assistant-system-base',
  'assistant-turn',
  'judge-task-completion',
  'judge-personalization',
  'judge-personalization-chain',
  'judge-naturalness',
  'judge-coherence',
] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

/** How the assistant's prompts are laid out: XML-like sections (the original's Claude prompts) or `###` Markdown sections (its Llama/Mistral prompts). */
export const PROMPT_STYLES = ['xml', 'markdown'] as const;
export type PromptStyle = (typeof PROMPT_STYLES)[number];

const VARIANTS = new Set(['sd', 'md', 'vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all', ...PROMPT_STYLES, 'user', 'assistant']);

/** The original picks its assistant prompt format from the model family: Claude gets the XML-like one, every other model the Markdown one. */
export function defaultPromptStyle(model: string): PromptStyle {
  return /claude/i.test(model) ? 'xml' : 'markdown';
}

/** `xml` or `markdown`; the original's family names are accepted too (`claude` = xml, `llama` / `mistral` = markdown). */
export function parsePromptStyle(value: string, what = 'prompt_style'): PromptStyle {
  const v = value.trim().toLowerCase();
  const alias: Record<string, PromptStyle> = { xml: 'xml', claude: 'xml', markdown: 'markdown', llama: 'markdown', mistral: 'markdown' };
  if (!(v in alias)) throw usageError(`${what} "${value}": use one of ${PROMPT_STYLES.join(', ')} (or claude, llama, mistral)`);
  return alias[v]!;
}

/** Prompts are plain text: no HTML escaping. */
const PLAIN_TEXT = { escape: (s: string) => s };

type View = Record<string, string | boolean | undefined>;

interface Template {
  name: string;
  file: string;
  text: string;
  kind: 'mustache' | 'pyformat';
  mustache?: string[][];
  pyformat?: PythonFormatPart[];
}

/** What `prompt-set.json` in a prompt folder may say: `fallback: false` makes the folder complete on its own (an imported original set). */
interface PromptSetManifest {
  fallback?: boolean;
}

/**
 * The prompt templates in use: a directory given with --prompts, falling back to the bundled ones
 * (unless the directory says it is complete). Each stage has its own version, VERSION plus a hash
 * of its own templates' text: an edited judge prompt makes new judgment keys but leaves the
 * dialogues alone, and the other way round.
 */
export class PromptSet {
  /** The version of the dialogue prompts (user and assistant templates). */
  readonly dialogueVersion: string;
  /** The version of the judge prompts. */
  readonly judgeVersion: string;
  /** Which file each template was read from, by template name. */
  readonly sources: Record<string, string>;

  private readonly writer = new Mustache.Writer();

  private constructor(
    /** Searched in order: the --prompts folder, then (unless it is complete) the bundled one. */
    private readonly layers: Array<Map<string, Template>>,
    private readonly partials: Record<string, string>,
    private readonly label: string,
  ) {
    this.sources = {};
    for (const layer of [...layers].reverse()) for (const t of layer.values()) this.sources[t.name] = t.file;
    // Computed once: every LLM call carries the version in its request and cache key.
    this.dialogueVersion = this.versionOf((n) => !isJudge(n));
    this.judgeVersion = this.versionOf(isJudge);
  }

  private versionOf(include: (name: string) => boolean): string {
    // The templates in effect (the first layer holding a name wins), whatever folder they came from:
    // an override of a dialogue prompt leaves the judge's version as it was.
    const effective = new Map<string, Template>();
    for (const layer of this.layers) for (const [name, t] of layer) if (!effective.has(name)) effective.set(name, t);
    const hash = createHash('sha256');
    for (const name of [...effective.keys()].sort())
      if (include(name)) hash.update(`${name}\u0000${effective.get(name)!.kind}\u0000${effective.get(name)!.text}\u0000`);
    for (const name of Object.keys(this.partials).sort()) if (include(name)) hash.update(`_${name}\u0000${this.partials[name]}\u0000`);
    return `${this.label}+${hash.digest('hex').slice(0, 8)}`;
  }

  static load(overrideDir?: string): PromptSet {
    if (overrideDir && !existsSync(overrideDir)) {
      throw new PlensError('E_INPUT_NOT_FOUND', 'prompts directory does not exist', { location: { file: overrideDir } });
    }
    const partials: Record<string, string> = {};
    const bundled = readLayer(DEFAULT_PROMPTS_DIR, partials);
    let layers = [bundled];
    let versionDir = DEFAULT_PROMPTS_DIR;
    if (overrideDir) {
      const manifestFile = join(overrideDir, 'prompt-set.json');
      let manifest: PromptSetManifest = {};
      if (existsSync(manifestFile)) {
        try {
          manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as PromptSetManifest;
        } catch (error) {
          throw new PlensError('E_INPUT_SCHEMA', `not valid JSON: ${(error as Error).message}`, { location: { file: manifestFile } });
        }
      }
      const own: Record<string, string> = {};
      const custom = readLayer(overrideDir, own);
      Object.assign(partials, own);
      layers = manifest.fallback === false ? [custom] : [custom, bundled];
      if (existsSync(join(overrideDir, 'VERSION'))) versionDir = overrideDir;
    }
    const label = readFileSync(join(versionDir, 'VERSION'), 'utf8').trim();
    return new PromptSet(layers, partials, label);
  }

  /** Whether a template of exactly this name is available. */
  has(name: string): boolean {
    return this.layers.some((l) => l.has(name));
  }

  /** The first of `candidates` found (the --prompts folder is searched for all of them before the bundled one). */
  resolve(candidates: readonly string[]): string {
    for (const layer of this.layers) for (const c of candidates) if (layer.has(c)) return c;
    throw new PlensError(
      'E_INPUT_LAYOUT',
      `no prompt template for ${candidates[0]} (looked for ${candidates.map((c) => `${c}.md or ${c}.pyfmt`).join(', ')})`,
      {
        hint: 'the --prompts folder is complete on its own (prompt-set.json says fallback: false): add the template or re-import it',
      },
    );
  }

  /**
   * Renders a template: Mustache templates are trimmed (their layout is ours), Python-format ones
   * are filled exactly as `str.format` does, with nothing trimmed.
   */
  render(name: string | readonly string[], view: View): string {
    const t = this.template(name);
    if (t.kind === 'pyformat') return renderPythonFormat(t.pyformat!, view, t.file);
    return this.writer.renderTokens(t.mustache!, new Mustache.Context(view), this.partials, t.text, PLAIN_TEXT).trim();
  }

  /**
   * `render(name, {...view, [slot]: value})` for many values of one variable (a dialogue's growing
   * conversation), with the rest of the template rendered once: the template is rendered with a
   * marker in the slot and cut there, and each value is put between the pieces. Only where that is
   * exactly the same text: the slot is used only as a plain variable (no section, no dotted name,
   * no partial naming it); otherwise every value is rendered in full.
   */
  renderer(name: string | readonly string[], view: View, slot: string): (value: string) => string {
    const t = this.template(name);
    const full = (value: string) => this.render(name, { ...view, [slot]: value });
    const marker = `\u0000${slot}\u0000`;
    // The marker must come only from the slot: a view or template holding it is rendered in full.
    if (t.text.includes(marker) || Object.values(view).some((v) => typeof v === 'string' && v.includes(marker))) return full;
    let pieces: string[];
    if (t.kind === 'pyformat') pieces = renderPythonFormat(t.pyformat!, { ...view, [slot]: marker }, t.file).split(marker);
    else {
      if (!plainSlot(t.mustache!, slot, this.partials)) return full;
      pieces = this.writer.renderTokens(t.mustache!, new Mustache.Context({ ...view, [slot]: marker }), this.partials, t.text, PLAIN_TEXT).split(marker);
    }
    const trim = t.kind !== 'pyformat';
    return (value) => {
      const text = pieces.join(value);
      return trim ? text.trim() : text;
    };
  }

  private template(name: string | readonly string[]): Template {
    const chosen = typeof name === 'string' ? this.resolve([name]) : this.resolve(name);
    return this.layers.find((l) => l.has(chosen))!.get(chosen)!;
  }

  /** The user agent's template of a role for a scenario kind. */
  userTemplate(role: 'user-system' | 'user-first-turn' | 'user-turn', kind: 'SD' | 'MD'): string {
    return this.resolve([`${role}.${kind.toLowerCase()}`, role]);
  }

  /** The assistant's system prompt for a setting and style. */
  assistantSystemTemplate(setting: Setting, style: PromptStyle): string {
    const role = setting === 'vanilla' ? 'assistant-system-vanilla' : 'assistant-system-base';
    return this.resolve([`${role}.${setting}.${style}`, `${role}.${style}`, role]);
  }

  /** The assistant's turn prompt for a setting and style. */
  assistantTurnTemplate(setting: Setting, style: PromptStyle): string {
    return this.resolve([`assistant-turn.${setting}.${style}`, `assistant-turn.${setting}`, `assistant-turn.${style}`, 'assistant-turn']);
  }

  /** A judge template, per judged speaker where the set has one. */
  judgeTemplate(role: TemplateName, target?: string): string {
    return this.resolve(target ? [`${role}.${target}`, role] : [role]);
  }
}

function isJudge(name: string): boolean {
  return name.startsWith('judge-');
}

/** Reads one prompt folder: templates by name, and `_name.md` partials into `partials`. */
function readLayer(dir: string, partials: Record<string, string>): Map<string, Template> {
  const out = new Map<string, Template>();
  for (const f of readdirSync(dir).sort()) {
    const m = /^(.+)\.(md|pyfmt)$/.exec(f);
    if (!m || f === 'README.md') continue;
    const file = join(dir, f);
    const text = readFileSync(file, 'utf8');
    if (m[1]!.startsWith('_')) {
      partials[m[1]!.slice(1)] = text;
      continue;
    }
    const name = m[1]!;
    const [role, ...variants] = name.split('.');
    if (!(TEMPLATE_NAMES as readonly string[]).includes(role!) || variants.some((v) => !VARIANTS.has(v))) {
      throw new PlensError(
        'E_INPUT_LAYOUT',
        `unknown template file ${f}; expected <role>[.<variant>].md or .pyfmt with roles ${TEMPLATE_NAMES.join(', ')} and variants ${[...VARIANTS].join(', ')}`,
        {
          location: { file: dir },
        },
      );
    }
    if (out.has(name)) throw new PlensError('E_INPUT_LAYOUT', `template ${name} is given twice (.md and .pyfmt)`, { location: { file: dir } });
    if (m[2] === 'pyfmt') {
      out.set(name, { name, file, text, kind: 'pyformat', pyformat: parsePythonFormat(text, file) });
    } else {
      let tokens: string[][];
      try {
        tokens = Mustache.parse(text) as string[][];
      } catch (error) {
        throw new PlensError('E_INPUT_SCHEMA', `not a valid Mustache template: ${(error as Error).message}`, { location: { file } });
      }
      out.set(name, { name, file, text, kind: 'mustache', mustache: tokens });
    }
  }
  return out;
}

/**
 * Whether a Mustache template uses `slot` only as a plain variable ({{slot}}, {{{slot}}}, {{&slot}}):
 * no section or inverted section on it, no dotted name under it, no partial that names it. Then its
 * value only ever appears verbatim where those tags are.
 */
function plainSlot(tokens: unknown[][], slot: string, partials: Record<string, string>): boolean {
  for (const token of tokens) {
    const [type, value, , , children] = token as [string, string, number, number, unknown[][] | undefined];
    if (type === '>' && (partials[value] ?? '').includes(slot)) return false;
    if (value === slot && type !== 'name' && type !== '&') return false;
    if (typeof value === 'string' && value.startsWith(`${slot}.`)) return false;
    if (Array.isArray(children) && !plainSlot(children, slot, partials)) return false;
  }
  return true;
}
