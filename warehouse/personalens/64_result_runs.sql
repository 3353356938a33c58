-- Which stage runs produced each result configuration: the `run` of table3, table4, table12,
-- figure4, figure5 and paired_differences (a configuration id, 61_results.sql) to the run_id of every
-- run of the judge stage that called the judge for its judgments, and of the dialogues stage that
-- made its dialogues (their calls in llm_calls). A configuration may come from several runs (a
-- resumed run, shards, a --retry-failed rerun): one row each, with how many of its dialogues the run
-- made calls for. Join runs on run_id for the run records (05_runs.sql):
--   SELECT t.*, r.* FROM table3 t JOIN result_stage_runs USING (judge_model, run) JOIN runs r USING (run_id)
-- requires: judgment_configs, llm_calls
CREATE OR REPLACE VIEW result_stage_runs AS
WITH j AS (SELECT DISTINCT judge_model, run, dialogue_id, judgment_id FROM judgment_configs),
judge AS (
  SELECT j.judge_model, j.run, 'judge' AS stage, l.run_id,
    count(DISTINCT j.dialogue_id) AS n_dialogues, count(*) AS n_calls, min(l."at") AS first_call_at, max(l."at") AS last_call_at
  FROM j JOIN llm_calls l ON l.stage = 'judge' AND l.work_key = j.judgment_id
  GROUP BY j.judge_model, j.run, l.run_id
),
dialogues AS (
  SELECT d.judge_model, d.run, 'dialogues' AS stage, l.run_id,
    count(DISTINCT d.dialogue_id) AS n_dialogues, count(*) AS n_calls, min(l."at") AS first_call_at, max(l."at") AS last_call_at
  FROM (SELECT DISTINCT judge_model, run, dialogue_id FROM j) d JOIN llm_calls l ON l.stage = 'dialogues' AND l.work_key = d.dialogue_id
  GROUP BY d.judge_model, d.run, l.run_id
)
SELECT * FROM judge
UNION ALL
SELECT * FROM dialogues
ORDER BY judge_model, run, stage DESC, first_call_at, run_id;
