-- Can we believe the judge? Beside Table 5's kappas: Krippendorff's alpha of the judge against the
-- annotators and among the annotators (the human-human ceiling), the judge's signed bias against the
-- human mean, and prediction-powered estimates (PPI) of TCR and P that correct the judge's bias with the
-- annotated subset. Macros from 03_significance.sql and 04_reliability.sql. TC is on the 0 / 100 scale
-- of paired_scores in the bias and PPI columns; alpha is nominal for TC and ordinal for the scores.
-- requires: annotations, annotated_judge_scores, agreement_dimensions, paired_scores

CREATE OR REPLACE VIEW judge_validity AS
WITH h AS (
  SELECT a.sample, a.annotator, a.dialogue_id, d.position, a.score::DOUBLE AS score
  FROM annotations a JOIN agreement_dimensions d USING (dimension, target) WHERE a.score IS NOT NULL
), j AS (
  SELECT judge_model, run, dialogue_id, position, label, score::DOUBLE AS score FROM annotated_judge_scores WHERE score IS NOT NULL
), hm AS (
  SELECT sample, dialogue_id, position, avg(score) AS human_mean, list(score ORDER BY annotator) AS ratings FROM h GROUP BY ALL
), humans AS (
  SELECT sample, position, count(*) AS n_dialogues,
    krippendorff_alpha(list(ratings ORDER BY dialogue_id), level := CASE WHEN position = 1 THEN 'nominal' ELSE 'ordinal' END,
      seed := concat_ws(':', 'alpha.humans', sample, position)) AS a
  FROM hm GROUP BY sample, position
), jh AS (
  -- Judge against annotators: one unit per (dialogue, annotator) holding the two ratings.
  SELECT h.sample, j.judge_model, j.run, j.position, any_value(j.label) AS label, count(DISTINCT h.annotator) AS n_annotators,
    krippendorff_alpha(list([j.score, h.score] ORDER BY h.dialogue_id, h.annotator), level := CASE WHEN j.position = 1 THEN 'nominal' ELSE 'ordinal' END,
      seed := concat_ws(':', 'alpha.judge', h.sample, j.judge_model, j.run, j.position)) AS a
  FROM j JOIN h USING (dialogue_id, position) GROUP BY h.sample, j.judge_model, j.run, j.position
), bias AS (
  SELECT hm.sample, j.judge_model, j.run, j.position, count(*) AS n_dialogues,
    (CASE WHEN j.position = 1 THEN 100 ELSE 1 END) * avg(j.score - hm.human_mean) AS bias,
    (CASE WHEN j.position = 1 THEN 100 ELSE 1 END) * stddev_samp(j.score - hm.human_mean) / sqrt(count(*)) AS bias_se
  FROM j JOIN hm USING (dialogue_id, position) GROUP BY hm.sample, j.judge_model, j.run, j.position
)
SELECT jh.sample, jh.judge_model, jh.run, jh.label, b.n_dialogues, jh.n_annotators,
  jh.a.alpha AS alpha_judge_human, jh.a.lo AS alpha_judge_human_lo, jh.a.hi AS alpha_judge_human_hi,
  hu.a.alpha AS alpha_humans, hu.a.lo AS alpha_humans_lo, hu.a.hi AS alpha_humans_hi,
  b.bias, b.bias - z_975() * b.bias_se AS bias_lo, b.bias + z_975() * b.bias_se AS bias_hi,
  nullif(concat_ws('; ', CASE WHEN jh.a.reason IS NOT NULL THEN 'judge-human alpha: ' || jh.a.reason END,
    CASE WHEN hu.a.reason IS NOT NULL THEN 'human alpha: ' || hu.a.reason END), '') AS reason
FROM jh JOIN bias b USING (sample, judge_model, run, position) LEFT JOIN humans hu USING (sample, position)
ORDER BY jh.sample, jh.judge_model, jh.run, jh.position;

-- PPI of TCR (%) and P per cell (assistant | setting) and over the whole run ('(all)'), as the PPI paper
-- (Angelopoulos et al. 2023) and ppi_py's ppi_mean_ci take it: two independent samples, the judge's
-- scores of the dialogues nobody annotated (unlabeled) and the annotated ones' {human mean, judge score}
-- (labeled), so the two-sample variance of ppi_mean holds (an annotated dialogue in both means would
-- add a covariance it leaves out). raw is the judge's mean over every judged dialogue of the cell, n
-- their number. Assumes the annotated dialogues are a random subset of the cell.
CREATE OR REPLACE VIEW ppi_estimates AS
WITH hm AS (
  SELECT a.dialogue_id, d.position, (CASE WHEN d.position = 1 THEN 100 ELSE 1 END) * avg(a.score) AS y
  FROM annotations a JOIN agreement_dimensions d USING (dimension, target) WHERE a.score IS NOT NULL AND d.position <= 2 GROUP BY a.dialogue_id, d.position
), s AS (
  SELECT s.judge_model, s.run, s.assistant_model, s.setting, s.position, s.dimension, s.score, hm.y
  FROM paired_scores s LEFT JOIN hm USING (dialogue_id, position) WHERE s.position <= 2 AND s.score IS NOT NULL
), g AS (
  SELECT judge_model, run, coalesce(assistant_model, '(all)') AS assistant_model, coalesce(setting, '(all)') AS setting, position, any_value(dimension) AS dimension,
    ppi_mean(list({'y': y, 'yhat': score}) FILTER (y IS NOT NULL), list(score) FILTER (y IS NULL)) AS e,
    count(*) AS n, avg(score) AS raw
  FROM s GROUP BY GROUPING SETS ((judge_model, run, position, assistant_model, setting), (judge_model, run, position))
)
SELECT judge_model, run, assistant_model, setting, dimension, n, e.n_labeled, raw, e.estimate AS ppi, e.lo AS ppi_lo, e.hi AS ppi_hi,
  e.rectifier AS judge_correction, e.reason
FROM g ORDER BY judge_model, run, assistant_model = '(all)' DESC, assistant_model, setting, position;
