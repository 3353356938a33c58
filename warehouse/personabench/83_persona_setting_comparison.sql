-- PERSONA-bench settings compared on the same targets: P-Conv vs P-NonConv vs NP-Conv, per model,
-- task and metric. Pairs join on the target reply (`target`: target_reply_id without the `task_`
-- prefix 3.1 NP-Conv gives its ids; sample_id when a row has no target id), never on sample_id,
-- which names the setting. 3.1/3.2 share their targets across settings; 3.3 NP-Conv names its
-- targets by post index (`orig_idx{n}`), so it pairs with nothing and only P-Conv vs P-NonConv
-- is compared for 3.3.
-- Per-sample values: 3.1 correctness (1/0), 3.2 absolute error |predicted - true|, 3.3 each
-- generation score, best-of-n (max over replicates) and single-sample (replicate with the lowest
-- number). A failed or unparsed prediction is never a value: its pair is dropped.
-- Difference = setting_a - setting_b; interval: paired_cluster_mean (bootstrap over users, fixed seed).
CREATE OR REPLACE VIEW persona_sample_values AS
WITH last AS (
  SELECT *, coalesce(regexp_replace(target_reply_id, '^task_', ''), sample_id) AS target
  FROM persona_predictions QUALIFY row_number() OVER (PARTITION BY "key" ORDER BY try DESC) = 1
), cls AS (
  SELECT model, task, setting, fidelity, sample_id, target, "user", NULL::VARCHAR AS mode,
         CASE task WHEN '3.1' THEN 'correct' ELSE 'abs_error' END AS metric,
         avg(CASE task WHEN '3.1' THEN (predicted = true_label)::INT::DOUBLE ELSE abs(predicted_number - true_number) END) AS value
  FROM last WHERE status = 'ok' AND task IN ('3.1', '3.2') GROUP BY ALL
), gen AS (
  UNPIVOT (SELECT s.model, s.task, s.setting, s.fidelity, s.sample_id, coalesce(l.target, s.sample_id) AS target, s."user", s.replicate,
                  s.rouge1, s.rouge_l, s.bleu, s.meteor, s.sbert
           FROM persona_sample_scores s LEFT JOIN last l ON l."key" = s."key")
  ON rouge1, rouge_l, bleu, meteor, sbert INTO NAME metric VALUE score
)
SELECT * FROM cls
UNION ALL
SELECT model, task, setting, fidelity, sample_id, target, "user", 'best-of-n', metric, max(score) FROM gen GROUP BY ALL
UNION ALL
SELECT model, task, setting, fidelity, sample_id, target, "user", 'single-sample', metric, arg_min(score, replicate) FROM gen GROUP BY ALL;

-- The README's order: P-Conv, then P-NonConv, then NP-Conv (setting_a is the earlier one).
CREATE OR REPLACE MACRO persona_setting_rank(psr_s) AS CASE psr_s WHEN 'P-Conv' THEN 1 WHEN 'P-NonConv' THEN 2 WHEN 'NP-Conv' THEN 3 ELSE 4 END;

CREATE OR REPLACE VIEW persona_setting_comparison AS
WITH pairs AS (
  SELECT a.model, a.task, a.metric, a.mode, a.fidelity, a.setting AS setting_a, b.setting AS setting_b,
         a."user", a.value - b.value AS d
  FROM persona_sample_values a
  JOIN persona_sample_values b
    ON a.model = b.model AND a.task = b.task AND a.metric = b.metric AND a.mode IS NOT DISTINCT FROM b.mode
   AND a.fidelity IS NOT DISTINCT FROM b.fidelity AND a.target = b.target
   AND persona_setting_rank(a.setting) < persona_setting_rank(b.setting)
  WHERE a.value IS NOT NULL AND b.value IS NOT NULL
), users AS (
  SELECT model, task, metric, mode, fidelity, setting_a, setting_b, "user", sum(d) AS s, count(*) AS n FROM pairs GROUP BY ALL
), cells AS (
  SELECT model, task, metric, mode, fidelity, setting_a, setting_b,
         paired_cluster_mean(list({'cluster': "user", 'sum': s, 'n': n} ORDER BY "user"), seed := 'plens.persona') AS r
  FROM users GROUP BY ALL
)
SELECT task, metric, mode, model, fidelity, setting_a, setting_b, r.n AS n_pairs, r.n_clusters AS n_users,
       r.mean AS mean_difference, r.lo, r.hi, r.reason
FROM cells ORDER BY task, metric, mode NULLS FIRST, model, setting_a, setting_b;
