/**
 * The offline simulator's replies for the construction stages (the demo runs with no model: the
 * client `sim:default` returns the reply a request carries in `request.simulation.reply`, as for
 * PrefEval's `simulatedResponse`). It says nothing about any model.
 *
 * Each function is a deterministic function of a seed string (sha256, as PrefEval's `chance`) and
 * the context the stage's parser gets (./parse.ts), and writes a reply in that stage's format with
 * some variation: values picked from `possible_values` (one or several, now and then one beyond
 * the list), varied situation values, tasks that name the domain's types, masks that keep about
 * 76% of domains (the released mean: 15.3 of 20), about 10% of profiles flagged by the
 * consistency check. A share of replies ({@link DEFAULT_MALFORMED_RATE}, {@link SimulateOptions})
 * is malformed the way a model's can be (prose instead of JSON, a type missing, an off-set
 * Device, a wrong task count, ...), so the demo's parse-state counts are not all zero; with the
 * default rate every {@link ParseState} is reached within a few hundred seeds. A few well-formed
 * replies come in a shape the parser reshapes (a boolean in the mask, one value for a
 * multi-valued type, a lower-case Device), and formatting varies (a ```json fence, prose around
 * the JSON, numbered or bold situation labels).
 */
import { createHash } from 'node:crypto';
import type { DomainSchema, PreferenceType } from '../dataset/upstream/preference-schema.js';
import type { SchemaLike } from './parse.js';
import type { Demographics, DomainPreferences, PreferenceValue, TaskDefinition } from './types.js';

/** The share of malformed replies by default. */
export const DEFAULT_MALFORMED_RATE = 0.06;

export interface SimulateOptions {
  /** The probability of a malformed reply, 0 (never) to 1 (always); default {@link DEFAULT_MALFORMED_RATE}. */
  malformedRate?: number;
}

/** A stream of numbers in [0, 1) from a seed: sha256 of `<seed>|<block>`, eight draws a block. */
class Dice {
  private block = 0;
  private buf: Buffer = Buffer.alloc(0);
  private at = 32;

  constructor(private readonly seed: string) {}

