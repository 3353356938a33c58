import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPersonaSelect } from '../../../src/benchmarks/personabench/select-stage.js';
import { repoRoot, tempDir } from '../../helpers/cli.js';
import { ORIGINAL, drawCorpus, originalAvailable } from './original.js';

/*
 * The values the prompts print in their prose (subreddit, author, score, time, title,
 * content, the parent's and the reply's ids, authors, bodies, ...), with each maker's own
 * fallbacks for missing data (`N/A`, `None`, `""`), compared between plens's wording and the
 * original makers' files: each side's lines are read with its own patterns into named fields,
 * and each field's values, in order, must be equal. Worked examples the original fixes in its
 * text (3.1 P-Conv's default, 3.2 P-NonConv's) are plens's own and left out. Needs
 * PERSONABENCH_ORIGINAL; skipped without it.
 */
const available = originalAvailable();

type Patterns = Array<[RegExp, string[]]>;

// The original's lines (all six makers' layouts). Indented "  - Key: value" lines belong to the
// parent or the reply block opened by the header line above them.
const THEIRS: Patterns = [
  [/^- Subreddit: r\/(.*)$/, ['sub']],
  [/^- (?:Post )?Author: u\/(.*)$/, ['author']],
  [/^- (?:Post )?Score: (.*)$/, ['score']],
  [/^- (?:Post )?Timestamp: (.*)$/, ['time']],
  [/^- (?:Post )?Title: "(.*)"$/, ['title']],
  [/^- (?:Original )?(?:Post )?Content Summary: "(.*)"$/, ['content']],
  [/^- Post ID: (.*)$/, ['postId']],
  [/^Referenced Post(?: for ACTUAL TASK)? \(ID: (.*)\):$/, ['shownId']],
  [/^The following is an unrelated post \(ID: (.*)\) provided/, ['shownId']],
  [/^Parent Comment \(that '.*?' replied to, ID: '(.*?)'\): Author: '(.*?)', Body Summary: "(.*)"$/, ['parentId', 'parentAuthor', 'parentBody']],
  [/^Author's Reply \(ID: '(.*?)'\): Timestamp: '(.*?)', Body: "(.*)"$/, ['replyId', 'replyTime', 'replyBody']],
  [/^"(.*)"$/, ['replyBody']],
];
const BLOCK_HEADERS: Array<[RegExp, 'parent' | 'reply']> = [
  [/^(?:\*\*)?Parent Comment|parent comment\/post \(ID/, 'parent'],
  [/^(?:\*\*)?(?:The )?Author's Reply/, 'reply'],
];
const BLOCK_KEYS: Record<string, string> = {
  Author: 'Author',
  'Parent Author': 'Author',
  Body: 'Body',
  'Body Summary': 'Body',
  'Body/Content Summary': 'Body',
  'Parent Body/Content': 'Body',
  'Reply Body': 'Body',
  Score: 'Score',
  'Parent Score': 'Score',
  Timestamp: 'Time',
  'Parent Timestamp': 'Time',
  'Reply Timestamp': 'Time',
};

// 3.3's lines: the parent and reply sentences (the JSON blocks are compared in original-route.test.ts).
const THEIRS_33: Patterns = [
  [
    /made a reply to a comment by '(.*?)' \(ID: (.*?), Score: (.*?)\) which says: "(.*)"\. \(This reply by '.*?' (?:had|has) ID: (.*?)\)\.$/,
    ['parentAuthor', 'parentId', 'parentScore', 'parentBody', 'replyId'],
  ],
  [
    /made a reply to a comment by '(.*?)' \(ID: (.*?)\) which says: "(.*)"\. \(This reply by '.*?' (?:had|has) ID: (.*?)\)\.$/,
    ['parentAuthor', 'parentId', 'parentBody', 'replyId'],
  ],
  [
    /^Within this current post \(details provided above, titled "(.*)"\), '.*?' is about to make a reply to the following comment from '(.*?)':$/,
    ['title', 'parentAuthor'],
  ],
  [
    /is about to reply to a comment by '(.*?)' \(ID: (.*?), Score: (.*?)\) which says: "(.*?)"\. Your goal/,
    ['parentAuthor', 'parentId', 'parentScore', 'parentBody'],
  ],
  [/^"(.*)"$/, ['parentBody']],
];
const OURS_33: Patterns = [
  [
    /^This reply by the post's author \(ID (.*?)\) answers a message by '(.*?)' \(ID (.*?)\), which reads: "(.*)"$/,
    ['replyId', 'parentAuthor', 'parentId', 'parentBody'],
  ],
  [/^Under the post "(.*)", the author is answering a message by '(.*?)', which reads: "(.*)"$/, ['title', 'parentAuthor', 'parentBody']],
  [
    /^The reply \(ID (.*?)\) answers a message by '(.*?)' \(ID (.*?), score (.*?)\), which reads: "(.*)"$/,
    ['replyId', 'parentAuthor', 'parentId', 'parentScore', 'parentBody'],
  ],
  [/^'.*?' is replying to a message by '(.*?)' \(ID (.*?), score (.*?)\), which reads: "(.*)"$/, ['parentAuthor', 'parentId', 'parentScore', 'parentBody']],
];

// plens's lines (prompts.ts, np-conv-prompts.ts).
const OURS: Patterns = [
  [/^- Community: r\/(.*?); posted by u\/(.*?) at (.*?); post score (.*)$/, ['sub', 'author', 'time', 'score']],
  [/^- Community: r\/(.*)$/, ['sub']],
  [/^- Post ID: (.*?); author: u\/(.*)$/, ['postId', 'author']],
  [/^- Title: "(.*)"$/, ['title']],
  [/^- Opening of the post \(up to \d+ characters\): (.*)$/, ['content']],
  [/^Referenced Post \(ID: (.*)\):$/, ['shownId']],
  [/^The post author answered comment (.*?) by u\/(.*?), which opens with: "(.*)"$/, ['parentId', 'parentAuthor', 'parentBody']],
  [/^Their reply \((.*?), posted (.*?)\): "(.*)"$/, ['replyId', 'replyTime', 'replyBody']],
  [/^Their reply \(posted (.*?)\): "(.*)"$/, ['replyTime', 'replyBody']],
  [
    /^The post author answered u\/(.*?) \(score (.*?), posted (.*?)\), whose message opens with: "(.*)"$/,
    ['parentAuthor', 'parentScore', 'parentTime', 'parentBody'],
  ],
  [/^The post author answered u\/(.*?), whose message opens with: "(.*)"$/, ['parentAuthor', 'parentBody']],
  [
    /^The post author answered a message by u\/(.*?) \(score (.*?), posted (.*?)\), which reads in full: "(.*)"$/,
    ['parentAuthor', 'parentScore', 'parentTime', 'parentBody'],
  ],
  [/^Under this post, its author answered one of the comments with: "(.*)"$/, ['replyBody']],
];

/** Field -> values in order of appearance. */
function fields(text: string, patterns: Patterns, blocks = false): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (name: string, value: string): void => void out.set(name, [...(out.get(name) ?? []), value]);
  let block: 'parent' | 'reply' | null = null;
  for (const line of text.split('\n')) {
    if (blocks) {
      const header = BLOCK_HEADERS.find(([re]) => re.test(line));
      if (header) {
        block = header[1];
        // The one-line forms (3.1/3.2 P-Conv) are read by the patterns below.
        if (/Body Summary|Timestamp: '/.test(line)) block = null;
        else {
          const id = /ID: '(.*?)'/.exec(line);
          if (id) add(`${block}Id`, id[1]!);
          continue;
        }
      }
      const item = /^ {2}- (.*?): (.*)$/.exec(line);
      if (item && block && BLOCK_KEYS[item[1]!]) {
        const value = item[2]!
          .replace(/^u\//, '')
          .replace(/^'(.*)'$/, '$1')
          .replace(/^"(.*)"$/, '$1');
        add(`${block}${BLOCK_KEYS[item[1]!]}`, value);
        continue;
      }
    }
    for (const [re, names] of patterns) {
      const m = re.exec(line);
      if (!m) continue;
      names.forEach((name, i) => add(name, m[i + 1]!));
      break;
    }
  }
  return out;
}

const TASK_MARKER = /^### (?:ACTUAL TASK|CURRENT TASK)/m;

interface Record_ {
  task: string;
  setting: string;
  prompt: string;
  fewShot: { type?: string } | null;
}

/** The part of a prompt to compare: without a worked example the original fixes in its text. */
function comparable(r: Record_): string {
  const fixedExample = (r.task === '3.2' && r.setting === 'P-NonConv') || (r.setting === 'P-Conv' && r.fewShot?.type === 'default');
  if (!fixedExample) return r.prompt;
  const at = r.prompt.search(TASK_MARKER);
  return at === -1 ? r.prompt : r.prompt.slice(at);
}

async function compare(input: string, seed: number): Promise<string[]> {
  const dir = tempDir('plens-pb-prose-');
  await runPersonaSelect({ from: input, out: join(dir, 'theirs'), fidelity: 'original', seed, original: ORIGINAL, python: '/usr/bin/python3' });
  await runPersonaSelect({ from: input, out: join(dir, 'ours'), fidelity: 'original', seed });
  const read = (f: string): Record_[] =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record_);
  const theirs = read(join(dir, 'theirs', 'prompts.jsonl'));
  const ours = read(join(dir, 'ours', 'prompts.jsonl'));
  const problems: string[] = [];
  theirs.forEach((t, i) => {
    const o = ours[i]!;
    const reply = t.task === '3.3';
    const a = reply ? fields(t.prompt, THEIRS_33) : fields(comparable(t), THEIRS, true);
    const b = reply ? fields(o.prompt, OURS_33) : fields(comparable(o), OURS);
    for (const [name, values] of b) {
      const want = a.get(name);
      if (want === undefined) continue;
      if (JSON.stringify(values) !== JSON.stringify(want))
        problems.push(`${t.task} ${t.setting} #${i} ${name}: original ${JSON.stringify(want)}, plens ${JSON.stringify(values)}`);
    }
  });
  return problems;
}

describe.skipIf(!available)("PERSONA-bench prompts: the values their prose prints, against the makers'", () => {
  it('on the fixtures and drawn corpora', async () => {
    const dir = tempDir('plens-pb-prose-drawn-');
    const inputs: Array<[string, number]> = [
      [join(repoRoot, 'test', 'fixtures', 'personabench', 'grouped.json'), 14],
      [join(repoRoot, 'data', 'personabench-sample', 'grouped.json'), 3],
      [join(repoRoot, 'test', 'fixtures', 'personabench', 'odd-shapes.json'), 2],
      [join(repoRoot, 'test', 'fixtures', 'personabench', 'edge-cases.json'), 3],
    ];
    for (const seed of (process.env['PLENS_PB_PROSE_SEEDS'] ?? '1,2,3,101,102,103').split(',').map(Number)) {
      const file = join(dir, `corpus-${seed}.json`);
      writeFileSync(file, JSON.stringify(drawCorpus(seed, seed >= 100)));
      inputs.push([file, seed]);
    }
    for (const [input, seed] of inputs) {
      const p = await compare(input, seed);
      if (process.env.PLENS_PB_PROSE_DUMP) for (const x of p) console.log('PROBLEM', x);
      if (!process.env.PLENS_PB_PROSE_DUMP) expect(p.slice(0, 8), input).toEqual([]);
    }
  }, 300_000);
});
