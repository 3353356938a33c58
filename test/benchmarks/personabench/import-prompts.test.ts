// `plens persona import-prompts` on prompt files in the original makers' formats
// (test/fixtures/personabench/prompts/, written by us after spec §2.1.4, §2.3.5, §5.3, §5.4):
// the prompt text kept byte for byte, ids / labels / task / setting recorded, and bad lines
// named by file, line and field with nothing written.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { PlensError } from '../../../src/core/errors.js';
import { runImportPrompts } from '../../../src/benchmarks/personabench/import-prompts.js';

const fixtures = new URL('../../fixtures/personabench/prompts/', import.meta.url).pathname;
const tmp = (): string => mkdtempSync(join(tmpdir(), 'plens-persona-prompts-'));
const readJsonl = (file: string): Array<Record<string, unknown>> =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('import-prompts: the original formats', () => {
  it('3.1 P-Conv by file name: prompt text untouched, ids, label, subreddit, few-shot info, user from the store', async () => {
    const out = join(tmp(), 'imported');
    const file = join(fixtures, 'WithConversationPrompts_ScorePrediction_Refactored.jsonl');
    const summary = await runImportPrompts({ files: [file], out });
    expect(summary.records).toBe(2);
    expect(summary.sources).toEqual([{ file, records: 2, counts: { '3.1 P-Conv': 2 }, decided_by: 'file name' }]);
    const records = readJsonl(join(out, 'prompts.jsonl'));
    const original = readJsonl(file).map((line) => (line['prediction_task'] as Record<string, unknown>)['prompt_text']);
    // Trailing spaces, a tab, quotes and "café" (\u00e9 in the file) all survive.
    expect(records.map((r) => r['prompt'])).toEqual(original);
    expect(records[0]!['prompt']).toContain('r/books  \n  café "quoted"\t\n');
    expect(records[0]).toMatchObject({
      sampleId: '3.1/P-Conv/0',
      task: '3.1',
      setting: 'P-Conv',
      position: 0,
      targetPostId: 'u1p2',
      targetReplyId: 'u1p2-c1-c2',
      trueLabel: 'negative',
      subreddit: 'books',
      user: 'alice',
      fewShot: { type: 'dynamic', fs_post_ref_id: 'u1p2', fs_reply_id_hidden_in_example: 'u1p2-c5-c6' },
      extra: null,
      source: { file, line: 1 },
    });
    expect(records[1]).toMatchObject({ sampleId: '3.1/P-Conv/1', trueLabel: 'positive', subreddit: 'Science', user: 'bob', source: { file, line: 2 } });
  });

  it('a renamed file: 3.2 NP-Conv from the record (numeric label, pseudo-random few_shot_info), extras kept', async () => {
    const summary = await runImportPrompts({ files: [join(fixtures, 'renamed_impact_np.jsonl')], out: join(tmp(), 'o') });
    expect(summary.sources[0]!.counts).toEqual({ '3.2 NP-Conv': 1 });
    expect(summary.sources[0]!.decided_by).toBe('record');
    const [record] = readJsonl(summary.file!);
    expect(record).toMatchObject({ task: '3.2', setting: 'NP-Conv', trueLabel: 15, targetReplyId: 'u1p1-c1-c2' });
    expect(record!['extra']).toEqual({
      target_reply_body: 'Thanks, the sample was 200 people.',
      target_reply_parent_info: {
        parent_id: 'u1p1-c1',
        parent_author: 'u1',
        parent_score: 10,
        parent_timestamp: '2023-03-01T10:30:00Z',
        parent_body: 'Interesting study, how many people?',
      },
    });
  });

  it('3.3 files: user, label and NP-Conv extras; positions count per task x setting across files', async () => {
    const files = [
      'WithoutConversationPrompts_BodyPrediction_v2.jsonl',
      'WithPseudoRandomConversationPrompts_BodyPrediction.jsonl',
      'renamed_impact_np.jsonl',
    ].map((f) => join(fixtures, f));
    const summary = await runImportPrompts({ files: [...files, files[0]!], out: join(tmp(), 'o') });
    const records = readJsonl(summary.file!);
    expect(records.map((r) => r['sampleId'])).toEqual(['3.3/P-NonConv/0', '3.3/NP-Conv/0', '3.2/NP-Conv/0', '3.3/P-NonConv/1']);
    expect(records[0]).toMatchObject({ user: 'alice', trueLabel: 'Yes, double blind.', targetPostId: null, fewShot: null, extra: null });
    expect((records[1]!['extra'] as Record<string, unknown>)['context_post_used_idx_global']).toBe(2);
    expect(Object.keys(records[1]!['extra'] as object)).toHaveLength(11);
  });

  it('--task / --setting override the file name; the label must fit the task', async () => {
    const dir = tmp();
    const file = join(dir, 'flat.jsonl');
    writeFileSync(file, JSON.stringify({ prompt: 'Say a number.\nScore:', true_label: -7, subreddit: null }) + '\n\n');
    // A flat numeric record with no section marker: the setting cannot be told.
    const unknown = (await runImportPrompts({ files: [file], out: join(dir, 'o') }).catch((e: unknown) => e)) as PlensError;
    expect(unknown.code).toBe('E_INPUT_SCHEMA');
    expect(unknown.location).toEqual({ file, line: 1, pointer: '/' });
    expect(unknown.message).toContain('--setting');
    const summary = await runImportPrompts({ files: [file], out: join(dir, 'o'), task: '3.2', setting: 'P-NonConv' });
    expect(summary).toMatchObject({ records: 1, blank_lines: 1 });
    expect(readJsonl(summary.file!)[0]).toMatchObject({ task: '3.2', setting: 'P-NonConv', trueLabel: -7, subreddit: '' });
    const wrong = (await runImportPrompts({ files: [file], out: join(dir, 'o2'), task: '3.1', setting: 'P-Conv' }).catch((e: unknown) => e)) as PlensError;
    expect(wrong.location).toEqual({ file, line: 1, pointer: '/true_label' });
    expect(wrong.message).toBe('expected "positive" or "negative" for a 3.1 label (got -7)');
  });
});

