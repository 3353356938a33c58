import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_REPLY_CHARS,
  parseConsistency,
  parseInteractions,
  parseMask,
  parseMdTasks,
  parsePreferences,
  parseSdTasks,
  parseSituation,
} from '../../../../src/benchmarks/personalens/construction/parse.js';
import type { ParseResult, ParseState, TaskDefinition } from '../../../../src/benchmarks/personalens/construction/types.js';
import { PreferenceSchema, type DomainSchema } from '../../../../src/benchmarks/personalens/dataset/upstream/preference-schema.js';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..', '..');
const SAMPLE_SCHEMA = join(repoRoot, 'data', 'sample', 'res', 'schema.json');
const RELEASED = resolve(repoRoot, '..', 'shared', 'personalens');
const hasReleased = existsSync(join(RELEASED, 'res', 'schema.json'));

/** Every state a test below reached. */
const reached = new Set<ParseState>();

function refused<V>(r: ParseResult<V>, state: ParseState): void {
  if (r.ok) throw new Error(`expected ${state}, got a value: ${JSON.stringify(r.value).slice(0, 200)}`);
  expect(r.state, r.error).toBe(state);
  expect(typeof r.error).toBe('string');
  reached.add(state);
}

function value<V>(r: ParseResult<V>): V {
  if (!r.ok) throw new Error(`refused (${r.state}): ${r.error}`);
  return r.value;
}

function notes<V>(r: ParseResult<V>) {
  if (!r.ok) throw new Error(`refused (${r.state}): ${r.error}`);
  return r.notes;
}

let schema: PreferenceSchema;
let domain: (name: string) => DomainSchema;

beforeAll(async () => {
  schema = await PreferenceSchema.read(SAMPLE_SCHEMA);
  domain = (name) => schema.domains.find((d) => d.domain === name)!;
});

const TINY: DomainSchema = {
  domain: 'Movies',
  affinities: [
    { name: 'Genres', is_categorical: true, has_multiple_values: true, possible_values: ['action', 'comedy', 'drama'] },
    { name: 'Seat', is_categorical: true, has_multiple_values: false, possible_values: ['aisle', 'window'] },
    { name: 'Favourite Actors', is_categorical: false, has_multiple_values: true, possible_values: [] },
  ],
};

