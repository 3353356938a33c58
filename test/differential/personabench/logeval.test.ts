import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenerationScorer } from '../../../src/metrics/generation.js';
import { runScoreOutputs } from '../../../src/benchmarks/personabench/score-outputs.js';
import { tempDir } from '../../helpers/cli.js';
import { startEmbeddingsServer } from '../../helpers/embeddings-server.js';
import { ORIGINAL, originalAvailable, seededRandom } from './original.js';

/*
 * `persona score --outputs` against the original LogEval3.1/3.2/3.3 scripts, run unmodified with
 * /usr/bin/python3 on outputs files drawn from a seeded generator full of the cases the scripts
 * treat specially (think blocks, case, CJK before a word, full-width digits, labels Python's
 * float() reads or not, null/missing/odd domains, non-text outputs, lists, error strings, CRLF).
 * 3.1 and 3.2 need Debian's python3-pandas and python3-sklearn and must give the same CSV bytes.
 * 3.3 needs rouge-score, NLTK data and sentence-transformers, which are not installable here:
 * stand-ins on PYTHONPATH answer ROUGE/BLEU/METEOR from a table of plens's own values for each
 * pair (the components are checked elsewhere; what is compared here is which lines count, which
 * candidate is scored, the sums and the CSVs) and compute SBERT from the same made-up vectors
 * plens's embeddings endpoint serves, so both CSVs must again be byte-identical.
 * Needs PERSONABENCH_ORIGINAL; skipped without it or without pandas/sklearn (3.1, 3.2) or numpy (3.3).
 */
const LOGEVAL = join(ORIGINAL, 'LLMEvaluators', 'LogEvaluator');
const python = '/usr/bin/python3';
const hasPandas = existsSync(python) && spawnSync(python, ['-c', 'import pandas, sklearn'], { encoding: 'utf8' }).status === 0;
// LogEval3.3 exits at once without numpy (its metric libraries are stubbed, numpy is not).
const hasNumpy = existsSync(python) && spawnSync(python, ['-c', 'import numpy'], { encoding: 'utf8' }).status === 0;
const available = originalAvailable(join('LLMEvaluators', 'LogEvaluator', 'LogEval3.1.py'));

// scikit-learn before 1.3 (Debian 12 has 1.2) computes F1 from precision and recall; 1.3 and
// later, as the original's 1.6.1 and plens, from the counts: the last digit can differ.
const sklearnOld =
  hasPandas &&
  spawnSync(python, ['-c', 'import sklearn, sys; sys.exit(0 if tuple(map(int, sklearn.__version__.split(".")[:2])) < (1, 3) else 1)']).status === 0;

/** The same CSV bytes, except F1 within 4e-16 where the reference's scikit-learn predates 1.3. */
function expectSameCsv(got: string, want: string, what: string): void {
  if (!sklearnOld) return void expect(got, what).toBe(want);
  const a = got.split('\n').map((l) => l.split(','));
  const b = want.split('\n').map((l) => l.split(','));
  expect(
    a.map((r) => r.length),
    what,
  ).toEqual(b.map((r) => r.length));
  a.forEach((row, i) =>
    row.forEach((cell, j) => {
      if (b[0]![j] === 'f1_score' && i > 0) expect(Math.abs(Number(cell) - Number(b[i]![j])), `${what} row ${i}`).toBeLessThan(4e-16);
      else expect(cell, `${what} row ${i} column ${b[0]![j]}`).toBe(b[i]![j]);
    }),
  );
}

