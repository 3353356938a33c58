-- The judge's checks: the answers it gave (acknow, violate, hallucinate, helpful), the quoted
-- preference, and the error types the original's accuracy script derives from them.
-- requires-file: prefeval/checks/*/checks.parquet
-- requires: prefeval_responses
-- Only the checks of answers the workspace still holds: a folder of answers moved out takes its
-- checks out of the tables too (the judge's partition keeps them, for the call cache's sake).
CREATE OR REPLACE TABLE prefeval_checks AS
SELECT * FROM read_parquet(getvariable('workspace') || '/prefeval/checks/*/checks.parquet', union_by_name = true)
WHERE response_key IN (SELECT key FROM prefeval_responses);

-- Preference-following accuracy per model, preference form, baseline and inter-turn count, pooled over the topics
-- run: the share of judged responses with none of the four errors (unhelpful, inconsistent,
-- hallucination of preference with a violation, preference-unaware violation), with a 95% Wilson
-- interval, beside each error's count. Failed calls are counted apart, never as scores.
CREATE OR REPLACE VIEW prefeval_results AS
WITH r AS (
  SELECT model, form, baseline, inter_turns, count(*) AS n_responses, count(*) FILTER (status <> 'ok') AS n_failed_responses
  FROM prefeval_responses GROUP BY model, form, baseline, inter_turns
), c AS (
  SELECT model, judge_model, form, baseline, inter_turns,
    count(*) FILTER (status = 'ok') AS n,
    count(*) FILTER (status = 'ok' AND follows_preference) AS k,
    count(*) FILTER (status = 'ok' AND acknowledgement) AS n_acknowledged,
    count(*) FILTER (status = 'ok' AND unhelpful) AS n_unhelpful,
    count(*) FILTER (status = 'ok' AND inconsistent) AS n_inconsistent,
    count(*) FILTER (status = 'ok' AND hallucination_of_preference_violation) AS n_hallucinated_violation,
    count(*) FILTER (status = 'ok' AND preference_unaware_violation) AS n_unaware_violation,
    count(*) FILTER (status <> 'ok') AS n_failed_checks
  FROM prefeval_checks GROUP BY model, judge_model, form, baseline, inter_turns
)
SELECT c.model, c.judge_model, c.form, c.baseline, c.inter_turns, c.n,
  c.k / c.n AS accuracy,
  wilson_ci95(c.k, c.n).lo AS accuracy_lo,
  wilson_ci95(c.k, c.n).hi AS accuracy_hi,
  c.n_acknowledged, c.n_unhelpful, c.n_inconsistent, c.n_hallucinated_violation, c.n_unaware_violation,
  r.n_failed_responses, c.n_failed_checks
FROM c JOIN r USING (model, form, baseline, inter_turns)
WHERE c.n > 0
ORDER BY c.model, c.judge_model, list_position(['explicit', 'choice', 'persona'], c.form), list_position(['zero-shot', 'remind', 'cot', 'selfcritic', 'rag'], c.baseline), c.inter_turns;

-- The same per topic (the original reports each topic's file on its own).
CREATE OR REPLACE VIEW prefeval_by_topic AS
SELECT model, judge_model, form, baseline, inter_turns, topic,
  count(*) FILTER (status = 'ok') AS n,
  avg(CASE WHEN follows_preference THEN 1.0 ELSE 0.0 END) FILTER (status = 'ok') AS accuracy,
  count(*) FILTER (status = 'ok' AND unhelpful) AS n_unhelpful,
  count(*) FILTER (status = 'ok' AND inconsistent) AS n_inconsistent,
  count(*) FILTER (status = 'ok' AND hallucination_of_preference_violation) AS n_hallucinated_violation,
  count(*) FILTER (status = 'ok' AND preference_unaware_violation) AS n_unaware_violation
FROM prefeval_checks GROUP BY model, judge_model, form, baseline, inter_turns, topic
ORDER BY model, judge_model, list_position(['explicit', 'choice', 'persona'], form), list_position(['zero-shot', 'remind', 'cot', 'selfcritic', 'rag'], baseline), inter_turns, topic;
