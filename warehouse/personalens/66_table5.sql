-- Table 5: agreement of the judge with human annotators. Per annotation sample, judge run and
-- dimension: Cohen's kappa between the judge and each annotator (unweighted, over the fixed score
-- categories, on the dialogues both scored), averaged over annotators; Fleiss' kappa among the
-- annotators on the dialogues every one of them labelled. cohen_kappa and fleiss_kappa come from
-- 01_agreement.sql; an undefined kappa is NULL and the reason says why.
-- requires: annotations, dialogue_scores

-- The six judgments people label, in the paper's order, with their score categories.
CREATE OR REPLACE TABLE agreement_dimensions AS
SELECT * FROM (VALUES
  (1, 'TC', 'task_completion', 'dialogue', [0, 1]),
  (2, 'P', 'personalization', 'assistant', [1, 2, 3, 4]),
  (3, 'Nat (U)', 'naturalness', 'user', [1, 2, 3, 4, 5]),
  (4, 'Nat (A)', 'naturalness', 'assistant', [1, 2, 3, 4, 5]),
  (5, 'Coh (U)', 'coherence', 'user', [1, 2, 3, 4, 5]),
  (6, 'Coh (A)', 'coherence', 'assistant', [1, 2, 3, 4, 5])
) AS t(position, label, dimension, target, score_categories);

-- The judge's dialogue-level scores of annotated dialogues, long form (only scores that are ok).
CREATE OR REPLACE VIEW annotated_judge_scores AS
SELECT s.judge_model, s.run, s.dialogue_id, d.position, d.label, d.dimension, d.target, d.score_categories,
  CASE d.position WHEN 1 THEN s.tc WHEN 2 THEN s.p WHEN 3 THEN s.nat_u WHEN 4 THEN s.nat_a WHEN 5 THEN s.coh_u WHEN 6 THEN s.coh_a END AS score
FROM dialogue_scores s CROSS JOIN agreement_dimensions d
WHERE s.dialogue_id IN (SELECT dialogue_id FROM annotations);

-- Per annotator: Cohen's kappa with the judge, with observed and expected agreement and n (pairs).
CREATE OR REPLACE VIEW table5_annotators AS
WITH pairs AS (
  SELECT h.sample, j.judge_model, j.run, j.position, j.label, j.dimension, j.target, h.annotator,
    any_value(j.score_categories) AS cats,
    list({'a': j.score, 'b': h.score} ORDER BY h.dialogue_id) AS judge_human
  FROM annotated_judge_scores j JOIN annotations h USING (dialogue_id, dimension, target)
  WHERE j.score IS NOT NULL AND h.score IS NOT NULL
  GROUP BY h.sample, j.judge_model, j.run, j.position, j.label, j.dimension, j.target, h.annotator
), k AS (
  SELECT *, cohen_kappa(judge_human, weights := 'none', categories := cats) AS ck FROM pairs
)
SELECT sample, judge_model, run, label, dimension, target, annotator,
  ck.n AS n, ck.kappa AS kappa, ck.observed AS observed, ck.expected AS expected, ck.reason AS reason
FROM k ORDER BY sample, judge_model, run, position, annotator;

-- Per sample and dimension: Fleiss' kappa among the annotators who labelled that dimension, over the
-- dialogues each of them labelled (a property of the people alone: the same for every judge run).
CREATE OR REPLACE VIEW table5_fleiss AS
WITH h AS (
  SELECT a.sample, a.annotator, a.dialogue_id, d.position, d.dimension, d.target, d.score_categories, a.score
  FROM annotations a JOIN agreement_dimensions d USING (dimension, target) WHERE a.score IS NOT NULL
), raters AS (
  SELECT sample, position, count(DISTINCT annotator) AS n_raters FROM h GROUP BY ALL
), subjects AS (
  SELECT h.sample, h.position, h.dialogue_id, list(h.score ORDER BY h.annotator) AS ratings
  FROM h JOIN raters r USING (sample, position)
  GROUP BY h.sample, h.position, h.dialogue_id HAVING count(*) = any_value(r.n_raters)
), f AS (
  SELECT r.sample, r.position, r.n_raters, count(s.dialogue_id) AS n_subjects,
    CASE WHEN r.n_raters >= 2 THEN fleiss_kappa(coalesce(list(s.ratings) FILTER (s.ratings IS NOT NULL), []), categories := any_value(d.score_categories)) END AS fk
  FROM raters r JOIN agreement_dimensions d USING (position) LEFT JOIN subjects s USING (sample, position)
  GROUP BY r.sample, r.position, r.n_raters
)
SELECT sample, position, n_raters, n_subjects, fk.kappa AS kappa, fk.observed AS observed, fk.expected AS expected,
  CASE WHEN n_raters < 2 THEN 'fewer than 2 annotators' ELSE fk.reason END AS reason
FROM f;

CREATE OR REPLACE VIEW table5 AS
WITH c AS (
  SELECT sample, judge_model, run, label, dimension, target,
    count(*) AS n_annotators,
    count(kappa) AS n_kappa,
    avg(kappa) AS cohen_kappa, min(kappa) AS cohen_kappa_min, max(kappa) AS cohen_kappa_max,
    string_agg(annotator || ': ' || reason, '; ' ORDER BY annotator) FILTER (kappa IS NULL) AS undefined_for
  FROM table5_annotators GROUP BY ALL
), n AS (
  -- Dialogues annotated by at least one annotator and scored by the judge.
  SELECT h.sample, j.judge_model, j.run, j.dimension, j.target, count(DISTINCT j.dialogue_id) AS n_dialogues
  FROM annotated_judge_scores j JOIN annotations h USING (dialogue_id, dimension, target)
  WHERE j.score IS NOT NULL AND h.score IS NOT NULL GROUP BY ALL
)
SELECT c.sample, c.judge_model, c.run, c.label, c.dimension, c.target, n.n_dialogues, c.n_annotators,
  c.cohen_kappa, c.cohen_kappa_min, c.cohen_kappa_max,
  f.n_subjects AS fleiss_n_dialogues, f.n_raters AS fleiss_n_annotators, f.kappa AS fleiss_kappa,
  nullif(concat_ws('; ',
    CASE WHEN c.n_kappa = 0 THEN 'Cohen undefined (' || c.undefined_for || ')'
         WHEN c.n_kappa < c.n_annotators THEN 'Cohen mean over ' || c.n_kappa || ' of ' || c.n_annotators || ' annotators (' || c.undefined_for || ')' END,
    CASE WHEN f.kappa IS NULL THEN 'Fleiss undefined (' || coalesce(f.reason, 'no labels') || ')' END), '') AS reason
FROM c JOIN n USING (sample, judge_model, run, dimension, target)
  JOIN agreement_dimensions d USING (dimension, target)
  LEFT JOIN table5_fleiss f ON f.sample = c.sample AND f.position = d.position
ORDER BY c.sample, c.judge_model, c.run, d.position;
