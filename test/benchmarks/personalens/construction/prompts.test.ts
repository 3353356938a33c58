import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PlensError } from '../../../../src/core/errors.js';
import {
  BUILD_PROMPT_FILES,
  BUILD_STAGES,
  type BuildInputs,
  type BuildStage,
  DEFAULT_BUILD_PROMPTS_DIR,
  loadBuildPrompts,
  renderDemographics,
  renderPreferences,
} from '../../../../src/benchmarks/personalens/construction/prompts.js';
import {
  type ConsistencyVerdict,
  DEMOGRAPHIC_FIELDS,
  type Demographics,
  type DomainPreferences,
  type GeneratedSituation,
  SITUATION_FIELDS,
  SITUATION_VALUES,
  type TaskDefinition,
} from '../../../../src/benchmarks/personalens/construction/types.js';
import type { DomainSchema } from '../../../../src/benchmarks/personalens/dataset/upstream/preference-schema.js';
import { repoRoot, tempDir } from '../../../helpers/cli.js';

/*
 * Realistic inputs: the released data where this checkout has it (../shared/personalens), else the
 * synthetic sample (data/sample); the two have the same layout below their root.
 */
const SHARED = resolve(repoRoot, '..', 'shared', 'personalens');
const root = existsSync(join(SHARED, 'res', 'schema.json'))
  ? { profiles: join(SHARED, 'data', 'profile'), res: join(SHARED, 'res'), task: join(SHARED, 'data', 'task') }
  : {
      profiles: join(repoRoot, 'data', 'sample', 'profile'),
      res: join(repoRoot, 'data', 'sample', 'res'),
      task: join(repoRoot, 'data', 'sample', 'task'),
    };