  next(): number {
    if (this.at >= 32) {
      this.buf = createHash('sha256')
        .update(`${this.seed}|${this.block++}`)
        .digest();
      this.at = 0;
    }
    const v = this.buf.readUInt32BE(this.at) / 2 ** 32;
    this.at += 4;
    return v;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  /** `k` distinct elements, in a random order. */
  sample<T>(xs: readonly T[], k: number): T[] {
    const pool = [...xs];
    const out: T[] = [];
    while (out.length < k && pool.length > 0) out.push(pool.splice(this.int(pool.length), 1)[0]!);
    return out;
  }

  /** An element by weight. */
  weighted<T>(xs: ReadonlyArray<readonly [T, number]>): T {
    const total = xs.reduce((s, [, w]) => s + w, 0);
    let r = this.next() * total;
    for (const [x, w] of xs) {
      if ((r -= w) < 0) return x;
    }
    return xs[xs.length - 1]![0];
  }
}

function malformed(dice: Dice, options: SimulateOptions): boolean {
  return dice.chance(options.malformedRate ?? DEFAULT_MALFORMED_RATE);
}

/** JSON as a model writes it: bare, in a ```json fence, or after a line of prose. */
function wrapJson(dice: Dice, json: string): string {
  return dice.weighted<(s: string) => string>([
    [(s) => s, 6],
    [(s) => '```json\n' + s + '\n```', 3],
    [(s) => `Here is the output:\n\n${s}\n\nLet me know if you need anything else.`, 1],
  ])(json);
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function lower(s: string): string {
  return s.toLowerCase();
}

function listText(xs: readonly string[]): string {
  if (xs.length <= 1) return xs[0] ?? '';
  return `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;
}

// ---------------------------------------------------------------------------------------------
// Domain mask

/**
 * The domain mask reply: a JSON object, every schema domain -> 0/1, each kept with probability
 * 0.76 (at least one). 3% of well-formed replies write true/false. Malformed: prose instead of
 * JSON (`not_json`), a domain left out (`unknown_domain`), "yes" for a value (`bad_value`), every
 * domain 0 (`empty`).
 */
export function simulateMask(seed: string, schema: SchemaLike, options: SimulateOptions = {}): string {
  const dice = new Dice(`plens-construction-mask|${seed}`);
  const names = schema.domains.map((d) => d.domain);
  const bits = names.map(() => (dice.chance(0.76) ? 1 : 0));
  if (!bits.includes(1)) bits[dice.int(bits.length)] = 1;
  const asBool = dice.chance(0.03);
  const entries: Array<[string, unknown]> = names.map((n, i) => [n, asBool ? bits[i] === 1 : bits[i]]);
  if (malformed(dice, options)) {
    const kind = dice.pick(['prose', 'missing', 'yes', 'none'] as const);
    if (kind === 'prose') return `This user would probably enjoy ${listText(dice.sample(names, 3).map(lower))}, but not much else.`;
    if (kind === 'missing') entries.splice(dice.int(entries.length), 1);
    else if (kind === 'yes') entries[dice.int(entries.length)]![1] = 'yes';
    else entries.forEach((e) => (e[1] = 0));
  }
  return wrapJson(dice, JSON.stringify(Object.fromEntries(entries), null, 2));
}

// ---------------------------------------------------------------------------------------------
// Preferences

/** Values beyond any list, plausible for any preference type. */
const BEYOND_LIST = ['depends on the occasion', 'whatever is nearby', 'something new each time', 'varies by season', 'recommended by friends'];
const INVENTED_ADJECTIVES = ['local', 'classic', 'independent', 'well-reviewed', 'lesser-known', 'family-run', 'award-winning'];

/** A value for a type without a list of examples (a non-categorical type). */
function inventedValue(dice: Dice, type: PreferenceType): string {
  const noun = lower(type.name.split(/\s+/).slice(-1)[0] ?? 'option');
  return `${dice.pick(INVENTED_ADJECTIVES)} ${noun} ${1 + dice.int(40)}`;
}

function simulatedValue(dice: Dice, type: PreferenceType): PreferenceValue {
  const k = type.has_multiple_values
    ? dice.weighted([
        [1, 2],
        [2, 4],
        [3, 3],
        [4, 1],
      ] as const)
    : 1;
  let values: string[];
  if (type.is_categorical && type.possible_values.length > 0) {
    values = dice.sample(type.possible_values, k);
    if (dice.chance(0.05)) {
      const extra = dice.pick(BEYOND_LIST);
      if (type.has_multiple_values) values.push(extra);
      else values = [extra];
    }
  } else {
    values = dice.sample(type.possible_values, dice.int(k + 1));
    while (values.length < k) values.push(inventedValue(dice, type));
  }
  if (type.has_multiple_values) return dice.chance(0.03) && values.length === 1 ? values[0]! : values;
  return dice.chance(0.03) ? [values[0]!] : values[0]!;
}

/**
 * The preferences reply for one user and domain: a JSON object, every type -> a value picked
 * from its `possible_values` (invented for types without a list), several for multi-valued types,
 * 5% of them beyond the list; 3% in the other shape (reshaped by the parser). Malformed: prose
 * (`not_json`), a type left out (`missing_type`), an extra type (`unknown_type`), an empty value
 * or two values for a single-valued type (`bad_value`).
 */
export function simulatePreferences(seed: string, demographics: Demographics, domain: DomainSchema, options: SimulateOptions = {}): string {
  const dice = new Dice(`plens-construction-preferences|${seed}|${demographics.user_id}|${domain.domain}`);
  const entries: Array<[string, unknown]> = domain.affinities.map((t) => [t.name, simulatedValue(dice, t)]);
  if (malformed(dice, options)) {
    const single = domain.affinities.findIndex((t) => !t.has_multiple_values);
    const kind = dice.pick(['prose', 'missing', 'extra', 'empty', single >= 0 ? 'two' : 'empty'] as const);
    if (kind === 'prose') {
      return `As a ${lower(demographics.age)} ${lower(demographics.employment_status)} person from ${demographics.reside_country}, this user enjoys ${lower(domain.domain)} in a relaxed way and has no strong preferences.`;
    }
    if (kind === 'missing' && entries.length > 0) entries.splice(dice.int(entries.length), 1);
    else if (kind === 'extra') entries.push([`Other ${domain.domain} Habits`, 'none in particular']);
    else if (kind === 'two' && single >= 0) entries[single]![1] = dice.sample(domain.affinities[single]!.possible_values.concat(BEYOND_LIST), 2);
    else if (entries.length > 0) entries[dice.int(entries.length)]![1] = '';
    else entries.push(['Unlisted', '']);
  }
  return wrapJson(dice, JSON.stringify(Object.fromEntries(entries), null, 2));
}

// ---------------------------------------------------------------------------------------------
// Past interactions

/**
 * The past-interaction summary for one user and domain: two paragraphs naming the user's
 * preferences; 10% start with "Interaction Summary:" (the parser drops it). Malformed: nothing
 * but the label (`empty`).
 */
export function simulateInteractions(
  seed: string,
  demographics: Demographics,
  domain: string,
  prefs: DomainPreferences,
  options: SimulateOptions = {},
): string {
  const dice = new Dice(`plens-construction-interactions|${seed}|${demographics.user_id}|${domain}`);
  if (malformed(dice, options)) return dice.pick(['Interaction Summary:', '**Interaction Summary:**', 'Interaction Summary:\n\n']);
  const who = `${lower(demographics.gender)}, aged ${lower(demographics.age).replace(/ years old$/, '')}, living in ${demographics.reside_country}`;
  const mentions = Object.entries(prefs).map(([type, v]) => `${lower(type)} (${typeof v === 'string' ? v : listText(v)})`);
  const first = `The user, ${who}, regularly asks the assistant for help with ${lower(domain)}. ${
    mentions.length > 0 ? `Early conversations established their ${listText(dice.sample(mentions, Math.min(2, mentions.length)))}.` : ''
  } They ${dice.pick(['usually', 'often', 'sometimes'])} ask follow-up questions before deciding and ${dice.pick(['prefer short answers', 'appreciate detailed comparisons', 'like a clear recommendation'])}.`;
  const second = `Over time their requests became more specific${
    mentions.length > 0 ? `, returning to ${dice.pick(mentions)}` : ''
  }; they ${dice.pick(['give feedback when a suggestion misses', 'rarely change their mind once settled', 'are open to trying something new'])}, and the assistant has learned to ${dice.pick(['offer two or three options', 'confirm details before booking', 'mention prices up front'])}.`;
  const body = `${first}\n\n${second}`;
  return dice.chance(0.1) ? `Interaction Summary: ${body}` : body;
}

// ---------------------------------------------------------------------------------------------
// Tasks

const SD_OPENINGS = ['wants to', 'needs to', 'is looking to', 'would like to'];
const SD_ACTIONS = ['find options', 'plan ahead', 'make a booking', 'get recommendations', 'compare choices', 'sort out the details'];

function sdTask(dice: Dice, domain: DomainSchema, i: number): Record<string, unknown> {
  const types = dice.sample(
    domain.affinities.map((a) => a.name),
    1 + dice.int(Math.min(3, domain.affinities.length)),
  );
  const action = dice.pick(SD_ACTIONS);
  const kind = domain.tasks?.[i % Math.max(1, domain.tasks.length)]?.name;
  const about = listText(types.map(lower));
  return {
    'Task Description': `The user ${dice.pick(SD_OPENINGS)} ${action} in ${domain.domain}${kind ? ` (${kind})` : ''}, taking into account their ${about}.`,
    'User Intent': `You want to ${action} for ${lower(domain.domain)}, in line with your ${about}.`,
    'Task Goal': `The user ends up with a choice in ${domain.domain} that matches their ${about}.`,
    'Relevant Affinity Types': types,
  };
}

/**
 * The SD tasks reply for one domain: a JSON array of `n` tasks naming 1-3 of the domain's types.
 * Malformed: prose (`not_json`), one task too few or too many (`wrong_count`), a "Task Goal" left
 * out (`bad_value`), a type the domain lacks (`unknown_type`).
 */
export function simulateSdTasks(seed: string, domain: DomainSchema, n: number, options: SimulateOptions = {}): string {
  const dice = new Dice(`plens-construction-sd-tasks|${seed}|${domain.domain}|${n}`);
  const tasks = Array.from({ length: n }, (_, i) => sdTask(dice, domain, i));
  if (malformed(dice, options)) {
    const kind = dice.pick(['prose', 'count', 'goal', 'type'] as const);
    if (kind === 'prose') return `1. Help the user with ${lower(domain.domain)} according to their preferences.\n2. Recommend something they will like.`;
    if (kind === 'count') {
      if (n > 1 && dice.chance(0.5)) tasks.pop();
      else tasks.push(sdTask(dice, domain, n));
    } else if (tasks.length > 0) {
      const t = tasks[dice.int(tasks.length)]!;
      if (kind === 'goal') delete t['Task Goal'];
      else t['Relevant Affinity Types'] = [...(t['Relevant Affinity Types'] as string[]), 'Loyalty Programme Membership'];
    }
  }
  return wrapJson(dice, JSON.stringify(tasks, null, 2));
}

function mdTask(dice: Dice, schema: SchemaLike): { domains: string[]; types: string[]; text: [string, string, string] } {
  const domains = dice.sample(schema.domains, 2 + dice.int(Math.min(3, schema.domains.length - 1)));
  const types = domains.flatMap((d) =>
    dice.sample(
      d.affinities.map((a) => a.name),
      1 + dice.int(Math.min(2, d.affinities.length)),
    ),
  );
  const names = domains.map((d) => d.domain);
  const about = listText(types.map(lower));
  return {
    domains: names,
    types,
    text: [
      `The user is organising ${dice.pick(['a weekend away', 'a busy week', 'a celebration', 'a work trip', 'a day out'])} that involves ${listText(names)}; the assistant should coordinate them around the user's ${about}.`,
      `You want help with ${listText(names.map(lower))} & everything in between, suited to your ${about}.`,
      `The user has a plan covering ${listText(names)} that fits their ${about}, with compatible timing.`,
    ],
  };
}

