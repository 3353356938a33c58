import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  parseConsistency,
  parseInteractions,
  parseMask,
  parseMdTasks,
  parsePreferences,
  parseSdTasks,
  parseSituation,
} from '../../../../src/benchmarks/personalens/construction/parse.js';
import {
  DEFAULT_MALFORMED_RATE,
  simulateConsistency,
  simulateInteractions,
  simulateMask,
  simulateMdTasks,
  simulatePreferences,
  simulateSdTasks,
  simulateSituation,
} from '../../../../src/benchmarks/personalens/construction/simulate.js';
import {
  SITUATION_FIELDS,
  SITUATION_VALUES,
  type Demographics,
  type DomainPreferences,
  type ParseResult,
  type ParseState,
  type TaskDefinition,
} from '../../../../src/benchmarks/personalens/construction/types.js';
import { PreferenceSchema } from '../../../../src/benchmarks/personalens/dataset/upstream/preference-schema.js';
import { validatorFor } from '../../../../src/core/validator.js';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..', '..');
const SAMPLE = join(repoRoot, 'data', 'sample');
const SEEDS = 500;
const ALL_STATES: ParseState[] = ['not_json', 'not_xml', 'missing_type', 'unknown_type', 'bad_value', 'unknown_domain', 'off_set', 'wrong_count', 'empty'];

let schema: PreferenceSchema;
let people: Demographics[];

beforeAll(async () => {
  schema = await PreferenceSchema.read(join(SAMPLE, 'res', 'schema.json'));
  people = Array.from(
    { length: 8 },
    (_, u) => JSON.parse(readFileSync(join(SAMPLE, 'profile', `user${u}`, 'profile.json'), 'utf8')).demographics as Demographics,
  );
});

interface Tally {
  ok: number;
  total: number;
  states: Set<ParseState>;
  reshaped: number;
  offList: number;
}

/** Runs `make` for SEEDS seeds, tallies the parse results, and hands each accepted value to `check`. */
function tally<V>(make: (i: number) => ParseResult<V>, check: (v: V, i: number) => void = () => {}): Tally {
  const t: Tally = { ok: 0, total: 0, states: new Set(), reshaped: 0, offList: 0 };
  for (let i = 0; i < SEEDS; i++) {
    const r = make(i);
    t.total++;
    if (r.ok) {
      t.ok++;
      t.reshaped += r.notes.reshaped.length > 0 ? 1 : 0;
      t.offList += r.notes.off_list.length;
      check(r.value, i);
    } else t.states.add(r.state);
  }
  return t;
}

function expectShare(t: Tally): void {
  const share = t.ok / t.total;
  // About 1 - DEFAULT_MALFORMED_RATE parse; binomial noise over 500 seeds is about 1%.
  expect(share).toBeGreaterThan(1 - DEFAULT_MALFORMED_RATE - 0.04);
  expect(share).toBeLessThan(1 - DEFAULT_MALFORMED_RATE + 0.04);
}

function valid(id: Parameters<typeof validatorFor>[0], data: unknown): void {
  const fn = validatorFor(id);
  expect(fn(data), JSON.stringify(fn.errors)).toBe(true);
}

