import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPersonaExport } from '../../../src/benchmarks/personabench/export-stage.js';
import { repoRoot, runCli, tempDir } from '../../helpers/cli.js';

// biome-ignore lint/suspicious/noExplicitAny: the files' JSON, of any shape, read field by field
type Json = any;

// persona export on the hand-made fixture: the files, their line layouts, the stores' hidden
// score and ids, and what happens to files a user already has. The data are compared with the
// original makers' own files in test/differential/personabench/export.test.ts.
const fixture = join(repoRoot, 'test', 'fixtures', 'personabench', 'grouped.json');
const lines = (file: string): Array<Record<string, Json>> =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, Json>);

describe('persona export', () => {
  it("writes the grouped input and the nine files in the makers' layouts", async () => {
    const out = join(tempDir('plens-pb-export-'), 'export');
    const summary = await runPersonaExport({ from: fixture, out, fidelity: 'original', seed: 14 });
    expect(summary.files.map((f) => f.lines)).toEqual([1, 3, 3, 3, 3, 3, 3, 4, 4, 4]);
    // json.dump(indent=2, ensure_ascii=False): no trailing newline, the input's data.
    const grouped = readFileSync(join(out, 'merged_posts_remapped.json'), 'utf8');
    expect(grouped.startsWith('{\n  "alice": [\n    {\n')).toBe(true);
    expect(JSON.parse(grouped)).toEqual(JSON.parse(readFileSync(fixture, 'utf8')));

    const pconv = lines(join(out, 'WithConversationPrompts_ScorePrediction_Refactored.jsonl'))[0]!;
    expect(Object.keys(pconv)).toEqual(['post_data_store', 'prediction_task']);
    expect(Object.keys(pconv['prediction_task'])).toEqual([
      'prompt_text',
      'target_post_reference_id',
      'target_reply_id',
      'true_label',
      'subreddit',
      'few_shot_info',
    ]);
    const task = pconv['prediction_task'];
    const store = pconv['post_data_store'][task['target_post_reference_id']];
    // 3.1's store: the post with ids; the target's score hidden; top-level comments list parent_id first.
    expect(store['id']).toBe(task['target_post_reference_id']);
    expect(Object.keys(store['comments'][0]).slice(-3)).toEqual(['parent_id', 'id', 'type']);
    const hidden = JSON.stringify(store).match(/"\[SCORE_TO_PREDICT\]"/g);
    expect(hidden).toHaveLength(1);
    expect(Object.keys(pconv['post_data_store'])).toContain('default_fs_post1');

    // 3.2's store is the raw post: no ids, and (as in the original) nothing hidden.
    const impact = lines(join(out, 'WithConversationPrompts_ExactScorePrediction.jsonl'))[0]!;
    const raw = impact['post_data_store'][impact['prediction_task']['target_post_reference_id']];
    expect(raw['id']).toBeUndefined();
    expect(JSON.stringify(raw)).not.toContain('SCORE_TO_PREDICT');

    const np = lines(join(out, 'WithConversationPrompts_PseudoRandomContext_ExactScorePrediction.jsonl'))[0]!;
    expect(Object.keys(np['prediction_task']).slice(-3)).toEqual(['few_shot_info', 'target_reply_body', 'target_reply_parent_info']);
    const reply = lines(join(out, 'WithPseudoRandomConversationPrompts_BodyPrediction.jsonl'))[0]!;
    expect(Object.keys(reply).slice(0, 5)).toEqual(['user', 'prompt', 'true_label', 'subreddit', 'target_reply_parent_author']);
  });

  it("keeps a user's files of the same names unless --force; --dry-run writes nothing", async () => {
    const out = join(tempDir('plens-pb-export-'), 'theirs');
    mkdirSync(out);
    writeFileSync(join(out, 'WithConversationPrompts_BodyPrediction_v2.jsonl'), 'the original run\n');
    const refused = await runCli(['persona', 'export', '--from', fixture, '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already holds 1 file\(s\) of the original's names that plens did not write/);
    expect(readFileSync(join(out, 'WithConversationPrompts_BodyPrediction_v2.jsonl'), 'utf8')).toBe('the original run\n');
    const dry = await runCli(['persona', 'export', '--from', fixture, '--out', join(out, 'new'), '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(existsSync(join(out, 'new'))).toBe(false);
    const forced = await runCli(['persona', 'export', '--from', fixture, '--out', out, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(out, 'WithConversationPrompts_BodyPrediction_v2.jsonl'), 'utf8')).not.toBe('the original run\n');
    // An earlier export is plens's own: exporting again needs no --force.
    const again = await runCli(['persona', 'export', '--from', fixture, '--out', out]);
    expect(again.code, again.stderr).toBe(0);
  });
});
