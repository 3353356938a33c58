import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readCheck, tagText, verdictOf } from '../../../src/benchmarks/prefeval/parse.js';

/**
 * The judge's replies are read as the original reads them: BeautifulSoup over Python's
 * html.parser, `soup.find(tag).text.strip()`. Checked here against bs4 itself (Debian's
 * python3-bs4) on replies that reach the parser's edges.
 */
const PYTHON = '/usr/bin/python3';
const hasBs4 = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import bs4'], { stdio: 'ignore' }).status === 0;

const REPLIES = [
  '<explanation>It fits.</explanation>\n<answer>Yes</answer>',
  '<preference>You said you avoid gluten &amp; wheat.</preference>\n<answer>Yes</answer>',
  'Answer: Yes',
  '<answer>No',
  '<ANSWER> Yes </ANSWER>',
  '<Answer>yes</answer>',
  '<answer>Y<b>e</b>s</answer>',
  '<explanation>a < b and c > d</explanation><answer>No</answer>',
  '<explanation>x</explanation><answer>Yes</answer><answer>No</answer>',
  '<preference><answer>nested</answer></preference><answer>outer</answer>',
  '<answer><!-- a comment -->Yes</answer>',
  '<answer>&lt;Yes&gt; &#39;quoted&#39; &copy</answer>',
  '<answer attr="1">Yes</answer>',
  '<answer/>Yes',
  '<answer>\u00a0Yes\u3000</answer>',
  '<answer>\ufeffYes</answer>',
  '</answer>Yes<answer>No</answer>',
  '<explanation>unclosed <i>tag</explanation><answer>Yes</answer>',
  '<answer>Yes</answer >',
  '<script><answer>No</answer></script><answer>Yes</answer>',
  '',
  '<answer></answer>',
  '<answer>Yes\n</answer>\n<explanation>Multi\nline</explanation>',
];

describe.skipIf(!hasBs4 && !process.env['CI'])('the judge reply parser', () => {
  it('reads every tag as BeautifulSoup (html.parser) does', () => {
    const script = `
import json, sys
from bs4 import BeautifulSoup
out = []
for s in json.load(sys.stdin):
    soup = BeautifulSoup(s, "html.parser")
    row = {}
    for tag in ["answer", "explanation", "preference"]:
        t = soup.find(tag)
        row[tag] = t.text.strip() if t else ""
    out.append(row)
print(json.dumps(out))
`;
    const r = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(REPLIES), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const want = JSON.parse(r.stdout) as Array<Record<string, string>>;
    const got = REPLIES.map((s) => ({ answer: tagText(s, 'answer'), explanation: tagText(s, 'explanation'), preference: tagText(s, 'preference') }));
    got.forEach((g, i) => expect(g, JSON.stringify(REPLIES[i])).toEqual(want[i]));
  });
});

describe('the accuracy rules (get_preference_following_accuracy_generation_task.py)', () => {
  it('takes "yes" and "no" as substrings, as the original does', () => {
    // "no" inside "nothing" makes a helpful answer unhelpful; an empty answer is helpful.
    expect(verdictOf({ acknow: 'Yes', violate: 'No', hallucinate: 'No', helpful: 'Yes, nothing missing' })).toMatchObject({
      unhelpful: true,
      follows_preference: false,
    });
    expect(verdictOf({ acknow: '', violate: '', hallucinate: '', helpful: '' })).toMatchObject({ unhelpful: false, follows_preference: true });
  });

  it('gives each error type by its rule', () => {
    const hallucinatedViolation = verdictOf({ acknow: 'Yes', violate: 'Yes', hallucinate: 'Yes', helpful: 'Yes' });
    expect(hallucinatedViolation).toMatchObject({ hallucination_of_preference_violation: true, inconsistent: false, follows_preference: false });
    expect(verdictOf({ acknow: 'Yes', violate: 'Yes', hallucinate: 'No', helpful: 'Yes' })).toMatchObject({ inconsistent: true, follows_preference: false });
    expect(verdictOf({ acknow: 'No', violate: 'Yes', hallucinate: 'Yes', helpful: 'Yes' })).toMatchObject({
      hallucination: false,
      preference_unaware_violation: true,
      follows_preference: false,
    });
    // An unhelpful response that violates is counted unhelpful, not as a violation type.
    expect(verdictOf({ acknow: 'No', violate: 'Yes', hallucinate: 'No', helpful: 'No' })).toMatchObject({
      unhelpful: true,
      preference_unaware_violation: false,
    });
    expect(verdictOf({ acknow: 'Yes', violate: 'No', hallucinate: 'No', helpful: 'Yes' }).follows_preference).toBe(true);
  });

  it("keeps acknowledgement's quote and the others' explanations", () => {
    expect(readCheck('acknow', '<preference> p </preference><answer>Yes</answer>')).toEqual({ answer: 'Yes', explanation: null, extract_pref: 'p' });
    expect(readCheck('violate', '<explanation>e</explanation><answer>No</answer>')).toEqual({ answer: 'No', explanation: 'e', extract_pref: null });
  });
});