/**
 * The MD tasks reply: `<response>` with `n` `<task>` elements over 2-4 domains each, after a line
 * of prose now and then, with `&amp;` in the intents. Malformed: tasks as a markdown list with no
 * `<response>` (`not_xml`), one task too few or too many (`wrong_count`), a domain the schema
 * lacks (`unknown_domain`), a single domain (`bad_value`), a type of another domain
 * (`unknown_type`).
 */
export function simulateMdTasks(seed: string, schema: SchemaLike, n: number, options: SimulateOptions = {}): string {
  const dice = new Dice(`plens-construction-md-tasks|${seed}|${n}`);
  const tasks = Array.from({ length: n }, () => mdTask(dice, schema));
  if (malformed(dice, options)) {
    const kind = dice.pick(['markdown', 'count', 'domain', 'single', 'type'] as const);
    if (kind === 'markdown')
      return tasks.map((t, i) => `${i + 1}. **Task Description:** ${t.text[0]}\n   **Relevant Domains:** ${t.domains.join(', ')}`).join('\n\n');
    if (kind === 'count') {
      if (n > 1 && dice.chance(0.5)) tasks.pop();
      else tasks.push(mdTask(dice, schema));
    } else if (tasks.length > 0) {
      const t = tasks[dice.int(tasks.length)]!;
      if (kind === 'domain') t.domains.push('Weather');
      else if (kind === 'single') t.domains = t.domains.slice(0, 1);
      else {
        const outside = schema.domains.filter((d) => !t.domains.includes(d.domain)).flatMap((d) => d.affinities.map((a) => a.name));
        const inside = new Set(schema.domains.filter((d) => t.domains.includes(d.domain)).flatMap((d) => d.affinities.map((a) => a.name)));
        t.types.push(outside.find((x) => !inside.has(x)) ?? 'Loyalty Programme Membership');
      }
    }
  }
  const body = tasks
    .map((t) =>
      [
        '<task>',
        `<task_description>${escapeXml(t.text[0])}</task_description>`,
        `<user_intent>${escapeXml(t.text[1])}</user_intent>`,
        `<task_goal>${escapeXml(t.text[2])}</task_goal>`,
        `<relevant_domains>${escapeXml(t.domains.join(', '))}</relevant_domains>`,
        `<relevant_affinity_types>${escapeXml(t.types.join(', '))}</relevant_affinity_types>`,
        '</task>',
      ].join('\n'),
    )
    .join('\n');
  const xml = `<response>\n${body}\n</response>`;
  return dice.chance(0.2) ? `Here are the ${n} tasks.\n\n${xml}\n` : xml;
}

