-- PrefEval's classification task: one row per MCQ record, baseline, inter-turn count and model
-- (prefeval/mcq/*/mcq.parquet): the options as shown, the letter of the one that follows the
-- preference, the answer, the letter read from it and whether it is that one.
-- requires-file: prefeval/mcq/*/mcq.parquet
CREATE OR REPLACE TABLE prefeval_mcq AS
SELECT * FROM read_parquet(getvariable('workspace') || '/prefeval/mcq/*/mcq.parquet', union_by_name = true);

-- MCQ accuracy per model, preference form, baseline and inter-turn count, pooled over the topics run:
-- the share of answered records whose letter is the option that follows the preference, with a 95%
-- Wilson interval (an answer with no letter counts as wrong, as in the original), beside the count of
-- answers with no letter. Failed calls are counted apart, never as answers.
CREATE OR REPLACE VIEW prefeval_mcq_results AS
SELECT model, form, baseline, inter_turns,
  count(*) FILTER (status = 'ok') AS n,
  count(*) FILTER (status = 'ok' AND is_correct) / count(*) FILTER (status = 'ok') AS accuracy,
  wilson_ci95(count(*) FILTER (status = 'ok' AND is_correct), count(*) FILTER (status = 'ok')).lo AS accuracy_lo,
  wilson_ci95(count(*) FILTER (status = 'ok' AND is_correct), count(*) FILTER (status = 'ok')).hi AS accuracy_hi,
  count(*) FILTER (status = 'ok' AND choice IS NULL) AS n_no_choice,
  count(*) FILTER (status <> 'ok') AS n_failed
FROM prefeval_mcq GROUP BY model, form, baseline, inter_turns
HAVING count(*) FILTER (status = 'ok') > 0
ORDER BY model, list_position(['explicit', 'choice', 'persona'], form), list_position(['zero-shot', 'remind', 'cot', 'selfcritic', 'rag'], baseline), inter_turns;

-- The same per topic (the original writes and reports each topic's file on its own).
CREATE OR REPLACE VIEW prefeval_mcq_by_topic AS
SELECT model, form, baseline, inter_turns, topic,
  count(*) FILTER (status = 'ok') AS n,
  avg(CASE WHEN is_correct THEN 1.0 ELSE 0.0 END) FILTER (status = 'ok') AS accuracy,
  count(*) FILTER (status = 'ok' AND choice IS NULL) AS n_no_choice
FROM prefeval_mcq GROUP BY model, form, baseline, inter_turns, topic
ORDER BY model, list_position(['explicit', 'choice', 'persona'], form), list_position(['zero-shot', 'remind', 'cot', 'selfcritic', 'rag'], baseline), inter_turns, topic;

-- Paired comparisons on the classification task (prefeval_paired_of): no judge, so judge_model is empty.
CREATE OR REPLACE VIEW prefeval_mcq_outcomes AS
SELECT model, '' AS judge_model, form, baseline, inter_turns, topic, task_index, CASE WHEN is_correct THEN 1 ELSE 0 END AS y
FROM prefeval_mcq WHERE status = 'ok';

CREATE OR REPLACE VIEW prefeval_mcq_paired AS SELECT * EXCLUDE (judge_model) FROM prefeval_paired_of('prefeval_mcq_outcomes');
