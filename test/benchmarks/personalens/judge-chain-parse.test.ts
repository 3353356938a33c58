import { describe, expect, it } from 'vitest';
import { parseChainJudgment } from '../../../src/benchmarks/personalens/judge-parse.js';
import { originalScore } from '../../../src/benchmarks/personalens/original-scoring.js';

const ok = (reply: string, turns: number) => {
  const r = parseChainJudgment(reply, turns);
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return r.ok ? r : undefined!;
};
const fails = (reply: string, turns: number, error: string) => {
  const r = parseChainJudgment(reply, turns);
  expect(r).toMatchObject({ ok: false, dimension: 'personalization_chain' });
  if (!r.ok) expect(r.error).toContain(error);
};

describe('chain-of-turn personalization replies', () => {
  it('reads one score per assistant turn, in turn order, and the justification', () => {
    const r = ok(
      '<response>\nTurn 1 Personalization Score: 2\nTurn 2 Personalization Score: 3\nTurn 3 Personalization Score: 3\nJustification: picked up the usual time by turn 2.\n</response>',
      3,
    );
    expect(r.scores).toEqual([2, 3, 3]);
    expect(r.justification).toBe('picked up the usual time by turn 2.');
  });

  it('tolerates formatting: emphasis, bullets, case, separators, 3/4, CRLF, a value on the next line, turns out of order, text outside the tags', () => {
    const reply = [
      'Here is my assessment.',
      'Turn 1 Personalization Score: 1 (this line is outside the tags and ignored)',
      '<response>',
      '- **Turn 2 - Personalization Score:** 4/4',
      '* turn 1: personalisation score: [2]',
      '### Turn 3 Personalization Score:',
      '',
      '**3**',
      'Turn 2 Personalization Score: 4',
      '</response>',
    ].join('\r\n');
    expect(ok(reply, 3).scores).toEqual([2, 4, 3]);
  });

  it('ignores scores mentioned inside a sentence', () => {
    expect(
      ok('<response>\nTurn 1 Personalization Score: 2\nA Turn 1 Personalization Score: 4 would need the usual alarm sound.\n</response>', 1).scores,
    ).toEqual([2]);
  });

  it('without <response> tags the whole reply is read', () => {
    expect(ok('Turn 1 Personalization Score: 3\nTurn 2 Personalization Score: 1', 2).scores).toEqual([3, 1]);
  });

  it.each([
    [
      'a turn missing',
      'Turn 1 Personalization Score: 2\nTurn 3 Personalization Score: 3',
      3,
      "scores for 2 of the dialogue's 3 assistant turns; none for turn 2",
    ],
    [
      'more turns than the dialogue has',
      'Turn 1 Personalization Score: 2\nTurn 2 Personalization Score: 3',
      1,
      'turn 2 (line 2) is not an assistant turn of this dialogue, which has 1',
    ],
    ['turn 0', 'Turn 0 Personalization Score: 2\nTurn 1 Personalization Score: 3', 1, 'turn 0 (line 1) is not an assistant turn'],
    ['out of range', 'Turn 1 Personalization Score: 2\nTurn 2 Personalization Score: 5', 2, 'turn 2: Personalization Score 5 is out of range 1-4'],
    ['zero', 'Turn 1 Personalization Score: 0', 1, 'turn 1: Personalization Score 0 is out of range 1-4'],
    ['a half', 'Turn 1 Personalization Score: 2.5', 1, 'turn 1: Personalization Score 2.5 is not a whole number'],
    ['a range', 'Turn 1 Personalization Score: 2-3', 1, 'turn 1: ambiguous Personalization Score value'],
    ['a word', 'Turn 1 Personalization Score: good', 1, 'turn 1: Personalization Score value "good" is not a number'],
    ['no value', 'Turn 1 Personalization Score:', 1, 'turn 1: Personalization Score has no value'],
    [
      'conflicting scores for one turn',
      'Turn 1 Personalization Score: 2\nTurn 1 Personalization Score: 3',
      1,
      'conflicting scores for turn 1: 2 (line 1) and 3 (line 2)',
    ],
    [
      'a single score without turn numbers',
      '<response>\nPersonalization Score: 3\nJustification: fine.\n</response>',
      2,
      'a Personalization Score without turn numbers inside <response>',
    ],
    ['prose only', 'The assistant got better, from a 2 to a 3.', 2, 'no "Turn N Personalization Score:" line'],
    ['an empty reply', '  \n', 2, 'empty reply'],
    ['an empty response block', 'Sure.<response>\n</response>', 2, 'empty <response> block'],
    [
      'turn lines only outside the tags',
      'Turn 1 Personalization Score: 2\n<response>Justification: fine.</response>',
      1,
      'no "Turn N Personalization Score:" line inside <response>',
    ],
  ])('%s is a parse failure, never a partial list', (_, reply, turns, error) => fails(reply, turns, error));

  it('a dialogue without assistant turns has nothing to score', () => fails('Turn 1 Personalization Score: 2', 0, 'no assistant turn'));
});

describe('replies as the released gather script reads them', () => {
  it('task completion: the first VERDICT match, case-insensitive; no match counts as not completed', () => {
    expect(originalScore('task_completion', 'VERDICT: True\nEXPLANATION: done')).toBe(1);
    expect(originalScore('task_completion', 'verdict: true')).toBe(1);
    expect(originalScore('task_completion', 'VERDICT: False')).toBe(0);
    // plens: conflicting verdicts (unparsed); the script takes the first.
    expect(originalScore('task_completion', 'VERDICT: True\nOn reflection, VERDICT: False')).toBe(1);
    expect(originalScore('task_completion', 'VERDICT: False ... VERDICT: True')).toBe(0);
    // plens reads these as True; the script's pattern does not match them.
    expect(originalScore('task_completion', '**VERDICT:** True')).toBe(0);
    expect(originalScore('task_completion', 'VERDICT:True')).toBe(0);
    expect(originalScore('task_completion', 'The task was completed.')).toBe(0);
  });

  it('scores: the first "<Name> Score: <digits>", case-sensitive, no range check', () => {
    expect(originalScore('personalization', '<response>\nPersonalization Score: 3\n</response>')).toBe(3);
    expect(originalScore('personalization', 'Personalization Score: 7')).toBe(7);
    expect(originalScore('personalization', 'A Personalization Score: 4 would need more.\nPersonalization Score: 2')).toBe(4);
    expect(originalScore('personalization', 'personalization score: 3')).toBeNull();
    expect(originalScore('personalization', '**Personalization Score:** 3')).toBeNull();
    expect(originalScore('naturalness', 'Naturalness Score: 4/5')).toBe(4);
    expect(originalScore('coherence', 'Coherence Score: 2.5')).toBe(2);
    expect(originalScore('coherence', 'Naturalness Score: 5')).toBeNull();
  });
});