// ---------------------------------------------------------------------------------------------
// Situations

const CITIES: Record<string, readonly string[]> = {
  'United Kingdom': ['London, United Kingdom', 'Manchester, United Kingdom', 'Bristol, United Kingdom', 'Edinburgh, United Kingdom'],
  'United States': ['New York City', 'Boston, Massachusetts', 'Austin, Texas', 'Chicago, Illinois', 'Seattle, Washington'],
  Canada: ['Toronto, Canada', 'Vancouver, Canada', 'Montreal, Canada'],
  Australia: ['Sydney, Australia', 'Melbourne, Australia', 'Brisbane, Australia'],
  'New Zealand': ['Auckland, New Zealand', 'Wellington, New Zealand'],
  'South Africa': ['Cape Town, South Africa', 'Johannesburg, South Africa'],
  Mexico: ['Mexico City, Mexico', 'Guadalajara, Mexico'],
  Chile: ['Santiago, Chile', 'Valparaíso, Chile'],
  Israel: ['Tel Aviv, Israel', 'Jerusalem, Israel'],
};
const PLACES = ['at home', 'in a café', 'on the commute', 'at the office', 'in a park'];

/**
 * The situation reply for one user and task: the five variables, each with a justification,
 * weighted roughly as the released data (Laptop and Smartphone most, Evening and Saturday most)
 * but more varied; labels plain, numbered or bold; 4% write a lower-case value or the
 * placeholder's brackets (reshaped). The location is a city of the user's country of residence.
 * Malformed: a Device or Time of Day outside its set (`off_set`), a justification or a variable
 * left out (`bad_value`).
 */
