import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractChoice, MarkupRejected, tagString, tagText } from '../../../src/benchmarks/prefeval/parse.js';

/**
 * The classification task reads a reply's choice as the original does: the first capital A-D in
 * the `.string` of BeautifulSoup's first <choice> tag (html.parser). Checked here against bs4
 * itself (Debian's python3-bs4) on replies that reach the parser's edges, with `.string`,
 * `.text.strip()` and the choice compared one by one.
 */
const PYTHON = '/usr/bin/python3';
const hasBs4 = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import bs4'], { stdio: 'ignore' }).status === 0;

const REPLIES = [
  '<choice>B</choice>',
  '<choice>B',
  '<choice> b </choice>',
  '<choice>Based on</choice>',
  '<choice></choice>',
  '<choice><b>C</b></choice>',
  '<choice>A<b>C</b></choice>',
  '<choice><b></b>A</choice>',
  '<choice><br>A</choice>',
  '<CHOICE>D</CHOICE>',
  '<choice><choice>A</choice></choice>',
  '<choice>The answer is <choice>C</choice>',
  '<choice>x</choice><choice>A</choice>',
  '<choice>B</choice>\n<choice>C</choice>',
  '<choice><!--C--></choice>',
  '<choice><!---->A</choice>',
  '<choice><!-- unclosed A</choice>',
  '<choice><![CDATA[D]]></choice>',
  '<choice>a<![CDATA[x]]>b</choice>',
  '<choice><?C?></choice>',
  '<choice><!DOCTYPE D></choice>',
  '<choice><!DOCTYPE\ud83d\ude00B></choice>',
  '<choice><!B></choice>',
  '<choice><![if C]></choice>',
  '<choice><![foo]>A</choice>',
  '<choice>&#66;</choice>',
  '<choice>&#x43;&amp;</choice>',
  '<choice>&#150;C</choice>',
  '<choice>&#x110000;</choice>',
  '<choice>&notit;&ampB; x &C</choice>',
  '<choice>&#; D</choice>&#;<choice>A</choice>',
  '<choice>x &a',
  '<choice>C &d',
  'no tag at all: A',
  '',
  '<choice>\nB\n</choice> extra',
  '<choice>B</choice',
  '<choice\n>B</choice>',
  '<choicex>A</choicex>',
  "<choice attr='1'>C</choice>",
  '<choice/>A',
  '<choice>E</choice>',
  '<choice>\uff22 \u00c4 \u0411 B</choice>',
  '<choice>\u00a0B\u3000</choice>',
  '<choice>\ud83d\ude00 D</choice>',
  '<choice>A & B</choice>',
  '<choice>1. A</choice>',
  '<choice>A</x>B</choice>',
  '<br><choice>C</br>D</choice>',
  '<choice>   </choice>',
  '<choice>\r\n</choice>',
  '<choice><pre> </pre></choice>',
  '<choice><script>A</script></choice>',
  '<choice>B<script>A</script></choice>',
  '<choice><rt>A</rt></choice>',
];

type Row = { raises: true } | { raises: false; found: boolean; string: string | null; text: string; choice: string | null };

describe.skipIf(!hasBs4 && !process.env['CI'])('the choice reader', () => {
  it('reads .string, .text and the choice as BeautifulSoup (html.parser) and extract_choice do', () => {
    // extract_choice, restated: the first [ABCD] in the first <choice> tag's .string; None otherwise.
    const script = `
import json, re, sys
from bs4 import BeautifulSoup
def choice_of(reply):
    tag = BeautifulSoup(reply, "html.parser").find("choice")
    if tag is None or tag.string is None:
        return None
    found = re.search(r"[ABCD]", tag.string)
    return found.group(0) if found else None
out = []
for s in json.loads(sys.stdin.buffer.read().decode("utf-8")):
    try:
        tag = BeautifulSoup(s, "html.parser").find("choice")
    except AssertionError:
        out.append({"raises": True})
        continue
    out.append({
        "raises": False,
        "found": tag is not None,
        "string": None if tag is None or tag.string is None else str(tag.string),
        "text": tag.text.strip() if tag is not None else "",
        "choice": choice_of(s),
    })
print(json.dumps(out))
`;
    const r = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(REPLIES), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const want = JSON.parse(r.stdout) as Row[];
    expect(want).toHaveLength(REPLIES.length);
    REPLIES.forEach((s, i) => {
      const w = want[i]!;
      if (w.raises) {
        expect(() => extractChoice(s), JSON.stringify(s)).toThrow(MarkupRejected);
        return;
      }
      const string = tagString(s, 'choice');
      const got = { raises: false, found: string !== undefined, string: string ?? null, text: tagText(s, 'choice'), choice: extractChoice(s) };
      expect(got, JSON.stringify(s)).toEqual(w);
    });
  });
});

describe('extractChoice', () => {
  it('takes the first capital A-D of the tag, as the Claude prefill reads', () => {
    expect(extractChoice('<choice>' + 'B</choice>')).toBe('B');
    expect(extractChoice('<choice>' + 'Based on my reading, C')).toBe('B');
    expect(extractChoice('<choice>' + 'd')).toBeNull();
    expect(extractChoice('The answer is C')).toBeNull();
  });

  it("counts a lone comment as the tag's string but not as its text", () => {
    expect(tagString('<choice><!--C--></choice>', 'choice')).toBe('C');
    expect(tagText('<choice><!--C--></choice>', 'choice')).toBe('');
    expect(tagString('<choice>A<b>C</b></choice>', 'choice')).toBeNull();
    expect(tagString('no tag', 'choice')).toBeUndefined();
  });
});
