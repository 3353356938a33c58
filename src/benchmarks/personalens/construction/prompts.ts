/**
 * The prompts of benchmark construction (pipelines/prompts/personalens-build/, README there): one
 * Mustache template per stage, the paper's prompts (Figures 6, 7, 9, 10, 11, 21) in plens's own
 * words, plus the domain mask's (ours: the paper does not show it). This module loads them (a
 * user folder may replace any of them), versions them by their text, and renders each stage's
 * prompt from typed inputs: the text blocks (demographics, preferences, preference types,
 * examples) are rendered here, so every stage and every example lays them out the same way.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Mustache from 'mustache';
import { PlensError } from '../../../core/errors.js';
import { packageRoot } from '../../../core/paths.js';
import type { DomainSchema, PreferenceType } from '../dataset/upstream/preference-schema.js';
import {
  DEMOGRAPHIC_FIELDS,
  SITUATION_FIELDS,
  type ConsistencyVerdict,
  type DemographicField,
  type Demographics,
  type DomainMask,
  type DomainPreferences,
  type GeneratedSituation,
  type TaskDefinition,
} from './types.js';

export const DEFAULT_BUILD_PROMPTS_DIR = join(packageRoot, 'pipelines', 'prompts', 'personalens-build');

/** The construction stages that ask a model, each with its template `<stage>.md`. */
export const BUILD_STAGES = ['mask', 'preferences', 'interactions', 'sd-tasks', 'md-tasks', 'situations', 'consistency'] as const;
export type BuildStage = (typeof BUILD_STAGES)[number];

/** A prompt to send: the user message, and a system prompt where the set has one (`<stage>.system.md`; the bundled set has none). */
export interface BuildPrompt {
  system?: string;
  user: string;
}

// ---------------------------------------------------------------------------------------------
// Inputs and examples, per stage

/** Mask examples: a person and their mask (the domains are the input's). */
export interface MaskExample {
  demographics: Demographics;
  output: DomainMask;
}
/** Preference examples: a person and their preferences in the input's domain. */
export interface PreferencesExample {
  demographics: Demographics;
  output: DomainPreferences;
}
/** Past-interaction examples: a person, their preferences in a domain and the summary written for them. */
export interface InteractionsExample {
  demographics: Demographics;
  domain: string;
  preferences: DomainPreferences;
  output: string;
}
/** SD task examples: another domain and tasks written for it (`Task Number` and `Relevant Domains` are not shown). */
export interface SdTasksExample {
  domain: DomainSchema;
  output: TaskDefinition[];
}
/** MD task examples: tasks over the same domain data, shown in the reply format. */
export interface MdTasksExample {
  output: TaskDefinition[];
}
/** Situation examples: a person, their preferences, a task and the situation chosen, with justifications. */
export interface SituationsExample {
  demographics: Demographics;
  preferences: Record<string, DomainPreferences>;
  task: TaskDefinition | string;
  output: GeneratedSituation;
}
/** Consistency examples: a profile and its verdict. */
export interface ConsistencyExample {
  demographics: Demographics;
  preferences: Record<string, DomainPreferences>;
  output: ConsistencyVerdict;
}

/** The example type of each stage. */
export interface BuildExamples {
  mask: MaskExample;
  preferences: PreferencesExample;
  interactions: InteractionsExample;
  'sd-tasks': SdTasksExample;
  'md-tasks': MdTasksExample;
  situations: SituationsExample;
  consistency: ConsistencyExample;
}
export type BuildExample<S extends BuildStage> = BuildExamples[S];

/** The input of each stage. Examples are optional: without them the example slot is left out. */
export interface BuildInputs {
  mask: { demographics: Demographics; domains: readonly DomainSchema[]; examples?: readonly MaskExample[] };
  preferences: { demographics: Demographics; domain: DomainSchema; examples?: readonly PreferencesExample[] };
  interactions: { demographics: Demographics; domain: string; preferences: DomainPreferences; examples?: readonly InteractionsExample[] };
  /** `n`: how many tasks to ask for. */
  'sd-tasks': { domain: DomainSchema; n: number; examples?: readonly SdTasksExample[] };
  'md-tasks': { domains: readonly DomainSchema[]; n: number; examples?: readonly MdTasksExample[] };
  /** `preferences`: the user's preferences across their (unmasked) domains; `task`: a definition or its description. */
  situations: {
    demographics: Demographics;
    preferences: Record<string, DomainPreferences>;
    task: TaskDefinition | string;
    examples?: readonly SituationsExample[];
  };
  consistency: { demographics: Demographics; preferences: Record<string, DomainPreferences>; examples?: readonly ConsistencyExample[] };
}