function draw(seed: number, task: '3.1' | '3.2' | '3.3'): string {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const outputs = {
    '3.1': [
      'positive',
      'Negative',
      '<think>negative</think> positive',
      '<think>open positive',
      'the answer is POSITIVE.',
      '中negative',
      'negatively',
      'positive/negative',
      '',
      'none',
      null,
      5,
      ['positive'],
      'positive\n\nnegative',
      ' negative ',
    ],
    '3.2': [
      '-12',
      '42',
      '<think>5</think> 7',
      'score 1e3',
      '.5',
      '１２',
      'about -3.5 points',
      'no idea',
      '+8',
      '7.',
      '',
      '1,000',
      '-0',
      '3.14159265358979323846',
    ],
    '3.3': [
      'Yes, double blind.',
      '<think>hmm</think>  Read the paper first. ',
      ['', '  ', 'first one', 'second'],
      [1, null],
      [],
      '',
      '   ',
      'Error: Max retries reached',
      'It said Error: nothing',
      7,
      true,
      null,
      'Totally agree with you here',
      'No.',
      '<think>only thinking</think>',
    ],
  }[task];
  const labels = {
    '3.1': ['positive', 'negative', 'Positive', 'NEGATIVE', 'pos', '', null, 3],
    '3.2': [-20, 15, '15', ' 1_0 ', 'nan', 'inf', null, true, 2.5, 'abc', 0, 100000000000000000000, 1e-7],
    '3.3': ['Yes, double blind.', 'Read the paper first.', 'no', '', null, 5, 'I agree with you here', 'Totally.'],
  }[task];
  const domains =
    task === '3.3'
      ? ['books', 'Books', 'movies', 'a,b', 'quote"d', 'ünïcode', '😀emoji', 'Zeta']
      : ['books', 'Books', 'movies', 'a,b', 'quote"d', 'ünïcode', '😀emoji', null];
  const lines: string[] = [];
  for (let i = 0, n = 20 + Math.floor(rand() * 40); i < n; i++) {
    const r = rand();
    if (task === '3.1' && r < 0.04) {
      lines.push(pick(['not json', '', '[1,2]', '"text"', '{"output": "positive"']));
      continue;
    }
    if (task === '3.3' && r < 0.03) {
      lines.push(pick(['not json', '', '{"output": "x"']));
      continue;
    }
    const rec: Record<string, unknown> = {};
    if (rand() > 0.03) rec['output'] = pick(outputs);
    if (rand() > 0.03) rec['true_label'] = pick(labels);
    const d = rand();
    if (d < 0.85) rec['subreddit'] = pick(domains);
    else if (d < 0.93 && task !== '3.3') rec['domain'] = pick(domains);
    if (task === '3.3' && rand() < 0.5) rec['original_prompt'] = pick(['### FEW-SHOT EXAMPLE ###\n' + 'é'.repeat(120), 'short prompt']);
    rec['input_tokens'] = 10;
    rec['price'] = 0.0003;
    lines.push(JSON.stringify(rec));
  }
  return lines.join(rand() < 0.2 ? '\r\n' : '\n') + '\n';
}

/** Runs a LogEval script unmodified in `dir` on `content` under its hard-coded input name. */
function runLogEval(script: string, input: string, content: string, env: Record<string, string> = {}): { dir: string; status: number | null; stderr: string } {
  const dir = tempDir('plens-pb-logeval-');
  writeFileSync(join(dir, input), content);
  const r = spawnSync(python, [join(LOGEVAL, script)], { cwd: dir, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', PYTHONIOENCODING: 'utf-8', ...env } });
  return { dir, status: r.status, stderr: r.stderr };
}

describe.skipIf(!available || !hasPandas)('LogEval3.1 and 3.2 on drawn outputs files: the same CSV bytes', () => {
  it('3.1', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const content = draw(seed, '3.1');
      const theirs = runLogEval('LogEval3.1.py', 'Pse_3.2_results_DS.jsonl', content);
      const file = join(tempDir('plens-pb-le31-'), 'outputs.jsonl');
      writeFileSync(file, content);
      const out = join(tempDir('plens-pb-le31-out-'), 'csv');
      await runScoreOutputs({ file, task: '3.1', out, cacheDir: tempDir('plens-cache-') });
      const want = join(theirs.dir, 'DSclassification_metrics_results.csv');
      const got = join(out, 'outputs.LogEval3.1.csv');
      expect(existsSync(got), `seed ${seed}`).toBe(existsSync(want));
      if (existsSync(want)) expectSameCsv(readFileSync(got, 'utf8'), readFileSync(want, 'utf8'), `seed ${seed}`);
    }
  }, 300_000);

  it('3.2, and where the script stops, plens stops too', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const content = draw(seed, '3.2');
      const theirs = runLogEval('LogEval3.2.py', 'Pse_3.2_results_DS.jsonl', content);
      const file = join(tempDir('plens-pb-le32-'), 'outputs.jsonl');
      writeFileSync(file, content);
      const out = join(tempDir('plens-pb-le32-out-'), 'csv');
      const want = join(theirs.dir, 'DS_Pseu_results.csv');
      const run = runScoreOutputs({ file, task: '3.2', out, cacheDir: tempDir('plens-cache-') });
      if (!existsSync(want)) {
        // The script raised (e.g. a null output): plens refuses with the line, writes nothing.
        expect(theirs.stderr, `seed ${seed}`).toMatch(/Traceback/);
        await expect(run, `seed ${seed}`).rejects.toThrow(/LogEval3\.2\.py stops here/);
        expect(existsSync(out)).toBe(false);
        continue;
      }
      await run;
      expect(readFileSync(join(out, 'outputs.LogEval3.2.csv'), 'utf8'), `seed ${seed}`).toBe(readFileSync(want, 'utf8'));
    }
    // A blank line in the middle: json.loads raises.
    const blank = '{"output": "3", "true_label": 4, "subreddit": "a"}\n\n{"output": "5", "true_label": 4, "subreddit": "a"}\n';
    expect(runLogEval('LogEval3.2.py', 'Pse_3.2_results_DS.jsonl', blank).stderr).toMatch(/JSONDecodeError/);
    const file = join(tempDir('plens-pb-le32-'), 'blank.jsonl');
    writeFileSync(file, blank);
    await expect(runScoreOutputs({ file, task: '3.2', out: null, cacheDir: tempDir('plens-cache-') })).rejects.toMatchObject({ location: { line: 2 } });
    const skipped = await runScoreOutputs({ file, task: '3.2', out: null, skipInvalid: true, cacheDir: tempDir('plens-cache-') });
    expect(skipped.logeval.task === '3.2' && skipped.logeval.rows.at(-1)).toMatchObject({ domain: 'ALL', count: 2 });
  }, 300_000);
});

