-- Does the judge agree with itself and with another judge? Macros from 01_agreement.sql,
-- 03_significance.sql and 04_reliability.sql; paired_stats from 70_paired.sql.
-- requires: judgments, paired_scores

-- Judge repeatability: a dialogue-level dimension the same judge configuration scored more than once
-- (several ok judgments of one dialogue, e.g. two judge runs written to two judgments/ folders with the
-- cache off). Intra-judge Krippendorff alpha over the dialogues (nominal for TC, ordinal otherwise) and
-- the share of dialogues whose repeated scores are not all the same. (The result views average
-- nothing here: dialogue_scores keeps one score per dialogue, the highest.)
CREATE OR REPLACE VIEW judge_repeatability AS
WITH k AS (
  SELECT judge_model, judge_temperature, judge_max_tokens, judge_prompt_version, dialogue_id, dimension, target, judgment_id, score,
    hash(judge_model, judge_temperature, judge_max_tokens, judge_prompt_version, dialogue_id, dimension, target) AS h
  FROM judgments WHERE status = 'ok' AND turn IS NULL AND score IS NOT NULL
), r0 AS (
  -- Grouped on the raw columns first: the configuration text is built only for the repeated groups. The
  -- ordered lists are made only for the judgments whose key hash repeats (a cheap count finds them;
  -- a hash collision only lets a few more through to the exact grouping).
  SELECT judge_model, judge_temperature, judge_max_tokens, judge_prompt_version, dialogue_id, dimension, target,
    list(score::DOUBLE ORDER BY judgment_id) AS scores
  FROM k WHERE h IN (SELECT h FROM k GROUP BY h HAVING count(*) >= 2)
  GROUP BY judge_model, judge_temperature, judge_max_tokens, judge_prompt_version, dialogue_id, dimension, target HAVING count(*) >= 2
), r AS (
  SELECT judge_model, concat_ws(' | ', judge_model, 'temperature ' || judge_temperature, 'max_tokens ' || judge_max_tokens, 'prompts ' || judge_prompt_version) AS judge_config,
    dialogue_id, dimension, target, scores FROM r0
), g AS (
  SELECT judge_model, judge_config, dimension, target, count(*) AS n_dialogues, max(len(scores)) AS k,
    avg((len(list_distinct(scores)) > 1)::INTEGER) AS share_changed,
    krippendorff_alpha(list(scores ORDER BY dialogue_id), level := CASE WHEN dimension = 'task_completion' THEN 'nominal' ELSE 'ordinal' END,
      seed := concat_ws(':', 'repeat', judge_config, dimension, target)) AS a
  FROM r GROUP BY judge_model, judge_config, dimension, target
)
SELECT judge_model, judge_config, dimension, target, n_dialogues, k, share_changed, a.alpha AS alpha, a.lo AS alpha_lo, a.hi AS alpha_hi, a.reason AS reason
FROM g ORDER BY ALL;

-- Judge swap: the same dialogues scored by two judge configurations (a < b by configuration text), per
-- dimension: the paired change b - a (clustered bootstrap over users, McNemar / Wilcoxon pratt, Holm
-- and BH over the dimensions of the pair) and the agreement of the two judges (Cohen's kappa,
-- unweighted, and Krippendorff's alpha, nominal for TC and ordinal otherwise).
CREATE OR REPLACE VIEW judge_swap AS
WITH s AS MATERIALIZED (
  SELECT judge_model, judge_config, dialogue_config, dialogue_id, user_id, position, dimension, score FROM paired_scores WHERE score IS NOT NULL
), pairs AS MATERIALIZED (
  SELECT a.judge_model AS judge_a, b.judge_model AS judge_b, a.judge_config AS config_a, b.judge_config AS config_b, a.dialogue_config,
    a.position, a.dimension, a.user_id, a.score AS sa, b.score AS sb
  FROM s a JOIN s b ON a.dialogue_id = b.dialogue_id AND a.position = b.position AND a.judge_config < b.judge_config
), k AS MATERIALIZED (
  SELECT *, row_number() OVER (ORDER BY config_a, config_b, dialogue_config, position) AS cid
  FROM (SELECT judge_a, judge_b, config_a, config_b, dialogue_config, position, dimension, avg(sa) AS mean_a, avg(sb) AS mean_b,
          cohen_kappa(list({'a': sa, 'b': sb})) AS kappa,
          krippendorff_alpha(list([sa, sb]), level := CASE WHEN position = 1 THEN 'nominal' ELSE 'ordinal' END) AS alpha
        FROM pairs GROUP BY judge_a, judge_b, config_a, config_b, dialogue_config, position, dimension)
), x AS (
  SELECT k.cid, concat_ws(' | ', k.config_a, k.config_b, k.dialogue_config) AS family, p.user_id, p.sb - p.sa AS d,
    CASE WHEN k.position = 1 THEN 'mcnemar' ELSE 'wilcoxon' END AS test
  FROM pairs p JOIN k USING (config_a, config_b, dialogue_config, position)
)
SELECT k.judge_a, k.judge_b, k.config_a, k.config_b, k.dialogue_config, k.dimension, st.n, k.mean_a, k.mean_b,
  st.diff, st.diff_lo, st.diff_hi, st.test, st.p, st.p_holm, st.p_bh,
  k.kappa.kappa AS cohen_kappa, k.alpha.alpha AS alpha,
  nullif(concat_ws('; ', st.reason, CASE WHEN k.kappa.reason IS NOT NULL THEN 'kappa: ' || k.kappa.reason END,
    CASE WHEN k.alpha.reason IS NOT NULL THEN 'alpha: ' || k.alpha.reason END), '') AS reason
FROM k JOIN paired_stats(x) st USING (cid)
ORDER BY k.config_a, k.config_b, k.dialogue_config, k.position;
