-- PERSONA-bench results. The metric values come from the scoring stage (reference-checked TS
-- code): these views present them and never recompute them. Absent stage outputs leave typed,
-- empty tables so the views exist in every workspace.
CREATE TABLE IF NOT EXISTS persona_metrics (
  model VARCHAR, task VARCHAR, setting VARCHAR, fidelity VARCHAR, parser VARCHAR, subreddit VARCHAR,
  mode VARCHAR, metric VARCHAR, value DOUBLE, n_total BIGINT, n_scored BIGINT, n_unparsed BIGINT, n_failed BIGINT);
CREATE TABLE IF NOT EXISTS persona_predictions (
  "key" VARCHAR, try BIGINT, status VARCHAR, error_kind VARCHAR, error VARCHAR, sample_id VARCHAR,
  task VARCHAR, setting VARCHAR, position BIGINT, fidelity VARCHAR, source VARCHAR, model VARCHAR,
  parser VARCHAR, replicate BIGINT, subreddit VARCHAR, "user" VARCHAR, target_reply_id VARCHAR,
  true_label VARCHAR, reply VARCHAR, predicted VARCHAR, true_number DOUBLE, predicted_number DOUBLE,
  input_tokens BIGINT, output_tokens BIGINT, cost_usd DOUBLE);
CREATE TABLE IF NOT EXISTS persona_sample_scores (
  "key" VARCHAR, sample_id VARCHAR, task VARCHAR, setting VARCHAR, model VARCHAR, fidelity VARCHAR,
  replicate BIGINT, subreddit VARCHAR, "user" VARCHAR, rouge1 DOUBLE, rouge_l DOUBLE, bleu DOUBLE,
  meteor DOUBLE, sbert DOUBLE);

-- The benchmark's results table: one row per task, metric, setting and model (overall only).
CREATE OR REPLACE VIEW persona_results AS
SELECT task, metric, mode, setting, model, fidelity, parser, value,
       n_scored || ' of ' || n_total AS scored, n_scored, n_total, n_unparsed, n_failed
FROM persona_metrics WHERE subreddit IS NULL
ORDER BY task, metric, mode NULLS FIRST, setting, model;

-- The same per subreddit.
CREATE OR REPLACE VIEW persona_results_by_subreddit AS
SELECT task, metric, mode, subreddit, setting, model, fidelity, parser, value,
       n_scored || ' of ' || n_total AS scored, n_scored, n_total
FROM persona_metrics WHERE subreddit IS NOT NULL
ORDER BY task, metric, mode NULLS FIRST, subreddit, setting, model;

-- Prediction outcomes per cell, counting each request once (its last try).
CREATE OR REPLACE VIEW persona_prediction_status AS
WITH last AS (
  SELECT * FROM persona_predictions QUALIFY row_number() OVER (PARTITION BY "key" ORDER BY try DESC) = 1
)
SELECT task, setting, model, fidelity, parser,
       count(*) FILTER (WHERE status = 'ok') AS ok,
       count(*) FILTER (WHERE status = 'parse_error') AS unparsed,
       count(*) FILTER (WHERE status = 'failed') AS failed,
       count(*) AS total
FROM last GROUP BY ALL ORDER BY task, setting, model;
