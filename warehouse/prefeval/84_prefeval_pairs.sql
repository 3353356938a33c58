-- PrefEval's paired comparisons, for either task: a table macro over a relation (its name, as
-- query_table takes it) of one outcome per answered preference, with the columns model, judge_model,
-- form, baseline, inter_turns, topic, task_index and y (1: followed the preference / chose the
-- option that does, 0: did not). The same preferences (topic, form, record) answered two ways at the
-- same number of filler turns: each baseline against zero-shot for a model, and each pair of models
-- for a baseline. Per comparison: the pairs on both sides, each side's accuracy, the difference
-- (b - a) with a 95% interval from 1,000 seeded Bayesian-bootstrap resamples of the preferences
-- (paired_cluster_mean, each preference its own cluster), its minimum detectable effect, and
-- McNemar's exact test on the discordant pairs (mcnemar_test). Failed calls pair with nothing.
CREATE OR REPLACE MACRO prefeval_paired_of(pp_outcomes) AS TABLE
WITH ok AS (
  SELECT model, judge_model, form, baseline, inter_turns, topic, task_index, y FROM query_table(pp_outcomes)
), pairs AS (
  SELECT 'baseline' AS comparison, a.model, a.judge_model, a.form, a.inter_turns, a.baseline AS a, b.baseline AS b,
    a.topic, a.task_index, a.y AS ya, b.y AS yb
  FROM ok a JOIN ok b USING (model, judge_model, form, inter_turns, topic, task_index)
  WHERE a.baseline = 'zero-shot' AND b.baseline <> 'zero-shot'
  UNION ALL
  SELECT 'model', NULL, a.judge_model, a.form, a.inter_turns, a.model, b.model, a.topic, a.task_index, a.y, b.y
  FROM ok a JOIN ok b USING (judge_model, form, baseline, inter_turns, topic, task_index)
  WHERE a.model < b.model
), grouped AS (
  SELECT comparison, model, judge_model, form, inter_turns, a, b,
    count(*) AS n_pairs, avg(ya) AS accuracy_a, avg(yb) AS accuracy_b,
    count(*) FILTER (ya = 1 AND yb = 0) AS n_a_only, count(*) FILTER (ya = 0 AND yb = 1) AS n_b_only,
    paired_cluster_mean(list({'cluster': topic || ':' || task_index, 'sum': yb - ya, 'n': 1})) AS d
  FROM pairs GROUP BY comparison, model, judge_model, form, inter_turns, a, b
)
SELECT comparison, model, judge_model, form, inter_turns, a, b, n_pairs, accuracy_a, accuracy_b,
  d.mean AS difference, d.lo AS difference_lo, d.hi AS difference_hi, d.mde AS mde,
  n_a_only, n_b_only, mcnemar_test(n_a_only, n_b_only).p_exact AS p_mcnemar,
  d.reason AS reason
FROM grouped
ORDER BY comparison, model NULLS LAST, judge_model, list_position(['explicit', 'choice', 'persona'], form), inter_turns, a, b;