interface Profile {
  demographics: Demographics;
  interests: Record<string, 0 | 1>;
  affinities: Record<string, DomainPreferences>;
  interactions: Record<string, string>;
}
const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;
const profile = (n: number) => readJson<Profile>(join(root.profiles, `user${n}`, 'profile.json'));
const tasksOf = (domain: string) =>
  readFileSync(join(root.task, domain, 'task.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as TaskDefinition);

const schema = readJson<DomainSchema[]>(join(root.res, 'schema.json'));
const users = [profile(0), profile(1), profile(2)];
const [user, ex1, ex2] = users as [Profile, Profile, Profile];
/** A domain every one of the three users kept (with a categorical type), and a second one for the SD examples. */
const domain = schema.find((d) => users.every((u) => u.affinities[d.domain]) && d.affinities.some((a) => a.is_categorical))!;
const other = schema.find((d) => d !== domain && tasksOf(d.domain).length >= 2)!;
const mdTasks = tasksOf('Multi-Domain');
const someDomains = (u: Profile) => Object.fromEntries(Object.entries(u.affinities).slice(0, 3));

const situation = (s: Record<string, string>): GeneratedSituation => ({
  values: Object.fromEntries(SITUATION_FIELDS.map((f) => [f, s[f]!])) as GeneratedSituation['values'],
  justifications: Object.fromEntries(SITUATION_FIELDS.map((f) => [f, `because of the ${f.toLowerCase()} (${s[f]})`])) as GeneratedSituation['justifications'],
});
const verdict = (prefs: Record<string, DomainPreferences>, flagged: string): ConsistencyVerdict => ({
  domains: Object.fromEntries(Object.keys(prefs).map((d) => [d, { label: d === flagged ? 1 : 0, explanation: `checked ${d}` }])),
  cross_domain: { label: 0, explanation: 'no conflict across the domains' },
});

const inputs: { [S in BuildStage]: BuildInputs[S] } = {
  mask: { demographics: user.demographics, domains: schema, examples: [{ demographics: ex1.demographics, output: ex1.interests }] },
  preferences: {
    demographics: user.demographics,
    domain,
    examples: [
      { demographics: ex1.demographics, output: ex1.affinities[domain.domain]! },
      { demographics: ex2.demographics, output: ex2.affinities[domain.domain]! },
    ],
  },
  interactions: {
    demographics: user.demographics,
    domain: domain.domain,
    preferences: user.affinities[domain.domain]!,
    examples: [ex1, ex2].map((u) => ({
      demographics: u.demographics,
      domain: domain.domain,
      preferences: u.affinities[domain.domain]!,
      output: u.interactions[domain.domain]!,
    })),
  },
  'sd-tasks': { domain, n: 4, examples: [{ domain: other, output: tasksOf(other.domain).slice(0, 2) }] },
  'md-tasks': { domains: schema, n: 25, examples: [{ output: mdTasks.slice(0, 2) }] },
  situations: {
    demographics: user.demographics,
    preferences: someDomains(user),
    task: tasksOf(domain.domain)[0]!,
    examples: [
      {
        demographics: ex1.demographics,
        preferences: someDomains(ex1),
        task: tasksOf(other.domain)[0]!,
        output: situation({
          Location: 'A flat in Leeds',
          Device: 'Laptop',
          'Time of Day': 'Evening',
          'Day of the Week': 'Thursday',
          Environment: 'Quiet',
        }),
      },
    ],
  },
  consistency: {
    demographics: user.demographics,
    preferences: user.affinities,
    examples: [
      { demographics: ex1.demographics, preferences: someDomains(ex1), output: verdict(someDomains(ex1), Object.keys(ex1.affinities)[0]!) },
      { demographics: ex2.demographics, preferences: someDomains(ex2), output: verdict(someDomains(ex2), '') },
    ],
  },
};

/** What each stage's prompt must carry: its inputs (by their rendering) and the exact format markers. */
const expected: { [S in BuildStage]: string[] } = {
  mask: [
    renderDemographics(user.demographics),
    ...schema.map((d) => `- ${d.domain}: ${d.description}`),
    'JSON object',
    ' 1 ',
    ' 0 ',
    'Example 1',
    JSON.stringify(ex1.interests, null, 2),
  ],
  preferences: [
    renderDemographics(user.demographics),
    domain.domain,
    ...domain.affinities.flatMap((a) => [`- ${a.name}: ${a.description}`, ...(a.is_categorical ? a.possible_values : [])]),
    'Categorical: yes',
    '**at least one**',
    'JSON object',
    'Example 1',
    'Example 2',
    JSON.stringify(ex2.affinities[domain.domain], null, 2),
  ],
  interactions: [
    renderDemographics(user.demographics),
    renderPreferences({ [domain.domain]: user.affinities[domain.domain]! }),
    'plain-text summary',
    'Example 2',
    ex2.interactions[domain.domain]!,
  ],
  'sd-tasks': [
    `Domain: ${domain.domain}`,
    `Description: ${domain.description}`,
    ...domain.affinities.map((a) => `- ${a.name}`),
    'JSON array of exactly 4 objects',
    '"Task Description"',
    '"User Intent"',
    '"Task Goal"',
    '"Relevant Affinity Types"',
    'second person',
    `Domain: ${other.domain}`,
    tasksOf(other.domain)[1]!['Task Goal'],
  ],
  'md-tasks': [
    ...schema.flatMap((d) => [`Domain: ${d.domain}`, `Description: ${d.description}`, ...d.affinities.map((a) => `- ${a.name}`)]),
    '<response>',
    '<task>',
    '<task_description>',
    '</task_description>',
    '<user_intent>',
    '<task_goal>',
    '<relevant_domains>',
    '<relevant_affinity_types>',
    '</task>',
    '</response>',
    'third person',
    'second person',
    'exactly 25 tasks',
    'without any preamble',
    `<relevant_domains>${mdTasks[1]!['Relevant Domains']!.join(', ')}</relevant_domains>`,
  ],
  situations: [
    renderDemographics(user.demographics),
    renderPreferences(someDomains(user)),
    tasksOf(domain.domain)[0]!['Task Description'],
    ...SITUATION_FIELDS.map((f) => `\n${f}: `),
    'Justification: ',
    ...Object.values(SITUATION_VALUES).map((vs) => vs!.join(' / ')),
    'Device: Laptop\nJustification: because of the device (Laptop)',
  ],
  consistency: [
    renderDemographics(user.demographics),
    renderPreferences(user.affinities),
    ...Object.keys(user.affinities).map((d) => `<domain name="${d}"><label>0 or 1</label><explanation>...</explanation></domain>`),
    '<cross_domain><label>0 or 1</label><explanation>...</explanation></cross_domain>',
    `<domain name="${Object.keys(ex1.affinities)[0]}"><label>1</label><explanation>checked ${Object.keys(ex1.affinities)[0]}</explanation></domain>`,
    'Example 2',
  ],
};

const prompts = loadBuildPrompts();

describe('construction prompts, bundled', () => {
  it.each(BUILD_STAGES)('%s renders every input and its exact output format, nothing left unfilled', (stage) => {
    const p = prompts.render(stage, inputs[stage] as never);
    expect(p.system).toBeUndefined();
    expect(p.user).toBe(p.user.trim());
    for (const needle of expected[stage]) expect(p.user, `${stage}: ${JSON.stringify(needle.slice(0, 80))}`).toContain(needle);
    expect(p.user).not.toMatch(/\{\{|\}\}/);
    expect(p.user).not.toMatch(/\n\s*\n\s*\n/);
  });

  it.each(BUILD_STAGES)('%s without examples leaves the example slot out cleanly', (stage) => {
    const p = prompts.render(stage, { ...inputs[stage], examples: [] } as never);
    expect(p.user).not.toMatch(/Example \d|\{\{/);
    expect(p.user).not.toMatch(/\n\s*\n\s*\n/);
    const withExamples = prompts.render(stage, inputs[stage] as never).user;
    expect(withExamples.length).toBeGreaterThan(p.user.length);
  });

  it('lays the blocks out as specified', () => {
    expect(renderDemographics(user.demographics).split('\n')).toHaveLength(DEMOGRAPHIC_FIELDS.length);
    expect(renderDemographics({ ...user.demographics, age: '35-44 years old', religion: 'N/A' }).split('\n')).toEqual(
      expect.arrayContaining(['- Age: 35-44 years old', '- Religion: N/A']),
    );
    expect(renderPreferences({ Movies: { 'Preferred Genres': ['action', 'comedy'], 'Theater Type Preference': 'IMAX' }, Books: { Genre: 'history' } })).toBe(
      'Movies:\n- Preferred Genres: action, comedy\n- Theater Type Preference: IMAX\n\nBooks:\n- Genre: history',
    );
    // MD tasks: the step numbers stay consecutive with and without the example.
    expect(prompts.mdTasks(inputs['md-tasks']).user).toMatch(/\n5\. Examples of tasks in this format:\n[\s\S]*\n6\. Write exactly 25 tasks/);
    expect(prompts.mdTasks({ ...inputs['md-tasks'], examples: [] }).user).toMatch(/\n4\. [\s\S]*\n5\. Write exactly 25 tasks/);
    // A situation's task may be given as its description.
    expect(prompts.situations({ ...inputs.situations, task: 'Plan a quiet evening.' }).user).toContain('Task description:\nPlan a quiet evening.');
  });

  it('is versioned by VERSION and its templates, per stage', () => {
    expect(prompts.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(prompts.version).toBe(`${readFileSync(join(DEFAULT_BUILD_PROMPTS_DIR, 'VERSION'), 'utf8').trim()}+${prompts.hash.slice(0, 8)}`);
    expect(loadBuildPrompts().hash).toBe(prompts.hash);
    expect(new Set(BUILD_STAGES.map((s) => prompts.stageVersion(s))).size).toBe(BUILD_STAGES.length);
    expect(Object.keys(prompts.sources).sort()).toEqual(BUILD_STAGES.map((s) => `${s}.md`).sort());
  });
});

describe('construction prompts, overridden by a folder', () => {
  const folder = (files: Record<string, string>) => {
    const dir = tempDir('plens-build-prompts-');
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };
  const refusal = (dir: string) => {
    try {
      loadBuildPrompts(dir);
    } catch (error) {
      return error as PlensError;
    }
    throw new Error('loaded');
  };

  it('a file replaces its template only, and re-keys that stage only', () => {
    const dir = folder({ 'preferences.md': 'Profile:\n{{{demographics}}}\nTypes of {{domain}}:\n{{{preference_types}}}\n' });
    const mine = loadBuildPrompts(dir);
    expect(mine.sources['preferences.md']).toBe(join(dir, 'preferences.md'));
    expect(mine.sources['mask.md']).toBe(join(DEFAULT_BUILD_PROMPTS_DIR, 'mask.md'));
    expect(mine.preferences(inputs.preferences).user).toMatch(new RegExp(`^Profile:\\n- Age: [^\\n]+\\n[\\s\\S]*Types of ${domain.domain}:\\n- `));
    expect(mine.mask(inputs.mask)).toEqual(prompts.mask(inputs.mask));
    expect(mine.hash).not.toBe(prompts.hash);
    expect(mine.stageVersion('preferences')).not.toBe(prompts.stageVersion('preferences'));
    for (const s of BUILD_STAGES.filter((x) => x !== 'preferences')) expect(mine.stageVersion(s)).toBe(prompts.stageVersion(s));
  });

  it('a system prompt file adds the system part; a VERSION there replaces the label', () => {
    const mine = loadBuildPrompts(folder({ 'mask.system.md': 'You build profiles for {{domains}}.', VERSION: 'mine-v3\n', 'README.md': 'notes' }));
    const p = mine.mask(inputs.mask);
    expect(p.system).toBe(`You build profiles for ${schema.map((d) => `- ${d.domain}: ${d.description}`).join('\n')}.`);
    expect(p.user).toBe(prompts.mask(inputs.mask).user);
    expect(mine.version).toMatch(/^mine-v3\+[0-9a-f]{8}$/);
    expect(mine.stageVersion('mask')).not.toBe(prompts.stageVersion('mask'));
  });

  it('refuses a file of an unknown name, naming it and the names it takes', () => {
    const e = refusal(folder({ 'preferences.md': 'x', 'preference.md': 'y' }));
    expect(e).toBeInstanceOf(PlensError);
    expect(e.code).toBe('E_INPUT_LAYOUT');
    expect(e.message).toContain('preference.md');
    for (const name of BUILD_PROMPT_FILES) expect(e.hint).toContain(name);
    const sub = folder({});
    mkdirSync(join(sub, 'mask.md'));
    expect(refusal(sub).message).toContain('mask.md');
  });

  it('refuses a variable its stage does not have, a broken template and a missing folder', () => {
    const unknown = refusal(folder({ 'sd-tasks.md': '{{domain}} {{#examples}}{{{example}}}{{/examples}}' }));
    expect(unknown.code).toBe('E_INPUT_SCHEMA');
    expect(unknown.message).toContain('{{example}}');
    expect(unknown.hint).toContain('preference_types');
    expect(refusal(folder({ 'consistency.md': '{{#domain_list}}{{name}}{{/domain_list}}{{name}}' })).message).toContain('{{name}}');
    expect(refusal(folder({ 'mask.md': '{{#domains}}' })).code).toBe('E_INPUT_SCHEMA');
    expect(refusal(join(tempDir(), 'absent')).code).toBe('E_INPUT_NOT_FOUND');
  });
});
