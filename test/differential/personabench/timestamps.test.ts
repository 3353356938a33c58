import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../../src/benchmarks/personabench/corpus.js';
import { seededRandom } from './original.js';

/*
 * Timestamps as the original prompt makers read and print them: parse_timestamp then
 * datetime_to_string of 3.1_RandPrompt.py (the other makers share them), imported and called by
 * /usr/bin/python3 from a checkout of the original (PERSONABENCH_ORIGINAL); skipped without one.
 * Beside the named forms, 4,000 strings drawn (seeded) from the pieces such timestamps are made of:
 * dates with and without dashes, ISO weeks, any separator, times with and without colons,
 * fractions of any length, offsets with and without seconds, stray characters.
 */
const ORIGINAL = process.env['PERSONABENCH_ORIGINAL'] ?? '';
const MAKER = join(ORIGINAL, 'PromptMakers', '3.1_RandPrompt.py');
const CASES = [
  '2023-03-01T10:00:00Z',
  '2023-03-01T10:00:00+02:00',
  '2023-03-01T10:00:00-05:30',
  '2023-03-01T23:30:00-01:00',
  '2023-03-01T10:00:00+0200',
  '2023-03-01T10:00:00+02',
  '2023-03-01T10:00:00+02:00:30',
  '2023-03-01 10:00:00',
  '2023-03-01 10:00:00.999',
  '2023-03-01T10:00:00.5Z',
  '2023-03-01T10:00:00.1234567Z',
  '2023-03-01T10:00:00,25Z',
  '2023-03-01T10:00:00.000000Z',
  '2023-03-01',
  '2023-03-01T10',
  '2023-03-01T10:00',
  '2024-02-29T10:00:00Z',
  '2023-02-29T10:00:00',
  '2023-03-01T24:00:00',
  '2023-03-01T10:00:00ZZ',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '1969-12-31T23:59:59Z',
  'not a date',
  '',
  '20230301',
  '20230301T101112',
  '2023-W09-3',
  '2023-W09',
  '2023W093',
  '2023-03-01X10:00:00',
  '2023-03-01T10:00:00 +02:00',
  '2023-3-1T10:00:00',
  '2023-03-01T10:00:00.Z',
  '2023-03-01T10:00:00+02:00:30.5',
];

/** A seeded stream of timestamp-like strings (mulberry32). */
function fuzzCases(n: number): string[] {
  const rand = seededRandom(0x5eed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const num = (w: number, max: number) => String(Math.floor(rand() * (max + 1))).padStart(w, '0');
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const year = pick(['2023', '2024', '2020', '0001', '9999', '1999', '2026']);
    const dash = rand() < 0.7;
    const date =
      rand() < 0.15
        ? `${year}${dash ? '-' : ''}W${num(2, 54)}${rand() < 0.6 ? `${dash ? '-' : ''}${num(1, 8)}` : ''}`
        : `${year}${dash ? '-' : ''}${rand() < 0.1 ? num(1, 9) : num(2, 13)}${dash ? '-' : ''}${rand() < 0.1 ? num(1, 9) : num(2, 31)}`;
    if (rand() < 0.1) {
      out.push(date);
      continue;
    }
    const sep = pick(['T', 'T', 'T', ' ', 'X', 't', '_']);
    const colon = rand() < 0.8;
    const parts = [num(2, 24), num(2, 60), num(2, 61)].slice(0, pick([1, 2, 3, 3, 3, 3]));
    let time = parts.join(colon ? ':' : '');
    if (rand() < 0.3) time += `${pick(['.', ',', '.'])}${num(pick([1, 2, 3, 4, 5, 6, 7, 9]), 999_999_999).slice(0, pick([0, 1, 3, 6, 7, 9]))}`;
    const zone = pick([
      '',
      '',
      'Z',
      '+00:00',
      '-00:00',
      `+${num(2, 24)}:${num(2, 59)}`,
      `-${num(2, 14)}${num(2, 59)}`,
      `+${num(2, 5)}`,
      `+02:00:${num(2, 59)}`,
      'ZZ',
      ' +01:00',
      '+01:0',
    ]);
    const noise = rand() < 0.05 ? pick([' ', 'x', '.', 'Z', '-']) : '';
    out.push(`${date}${sep}${time}${zone}${noise}`);
  }
  return out;
}

const ALL = [...CASES, ...fuzzCases(4000)];

describe.skipIf(!existsSync(MAKER))('PERSONA-bench timestamps: read and printed as the original makers do', () => {
  it(`${CASES.length} named forms and 4,000 drawn ones`, () => {
    const script = [
      'import json, sys, io, contextlib, importlib.util',
      'spec = importlib.util.spec_from_file_location("maker", sys.argv[1])',
      'm = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
      'out = []',
      'for c in json.loads(sys.stdin.read()):',
      '    with contextlib.redirect_stderr(io.StringIO()):',
      '        try:',
      '            dt = m.parse_timestamp(c)',
      '            out.append(None if dt is None else m.datetime_to_string(dt))',
      '        except (OverflowError, ValueError):',
      '            out.append(None)',
      'print(json.dumps(out))',
    ].join('\n');
    const r = spawnSync('/usr/bin/python3', ['-c', script, MAKER], {
      input: JSON.stringify(ALL),
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { PATH: '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(r.status, r.stderr).toBe(0);
    const theirs = JSON.parse(r.stdout) as Array<string | null>;
    expect(theirs).toHaveLength(ALL.length);
    const differ = ALL.map((c, i) => ({ c, ours: parseTimestamp(c)?.iso ?? null, theirs: theirs[i] })).filter((x) => x.ours !== x.theirs);
    expect(differ.slice(0, 10)).toEqual([]);
    // The draws reach both sides: many parse, many do not.
    const parsed = theirs.filter((x) => x !== null).length;
    expect(parsed).toBeGreaterThan(ALL.length / 4);
    expect(parsed).toBeLessThan(ALL.length);
  });
});