/** A made-up embedding both sides compute: 8 sums of code points by position, plus one. */
function vector(text: string): number[] {
  const v = [1, 1, 1, 1, 1, 1, 1, 1];
  [...text].forEach((c, i) => {
    v[i % 8]! += (c.codePointAt(0)! % 17) - 8;
  });
  return v;
}

const STUBS: Record<string, string> = {
  'sentence_transformers/__init__.py': `
import json, os
def _vec(text):
    v = [1.0] * 8
    for i, c in enumerate(text):
        v[i % 8] += (ord(c) % 17) - 8
    return v
class SentenceTransformer:
    def __init__(self, name, device=None): pass
    def encode(self, text, convert_to_tensor=False, device=None):
        if not isinstance(text, str): raise TypeError("not text")
        return _vec(text)
class _Sim:
    def __init__(self, x): self.x = x
    def item(self): return self.x
class util:
    @staticmethod
    def pytorch_cos_sim(a, b):
        # plens's cosSim: each vector over max(norm, 1e-12), then the dot product, in order.
        import math
        na = max(math.sqrt(sum(x * x for x in a)), 1e-12)
        nb = max(math.sqrt(sum(x * x for x in b)), 1e-12)
        dot = 0.0
        for x, y in zip(a, b): dot += (y / nb) * (x / na)
        return _Sim(dot)
`,
  'torch/__init__.py': `
import contextlib
class cuda:
    @staticmethod
    def is_available(): return False
class backends: pass
def no_grad(): return contextlib.nullcontext()
`,
  'rouge_score/__init__.py': '',
  'rouge_score/rouge_scorer.py': `
import json, os
_T = json.load(open(os.environ["PLENS_STUB_SCORES"], encoding="utf-8"))
class _S:
    def __init__(self, f): self.fmeasure = f
class RougeScorer:
    def __init__(self, types, use_stemmer=False): pass
    def score(self, reference, candidate):
        v = _T["rouge"][json.dumps([reference, candidate], separators=(",", ":"), ensure_ascii=False)]
        return {"rougeL": _S(float(v[0])), "rouge1": _S(float(v[1]))}
`,
  'nltk/__init__.py': `
class data:
    @staticmethod
    def find(name): return name
def download(*a, **k): return True
def word_tokenize(text):
    return [text] if text.strip() else []
`,
  'nltk/translate/__init__.py': '',
  'nltk/translate/bleu_score.py': `
import json, os
_T = json.load(open(os.environ["PLENS_STUB_SCORES"], encoding="utf-8"))
class SmoothingFunction:
    def method1(self, *a, **k): return None
def sentence_bleu(refs, cand, smoothing_function=None):
    # NLTK returns the int 0 when no unigram matches, a float otherwise.
    v = _T["bleu"][json.dumps([refs[0][0], cand[0]], separators=(",", ":"), ensure_ascii=False)]
    return 0 if v == 0 else float(v)
`,
  'nltk/translate/meteor_score.py': `
import json, os
_T = json.load(open(os.environ["PLENS_STUB_SCORES"], encoding="utf-8"))
def meteor_score(refs, cand):
    return float(_T["meteor"][json.dumps([refs[0][0], cand[0]], separators=(",", ":"), ensure_ascii=False)])
`,
};

let server: Awaited<ReturnType<typeof startEmbeddingsServer>>;
let url: string;

beforeAll(async () => {
  server = await startEmbeddingsServer(vector);
  url = server.url;
});
afterAll(() => server.close());