// ---------------------------------------------------------------------------------------------
// The text blocks

/** The demographic fields' labels in the prompts (the paper's Figure 8). */
export const DEMOGRAPHIC_PROMPT_LABELS: Record<DemographicField, string> = {
  age: 'Age',
  gender: 'Gender',
  employment_status: 'Employment Status',
  education: 'Education',
  marital_status: 'Marital Status',
  english_proficiency: 'English Proficiency',
  ethnicity: 'Ethnicity',
  religion: 'Religion',
  birth_country: 'Birth Country',
  reside_country: 'Reside Country',
};

/** `- Age: 35-44 years old` lines, the ten fields in the profile's order (no user_id; "N/A" as it is, and for a field that is absent). */
export function renderDemographics(d: Demographics): string {
  return DEMOGRAPHIC_FIELDS.map((f) => `- ${DEMOGRAPHIC_PROMPT_LABELS[f]}: ${d[f] === undefined || d[f] === '' ? 'N/A' : d[f]}`).join('\n');
}

/** A preference value as the dialogue prompts write it: a list joined with ", ". */
export function renderPreferenceValue(v: DomainPreferences[string]): string {
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * Preferences by domain: a `<Domain>:` heading, then one `- <Type>: <value>` line per type (the
 * dialogue prompts' lines, scenario-context.ts), the domains separated by a blank line.
 */
export function renderPreferences(byDomain: Record<string, DomainPreferences>): string {
  return Object.entries(byDomain)
    .map(([domain, prefs]) => [`${domain}:`, ...Object.entries(prefs).map(([t, v]) => `- ${t}: ${renderPreferenceValue(v)}`)].join('\n'))
    .join('\n\n');
}

/**
 * A domain's preference types, one entry each: `- <name>: <description>`, then its two attributes
 * (`Categorical: yes|no. Multiple values: yes|no.`) and, for a categorical type, its possible
 * values (a type that is not categorical gets no list, as the paper's Figure 6 says).
 */
export function renderPreferenceTypes(domain: DomainSchema): string {
  const entry = (t: PreferenceType) =>
    [
      `- ${t.name}${t.description ? `: ${t.description}` : ''}`,
      `  Categorical: ${t.is_categorical ? 'yes' : 'no'}. Multiple values: ${t.has_multiple_values ? 'yes' : 'no'}.`,
      ...(t.is_categorical && t.possible_values.length ? [`  Possible values: ${t.possible_values.join(', ')}`] : []),
    ].join('\n');
  return domain.affinities.map(entry).join('\n');
}

/** `- <Domain>: <description>` lines. */
export function renderDomainList(domains: readonly DomainSchema[]): string {
  return domains.map((d) => `- ${d.domain}${d.description ? `: ${d.description}` : ''}`).join('\n');
}

/** Per domain: `Domain:`, `Description:`, `Preference types:` and the types; the domains separated by a blank line. */
export function renderDomainData(domains: readonly DomainSchema[]): string {
  return domains
    .map((d) => [`Domain: ${d.domain}`, ...(d.description ? [`Description: ${d.description}`] : []), 'Preference types:', renderPreferenceTypes(d)].join('\n'))
    .join('\n\n');
}

/** SD tasks in the reply format: a JSON array of objects with the four keys. */
export function renderSdTasks(tasks: readonly TaskDefinition[]): string {
  const shown = tasks.map((t) => ({
    'Task Description': t['Task Description'],
    'User Intent': t['User Intent'],
    'Task Goal': t['Task Goal'],
    'Relevant Affinity Types': t['Relevant Affinity Types'],
  }));
  return JSON.stringify(shown, null, 2);
}

/** MD tasks in the reply format: `<response>` wrapping one `<task>` element each. */
export function renderMdTasks(tasks: readonly TaskDefinition[]): string {
  const task = (t: TaskDefinition) =>
    [
      '<task>',
      `<task_description>${t['Task Description']}</task_description>`,
      `<user_intent>${t['User Intent']}</user_intent>`,
      `<task_goal>${t['Task Goal']}</task_goal>`,
      `<relevant_domains>${(t['Relevant Domains'] ?? []).join(', ')}</relevant_domains>`,
      `<relevant_affinity_types>${t['Relevant Affinity Types'].join(', ')}</relevant_affinity_types>`,
      '</task>',
    ].join('\n');
  return ['<response>', ...tasks.map(task), '</response>'].join('\n');
}

/** A situation in the reply format: each variable's line, then its `Justification:` line. */
export function renderSituation(s: GeneratedSituation): string {
  return SITUATION_FIELDS.flatMap((f) => [`${f}: ${s.values[f]}`, `Justification: ${s.justifications[f]}`]).join('\n');
}

/** A consistency verdict in the reply format: one `<domain name>` element per domain, then `<cross_domain>`. */
export function renderConsistency(v: ConsistencyVerdict): string {
  const element = (x: { label: 0 | 1; explanation: string }) => `<label>${x.label}</label><explanation>${x.explanation}</explanation>`;
  return [
    ...Object.entries(v.domains).map(([d, x]) => `<domain name="${d}">${element(x)}</domain>`),
    `<cross_domain>${element(v.cross_domain)}</cross_domain>`,
  ].join('\n');
}

/** Numbered example blocks (`Example 1`, `Example 2`, ...) separated by a blank line; '' when there are none (the slot is left out). */
export function renderExamples(blocks: readonly string[]): string {
  return blocks.map((b, i) => `Example ${i + 1}\n${b}`).join('\n\n');
}

const taskDescription = (t: TaskDefinition | string) => (typeof t === 'string' ? t : t['Task Description']);

/** Each stage's example block, laid out as that stage's input section, then the output in the reply format. */
const EXAMPLE_BLOCKS: { [S in BuildStage]: (e: BuildExamples[S]) => string } = {
  mask: (e) => `Demographic profile:\n${renderDemographics(e.demographics)}\n\nOutput:\n${JSON.stringify(e.output, null, 2)}`,
  preferences: (e) => `Demographic profile:\n${renderDemographics(e.demographics)}\n\nOutput:\n${JSON.stringify(e.output, null, 2)}`,
  interactions: (e) =>
    `Demographic profile:\n${renderDemographics(e.demographics)}\n\nUser preferences:\n${renderPreferences({ [e.domain]: e.preferences })}\n\nInteraction summary:\n${e.output}`,
  'sd-tasks': (e) =>
    [
      `Domain: ${e.domain.domain}`,
      ...(e.domain.description ? [`Description: ${e.domain.description}`] : []),
      '',
      `Preference types:\n${renderPreferenceTypes(e.domain)}`,
      '',
      `Tasks (${e.output.length}):\n${renderSdTasks(e.output)}`,
    ].join('\n'),
  'md-tasks': (e) => renderMdTasks(e.output),
  situations: (e) =>
    `Demographic profile:\n${renderDemographics(e.demographics)}\n\nUser preferences:\n${renderPreferences(e.preferences)}\n\nTask description:\n${taskDescription(e.task)}\n\nSituation:\n${renderSituation(e.output)}`,
  consistency: (e) =>
    `User demographic profile:\n${renderDemographics(e.demographics)}\n\nUser preferences by domain:\n${renderPreferences(e.preferences)}\n\nOutput:\n${renderConsistency(e.output)}`,
};

// ---------------------------------------------------------------------------------------------
// The views

type View = Record<string, string | number | Array<Record<string, string>>>;

/**
 * The variables each stage's template may use. A list variable names the keys of its items
 * (usable inside its `{{#...}}` section); the others are strings or numbers.
 */
export const BUILD_VARIABLES: { [S in BuildStage]: Record<string, readonly string[] | null> } = {
  mask: { demographics: null, domains: null, examples: null },
  preferences: { demographics: null, domain: null, description: null, preference_types: null, examples: null },
  interactions: { demographics: null, domain: null, preferences: null, examples: null },
  'sd-tasks': { domain: null, description: null, preference_types: null, n: null, examples: null },
  'md-tasks': { domain_data: null, n: null, examples: null },
  situations: { demographics: null, preferences: null, task: null, examples: null },
  consistency: { demographics: null, preferences: null, domain_list: ['name'], examples: null },
};

function examplesOf<S extends BuildStage>(stage: S, examples: readonly BuildExamples[S][] | undefined): string {
  const block = EXAMPLE_BLOCKS[stage] as (e: BuildExamples[S]) => string;
  return renderExamples((examples ?? []).map(block));
}

const VIEWS: { [S in BuildStage]: (input: BuildInputs[S]) => View } = {
  mask: (i) => ({ demographics: renderDemographics(i.demographics), domains: renderDomainList(i.domains), examples: examplesOf('mask', i.examples) }),
  preferences: (i) => ({
    demographics: renderDemographics(i.demographics),
    domain: i.domain.domain,
    description: i.domain.description ?? '',
    preference_types: renderPreferenceTypes(i.domain),
    examples: examplesOf('preferences', i.examples),
  }),
  interactions: (i) => ({
    demographics: renderDemographics(i.demographics),
    domain: i.domain,
    preferences: renderPreferences({ [i.domain]: i.preferences }),
    examples: examplesOf('interactions', i.examples),
  }),
  'sd-tasks': (i) => ({
    domain: i.domain.domain,
    description: i.domain.description ?? '',
    preference_types: renderPreferenceTypes(i.domain),
    n: i.n,
    examples: examplesOf('sd-tasks', i.examples),
  }),
  'md-tasks': (i) => ({ domain_data: renderDomainData(i.domains), n: i.n, examples: examplesOf('md-tasks', i.examples) }),
  situations: (i) => ({
    demographics: renderDemographics(i.demographics),
    preferences: renderPreferences(i.preferences),
    task: taskDescription(i.task),
    examples: examplesOf('situations', i.examples),
  }),
  consistency: (i) => ({
    demographics: renderDemographics(i.demographics),
    preferences: renderPreferences(i.preferences),
    domain_list: Object.keys(i.preferences).map((name) => ({ name })),
    examples: examplesOf('consistency', i.examples),
  }),
};

// ---------------------------------------------------------------------------------------------
// The set

/** The file names a prompt folder may hold: the stages' templates and optional system prompts, README.md, VERSION. */
export const BUILD_PROMPT_FILES: readonly string[] = [...BUILD_STAGES.flatMap((s) => [`${s}.md`, `${s}.system.md`]), 'README.md', 'VERSION'];

interface Template {
  file: string;
  text: string;
  tokens: unknown[];
}

/** Prompts are plain text: no HTML escaping. */
const PLAIN_TEXT = { escape: (s: string) => s };

/**
 * The construction prompts in effect: the bundled folder, each file of a user folder replacing its
 * namesake. `hash` (sha256 over every template in effect) and `stageVersion(stage)` (VERSION and
 * that stage's own templates) go into the work's keys, so a changed template re-keys its work.
 */
export class BuildPrompts {
  /** sha256 (hex) over the templates in effect, by file name. */
  readonly hash: string;
  /** `VERSION` + `+` + the first 8 hex of `hash`. */
  readonly version: string;
  /** Which file each template in effect was read from, by file name (`preferences.md`). */
  readonly sources: Record<string, string>;
  private readonly writer = new Mustache.Writer();

  constructor(
    private readonly templates: ReadonlyMap<string, Template>,
    /** The content of VERSION. */
    readonly label: string,
  ) {
    this.sources = Object.fromEntries([...templates].map(([name, t]) => [name, t.file]));
    this.hash = hashOf([...templates.keys()], templates);
    this.version = `${label}+${this.hash.slice(0, 8)}`;
  }

  /** VERSION + the first 8 hex of a hash over the stage's own templates (`<stage>.md` and `<stage>.system.md`): what its work is keyed on. */
  stageVersion(stage: BuildStage): string {
    const names = [`${stage}.md`, `${stage}.system.md`].filter((n) => this.templates.has(n));
    return `${this.label}+${hashOf(names, this.templates).slice(0, 8)}`;
  }

  /** A stage's prompt, rendered from its typed input (each part trimmed). */
  render<S extends BuildStage>(stage: S, input: BuildInputs[S]): BuildPrompt {
    const view = (VIEWS[stage] as (i: BuildInputs[S]) => View)(input);
    const user = this.fill(`${stage}.md`, view);
    const system = this.templates.has(`${stage}.system.md`) ? this.fill(`${stage}.system.md`, view) : undefined;
    return system === undefined ? { user } : { system, user };
  }

  mask(input: BuildInputs['mask']): BuildPrompt {
    return this.render('mask', input);
  }
  preferences(input: BuildInputs['preferences']): BuildPrompt {
    return this.render('preferences', input);
  }
  interactions(input: BuildInputs['interactions']): BuildPrompt {
    return this.render('interactions', input);
  }
  sdTasks(input: BuildInputs['sd-tasks']): BuildPrompt {
    return this.render('sd-tasks', input);
  }
  mdTasks(input: BuildInputs['md-tasks']): BuildPrompt {
    return this.render('md-tasks', input);
  }
  situations(input: BuildInputs['situations']): BuildPrompt {
    return this.render('situations', input);
  }
  consistency(input: BuildInputs['consistency']): BuildPrompt {
    return this.render('consistency', input);
  }

  private fill(name: string, view: View): string {
    const t = this.templates.get(name)!;
    return this.writer.renderTokens(t.tokens as string[][], new Mustache.Context(view), {}, t.text, PLAIN_TEXT).trim();
  }
}

function hashOf(names: readonly string[], templates: ReadonlyMap<string, Template>): string {
  const hash = createHash('sha256');
  for (const name of [...names].sort()) hash.update(`${name}\u0000${templates.get(name)!.text}\u0000`);
  return hash.digest('hex');
}

/**
 * Loads the construction prompts: the bundled folder, then, when `dir` is given, each file there
 * replacing the bundled one of the same name (a VERSION there replaces the label). A file of any
 * other name is refused, and so is a template using a variable its stage does not have.
 */
export function loadBuildPrompts(dir?: string): BuildPrompts {
  const templates = new Map<string, Template>();
  let label = readFileSync(join(DEFAULT_BUILD_PROMPTS_DIR, 'VERSION'), 'utf8').trim();
  readFolder(DEFAULT_BUILD_PROMPTS_DIR, templates);
  if (dir !== undefined) {
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new PlensError('E_INPUT_NOT_FOUND', 'construction prompts folder does not exist', { location: { file: dir } });
    readFolder(dir, templates);
    if (existsSync(join(dir, 'VERSION'))) label = readFileSync(join(dir, 'VERSION'), 'utf8').trim();
  }
  for (const stage of BUILD_STAGES)
    if (!templates.has(`${stage}.md`))
      throw new PlensError('E_INPUT_LAYOUT', `no template ${stage}.md for the ${stage} stage`, { location: { file: DEFAULT_BUILD_PROMPTS_DIR } });
  return new BuildPrompts(templates, label);
}

function readFolder(dir: string, into: Map<string, Template>): void {
  for (const f of readdirSync(dir).sort()) {
    if (f.startsWith('.')) continue;
    if (!BUILD_PROMPT_FILES.includes(f) || !statSync(join(dir, f)).isFile()) {
      throw new PlensError('E_INPUT_LAYOUT', `unknown file ${f} in the construction prompts folder`, {
        location: { file: join(dir, f) },
        hint: `a construction prompts folder holds only ${BUILD_PROMPT_FILES.join(', ')}`,
      });
    }
    if (f === 'README.md' || f === 'VERSION') continue;
    const file = join(dir, f);
    const text = readFileSync(file, 'utf8');
    let tokens: unknown[];
    try {
      tokens = Mustache.parse(text);
    } catch (error) {
      throw new PlensError('E_INPUT_SCHEMA', `not a valid Mustache template: ${(error as Error).message}`, { location: { file } });
    }
    const stage = f.replace(/(\.system)?\.md$/, '') as BuildStage;
    checkVariables(tokens, BUILD_VARIABLES[stage], [], file, stage);
    into.set(f, { file, text, tokens });
  }
}

/** Refuses a variable the stage does not have (it would render as nothing) and partials (the set has none). */
function checkVariables(
  tokens: unknown[],
  variables: Record<string, readonly string[] | null>,
  itemKeys: readonly string[],
  file: string,
  stage: BuildStage,
): void {
  for (const token of tokens as Array<[string, string, number, number, unknown[]?]>) {
    const [type, value] = token;
    if (type === 'text' || type === '!' || type === '=') continue;
    if (type === '>') throw new PlensError('E_INPUT_SCHEMA', `partial {{> ${value}}}: construction templates have no partials`, { location: { file } });
    const head = value.split('.')[0]!;
    const known = value === '.' || head in variables || itemKeys.includes(head);
    if (!known) {
      throw new PlensError('E_INPUT_SCHEMA', `unknown variable {{${value}}} in the ${stage} template`, {
        location: { file },
        hint: `the ${stage} stage has ${Object.keys(variables).join(', ')}`,
      });
    }
    if (type === '#' || type === '^') checkVariables(token[4] ?? [], variables, [...itemKeys, ...(variables[head] ?? [])], file, stage);
  }
}