describe('import-prompts: bad input', () => {
  const good = readFileSync(join(fixtures, 'WithConversationPrompts_ScorePrediction_Refactored.jsonl'), 'utf8').split('\n')[0]!;

  it('bad JSON, a missing field, a wrong type, a bad 3.1 label: file, line, field; nothing written', async () => {
    const dir = tmp();
    const name = 'WithConversationPrompts_ScorePrediction_Refactored.jsonl';
    const cases: Array<[string, string, { line: number; pointer?: string }, string]> = [
      [`${good}\n{"prediction_task": `, 'E_INPUT_JSON', { line: 2 }, 'not valid JSON'],
      [
        `${good}\n${good}\n{"prediction_task": {"true_label": "positive"}}`,
        'E_INPUT_SCHEMA',
        { line: 3, pointer: '/prediction_task' },
        'missing required field "prompt_text"',
      ],
      [
        `{"prediction_task": {"prompt_text": 5, "true_label": "positive"}}`,
        'E_INPUT_SCHEMA',
        { line: 1, pointer: '/prediction_task/prompt_text' },
        'expected string (got',
      ],
      [
        good.replace('"true_label": "negative"', '"true_label": "neutral"'),
        'E_INPUT_SCHEMA',
        { line: 1, pointer: '/prediction_task/true_label' },
        'expected "positive" or "negative"',
      ],
      [`[1, 2]`, 'E_INPUT_SCHEMA', { line: 1, pointer: '/' }, 'expected a JSON object'],
    ];
    for (const [i, [text, code, where, message]] of cases.entries()) {
      const file = join(dir, `${i}`, name);
      const out = join(dir, `out${i}`);
      mkdirSync(join(dir, `${i}`));
      writeFileSync(file, text + '\n');
      const error = (await runImportPrompts({ files: [file], out }).catch((e: unknown) => e)) as PlensError;
      expect(error).toBeInstanceOf(PlensError);
      expect(error.code).toBe(code);
      expect(error.location).toEqual({ file, ...where });
      expect(error.message).toContain(message);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('CLI: --json prints the summary, --dry-run writes nothing, a missing file exits 3', async () => {
    const ws = tmp();
    const file = join(fixtures, 'WithoutConversationPrompts_BodyPrediction_v2.jsonl');
    expect(await main(['persona', 'import-prompts', file, '-w', ws, '--dry-run', '--quiet'])).toBe(0);
    expect(existsSync(join(ws, 'persona'))).toBe(false);
    expect(await main(['persona', 'import-prompts', file, '-w', ws, '--quiet'])).toBe(0);
    expect(readJsonl(join(ws, 'persona', 'imported', 'prompts.jsonl'))).toHaveLength(1);
    expect(await main(['persona', 'import-prompts', join(ws, 'nope.jsonl'), '-w', ws, '--quiet'])).toBe(3);
  });

  it('CLI: --task 3.1 is the task 3.1 (not the number, which no choice equals)', async () => {
    const ws = tmp();
    const file = join(fixtures, 'WithConversationPrompts_ScorePrediction_Refactored.jsonl');
    expect(await main(['persona', 'import-prompts', file, '-w', ws, '--task', '3.1', '--setting', 'P-Conv', '--quiet'])).toBe(0);
    expect(readJsonl(join(ws, 'persona', 'imported', 'prompts.jsonl')).every((r) => (r as { task: string }).task === '3.1')).toBe(true);
  });
});