describe('the construction simulator', () => {
  const seen = new Set<ParseState>();
  const record = (t: Tally) => t.states.forEach((s) => seen.add(s));

  it('is deterministic in its seed and varies across seeds', () => {
    const d = schema.domains[3]!;
    expect(simulatePreferences('s1', people[0]!, d)).toBe(simulatePreferences('s1', people[0]!, d));
    expect(simulateMask('s1', schema)).toBe(simulateMask('s1', schema));
    expect(simulateMdTasks('s1', schema, 5)).toBe(simulateMdTasks('s1', schema, 5));
    const masks = new Set(Array.from({ length: 20 }, (_, i) => simulateMask(`s${i}`, schema)));
    expect(masks.size).toBeGreaterThan(15);
  });

  it('masks: ~76% of domains kept; states not_json, unknown_domain, bad_value, empty', () => {
    let kept = 0;
    let domains = 0;
    const t = tally(
      (i) => parseMask(simulateMask(`user${i}`, schema), schema),
      (mask) => {
        expect(Object.keys(mask)).toEqual(schema.domainNames);
        valid('plens:upstream-profile', { demographics: people[0], interests: mask, affinities: {}, interactions: {} });
        kept += Object.values(mask).reduce<number>((s, b) => s + b, 0);
        domains += schema.domainNames.length;
      },
    );
    expectShare(t);
    record(t);
    expect(kept / domains).toBeGreaterThan(0.7);
    expect(kept / domains).toBeLessThan(0.82);
    expect([...t.states].sort()).toEqual(['bad_value', 'empty', 'not_json', 'unknown_domain']);
    expect(t.reshaped).toBeGreaterThan(0);
  });

  it('preferences: schema-valid, some off-list and reshaped; states not_json, missing_type, unknown_type, bad_value', () => {
    const t = tally(
      (i) => parsePreferences(simulatePreferences(`p${i}`, people[i % 8]!, schema.domains[i % 20]!), schema.domains[i % 20]!),
      (prefs, i) => {
        const d = schema.domains[i % 20]!;
        expect(Object.keys(prefs)).toEqual(d.affinities.map((a) => a.name));
        for (const a of d.affinities) expect(Array.isArray(prefs[a.name])).toBe(a.has_multiple_values);
        valid('plens:upstream-profile', { demographics: people[i % 8], interests: { [d.domain]: 1 }, affinities: { [d.domain]: prefs }, interactions: {} });
      },
    );
    expectShare(t);
    record(t);
    expect([...t.states].sort()).toEqual(['bad_value', 'missing_type', 'not_json', 'unknown_type']);
    expect(t.offList).toBeGreaterThan(5);
    expect(t.reshaped).toBeGreaterThan(5);
  });

  it('past interactions: text naming the preferences; state empty', () => {
    const d = schema.domains[5]!;
    const prefs = (i: number) => {
      const r = parsePreferences(simulatePreferences(`q${i}`, people[i % 8]!, d, { malformedRate: 0 }), d);
      if (!r.ok) throw new Error(r.error);
      return r.value;
    };
    const t = tally(
      (i) => parseInteractions(simulateInteractions(`i${i}`, people[i % 8]!, d.domain, prefs(i))),
      (text, i) => {
        expect(text).not.toMatch(/^Interaction Summary/);
        expect(text).toContain(d.domain.toLowerCase());
        const first = Object.values(prefs(i)).flat();
        expect(first.some((v) => text.includes(v))).toBe(true);
      },
    );
    expectShare(t);
    record(t);
    expect([...t.states]).toEqual(['empty']);
  });

  it('SD tasks: N valid task definitions naming the domain types; states not_json, wrong_count, bad_value, unknown_type', () => {
    const t = tally(
      (i) => parseSdTasks(simulateSdTasks(`sd${i}`, schema.domains[i % 20]!, 1 + (i % 5)), schema.domains[i % 20]!, 1 + (i % 5)),
      (tasks, i) => {
        expect(tasks).toHaveLength(1 + (i % 5));
        tasks.forEach((task) => valid('plens:upstream-task-definition', task));
      },
    );
    expectShare(t);
    record(t);
    expect([...t.states].sort()).toEqual(['bad_value', 'not_json', 'unknown_type', 'wrong_count']);
  });

  it('MD tasks: N valid multi-domain definitions; states not_xml, wrong_count, unknown_domain, bad_value, unknown_type', () => {
    const t = tally(
      (i) => parseMdTasks(simulateMdTasks(`md${i}`, schema, 3 + (i % 4)), schema, 3 + (i % 4)),
      (tasks, i) => {
        expect(tasks).toHaveLength(3 + (i % 4));
        tasks.forEach((task) => {
          valid('plens:upstream-task-definition', task);
          expect(task['User Intent']).toContain('&');
        });
      },
    );
    expectShare(t);
    record(t);
    expect([...t.states].sort()).toEqual(['bad_value', 'not_xml', 'unknown_domain', 'unknown_type', 'wrong_count']);
  });

  it('situations: valid, in the closed sets, varied; states off_set, bad_value', () => {
    const task: TaskDefinition = {
      'Task Number': 1,
      'Task Description': 'The user wants to book a table.',
      'User Intent': 'Book a table.',
      'Task Goal': 'Booked.',
      'Relevant Affinity Types': [],
    };
    const counts = new Map<string, Set<string>>();
    const t = tally(
      (i) => parseSituation(simulateSituation(`sit${i}`, people[i % 8]!, { ...task, 'Task Description': `${task['Task Description']} #${i % 7}` })),
      (s) => {
        valid('plens:upstream-situations', s.values);
        for (const f of SITUATION_FIELDS) {
          const set = SITUATION_VALUES[f];
          if (set) expect(set).toContain(s.values[f]);
          expect(s.justifications[f].length).toBeGreaterThan(0);
          counts.set(f, (counts.get(f) ?? new Set()).add(s.values[f]));
        }
      },
    );
    expectShare(t);
    record(t);
    expect([...t.states].sort()).toEqual(['bad_value', 'off_set']);
    for (const f of SITUATION_FIELDS) expect(counts.get(f)!.size, f).toBeGreaterThan(1);
    expect(counts.get('Device')!.size).toBe(5);
    expect(t.reshaped).toBeGreaterThan(0);
  });

  it('consistency: ~10% flagged; states not_xml, bad_value, unknown_domain', () => {
    let flagged = 0;
    const domainsOf = (i: number) => schema.domainNames.filter((_, k) => (i + k) % 4 !== 0);
    const t = tally(
      (i) => parseConsistency(simulateConsistency(`c${i}`, domainsOf(i)), domainsOf(i)),
      (v, i) => {
        expect(Object.keys(v.domains)).toEqual(domainsOf(i));
        if (v.cross_domain.label === 1 || Object.values(v.domains).some((d) => d.label === 1)) flagged++;
      },
    );
    expectShare(t);
    record(t);
    expect(flagged / t.ok).toBeGreaterThan(0.05);
    expect(flagged / t.ok).toBeLessThan(0.16);
    expect([...t.states].sort()).toEqual(['bad_value', 'not_xml', 'unknown_domain']);
    // No domains at all: only the cross-domain verdict.
    expect(parseConsistency(simulateConsistency('none', [], { malformedRate: 0 }), []).ok).toBe(true);
  });

  it('reaches every parse state across the stages', () => {
    expect([...seen].sort()).toEqual([...ALL_STATES].sort());
  });

  it('malformedRate 0 always parses, 1 never does', () => {
    const d = schema.domains[7]!;
    const prefs: DomainPreferences = { [d.affinities[0]!.name]: 'x' };
    const task = { 'Task Description': 'A task.' };
    const domains = schema.domainNames.slice(0, 6);
    for (let i = 0; i < 100; i++) {
      for (const [rate, ok] of [
        [0, true],
        [1, false],
      ] as const) {
        const o = { malformedRate: rate };
        const p = people[i % 8]!;
        expect(parseMask(simulateMask(`m${i}`, schema, o), schema).ok).toBe(ok);
        expect(parsePreferences(simulatePreferences(`m${i}`, p, d, o), d).ok).toBe(ok);
        expect(parseInteractions(simulateInteractions(`m${i}`, p, d.domain, prefs, o)).ok).toBe(ok);
        expect(parseSdTasks(simulateSdTasks(`m${i}`, d, 1 + (i % 3), o), d, 1 + (i % 3)).ok).toBe(ok);
        expect(parseMdTasks(simulateMdTasks(`m${i}`, schema, 2 + (i % 3), o), schema, 2 + (i % 3)).ok).toBe(ok);
        expect(parseSituation(simulateSituation(`m${i}`, p, task, o)).ok).toBe(ok);
        expect(parseConsistency(simulateConsistency(`m${i}`, domains, o), domains).ok).toBe(ok);
      }
    }
  });
});