describe('parseMask', () => {
  const full = () => Object.fromEntries(schema.domainNames.map((d, i) => [d, i % 4 === 0 ? 0 : 1]));

  it('reads every domain, in the schema order, whatever the reply order', () => {
    const mask = full();
    const reversed = Object.fromEntries(Object.entries(mask).reverse());
    const r = parseMask(JSON.stringify(reversed), schema);
    expect(value(r)).toEqual(mask);
    expect(Object.keys(value(r))).toEqual(schema.domainNames);
    expect(notes(r)).toEqual({ off_list: [], reshaped: [] });
  });

  it('takes fenced JSON and prose around it', () => {
    const json = JSON.stringify(full(), null, 2);
    expect(value(parseMask('```json\n' + json + '\n```', schema))).toEqual(full());
    expect(value(parseMask(`Sure {here} it is: ${json} -- hope this helps {:)}`, schema))).toEqual(full());
  });

  it('takes true/false and "0"/"1", noted as reshaped', () => {
    const mask = full();
    const reply: Record<string, unknown> = { ...mask, Alarm: false, Books: true, Buses: ' 1 ', Calendar: '0' };
    const r = parseMask(JSON.stringify(reply), schema);
    expect(value(r)).toMatchObject({ Alarm: 0, Books: 1, Buses: 1, Calendar: 0 });
    expect(notes(r).reshaped).toEqual(['Alarm: false -> 0', 'Books: true -> 1', 'Buses: " 1 " -> 1', 'Calendar: "0" -> 0']);
  });

  it('reads a domain key with markdown emphasis around it, noted; two keys for one domain are refused', () => {
    const reply = JSON.stringify(full()).replace('"Music"', '"**Music**"');
    const r = parseMask(reply, schema);
    expect(value(r)).toEqual(full());
    expect(notes(r).reshaped).toEqual(['**Music**: key -> Music']);
    refused(parseMask(reply.replace(/^\{/, '{"Music ": 1, '), schema), 'bad_value');
  });

  it('refuses', () => {
    refused(parseMask('The user likes music and travel.', schema), 'not_json');
    refused(parseMask('[1, 0, 1]', schema), 'not_json');
    refused(parseMask(JSON.stringify({ ...full(), Weather: 1 }), schema), 'unknown_domain');
    const missing = full();
    delete missing['Music'];
    const r = parseMask(JSON.stringify(missing), schema);
    refused(r, 'unknown_domain');
    expect(!r.ok && r.error).toContain('missing');
    for (const bad of [2, 'yes', null, [1], 0.5]) refused(parseMask(JSON.stringify({ ...full(), Music: bad }), schema), 'bad_value');
    refused(parseMask(JSON.stringify(Object.fromEntries(schema.domainNames.map((d) => [d, 0]))), schema), 'empty');
  });
});

describe('parsePreferences', () => {
  it('reads a well-formed reply in the schema order', () => {
    const r = parsePreferences('{"Favourite Actors": ["A. Person"], "Seat": "aisle", "Genres": ["comedy", "drama"]}', TINY);
    expect(value(r)).toEqual({ Genres: ['comedy', 'drama'], Seat: 'aisle', 'Favourite Actors': ['A. Person'] });
    expect(Object.keys(value(r))).toEqual(['Genres', 'Seat', 'Favourite Actors']);
    expect(notes(r)).toEqual({ off_list: [], reshaped: [] });
  });

  it('notes off-list categorical values, ignoring case, and keeps them as written', () => {
    const r = parsePreferences('{"Genres": ["Comedy", "noir"], "Seat": "front row", "Favourite Actors": ["Anyone"]}', TINY);
    expect(value(r)).toEqual({ Genres: ['Comedy', 'noir'], Seat: 'front row', 'Favourite Actors': ['Anyone'] });
    expect(notes(r).off_list).toEqual(['Genres: noir', 'Seat: front row']);
  });

  it('reshapes one value for a multi-valued type and a one-element list for a single-valued one', () => {
    const r = parsePreferences('{"Genres": "action", "Seat": ["window"], "Favourite Actors": "  X  "}', TINY);
    expect(value(r)).toEqual({ Genres: ['action'], Seat: 'window', 'Favourite Actors': ['X'] });
    expect(notes(r).reshaped).toEqual(['Genres: one value -> list', 'Seat: list of one -> value', 'Favourite Actors: one value -> list']);
  });

  it('unwraps {"<Domain>": {...}}', () => {
    const r = parsePreferences('{"Movies": {"Genres": ["action"], "Seat": "aisle", "Favourite Actors": ["X"]}}', TINY);
    expect(value(r)['Seat']).toBe('aisle');
    expect(notes(r).reshaped).toEqual(['Movies: unwrapped']);
  });

  it('refuses', () => {
    const ok = { Genres: ['action'], Seat: 'aisle', 'Favourite Actors': ['X'] };
    const with_ = (patch: Record<string, unknown>) => JSON.stringify({ ...ok, ...patch });
    refused(parsePreferences('Genres: action; Seat: aisle', TINY), 'not_json');
    refused(parsePreferences('{"Genres": ["action"], "Seat": "aisle",}', TINY), 'not_json');
    refused(parsePreferences(JSON.stringify({ Genres: ['action'], Seat: 'aisle' }), TINY), 'missing_type');
    refused(parsePreferences(with_({ Budget: 'low' }), TINY), 'unknown_type');
    refused(parsePreferences(with_({ 'Favorite Actors': ['X'] }), TINY), 'unknown_type');
    for (const bad of ['', '   ', 3, null, true, { a: 'b' }, [], ['action', ''], ['action', 3], [['action']], 'a\u0000b']) {
      refused(parsePreferences(with_({ Genres: bad }), TINY), 'bad_value');
    }
    for (const bad of [['aisle', 'window'], [], '', 7, { x: 1 }]) refused(parsePreferences(with_({ Seat: bad }), TINY), 'bad_value');
  });

  it('takes an empty list only when asked', () => {
    const reply = JSON.stringify({ Genres: [], Seat: 'aisle', 'Favourite Actors': [] });
    refused(parsePreferences(reply, TINY), 'bad_value');
    expect(value(parsePreferences(reply, TINY, { allowEmptyList: true }))).toEqual({ Genres: [], Seat: 'aisle', 'Favourite Actors': [] });
  });

  it('reads the sample profiles back as they are', () => {
    for (let u = 0; u < 8; u++) {
      const p = JSON.parse(readFileSync(join(repoRoot, 'data', 'sample', 'profile', `user${u}`, 'profile.json'), 'utf8'));
      for (const [d, prefs] of Object.entries(p.affinities as Record<string, unknown>)) {
        // Values are trimmed (the sample has "double " on purpose).
        const trimmed = JSON.parse(JSON.stringify(prefs, (_k, v) => (typeof v === 'string' ? v.trim() : v)));
        expect(value(parsePreferences(JSON.stringify(prefs, null, 2), domain(d), { allowEmptyList: true }))).toEqual(trimmed);
      }
    }
  });
});

describe('parseInteractions', () => {
  it('keeps the text, paragraphs included, trimmed, without a leading label', () => {
    const body = 'The user often asks about jazz.\n\nOver time they asked for more.';
    expect(value(parseInteractions(`  ${body}\n`))).toBe(body);
    for (const label of [
      'Interaction Summary:',
      'interaction summary :',
      '**Interaction Summary:**',
      '## Past Interaction Summary:',
      'Interaction Summary (Music):',
    ]) {
      expect(value(parseInteractions(`${label} ${body}`))).toBe(body);
      expect(value(parseInteractions(`${label}\n${body}`))).toBe(body);
    }
    expect(value(parseInteractions(body.replace(/\n/g, '\r\n')))).toBe(body);
    // A label inside the text stays.
    expect(value(parseInteractions(`Summary. Interaction Summary: x`))).toBe('Summary. Interaction Summary: x');
  });

  it('refuses', () => {
    refused(parseInteractions(''), 'empty');
    refused(parseInteractions(' \n\t '), 'empty');
    refused(parseInteractions('Interaction Summary:'), 'empty');
    refused(parseInteractions('The user \u0007 rings a bell.'), 'bad_value');
  });
});

describe('parseSdTasks', () => {
  const task = (types: unknown = ['Seat'], extra: Record<string, unknown> = {}) => ({
    'Task Description': 'The user wants a seat.',
    'User Intent': 'You want a seat.',
    'Task Goal': 'A seat is booked.',
    'Relevant Affinity Types': types,
    ...extra,
  });

  it('reads N tasks, numbered 1..N in order', () => {
    const reply = JSON.stringify([task(['Seat', 'Genres'], { 'Task Number': 7 }), task(['Favourite Actors'])]);
    const tasks = value(parseSdTasks(`Here you go:\n${reply}`, TINY, 2));
    expect(tasks.map((t) => t['Task Number'])).toEqual([1, 2]);
    expect(tasks[0]).toEqual({ 'Task Number': 1, ...task(['Seat', 'Genres']) });
    expect(Object.keys(tasks[0]!)).toEqual(['Task Number', 'Task Description', 'User Intent', 'Task Goal', 'Relevant Affinity Types']);
  });

  it('reshapes the Figure 9 key, a types string, one object, a wrapped array, Type (Domain)', () => {
    const fig9 = { ...task(), 'Relevant Preference Types': ['Genres'] } as Record<string, unknown>;
    delete fig9['Relevant Affinity Types'];
    let r = parseSdTasks(JSON.stringify([fig9]), TINY, 1);
    expect(value(r)[0]!['Relevant Affinity Types']).toEqual(['Genres']);
    expect(notes(r).reshaped).toHaveLength(1);
    r = parseSdTasks(JSON.stringify([task('Seat, Genres')]), TINY, 1);
    expect(value(r)[0]!['Relevant Affinity Types']).toEqual(['Seat', 'Genres']);
    expect(value(parseSdTasks(JSON.stringify(task()), TINY, 1))).toHaveLength(1);
    expect(value(parseSdTasks(JSON.stringify({ tasks: [task(), task()] }), TINY, 2))).toHaveLength(2);
    r = parseSdTasks(JSON.stringify([task(['Genres (Movies)'])]), TINY, 1);
    expect(value(r)[0]!['Relevant Affinity Types']).toEqual(['Genres']);
  });

  it('refuses', () => {
    refused(parseSdTasks('1. Find a seat.\n2. Find a film.', TINY, 2), 'not_json');
    refused(parseSdTasks(JSON.stringify([task()]), TINY, 2), 'wrong_count');
    refused(parseSdTasks(JSON.stringify([task(), task(), task()]), TINY, 2), 'wrong_count');
    refused(parseSdTasks(JSON.stringify([task(['Seat', 'Loyalty'])]), TINY, 1), 'unknown_type');
    refused(parseSdTasks(JSON.stringify([task(['Genres (Music)'])]), TINY, 1), 'unknown_type');
    refused(parseSdTasks(JSON.stringify([task([])]), TINY, 1), 'bad_value');
    refused(parseSdTasks(JSON.stringify([task([''])]), TINY, 1), 'bad_value');
    refused(parseSdTasks(JSON.stringify([task(['Seat'], { 'Task Goal': '' })]), TINY, 1), 'bad_value');
    refused(parseSdTasks(JSON.stringify([task(['Seat'], { 'User Intent': 5 })]), TINY, 1), 'bad_value');
    refused(parseSdTasks(JSON.stringify(['a task']), TINY, 1), 'bad_value');
    refused(parseSdTasks(JSON.stringify({ a: 1, b: 2 }), TINY, 1), 'bad_value');
    const noGoal = task() as Record<string, unknown>;
    delete noGoal['Task Goal'];
    refused(parseSdTasks(JSON.stringify([noGoal]), TINY, 1), 'bad_value');
  });
});

function mdXml(tasks: Array<{ d: string; i: string; g: string; domains: string[]; types: string[] }>): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<response>\n${tasks
    .map(
      (t) =>
        `  <task>\n    <task_description>${esc(t.d)}</task_description>\n    <user_intent>${esc(t.i)}</user_intent>\n    <task_goal>${esc(t.g)}</task_goal>\n` +
        `    <relevant_domains>${t.domains.join(', ')}</relevant_domains>\n    <relevant_affinity_types>${t.types.join(', ')}</relevant_affinity_types>\n  </task>`,
    )
    .join('\n')}\n</response>`;
}

describe('parseMdTasks', () => {
  const t = (domains = ['Flights', 'Hotels'], types = ['Cabin Class', 'Room Type']) => ({
    d: 'Plan a trip & stay.',
    i: 'You plan a trip.',
    g: 'Booked.',
    domains,
    types,
  });

  it('reads N tasks with their domains in the order given, tolerating prose, entities, whitespace', () => {
    const flights = domain('Flights').affinities[0]!.name;
    const hotels = domain('Hotels').affinities[1]!.name;
    const xml = mdXml([t(['Hotels', 'Flights'], [flights, hotels]), t(['Flights', 'Hotels'], [hotels])]);
    const r = parseMdTasks(`Here are the tasks:\n\n${xml.replace('<task>', '<TASK id="1">').replace('</task>', '</Task >')}\nThanks!`, schema, 2);
    const tasks = value(r);
    expect(tasks[0]).toEqual({
      'Task Number': 1,
      'Task Description': 'Plan a trip & stay.',
      'User Intent': 'You plan a trip.',
      'Task Goal': 'Booked.',
      'Relevant Domains': ['Hotels', 'Flights'],
      'Relevant Affinity Types': [flights, hotels],
    });
    expect(Object.keys(tasks[0]!)).toEqual(['Task Number', 'Task Description', 'User Intent', 'Task Goal', 'Relevant Domains', 'Relevant Affinity Types']);
    expect(tasks[1]!['Task Number']).toBe(2);
  });

  it('reads <domain> and <type> children, CDATA, and an unclosed <response>', () => {
    const ft = domain('Flights').affinities[0]!.name;
    const xml =
      `<response><task><task_description><![CDATA[A <b> & c]]></task_description><user_intent>You &#x41;sk</user_intent><task_goal>ok</task_goal>` +
      `<relevant_domains><domain>Flights</domain><domain>Hotels</domain></relevant_domains><relevant_affinity_types><type>${ft}</type></relevant_affinity_types></task>`;
    const [task] = value(parseMdTasks(xml, schema, 1));
    expect(task).toMatchObject({
      'Task Description': 'A <b> & c',
      'User Intent': 'You Ask',
      'Relevant Domains': ['Flights', 'Hotels'],
      'Relevant Affinity Types': [ft],
    });
  });

  it('reads a type name with a comma from the comma-separated list', () => {
    const withComma: DomainSchema[] = [
      { domain: 'A', affinities: [{ name: 'Time, Place', is_categorical: false, has_multiple_values: true, possible_values: [] }] },
      { domain: 'B', affinities: [{ name: 'Budget', is_categorical: false, has_multiple_values: false, possible_values: [] }] },
    ];
    const xml = mdXml([{ d: 'x', i: 'y', g: 'z', domains: ['A', 'B'], types: ['Budget', 'Time, Place'] }]);
    expect(value(parseMdTasks(xml, { domains: withComma }, 1))[0]!['Relevant Affinity Types']).toEqual(['Budget', 'Time, Place']);
  });

  it('refuses', () => {
    const types = [domain('Flights').affinities[0]!.name];
    refused(parseMdTasks('1. Plan a trip across Flights and Hotels.', schema, 1), 'not_xml');
    refused(parseMdTasks('<task><task_description>x</task_description></task>', schema, 1), 'not_xml');
    refused(parseMdTasks(mdXml([t(undefined, types)]), schema, 2), 'wrong_count');
    refused(parseMdTasks(mdXml([t(undefined, types)]).replace('</task>\n</response>', ''), schema, 1), 'wrong_count');
    refused(parseMdTasks(mdXml([t(['Flights', 'Weather'], types)]), schema, 1), 'unknown_domain');
    refused(parseMdTasks(mdXml([t(['Flights', 'Hotels'], ['No Such Type'])]), schema, 1), 'unknown_type');
    refused(parseMdTasks(mdXml([t(['Hotels', 'Music'], types)]), schema, 1), 'unknown_type'); // a Flights type in a Hotels/Music task
    refused(parseMdTasks(mdXml([t(['Flights'], types)]), schema, 1), 'bad_value');
    refused(parseMdTasks(mdXml([t(['Flights', 'Flights'], types)]), schema, 1), 'bad_value');
    refused(parseMdTasks(mdXml([{ ...t(undefined, types), g: '  ' }]), schema, 1), 'bad_value');
    refused(parseMdTasks(mdXml([t(undefined, types)]).replace(/<user_intent>.*<\/user_intent>/, ''), schema, 1), 'bad_value');
    refused(parseMdTasks(mdXml([t(undefined, [])]), schema, 1), 'bad_value');
    refused(parseMdTasks(mdXml([{ ...t(undefined, types), d: 'ab' }]).replace('ab', 'a&#7;b'), schema, 1), 'bad_value');
  });
});

