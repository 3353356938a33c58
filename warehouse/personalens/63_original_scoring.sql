-- The same judge replies read two ways: plens's parse (status, score) and the released PersonaLens
-- gather script's reading (original_score; src/personalens/original-scoring.ts): task completion
-- 1 when the first `VERDICT: (True|False)` match says True, else 0 (an unreadable reply counts as
-- not completed); scores from the first `<Name> Score: (\d+)` match, with no range check.
-- plens_mean is over the replies plens parsed; original_mean over those the script reads (for task
-- completion: every reply, so it is the script's completion rate). n_differ: both read a value and
-- they differ; n_plens_only / n_original_only: only one of them reads a value. Dialogue-level
-- judgments only (the script never read turn-level ones).
-- requires: judgment_configs
CREATE OR REPLACE VIEW original_scoring AS
WITH g AS (
SELECT judge_model, run, assistant_model, setting, kind, dimension, target,
  count(*) FILTER (status <> 'failed') AS n_replies,
  count(*) FILTER (status = 'ok') AS n_plens, avg(score) FILTER (status = 'ok') AS plens_mean,
  count(original_score) AS n_original, avg(original_score) AS original_mean,
  count(*) FILTER (status = 'ok' AND original_score IS DISTINCT FROM score AND original_score IS NOT NULL) AS n_differ,
  count(*) FILTER (status = 'ok' AND original_score IS NULL) AS n_plens_only,
  count(*) FILTER (status = 'parse_error' AND original_score IS NOT NULL) AS n_original_only
FROM judgment_configs
WHERE turn IS NULL AND dimension IN ('task_completion', 'personalization', 'naturalness', 'coherence')
GROUP BY ALL
)
SELECT * FROM g ORDER BY judge_model, run, assistant_model, list_position(['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'], setting), setting, kind DESC,
  list_position(['task_completion', 'personalization', 'naturalness', 'coherence'], dimension), target;
