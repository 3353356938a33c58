import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { repoRoot } from '../helpers/cli.js';

// Two experiment configurations over the same dialogues must never be averaged together.
describe('result views keep configurations apart', () => {
  let db: Database;
  beforeAll(async () => {
    db = await Database.open(':memory:');
    await db.run(`
      CREATE TABLE dialogues AS SELECT * FROM (VALUES
        ('d1', 'u1:T', 'SD', 'base', 'openai:a', 'openai:u', 0, 0.0, 800, 0.5, 800, 'dp1', 'ok'),
        ('d2', 'u2:T', 'SD', 'base', 'openai:a', 'openai:u', 0, 0.0, 800, 0.5, 800, 'dp1', 'ok'),
        ('d3', 'u1:T', 'SD', 'base', 'openai:a', 'openai:other-user', 0, 0.0, 800, 0.5, 800, 'dp1', 'ok')
      ) t(dialogue_id, scenario_id, kind, setting, assistant_model, user_model, replicate, assistant_temperature, assistant_max_tokens, user_temperature, user_max_tokens, prompt_version, status);
      CREATE TABLE judgments AS SELECT * FROM (VALUES
        ('d1', 'openai:j', 0.0, 800, 'jp1', 'task_completion', 'dialogue', NULL, 'ok', 1),
        ('d2', 'openai:j', 0.0, 800, 'jp1', 'task_completion', 'dialogue', NULL, 'ok', 1),
        ('d1', 'openai:j', 0.0, 800, 'jp2', 'task_completion', 'dialogue', NULL, 'ok', 0),
        ('d2', 'openai:j', 0.0, 800, 'jp2', 'task_completion', 'dialogue', NULL, 'ok', 0),
        ('d3', 'openai:j', 0.0, 800, 'jp1', 'task_completion', 'dialogue', NULL, 'ok', 0)
      ) t(dialogue_id, judge_model, judge_temperature, judge_max_tokens, judge_prompt_version, dimension, target, turn, status, score);
      ALTER TABLE judgments ADD COLUMN scenario_id VARCHAR; ALTER TABLE judgments ADD COLUMN kind VARCHAR; ALTER TABLE judgments ADD COLUMN setting VARCHAR;
      ALTER TABLE judgments ADD COLUMN assistant_model VARCHAR; ALTER TABLE judgments ADD COLUMN user_model VARCHAR;
      ALTER TABLE judgments ADD COLUMN replicate INTEGER; ALTER TABLE judgments ADD COLUMN relevant_domains VARCHAR[];
      UPDATE judgments j SET scenario_id = d.scenario_id, kind = d.kind, setting = d.setting, assistant_model = d.assistant_model,
        user_model = d.user_model, replicate = d.replicate, relevant_domains = ['Alarm'] FROM dialogues d WHERE d.dialogue_id = j.dialogue_id;
    `);
    await db.run(readFileSync(join(repoRoot, 'warehouse', '00_macros.sql'), 'utf8'));
    await db.run(readFileSync(join(repoRoot, 'warehouse', 'personalens', '61_results.sql'), 'utf8'));
  });
  afterAll(() => db.close());

  it('a second judge prompt version and a second user model are separate runs, each with its own n', async () => {
    const rows = await db.all<{ n_dialogues: number; tcr: number }>('SELECT n_dialogues, tcr FROM table3 ORDER BY tcr DESC, n_dialogues');
    // jp1 with user openai:u: d1, d2 both completed; jp2 with openai:u: both not; jp1 with the other user: d3 not.
    expect(rows).toEqual([
      { n_dialogues: 2, tcr: 100 },
      { n_dialogues: 1, tcr: 0 },
      { n_dialogues: 2, tcr: 0 },
    ]);
    expect((await db.all('SELECT DISTINCT run FROM dialogue_scores')).length).toBe(3);
    expect((await db.all('SELECT * FROM result_runs')).length).toBe(3);
  });
});
