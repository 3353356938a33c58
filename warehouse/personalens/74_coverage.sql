-- Honest denominators: for every result cell (run, assistant, setting, task kind) and dialogue-level
-- dimension, how many of the planned items were scored. Planned = the cell's dialogues in the run's
-- dialogue configuration, finished or failed (a failed dialogue is never judged, a failed or unparsed
-- judgment never scores). For TC, the TCR of the scored dialogues with its worst and best case: every
-- item not scored counted as not completed (worst) or completed (best), and a Wilson interval of the
-- observed TCR (wilson_ci95, 03_significance.sql).
-- requires: paired_scores, dialogues

CREATE OR REPLACE VIEW result_coverage AS
WITH d AS (
  SELECT dialogue_id, assistant_model, setting, kind, status,
    concat_ws(' | ', 'assistant temperature ' || assistant_temperature, 'max_tokens ' || assistant_max_tokens,
      'user ' || user_model, 'temperature ' || user_temperature, 'max_tokens ' || user_max_tokens, 'prompts ' || prompt_version) AS dialogue_config
  FROM dialogues
), runs AS (
  SELECT DISTINCT judge_model, judge_config, dialogue_config, run FROM paired_scores
), long AS (
  SELECT r.judge_model, r.run, d.assistant_model, d.setting, d.kind, d.status, x.position, x.dimension, s.score
  FROM runs r JOIN d USING (dialogue_config)
    CROSS JOIN (VALUES (1, 'TC'), (2, 'P'), (3, 'Nat (U)'), (4, 'Nat (A)'), (5, 'Coh (U)'), (6, 'Coh (A)')) x(position, dimension)
    LEFT JOIN paired_scores s ON s.judge_config = r.judge_config AND s.dialogue_id = d.dialogue_id AND s.position = x.position
), g AS (
  SELECT judge_model, run, assistant_model, setting, kind, position, any_value(dimension) AS dimension,
    count(*) AS n_planned, count(*) FILTER (status <> 'ok') AS n_dialogues_failed, count(score) AS n_scored,
    count(*) FILTER (score = 100) AS n_completed
  FROM long GROUP BY judge_model, run, assistant_model, setting, kind, position
)
SELECT judge_model, run, assistant_model, setting, kind, dimension,
  n_scored || ' of ' || n_planned AS scored, n_scored, n_planned, n_dialogues_failed, n_planned - n_scored AS n_not_scored,
  CASE WHEN position = 1 AND n_scored > 0 THEN 100.0 * n_completed / n_scored END AS tcr,
  CASE WHEN position = 1 AND n_scored > 0 THEN 100 * wilson_ci95(n_completed, n_scored).lo END AS tcr_wilson_lo,
  CASE WHEN position = 1 AND n_scored > 0 THEN 100 * wilson_ci95(n_completed, n_scored).hi END AS tcr_wilson_hi,
  CASE WHEN position = 1 THEN 100.0 * n_completed / n_planned END AS tcr_worst,
  CASE WHEN position = 1 THEN 100.0 * (n_completed + n_planned - n_scored) / n_planned END AS tcr_best
FROM g
ORDER BY judge_model, run, assistant_model, list_position(['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'], setting), setting, kind DESC, position;
