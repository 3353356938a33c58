-- PrefEval's paired comparisons on the generation task (prefeval_paired_of, 84_prefeval_pairs.sql):
-- each baseline against zero-shot for a model, and each pair of models for a baseline, on the
-- judge's verdicts.
-- requires: prefeval_checks
CREATE OR REPLACE VIEW prefeval_generation_outcomes AS
SELECT model, judge_model, form, baseline, inter_turns, topic, task_index, CASE WHEN follows_preference THEN 1 ELSE 0 END AS y
FROM prefeval_checks WHERE status = 'ok';

CREATE OR REPLACE VIEW prefeval_paired AS SELECT * FROM prefeval_paired_of('prefeval_generation_outcomes');