describe('parseSituation', () => {
  const plain = [
    'Location: Leeds, United Kingdom',
    'Justification: She lives in Leeds.',
    'Device: Laptop',
    'Justification: Comparing options is easier on a big screen.',
    'Time of Day: Evening',
    'Justification: After work.',
    'Day of the Week: Saturday',
    'Justification: The weekend.',
    'Environment: Quiet',
    'Justification: At home.',
  ].join('\n');
  const expected = {
    values: { Location: 'Leeds, United Kingdom', Device: 'Laptop', 'Time of Day': 'Evening', 'Day of the Week': 'Saturday', Environment: 'Quiet' },
    justifications: {
      Location: 'She lives in Leeds.',
      Device: 'Comparing options is easier on a big screen.',
      'Time of Day': 'After work.',
      'Day of the Week': 'The weekend.',
      Environment: 'At home.',
    },
  };

  it('reads the plain, numbered and bold forms', () => {
    expect(value(parseSituation(plain))).toEqual(expected);
    expect(notes(parseSituation(plain))).toEqual({ off_list: [], reshaped: [] });
    const numbered = plain
      .split('\n')
      .map((l, i) => (i % 2 === 0 ? `${i / 2 + 1}. ${l}` : `   - ${l}`))
      .join('\n');
    expect(value(parseSituation(`Situation Context:\n\n${numbered}\n\nThese choices fit the user.`))).toEqual({
      ...expected,
      justifications: { ...expected.justifications, Environment: 'At home.' },
    });
    const bold = plain.replace(/^(Location|Device|Time of Day|Day of the Week|Environment): /gm, '**$1:** ').replace(/^Justification:/gm, '*Justification*:');
    expect(value(parseSituation(bold.replace(/\n/g, '\r\n')))).toEqual(expected);
    const boldOutside = plain.replace(/^(Location|Device|Time of Day|Day of the Week|Environment): (.*)$/gm, '**$1**: **$2**');
    expect(value(parseSituation(boldOutside))).toEqual(expected);
  });

  it('reads a value on the next line, an inline justification, a multi-line justification, "Day of Week"', () => {
    const text = plain
      .replace(
        'Device: Laptop\nJustification: Comparing options is easier on a big screen.',
        'Device:\nLaptop\nJustification: Comparing options\nis easier on a big screen.',
      )
      .replace('Environment: Quiet\nJustification: At home.', 'Environment: Quiet (Justification: At home.)')
      .replace('Day of the Week:', 'Day of Week:');
    expect(value(parseSituation(text))).toEqual(expected);
  });

  it('matches closed sets ignoring case and brackets, writes the canonical spelling, notes it', () => {
    const r = parseSituation(
      plain.replace('Device: Laptop', 'Device: laptop').replace('Environment: Quiet', 'Environment: [Quiet]').replace('Saturday', 'SATURDAY.'),
    );
    expect(value(r).values).toEqual(expected.values);
    expect(notes(r).reshaped).toEqual(['Device: laptop -> Laptop', 'Day of the Week: SATURDAY -> Saturday', 'Environment: [Quiet] -> Quiet']);
  });

  it('keeps the first of a repeated variable', () => {
    expect(value(parseSituation(`${plain}\nDevice: Tablet\nJustification: second thoughts.`))).toEqual(expected);
  });

  it('refuses', () => {
    refused(parseSituation(plain.replace('Device: Laptop', 'Device: Smart TV')), 'off_set');
    refused(parseSituation(plain.replace('Evening', 'Late Afternoon')), 'off_set');
    refused(parseSituation(plain.replace('Saturday', 'Weekend')), 'off_set');
    refused(parseSituation(plain.replace('Quiet', 'Moderately Noisy')), 'off_set');
    refused(parseSituation(plain.replace('Justification: After work.\n', '')), 'bad_value');
    refused(parseSituation(plain.replace('Justification: At home.', 'Justification:')), 'bad_value');
    refused(parseSituation(plain.replace(/Environment: Quiet\nJustification: At home\./, '')), 'bad_value');
    refused(parseSituation(plain.replace('Location: Leeds, United Kingdom', 'Location:')), 'bad_value');
    refused(parseSituation(plain.replace('Leeds, United', 'Leeds,\u0001 United')), 'bad_value');
    refused(parseSituation('The user would use a laptop in the evening.'), 'bad_value');
  });
});

