import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJudgment, SCORE_RANGES, type JudgeDimension, type ParsedJudgment } from '../../../src/benchmarks/personalens/judge-parse.js';

const CORPUS = join(import.meta.dirname, '..', '..', 'fixtures', 'judge-replies');

interface Expectation {
  dimension: JudgeDimension;
  ok: boolean;
  score?: number;
  verdict?: boolean;
  error_includes?: string;
  /** A phrase the extracted justification must contain. */
  justification_includes?: string;
  /** The reply has no justification at all (only allowed for task completion). */
  justification_empty?: boolean;
}

const expected = JSON.parse(readFileSync(join(CORPUS, 'expected.json'), 'utf8')) as Record<string, Expectation>;
const files = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.txt'))
  .sort();

const read = (file: string): string => readFileSync(join(CORPUS, file), 'utf8');

describe('judge reply corpus', () => {
  it('has an expectation for every reply and a reply for every expectation', () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
    expect(Object.keys(expected).sort()).toEqual(files);
  });

  it.each(files)('%s', (file) => {
    const exp = expected[file]!;
    const got = parseJudgment(exp.dimension, read(file));
    expect(got.dimension).toBe(exp.dimension);
    if (!exp.ok) {
      expect(got.ok, JSON.stringify(got)).toBe(false);
      if (got.ok) return;
      expect(got.error).toContain(exp.error_includes);
      return;
    }
    expect(got.ok, JSON.stringify(got)).toBe(true);
    if (!got.ok) return;
    expect(got.score).toBe(exp.score);
    if (got.dimension === 'task_completion') expect(got.verdict).toBe(exp.verdict);
    else expect(exp.verdict).toBeUndefined();
    if (exp.justification_empty) expect(got.justification).toBe('');
    else expect(got.justification.trim()).not.toBe('');
    if (exp.justification_includes) expect(got.justification).toContain(exp.justification_includes);
  });

  it('reads CRLF replies exactly like their LF form', () => {
    for (const file of files.filter((f) => read(f).includes('\r\n'))) {
      const exp = expected[file]!;
      expect(parseJudgment(exp.dimension, read(file).replace(/\r\n/g, '\n'))).toEqual(parseJudgment(exp.dimension, read(file)));
    }
  });
});

