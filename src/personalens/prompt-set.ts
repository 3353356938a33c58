import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mustache from 'mustache';
import { PlensError } from '../core/errors.js';
import { packageRoot } from '../core/paths.js';

export const DEFAULT_PROMPTS_DIR = join(packageRoot, 'pipelines', 'prompts', 'personalens');

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

/** Prompts are plain text: no HTML escaping. */
const PLAIN_TEXT = { escape: (s: string) => s };

/**
 * The prompt templates in use: a directory given with --prompts, falling back file by file to
 * the bundled ones. Each stage has its own version, VERSION plus a hash of its own templates'
 * text: an edited judge prompt makes new judgment keys but leaves the dialogues alone, and the
 * other way round.
 */
export class PromptSet {
  /** The version of the dialogue prompts (user and assistant templates). */
  readonly dialogueVersion: string;
  /** The version of the judge prompts. */
  readonly judgeVersion: string;

  /** Parsed once: Mustache.render would key its own cache by the whole template text on every call. */
  private readonly tokens = new Map<TemplateName, string[][]>();
  private readonly writer = new Mustache.Writer();

  private constructor(
    private readonly templates: Map<TemplateName, string>,
    private readonly label: string,
    readonly sources: Record<string, string>,
  ) {
    for (const [name, text] of templates) this.tokens.set(name, Mustache.parse(text) as string[][]);
    // Computed once: every LLM call carries the version in its request and cache key.
    this.dialogueVersion = this.versionOf((n) => !n.startsWith('judge-'));
    this.judgeVersion = this.versionOf((n) => n.startsWith('judge-'));
  }

  private versionOf(include: (name: TemplateName) => boolean): string {
    const hash = createHash('sha256');
    for (const name of TEMPLATE_NAMES.filter(include)) hash.update(`${name}\u0000${this.templates.get(name)}\u0000`);
    return `${this.label}+${hash.digest('hex').slice(0, 8)}`;
  }

  static load(overrideDir?: string): PromptSet {
    if (overrideDir && !existsSync(overrideDir)) {
      throw new PlensError('E_INPUT_NOT_FOUND', 'prompts directory does not exist', { location: { file: overrideDir } });
    }
    if (overrideDir) {
      const unknown = readdirSync(overrideDir).filter((f) => f.endsWith('.md') && f !== 'README.md' && !TEMPLATE_NAMES.includes(f.slice(0, -3) as TemplateName));
      if (unknown.length) {
        throw new PlensError('E_INPUT_LAYOUT', `unknown template file(s) ${unknown.join(', ')}; expected names: ${TEMPLATE_NAMES.map((n) => `${n}.md`).join(', ')}`, {
          location: { file: overrideDir },
        });
      }
    }
    const templates = new Map<TemplateName, string>();
    const sources: Record<string, string> = {};
    for (const name of TEMPLATE_NAMES) {
      const custom = overrideDir ? join(overrideDir, `${name}.md`) : undefined;
      const file = custom && existsSync(custom) ? custom : join(DEFAULT_PROMPTS_DIR, `${name}.md`);
      const text = readFileSync(file, 'utf8');
      try {
        Mustache.parse(text);
      } catch (error) {
        throw new PlensError('E_INPUT_SCHEMA', `not a valid Mustache template: ${(error as Error).message}`, { location: { file } });
      }
      templates.set(name, text);
      sources[name] = file;
    }
    const versionFile = overrideDir && existsSync(join(overrideDir, 'VERSION')) ? join(overrideDir, 'VERSION') : join(DEFAULT_PROMPTS_DIR, 'VERSION');
    const label = readFileSync(versionFile, 'utf8').trim();
    return new PromptSet(templates, label, sources);
  }

  render(name: TemplateName, view: Record<string, string | undefined>): string {
    return this.writer.renderTokens(this.tokens.get(name)!, new Mustache.Context(view), undefined, this.templates.get(name)!, PLAIN_TEXT).trim();
  }
}
