// Reply parsers on tricky model outputs. Expected values follow Python semantics, worked
// out by hand (and checked against CPython where noted).
import { describe, expect, it } from 'vitest';
import { parseImpact, parseSign, pythonFloat, stripThink } from '../../../src/benchmarks/personabench/parse.js';

const sign = (reply: string, parser: 'strict' | 'last-match') => {
  const r = parseSign(reply, parser);
  return r.state === 'parsed' ? r.value : null;
};
const impact = (reply: string, parser: 'float-then-last-number' | 'float-only' | 'last-match') => {
  const r = parseImpact(reply, parser);
  return r.state === 'parsed' ? r.value : null;
};

describe('3.1 sign parsers', () => {
  it('strict: only the whole stripped reply, any case', () => {
    expect(sign('  Positive\n', 'strict')).toBe('positive');
    expect(sign('NEGATIVE', 'strict')).toBe('negative');
    expect(sign('positive.', 'strict')).toBeNull();
    expect(sign('<think>hmm</think>negative', 'strict')).toBeNull();
    expect(sign('', 'strict')).toBeNull();
  });

  it('last-match: <think> removed, the last whole word wins', () => {
    expect(sign('<think>it looks negative</think>\nPositive', 'last-match')).toBe('positive');
    expect(sign('Not negative; I would say positive. Final: Negative', 'last-match')).toBe('negative');
    expect(sign('positively nonnegative', 'last-match')).toBeNull();
    expect(sign('<think>positive', 'last-match')).toBe('positive');
    // A CJK letter is a word character in Python: "是negative" has no word boundary.
    expect(sign('答案是negative', 'last-match')).toBeNull();
    expect(sign('答案是 negative', 'last-match')).toBe('negative');
    expect(sign('<think>negative</think>', 'last-match')).toBeNull();
  });

  it('unparsed replies carry a reason and no value', () => {
    expect(parseSign('maybe', 'strict')).toEqual({ state: 'unparsed', reason: 'not exactly "positive" or "negative"' });
  });
});

describe('3.2 impact parsers', () => {
  it('float() first: signs, decimals, exponent, underscores, full-width digits', () => {
    expect(impact(' -7 ', 'float-only')).toBe(-7);
    expect(impact('+5', 'float-only')).toBe(5);
    expect(impact('.5', 'float-then-last-number')).toBe(0.5);
    expect(impact('1e3', 'float-only')).toBe(1000);
    expect(impact('1_000', 'float-only')).toBe(1000);
    expect(impact('１２', 'float-only')).toBe(12);
    expect(impact('-٣', 'float-only')).toBe(-3);
    expect(impact('Score: 12', 'float-only')).toBeNull();
  });

  it('then the last number standing as a word (API path), <think> not removed', () => {
    expect(impact('Score: 12', 'float-then-last-number')).toBe(12);
    expect(impact('between 3 and -25', 'float-then-last-number')).toBe(-25);
    expect(impact('score 1e3', 'float-then-last-number')).toBeNull();
    expect(impact('<think>maybe 40</think> I cannot say', 'float-then-last-number')).toBe(40);
    expect(impact('about １５ points', 'float-then-last-number')).toBe(15);
    expect(impact('no idea', 'float-then-last-number')).toBeNull();
  });

  it('LogEval last match: <think> dropped, no leading-dot decimals, exponents split', () => {
    expect(impact('.5', 'last-match')).toBe(5);
    expect(impact('score 1e3', 'last-match')).toBe(3);
    expect(impact('<think>maybe 40</think> I cannot say', 'last-match')).toBeNull();
    expect(impact('<think>x</think>-12.5', 'last-match')).toBe(-12.5);
    expect(impact('+8', 'last-match')).toBe(8);
  });

  it('pythonFloat edge cases', () => {
    expect(pythonFloat('inf')).toBe(Infinity);
    expect(pythonFloat('-Infinity')).toBe(-Infinity);
    expect(Number.isNaN(pythonFloat('nan'))).toBe(true);
    expect(pythonFloat('1__0')).toBeNull();
    expect(pythonFloat('_1')).toBeNull();
    expect(pythonFloat('1.')).toBe(1);
    expect(pythonFloat('')).toBeNull();
    expect(stripThink('a<think>\nb\n</think>c<think>d</think>')).toBe('ac');
  });
});
