-- PERSONA-bench results with 95% intervals: persona_results' rows (the scoring stage's values,
-- never recomputed here) and, beside each, an interval from the same predictions. The report's
-- bars read this view.
--   3.1 accuracy: Wilson score interval over the scored predictions (as PrefEval's accuracy).
--   3.1 F1 (binary, positive) and MCC, 3.2 MSE, RMSE and MAE, 3.3 ROUGE-1, ROUGE-L, METEOR, BLEU and
--   SBERT (each prompt's score in the charted mode): a Bayesian bootstrap over users, 1000 draws
--   with the weights of persona_setting_comparison (cluster_weight, seed 'plens.persona'), the 25th
--   and 976th sorted value. RMSE is the square root of the MSE draws. NULL below 2 users.
--   3.1 weighted F1 and 3.3 best-of-n-filtered have no interval.
-- 3.1's labels are positive and negative (MCC is sklearn's, 0 where undefined).
CREATE OR REPLACE VIEW persona_result_intervals AS
WITH last AS (
  SELECT * FROM persona_predictions QUALIFY row_number() OVER (PARTITION BY "key" ORDER BY try DESC) = 1
), users AS (
  SELECT model, task, setting, fidelity, parser, "user", count(*)::DOUBLE AS n,
         sum((predicted = true_label)::INT)::DOUBLE AS correct,
         sum((true_label = 'positive' AND predicted = 'positive')::INT)::DOUBLE AS tp,
         sum((true_label = 'positive')::INT)::DOUBLE AS t_pos,
         sum((predicted = 'positive')::INT)::DOUBLE AS p_pos,
         sum(abs(predicted_number - true_number)) AS abs_err,
         sum(pow(predicted_number - true_number, 2)) AS sq_err
  FROM last WHERE status = 'ok' AND task IN ('3.1', '3.2') GROUP BY ALL
), cells AS (
  SELECT model, task, setting, fidelity, parser, count(*) AS n_users, sum(n) AS n, sum(correct) AS correct
  FROM users GROUP BY ALL
), draws AS (
  SELECT u.model, u.task, u.setting, u.fidelity, u.parser, r.rep,
         sum(w * n) AS n, sum(w * correct) AS c, sum(w * tp) AS tp, sum(w * t_pos) AS t, sum(w * p_pos) AS p,
         sum(w * abs_err) AS ae, sum(w * sq_err) AS se
  FROM users u, (SELECT range AS rep FROM range(1000)) r,
       LATERAL (SELECT cluster_weight('plens.persona', r.rep, u."user") AS w)
  GROUP BY ALL
), draw_metrics AS (
  SELECT model, task, setting, fidelity, parser, metric, value FROM (
    SELECT model, task, setting, fidelity, parser,
           CASE WHEN t + p > 0 THEN 2 * tp / (t + p) ELSE 0 END AS f1,
           -- sklearn's multiclass form with the two labels: (c n - sum_k t_k p_k) / sqrt((n^2 - sum_k p_k^2)(n^2 - sum_k t_k^2)).
           CASE WHEN (n * n - p * p - (n - p) * (n - p)) * (n * n - t * t - (n - t) * (n - t)) > 0
             THEN (c * n - t * p - (n - t) * (n - p)) / sqrt((n * n - p * p - (n - p) * (n - p)) * (n * n - t * t - (n - t) * (n - t)))
             ELSE 0 END AS mcc,
           se / n AS mse, sqrt(se / n) AS rmse, ae / n AS mae
    FROM draws
  ) UNPIVOT (value FOR metric IN (f1, mcc, mse, rmse, mae))
  WHERE (task = '3.1' AND metric IN ('f1', 'mcc')) OR (task = '3.2' AND metric IN ('mse', 'rmse', 'mae'))
), boot AS (
  SELECT d.model, d.task, d.setting, d.fidelity, d.parser, NULL::VARCHAR AS mode, d.metric, any_value(c.n_users) AS n_users,
         CASE WHEN any_value(c.n_users) >= 2 THEN list_sort(list(d.value))[25] END AS lo,
         CASE WHEN any_value(c.n_users) >= 2 THEN list_sort(list(d.value))[976] END AS hi,
         'user-clustered bootstrap' AS method
  FROM draw_metrics d JOIN cells c USING (model, task, setting, fidelity, parser) GROUP BY ALL
), wilson AS (
  SELECT model, task, setting, fidelity, parser, NULL::VARCHAR AS mode, 'accuracy' AS metric, n_users,
         wilson_ci95(correct, n).lo AS lo, wilson_ci95(correct, n).hi AS hi, 'Wilson' AS method
  FROM cells WHERE task = '3.1'
), gen_users AS (
  SELECT model, task, setting, fidelity, mode, CASE metric WHEN 'rouge_l' THEN 'rougeL' ELSE metric END AS metric, "user",
         sum(value) AS s, count(*) AS n
  FROM persona_sample_values WHERE task = '3.3' AND value IS NOT NULL GROUP BY ALL
), gen AS (
  SELECT model, task, setting, fidelity, NULL::VARCHAR AS parser, mode, metric, count(*) AS n_users,
         paired_cluster_mean(list({'cluster': "user", 'sum': s, 'n': n} ORDER BY "user"), seed := 'plens.persona') AS r
  FROM gen_users GROUP BY ALL
), intervals AS (
  SELECT * FROM boot
  UNION ALL SELECT * FROM wilson
  UNION ALL SELECT model, task, setting, fidelity, parser, mode, metric, n_users, r.lo, r.hi, 'user-clustered bootstrap' FROM gen
)
SELECT r.task, r.metric, r.mode, r.setting, r.model, r.fidelity, r.parser, r.value, i.lo, i.hi, i.method, i.n_users,
       r.n_scored, r.n_total, r.n_unparsed, r.n_failed
FROM persona_results r
LEFT JOIN intervals i
  ON i.task = r.task AND i.metric = r.metric AND i.mode IS NOT DISTINCT FROM r.mode AND i.setting = r.setting
 AND i.model = r.model AND i.fidelity IS NOT DISTINCT FROM r.fidelity AND (r.task = '3.3' OR i.parser IS NOT DISTINCT FROM r.parser)
ORDER BY r.task, r.metric, r.mode NULLS FIRST, r.setting, r.model;