describe('parseConsistency', () => {
  const reply = (domains: Array<[string, string, string]>, cross: [string, string] | null = ['0', 'Fine across domains.']) =>
    domains.map(([d, l, e]) => `<domain name="${d}">\n  <label>${l}</label>\n  <explanation>${e}</explanation>\n</domain>`).join('\n') +
    (cross ? `\n<cross_domain><label>${cross[0]}</label><explanation>${cross[1]}</explanation></cross_domain>` : '');

  it('reads a verdict per profile domain, in the profile order, and across domains', () => {
    const text = `Let me look.\n<response>\n${reply([
      ['Music', ' 1 ', 'Likes silence &amp; loud rock.'],
      ['Rental Cars', '0', 'Fine.'],
    ])}\n</response>`;
    const r = parseConsistency(text, ['Rental Cars', 'Music']);
    expect(value(r)).toEqual({
      domains: { 'Rental Cars': { label: 0, explanation: 'Fine.' }, Music: { label: 1, explanation: 'Likes silence & loud rock.' } },
      cross_domain: { label: 0, explanation: 'Fine across domains.' },
    });
    expect(Object.keys(value(r).domains)).toEqual(['Rental Cars', 'Music']);
    expect(value(parseConsistency(reply([['Music', '0', 'ok']]).replace('name="Music"', "name='Music'"), ['Music'])).domains['Music']!.label).toBe(0);
  });

  it('refuses', () => {
    refused(parseConsistency('No conflicts: label 0.', ['Music']), 'not_xml');
    refused(
      parseConsistency(
        reply([
          ['Music', '0', 'ok'],
          ['Weather', '0', 'ok'],
        ]),
        ['Music'],
      ),
      'unknown_domain',
    );
    refused(parseConsistency(reply([['Music', '0', 'ok']]), ['Music', 'Books']), 'unknown_domain');
    refused(parseConsistency(reply([['Music', 'yes', 'ok']]), ['Music']), 'bad_value');
    refused(parseConsistency(reply([['Music', '2', 'ok']]), ['Music']), 'bad_value');
    refused(parseConsistency(reply([['Music', '0', '  ']]), ['Music']), 'bad_value');
    refused(parseConsistency(reply([['Music', '0', 'ok']], null), ['Music']), 'bad_value');
    refused(parseConsistency(reply([['Music', '0', 'ok']], ['0', '']), ['Music']), 'bad_value');
    refused(
      parseConsistency(
        reply([
          ['Music', '0', 'ok'],
          ['Music', '1', 'no'],
        ]),
        ['Music'],
      ),
      'bad_value',
    );
    refused(parseConsistency('<domain><label>0</label><explanation>x</explanation></domain>', ['Music']), 'bad_value');
  });
});