export function simulateSituation(
  seed: string,
  demographics: Demographics,
  task: Pick<TaskDefinition, 'Task Description'>,
  options: SimulateOptions = {},
): string {
  const dice = new Dice(`plens-construction-situation|${seed}|${demographics.user_id}|${task['Task Description']}`);
  const country = demographics.reside_country;
  const location = dice.pick(CITIES[country] ?? [country === 'N/A' || country === '' ? 'London, United Kingdom' : `Capital city, ${country}`]);
  const values: Array<[string, string]> = [
    ['Location', location],
    [
      'Device',
      dice.weighted([
        ['Laptop', 45],
        ['Smartphone', 35],
        ['Tablet', 12],
        ['Smart speaker', 5],
        ['Smartwatch', 3],
      ]),
    ],
    [
      'Time of Day',
      dice.weighted([
        ['Evening', 55],
        ['Morning', 20],
        ['Afternoon', 18],
        ['Night', 7],
      ]),
    ],
    [
      'Day of the Week',
      dice.weighted([
        ['Saturday', 40],
        ['Friday', 14],
        ['Sunday', 10],
        ['Monday', 9],
        ['Tuesday', 9],
        ['Wednesday', 10],
        ['Thursday', 8],
      ]),
    ],
    [
      'Environment',
      dice.weighted([
        ['Quiet', 85],
        ['Noisy', 15],
      ]),
    ],
  ];
  const reasons: Record<string, string> = {
    Location: `The user lives in ${country === 'N/A' ? 'a large city' : country} and would plan this ${dice.pick(PLACES)}.`,
    Device: `A ${lower(values[1]![1])} suits a task like this for someone who is ${lower(demographics.employment_status)}.`,
    'Time of Day': `The ${lower(values[2]![1])} is when the user has time for this.`,
    'Day of the Week': `${values[3]![1]} fits the user's routine and the task's timing.`,
    Environment: `The user is ${values[4]![1] === 'Quiet' ? 'somewhere calm' : 'surrounded by people'} while doing it.`,
  };
  let dropJustification = -1;
  if (malformed(dice, options)) {
    const kind = dice.pick(['device', 'time', 'justification', 'variable'] as const);
    if (kind === 'device') values[1]![1] = dice.pick(['Smart TV', 'Gaming PC', 'Desktop computer']);
    else if (kind === 'time') values[2]![1] = dice.pick(['Late Afternoon', 'Early Morning', 'Lunchtime']);
    else if (kind === 'justification') dropJustification = dice.int(values.length);
    else values.splice(1 + dice.int(values.length - 1), 1);
  } else if (dice.chance(0.04)) {
    const i = 1 + dice.int(values.length - 1);
    values[i]![1] = dice.chance(0.5) ? lower(values[i]![1]) : `[${values[i]![1]}]`;
  }
  const style = dice.pick(['plain', 'numbered', 'bold'] as const);
  const lines = values.map(([label, value], i) => {
    const head = style === 'numbered' ? `${i + 1}. ${label}: ${value}` : style === 'bold' ? `**${label}:** ${value}` : `${label}: ${value}`;
    if (i === dropJustification) return head;
    return `${head}\n${style === 'numbered' ? '   ' : ''}Justification: ${reasons[label]}`;
  });
  return (dice.chance(0.3) ? 'Situation Context:\n\n' : '') + lines.join(style === 'plain' ? '\n' : '\n\n');
}