const ok = (r: ParsedJudgment) => {
  if (!r.ok) throw new Error(`expected ok, got ${r.error}`);
  return r;
};
const err = (r: ParsedJudgment) => {
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r)}`);
  return r.error;
};

describe('task completion', () => {
  it.each([
    ['VERDICT: True', true],
    ['VERDICT: False', false],
    ['**VERDICT:** True', true],
    ['**Verdict**: false', false],
    ['VERDICT : TRUE', true],
    ['verdict: false.', false],
    ['**VERDICT: True**', true],
    ['VERDICT: `False`', false],
    ['VERDICT: "True"', true],
    ['Final Verdict: True', true],
    ['  > VERDICT: True (all three parts achieved)', true],
    ['VERDICT:\n\nFalse', false],
    ['I checked the goal.\nOverall the assistant did well, so VERDICT: True.', true],
  ])('%j -> %s', (reply, verdict) => {
    const r = ok(parseJudgment('task_completion', reply));
    expect(r).toMatchObject({ dimension: 'task_completion', verdict, score: verdict ? 1 : 0 });
  });

  it.each([
    ['VERDICT: Yes', 'not True or False'],
    ['VERDICT: No', 'not True or False'],
    ['VERDICT: Partially', 'not True or False'],
    ['VERDICT: True or False', 'ambiguous'],
    ['VERDICT: True\nVERDICT: False', 'conflicting verdicts'],
    ['**VERDICT:** True\n\n- VERDICT: false', 'conflicting verdicts'],
    ['The task was done.', 'no VERDICT line'],
    ['A VERDICT: True would require the booking to be confirmed.', 'no VERDICT line'],
    ['VERDICT: 1', 'not a number'],
    ['VERDICT:', 'has no value'],
    ['', 'empty reply'],
  ])('%j is an error (%s)', (reply, reason) => {
    expect(err(parseJudgment('task_completion', reply))).toContain(reason);
  });

  it('takes the explanation after EXPLANATION:, trimmed, in any case or emphasis', () => {
    expect(ok(parseJudgment('task_completion', 'VERDICT: True\nEXPLANATION:   All done.  \n')).justification).toBe('All done.');
    expect(ok(parseJudgment('task_completion', 'VERDICT: True\n**explanation:** All done.')).justification).toBe('All done.');
    expect(ok(parseJudgment('task_completion', 'VERDICT: True. EXPLANATION: All done.')).justification).toBe('All done.');
    expect(ok(parseJudgment('task_completion', 'EXPLANATION: Missing the refund.\nVERDICT: False')).justification).toBe('Missing the refund.');
    expect(ok(parseJudgment('task_completion', 'VERDICT: False')).justification).toBe('');
  });

  it('the same verdict repeated is fine; a hypothetical one inside a sentence is ignored', () => {
    expect(parseJudgment('task_completion', 'VERDICT: True\nEXPLANATION: ok\n\nVERDICT: True')).toMatchObject({ ok: true, verdict: true });
    expect(parseJudgment('task_completion', 'VERDICT: True\nEXPLANATION: a VERDICT: False would need a missing part.')).toMatchObject({
      ok: true,
      verdict: true,
      justification: 'a VERDICT: False would need a missing part.',
    });
  });
});

describe('scores', () => {
  it('exports the scales', () => {
    expect(SCORE_RANGES).toEqual({ personalization: [1, 4], naturalness: [1, 5], coherence: [1, 5] });
  });

  it.each([
    ['personalization', 'Personalization Score: 3', 3],
    ['personalization', '<response>\nPersonalization Score: 4\nJustification: x\n</response>', 4],
    ['personalization', '<response>Personalization Score: 2</response>', 2],
    ['personalization', 'Personalization Score: 3/4', 3],
    ['personalization', 'Personalization Score: 3 / 4', 3],
    ['personalization', 'Personalization Score: 3 out of 4', 3],
    ['personalization', 'Personalization Score: 3 (out of 4)', 3],
    ['personalization', 'Personalization Score: 3.0', 3],
    ['personalization', 'Personalization Score: [3]', 3],
    ['personalization', 'Personalization Score: **3**', 3],
    ['personalization', 'Personalization Score: <3>', 3],
    ['personalization', 'Personalization Score: 3 (STRONG)', 3],
    ['personalization', 'Personalization Score: 3 - STRONG', 3],
    ['personalization', '**Personalization Score:** 1', 1],
    ['personalization', '**Personalization Score**: 1', 1],
    ['personalization', '## Personalization Score: 2', 2],
    ['personalization', 'PERSONALIZATION SCORE: 2', 2],
    ['personalization', 'Personalization Score : 2', 2],
    ['personalization', 'Overall Personalization Score: 2', 2],
    ['personalization', 'Personalization Score: 2\nPersonalization Score: 2.0', 2],
    ['personalization', 'Score: 2\nJustification: basic.', 2],
    ['naturalness', 'Naturalness Score: 5/5', 5],
    ['naturalness', 'Naturalness Score: 4 out of 5', 4],
    ['naturalness', 'User Naturalness Score: 1', 1],
    ['coherence', 'Coherence Score: 1', 1],
    ['coherence', "The Assistant's Coherence Score: 5\nJustification: fine", 5],
    ['coherence', 'Coherence Score:\n**4**\nJustification: fine', 4],
    ['coherence', 'Coherence Score:   \r\n  4\r\n', 4],
  ] as const)('%s: %j -> %d', (dimension, reply, score) => {
    expect(ok(parseJudgment(dimension, reply))).toMatchObject({ dimension, score });
  });

  it.each([
    ['personalization', 'Personalization Score: 0', 'out of range 1-4'],
    ['personalization', 'Personalization Score: 5', 'out of range 1-4'],
    ['personalization', 'Personalization Score: -1', 'out of range 1-4'],
    ['naturalness', 'Naturalness Score: 6', 'out of range 1-5'],
    ['coherence', 'Coherence Score: 0', 'out of range 1-5'],
    ['personalization', 'Personalization Score: 3/5', 'denominator'],
    ['naturalness', 'Naturalness Score: 3/4', 'denominator'],
    ['naturalness', 'Naturalness Score: 3 out of 10', 'denominator'],
    ['personalization', 'Personalization Score: 3.5', 'not a whole number'],
    ['personalization', 'Personalization Score: 2-3', 'ambiguous'],
    ['personalization', 'Personalization Score: 2 or 3', 'ambiguous'],
    ['personalization', 'Personalization Score: 2 to 3', 'ambiguous'],
    ['personalization', 'Personalization Score: two', 'not a number'],
    ['personalization', 'Personalization Score: N/A', 'not a number'],
    ['personalization', 'Personalization Score:', 'has no value'],
    ['personalization', 'Personalization Score: 2\nPersonalization Score: 3', 'conflicting scores'],
    ['personalization', 'Personalization Score: 2\n- Personalization Score: 4 would require more.', 'conflicting scores'],
    ['personalization', 'Personalization Score: 2\nPersonalization Score: 3.5', 'conflicting scores'],
    ['personalization', '<response>Personalization Score: 2</response>\n<response>Personalization Score: 3</response>', 'conflicting scores'],
    ['personalization', 'I would give it a 3.', 'no Personalization Score label'],
    ['personalization', 'A Personalization Score: 4 would require anticipating needs.', 'no Personalization Score label'],
    ['personalization', 'Score: 3\nScore: 3', 'no Personalization Score label'],
    ['personalization', 'Final score: 3', 'no Personalization Score label'],
    ['personalization', 'Personalization: 3', 'no Personalization Score label'],
    ['personalization', 'Naturalness Score: 3', 'Naturalness Score'],
    ['personalization', 'Personalization Score: 3 is what I gave earlier\n<response>\nKey Observations: none\n</response>', 'inside <response>'],
    ['personalization', '<response>\n\n</response>', 'empty <response> block'],
    ['naturalness', 'Coherence Score: 4', 'Coherence Score'],
    ['coherence', '', 'empty reply'],
  ] as const)('%s: %j is an error (%s)', (dimension, reply, reason) => {
    expect(err(parseJudgment(dimension, reply))).toContain(reason);
  });

  it('the first line-start score wins over one quoted inside a sentence', () => {
    const reply = 'Personalization Score: 2\nJustification: basic; a Personalization Score: 4 would require anticipation.';
    expect(ok(parseJudgment('personalization', reply)).score).toBe(2);
  });

  it('an in-sentence label counts only when nothing line-start exists and it ends the sentence', () => {
    expect(ok(parseJudgment('coherence', 'All things considered, Coherence Score: 4.')).score).toBe(4);
    expect(err(parseJudgment('coherence', 'So Coherence Score: 4.\nOr rather Coherence Score: 3.'))).toContain('conflicting scores');
    expect(ok(parseJudgment('coherence', 'A Coherence Score: 5 would need no lapses; this gets Coherence Score: 4.')).score).toBe(4);
  });

  it('personalization justification is the Justification section, else the whole reply', () => {
    const reply = [
      '<response>',
      'Personalization Score: 3',
      'Key Observations: obs',
      '**Justification:** first line',
      'second line',
      'Improvement Suggestions: more',
      '</response>',
    ].join('\n');
    expect(ok(parseJudgment('personalization', reply)).justification).toBe('first line\nsecond line');
    expect(ok(parseJudgment('personalization', 'Personalization Score: 3\nIt used history.')).justification).toBe('Personalization Score: 3\nIt used history.');
  });

  it('naturalness/coherence justification: Justification:, else the rest after the score, else the text before it', () => {
    expect(ok(parseJudgment('naturalness', 'Naturalness Score: 4\nJustification:  Fluent. ')).justification).toBe('Fluent.');
    expect(ok(parseJudgment('naturalness', 'Naturalness Score: 4 - fluent and casual.\nNo stilted phrases.')).justification).toBe(
      'fluent and casual.\nNo stilted phrases.',
    );
    expect(ok(parseJudgment('coherence', 'Every turn follows.\n\nCoherence Score: 5')).justification).toBe('Every turn follows.');
    expect(ok(parseJudgment('coherence', 'Coherence Score: 5')).justification).toBe('');
  });
});

describe('robustness', () => {
  /** A small deterministic generator (mulberry32), so failures reproduce. */
  function rng(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const PIECES = [
    'VERDICT',
    'verdict',
    ':',
    ' ',
    '\n',
    '\r\n',
    '**',
    '*',
    '_',
    '`',
    'True',
    'False',
    'Yes',
    'Score',
    'score',
    'Personalization',
    'Naturalness',
    'Coherence',
    'Justification',
    'EXPLANATION',
    '<response>',
    '</response>',
    '<',
    '>',
    '[',
    ']',
    '(',
    ')',
    '/',
    '-',
    '.',
    '0',
    '1',
    '3',
    '4',
    '5',
    '3.5',
    'out of',
    'or',
    '#',
    '>',
    '•',
    'Key Observations',
    'Improvement Suggestions',
    '\u00a0',
    '\uFEFF',
    '：',
    '😀',
    '\u0000',
    'é',
  ];
  const DIMS: JudgeDimension[] = ['task_completion', 'personalization', 'naturalness', 'coherence'];

  it('never throws and always answers with a well-formed result', () => {
    const next = rng(20240607);
    for (let i = 0; i < 3000; i++) {
      let s = '';
      const n = Math.floor(next() * 40);
      for (let k = 0; k < n; k++) {
        s += next() < 0.8 ? PIECES[Math.floor(next() * PIECES.length)]! : String.fromCharCode(Math.floor(next() * 0xffff));
      }
      const dimension = DIMS[i % DIMS.length]!;
      const r = parseJudgment(dimension, s);
      expect(r.dimension).toBe(dimension);
      if (r.ok) {
        expect(typeof r.justification).toBe('string');
        if (r.dimension === 'task_completion') expect(r.score).toBe(r.verdict ? 1 : 0);
        else {
          const [min, max] = SCORE_RANGES[r.dimension];
          expect(Number.isInteger(r.score) && r.score >= min && r.score <= max).toBe(true);
        }
      } else {
        expect(r.error.length).toBeGreaterThan(0);
      }
    }
  });

  it('is fast on long and pathological input', () => {
    const long = `${'Personalization Score'.repeat(2000)}${' *_'.repeat(20000)}:${'('.repeat(5000)}\n`.repeat(5);
    const t0 = Date.now();
    for (const d of DIMS) parseJudgment(d, long);
    parseJudgment('task_completion', `${'verdict '.repeat(20000)}${'*'.repeat(50000)}`);
    parseJudgment('coherence', `${' *_ #> - 1. '.repeat(20000)}Coherence Score: 4`);
    parseJudgment('personalization', `<response>${'<response>x'.repeat(5000)}${'Justification:\n'.repeat(5000)}`);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('answers with an error instead of throwing on values the types forbid', () => {
    expect(parseJudgment('coherence', undefined as unknown as string)).toMatchObject({ ok: false });
    expect(parseJudgment('coherence', 42 as unknown as string)).toMatchObject({ ok: false });
    expect(parseJudgment('fluency' as JudgeDimension, 'Score: 3')).toMatchObject({ ok: false, error: expect.stringContaining('unknown') });
  });
});