describe.skipIf(!available || !hasNumpy)('LogEval3.3 on drawn outputs files: which lines count, which candidate, the sums and both CSVs', () => {
  it('with SBERT, ROUGE, BLEU and METEOR', async () => {
    const stubs = tempDir('plens-pb-stubs-');
    for (const [path, text] of Object.entries(STUBS)) {
      mkdirSync(join(stubs, path, '..'), { recursive: true });
      writeFileSync(join(stubs, path), text);
    }
    writeFileSync(
      join(stubs, 'empty.json'),
      JSON.stringify({ rouge: { '["a","a b"]': [0.5, 0.5] }, bleu: { '["a","a b"]': 0.1 }, meteor: { '["a","a b"]': 0.2 } }),
    );
    const scorer = new GenerationScorer();
    for (let seed = 1; seed <= 30; seed++) {
      const content = draw(seed, '3.3');
      const file = join(tempDir('plens-pb-le33-'), 'outputs.jsonl');
      writeFileSync(file, content);
      const out = join(tempDir('plens-pb-le33-out-'), 'csv');
      const ours = await runScoreOutputs({
        file,
        task: '3.3',
        out,
        embeddings: `openai:stub?base_url=${url}&key_env=PLENS_NO_KEY`,
        cacheDir: tempDir('plens-cache-'),
        env: { PLENS_NO_KEY: 'x' },
      });
      // The stand-ins' table: plens's values for every pair plens scored.
      const table: Record<string, Record<string, unknown>> = { rouge: {}, bleu: {}, meteor: {} };
      if (ours.logeval.task !== '3.3') throw new Error('expected 3.3');
      for (const row of ours.logeval.individual) {
        if (row.scores === null || typeof row.true_label !== 'string') continue;
        const s = scorer.score(row.true_label, row.llm_output);
        table['rouge']![JSON.stringify([row.true_label, row.llm_output])] = [s.rougeL, s.rouge1];
        const key = JSON.stringify([row.true_label.toLowerCase(), row.llm_output.toLowerCase()]);
        table['bleu']![key] = s.bleu;
        table['meteor']![key] = s.meteor;
      }
      const tableFile = join(tempDir('plens-pb-table-'), 'table.json');
      writeFileSync(tableFile, JSON.stringify(table));
      const theirs = runLogEval('LogEval3.3.py', 'DS_3.3_Pse_results.jsonl', content, { PYTHONPATH: stubs, PLENS_STUB_SCORES: tableFile });
      expect(theirs.status, theirs.stderr).toBe(0);
      const metricsDir = join(theirs.dir, 'Evaluation_Metrics');
      const log = readFileSync(join(metricsDir, readdirSync(metricsDir).find((f) => f.endsWith('.log'))!), 'utf8');
      // A pair missing from the table would show as a scoring error in their log; the only
      // errors wanted are those of the label 5, which is not text (every metric raises, scores 0).
      const errors = log.split('\n').filter((l) => l.includes('[ERROR]'));
      expect(
        errors.filter((l) => !/'\[5,|\('5\.\.\.'|'int' object has no attribute 'lower'/.test(l)),
        `seed ${seed}`,
      ).toEqual([]);
      const summary = readdirSync(metricsDir).find((f) => f.startsWith('Metrics_Summary_Report'))!;
      expect(readFileSync(join(out, 'outputs.LogEval3.3.summary.csv'), 'utf8'), `seed ${seed}`).toBe(readFileSync(join(metricsDir, summary), 'utf8'));
      const individual = readdirSync(metricsDir).find((f) => f.startsWith('Individual_Metrics_Results'));
      expect(existsSync(join(out, 'outputs.LogEval3.3.individual.csv')), `seed ${seed}`).toBe(individual !== undefined);
      if (individual)
        expect(readFileSync(join(out, 'outputs.LogEval3.3.individual.csv'), 'utf8'), `seed ${seed}`).toBe(readFileSync(join(metricsDir, individual), 'utf8'));
    }
    // A null subreddit beside text ones: the script's sorted() raises; plens stops too.
    const mixed = '{"output": "a b", "true_label": "a", "subreddit": null}\n{"output": "a b", "true_label": "a", "subreddit": "x"}\n';
    const theirs = runLogEval('LogEval3.3.py', 'DS_3.3_Pse_results.jsonl', mixed, { PYTHONPATH: stubs, PLENS_STUB_SCORES: join(stubs, 'empty.json') });
    expect(theirs.stderr).toMatch(/TypeError: '<' not supported/);
    const file = join(tempDir('plens-pb-le33-'), 'mixed.jsonl');
    writeFileSync(file, mixed);
    await expect(runScoreOutputs({ file, task: '3.3', out: null, cacheDir: tempDir('plens-cache-') })).rejects.toThrow(/mixed kinds/);
  }, 300_000);
});