describe('hostile replies', () => {
  const good = () => JSON.stringify(Object.fromEntries(schema.domainNames.map((d) => [d, 1])));

  it('prototype-pollution keys are refused and pollute nothing', () => {
    for (const key of ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty']) {
      const polluted = good().replace(/^\{/, `{"${key}": {"polluted": 1, "Seat": "aisle"}, `);
      refused(parseMask(polluted, schema), 'unknown_domain');
      refused(parsePreferences(`{"${key}": {"polluted": 1}, "Genres": ["action"], "Seat": "aisle", "Favourite Actors": ["X"]}`, TINY), 'unknown_type');
      refused(parseConsistency(`<domain name="${key}"><label>0</label><explanation>x</explanation></domain>`, ['Music']), 'unknown_domain');
      refused(parseMdTasks(mdXml([{ d: 'x', i: 'y', g: 'z', domains: ['Flights', key], types: ['x'] }]), schema, 1), 'unknown_domain');
    }
    // A JSON key "__proto__" is an own property after JSON.parse: still refused, never followed.
    refused(parsePreferences('{"Genres": ["action"], "Seat": "aisle", "Favourite Actors": ["X"], "__proto__": {"Seat": "window"}}', TINY), 'unknown_type');
    // Missing types are not found on Object.prototype either.
    const protoDomain: DomainSchema = {
      domain: 'X',
      affinities: [{ name: 'constructor', is_categorical: false, has_multiple_values: false, possible_values: [] }],
    };
    refused(parsePreferences('{}', protoDomain), 'missing_type');
    refused(parseSdTasks('[{"Task Description": "a", "User Intent": "b"}]', TINY, 1), 'bad_value');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('deep nesting, huge replies, control characters: refusals, quickly', () => {
    const started = Date.now();
    refused(parseMask('['.repeat(200_000), schema), 'not_json');
    refused(parseMask(`${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`, schema), 'not_json');
    refused(parseSdTasks(`${'['.repeat(100)}${']'.repeat(100)}`, TINY, 1), 'not_json');
    refused(parseMask('{'.repeat(MAX_REPLY_CHARS), schema), 'not_json'); // unbalanced, at the limit
    const huge = 'x'.repeat(MAX_REPLY_CHARS + 1);
    refused(parseMask(huge, schema), 'not_json');
    refused(parsePreferences(huge, TINY), 'not_json');
    refused(parseSdTasks(huge, TINY, 1), 'not_json');
    refused(parseMdTasks(huge, schema, 1), 'not_xml');
    refused(parseConsistency(huge, ['Music']), 'not_xml');
    refused(parseInteractions(huge), 'bad_value');
    refused(parseSituation(huge), 'bad_value');
    // Many openings with no closing tag, many lines: linear scans.
    refused(parseMdTasks(`<response>${'<task>'.repeat(60_000)}`, schema, 25), 'wrong_count');
    refused(parseConsistency(`${'<domain name="Music">'.repeat(15_000)}`, ['Music']), 'not_xml');
    refused(parseSituation('Location:\n'.repeat(35_000)), 'bad_value');
    refused(parseMask(`${'{'.repeat(30)}${'"x" '.repeat(90_000)}`, schema), 'not_json');
    expect(Date.now() - started).toBeLessThan(5_000);
    // Control characters: raw ones break JSON; escaped ones reach a value and are refused.
    refused(parsePreferences('{"Genres": ["ac\u0000tion"], "Seat": "aisle", "Favourite Actors": ["X"]}', TINY), 'not_json');
    refused(parsePreferences('{"Genres": ["ac\\u0000tion"], "Seat": "aisle", "Favourite Actors": ["X"]}', TINY), 'bad_value');
    refused(
      parseSdTasks(JSON.stringify([{ 'Task Description': 'a\u001bb', 'User Intent': 'b', 'Task Goal': 'c', 'Relevant Affinity Types': ['Seat'] }]), TINY, 1),
      'bad_value',
    );
    // Not text at all.
    refused(parseMask(undefined as unknown as string, schema), 'not_json');
    refused(parseSituation(42 as unknown as string), 'bad_value');
  });
});

describe.skipIf(!hasReleased)('the released data (../shared/personalens)', () => {
  let released: PreferenceSchema;
  beforeAll(async () => {
    released = await PreferenceSchema.read(join(RELEASED, 'res', 'schema.json'));
  });
  const profile = (u: number) => JSON.parse(readFileSync(join(RELEASED, 'data', 'profile', `user${u}`, 'profile.json'), 'utf8'));

  it("reads every user's affinities back as they are; off-list and empty-list counts as measured", () => {
    let offList = 0;
    let emptyRefused = 0;
    for (let u = 0; u < 1500; u++) {
      const p = profile(u);
      // The released `interests` are a mask in the schema's domains (8 users list them in another
      // order; user874 writes "Buses**").
      const mask = parseMask(JSON.stringify(p.interests), released);
      expect(Object.keys(value(mask))).toEqual(released.domainNames);
      expect(notes(mask).reshaped).toEqual(u === 874 ? ['Buses**: key -> Buses'] : []);
      for (const d of released.domains) {
        const prefs = p.affinities[d.domain];
        const reply = JSON.stringify(prefs);
        const r = parsePreferences(reply, d, { allowEmptyList: true });
        expect(value(r)).toEqual(prefs);
        expect(Object.keys(value(r))).toEqual(Object.keys(prefs));
        offList += notes(r).off_list.length;
        if (!parsePreferences(reply, d).ok) emptyRefused++;
      }
      if (u < 20) for (const text of Object.values(p.interactions as Record<string, string>)) expect(value(parseInteractions(text))).toBe(text);
    }
    // 1,110 categorical values are not in their list as written, 152 of them only by case.
    expect(offList).toBe(1110 - 152);
    // 446 empty lists, in this many user x domain records, refused by default.
    expect(emptyRefused).toBeGreaterThan(0);
    expect(emptyRefused).toBeLessThanOrEqual(446);
  });

  it('reads the SD task definitions back, except those naming a type their domain lacks', () => {
    const refusedDomains: string[] = [];
    for (const d of released.domains) {
      const lines = readFileSync(join(RELEASED, 'data', 'task', d.domain, 'task.jsonl'), 'utf8')
        .trim()
        .split('\n');
      const tasks = lines.map((l) => JSON.parse(l) as TaskDefinition);
      const r = parseSdTasks(JSON.stringify(tasks.map(({ 'Task Number': _, ...rest }) => rest)), d, tasks.length);
      const known = new Set(d.affinities.map((a) => a.name));
      if (tasks.every((t) => t['Relevant Affinity Types'].every((x) => known.has(x)))) expect(value(r)).toEqual(tasks);
      else {
        refused(r, 'unknown_type');
        refusedDomains.push(d.domain);
      }
    }
    // "Favorite Authors" for the schema's "Favourite Authors", and so on.
    expect(refusedDomains).toEqual(['Books', 'Media']);
  });

  it('reads the MD task definitions back, except those naming a type none of their domains has', () => {
    const lines = readFileSync(join(RELEASED, 'data', 'task', 'Multi-Domain', 'task.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const tasks = lines.map((l) => JSON.parse(l) as TaskDefinition);
    const xml = (ts: TaskDefinition[]) =>
      mdXml(
        ts.map((t) => ({
          d: t['Task Description'],
          i: t['User Intent'],
          g: t['Task Goal'],
          domains: t['Relevant Domains']!,
          types: t['Relevant Affinity Types'],
        })),
      );
    refused(parseMdTasks(xml(tasks), released, 25), 'unknown_type');
    const bad = [3, 9, 21]; // "Location Preference" for Music/Events, "Seating Preference" ..., "Group Size Preference" ...
    const kept = tasks.filter((t) => !bad.includes(t['Task Number']));
    const r = parseMdTasks(xml(kept), released, kept.length);
    const expected = kept.map((t, i) => ({
      ...t,
      'Task Number': i + 1,
      'Relevant Affinity Types': t['Relevant Affinity Types'].map((x) => x.replace(/ \((Media|Music)\)$/, '')),
    }));
    expect(value(r)).toEqual(expected);
    expect(notes(r).reshaped).toEqual(['task 3: Preferred Genres (Media) -> Preferred Genres', 'task 22: Preferred Genres (Music) -> Preferred Genres']);
  });

  it("reads the released situations back (user0's), refusing only values off the closed sets", () => {
    for (const file of ['tasks.json', 'tasks_md.json']) {
      const tasks = JSON.parse(readFileSync(join(RELEASED, 'data', 'profile', 'user0', file), 'utf8')) as Record<
        string,
        { situations: Record<string, string> }
      >;
      for (const { situations } of Object.values(tasks)) {
        const text = Object.entries(situations)
          .map(([k, v]) => `${k}: ${v}\nJustification: because.`)
          .join('\n');
        expect(value(parseSituation(text)).values).toEqual(situations);
      }
    }
  });
});

describe('coverage', () => {
  it('the tests above reach every parse state', () => {
    const all: ParseState[] = ['not_json', 'not_xml', 'missing_type', 'unknown_type', 'bad_value', 'unknown_domain', 'off_set', 'wrong_count', 'empty'];
    expect([...reached].sort()).toEqual([...all].sort());
  });
});