// ---------------------------------------------------------------------------------------------
// Consistency check

/**
 * The consistency-check reply for one profile: a `<domain>` element per profile domain and a
 * `<cross_domain>`; 10% of profiles are flagged (a conflict in one domain, or across domains).
 * Malformed: a plain-text verdict (`not_xml`), a label "yes" (`bad_value`), a domain left out or
 * one the profile lacks (`unknown_domain`).
 */
export function simulateConsistency(seed: string, profileDomains: readonly string[], options: SimulateOptions = {}): string {
  const dice = new Dice(`plens-construction-consistency|${seed}`);
  const names = [...profileDomains];
  const flagged = dice.chance(0.1);
  const conflictAt = flagged ? dice.int(names.length + 1) : -1; // names.length: across domains
  const entries = names.map((name, i) => ({
    name,
    label: i === conflictAt ? '1' : '0',
    explanation:
      i === conflictAt
        ? `Two of the user's ${lower(name)} preferences contradict each other.`
        : `The ${lower(name)} preferences are compatible with each other and with the demographic profile.`,
  }));
  let crossLabel = conflictAt === names.length ? '1' : '0';
  if (malformed(dice, options)) {
    const kind = dice.pick(['text', 'label', 'missing', 'extra'] as const);
    if (kind === 'text') return flagged ? 'There is a conflict in this profile.' : 'No conflicts were found in this profile; label 0.';
    if (kind === 'label') {
      if (entries.length > 0) entries[dice.int(entries.length)]!.label = 'yes';
      else crossLabel = 'no';
    } else if (kind === 'missing' && entries.length > 0) entries.splice(dice.int(entries.length), 1);
    else entries.push({ name: 'Weather', label: '0', explanation: 'No conflict.' });
  }
  const body = entries
    .map((e) => `<domain name="${escapeXml(e.name)}">\n<label>${e.label}</label>\n<explanation>${escapeXml(e.explanation)}</explanation>\n</domain>`)
    .join('\n');
  const cross = `<cross_domain>\n<label>${crossLabel}</label>\n<explanation>${
    crossLabel === '1' ? 'A preference in one domain rules out one in another.' : 'The preferences across domains fit together.'
  }</explanation>\n</cross_domain>`;
  return `${body}\n${cross}`;
}
