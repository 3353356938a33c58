-- Paired comparisons and the personalization lift (Table 4's headline as a result with its uncertainty).
-- Two cells are compared on the scenarios both scored (first replicate), dimension by dimension:
--   difference = mean over pairs of (b - a) (TC in percentage points, the others in score points);
--   interval   = seeded Bayesian bootstrap over users (scenarios are nested in users: a user's pairs
--                move together), the 25th and 976th of 1000 resampled means (paired_lift, plens compare),
--                or mean +- 1.96 cluster-robust se (paired_comparisons, which covers every pair of cells);
--   test       = McNemar's exact test for TC, Wilcoxon signed-rank (zero_method 'pratt': a tie between
--                the two cells is ranked, then dropped) for P and the Likert dimensions; both treat the
--                pairs as independent;
--   p_holm, p_bh = Holm and Benjamini-Hochberg over the family the view names;
--   mde        = smallest difference a two-sided 5% test detects with 80% power: 2.80 x cluster-robust se.
-- Macros from 03_significance.sql.
-- requires: dialogue_scores, dialogues

-- Users as integers, and 1000 Exp(1) weights per user: the same resampled users for every comparison
-- (weight = cluster_weight('plens.cluster', rep, user), so paired_cluster_mean(..., seed := 'plens.cluster')
-- gives the same interval for one comparison).
CREATE OR REPLACE TABLE cluster_users AS
SELECT user_id, row_number() OVER (ORDER BY user_id) AS uid
FROM (SELECT DISTINCT coalesce(user_id, scenario_id) AS user_id FROM dialogues);

CREATE OR REPLACE TABLE cluster_bootstrap_weights AS
SELECT u.uid, r.rep, cluster_weight('plens.cluster', r.rep, u.user_id) AS w
FROM cluster_users u, range(1000) r(rep);

-- One row per judged dialogue and dialogue-level dimension (labels as in Table 5). TC is 0 or 100 so
-- that means and differences read as TCR in %.
CREATE OR REPLACE VIEW paired_scores AS
SELECT s.judge_model, s.judge_config, s.dialogue_config, s.run, s.dialogue_id, s.scenario_id, coalesce(d.user_id, s.scenario_id) AS user_id,
  s.kind, s.setting, s.assistant_model, s.user_model, s.replicate, s.relevant_domains, x.position, x.dimension, x.score
FROM dialogue_scores s JOIN dialogues d USING (dialogue_id),
  LATERAL (VALUES (1, 'TC', 100.0 * s.tc), (2, 'P', s.p::DOUBLE), (3, 'Nat (U)', s.nat_u::DOUBLE), (4, 'Nat (A)', s.nat_a::DOUBLE),
                  (5, 'Coh (U)', s.coh_u::DOUBLE), (6, 'Coh (A)', s.coh_a::DOUBLE)) x(position, dimension, score);

-- The statistics of paired differences. Input (a table, view or CTE name) with columns cid (one id per
-- comparison), family (comparisons corrected together), user_id, d (b - a), test ('mcnemar' or
-- 'wilcoxon'). One row per cid.
CREATE OR REPLACE MACRO paired_stats(ps_tbl, ps_bootstrap := true) AS TABLE
WITH x AS MATERIALIZED (SELECT cid, family, user_id, d, test FROM query_table(ps_tbl) WHERE d IS NOT NULL),
a AS MATERIALIZED (
  SELECT cid, any_value(family) AS family, any_value(test) AS test, count(*) AS n, count(DISTINCT user_id) AS n_users, avg(d) AS mean,
    count(*) FILTER (d < 0) AS n_down, count(*) FILTER (d > 0) AS n_up, map_entries(histogram(d)) AS dh
  FROM x GROUP BY cid
), u AS MATERIALIZED (
  SELECT x.cid, c.uid, sum(x.d) AS s, count(*) AS n FROM x JOIN cluster_users c USING (user_id) GROUP BY x.cid, c.uid
), se AS (
  SELECT u.cid, CASE WHEN count(*) >= 2 THEN sqrt(count(*) / (count(*) - 1.0) * sum(pow(u.s - u.n * a.mean, 2))) / sum(u.n) END AS se
  FROM u JOIN a USING (cid) GROUP BY u.cid
), b AS (
  SELECT u.cid, w.rep, sum(w.w * u.s) / sum(w.w * u.n) AS m
  FROM u JOIN cluster_bootstrap_weights w USING (uid) WHERE ps_bootstrap GROUP BY u.cid, w.rep
), ci AS (
  SELECT cid, list_sort(list(m)) AS ms FROM b GROUP BY cid
), t AS (
  SELECT a.*, se.se,
    CASE WHEN a.test = 'mcnemar' THEN mcnemar_test(a.n_down, a.n_up) END AS mc,
    CASE WHEN a.test = 'wilcoxon' THEN wilcoxon_signed_rank(a.dh, zero_method := 'pratt') END AS wx,
    CASE WHEN a.n_users >= 2 THEN CASE WHEN ps_bootstrap THEN ci.ms[25] ELSE a.mean - z_975() * se.se END END AS lo,
    CASE WHEN a.n_users >= 2 THEN CASE WHEN ps_bootstrap THEN ci.ms[976] ELSE a.mean + z_975() * se.se END END AS hi
  FROM a LEFT JOIN se USING (cid) LEFT JOIN ci USING (cid)
), tp AS (
  SELECT *, CASE test WHEN 'mcnemar' THEN mc.p_exact ELSE wx.p END AS p FROM t
), fam AS (
  SELECT list(cid ORDER BY cid) AS cids, list(p ORDER BY cid) AS ps FROM tp GROUP BY family
), adj AS (
  SELECT unnest(cids) AS cid, unnest(p_adjust(ps, method := 'holm')) AS p_holm, unnest(p_adjust(ps, method := 'bh')) AS p_bh FROM fam
)
SELECT tp.cid, tp.n, tp.n_users, tp.mean AS diff, tp.lo AS diff_lo, tp.hi AS diff_hi, tp.se,
  CASE tp.test WHEN 'mcnemar' THEN 'McNemar exact' ELSE 'Wilcoxon signed-rank (pratt)' END AS test,
  tp.p, tp.mc.p_mid AS p_mid, adj.p_holm, adj.p_bh, mde80(tp.se) AS mde,
  tp.n_up, tp.n_down,
  nullif(concat_ws('; ', CASE WHEN tp.n_users < 2 THEN 'fewer than 2 users: no interval' END, tp.mc.reason, tp.wx.reason), '') AS reason
FROM tp JOIN adj USING (cid);

-- Every pair of cells (assistant | setting) of a run on the same scenarios, per task kind and dimension:
-- intervals mean +- 1.96 cluster-robust se (the bootstrap over users for all pairs would cost
-- cells^2 x users x 1000; plens compare bootstraps the pair it is asked about). Family for Holm / BH:
-- the run, kind and dimension.
CREATE OR REPLACE VIEW paired_comparisons AS
WITH s AS MATERIALIZED (
  SELECT judge_model, run, kind, scenario_id, user_id, assistant_model || ' | ' || setting AS cell, position, dimension, score
  FROM paired_scores WHERE replicate = 0 AND score IS NOT NULL
), pairs AS MATERIALIZED (
  SELECT a.judge_model, a.run, a.kind, a.cell AS cell_a, b.cell AS cell_b, a.position, a.dimension, a.user_id, a.score AS sa, b.score AS sb
  FROM s a JOIN s b ON a.run = b.run AND a.kind = b.kind AND a.scenario_id = b.scenario_id AND a.dimension = b.dimension AND a.cell < b.cell
), k AS MATERIALIZED (
  SELECT *, row_number() OVER (ORDER BY judge_model, run, kind, cell_a, cell_b, position) AS cid
  FROM (SELECT judge_model, run, kind, cell_a, cell_b, position, dimension, avg(sa) AS mean_a, avg(sb) AS mean_b FROM pairs GROUP BY ALL)
), x AS (
  SELECT k.cid, concat_ws(' | ', k.judge_model, k.run, k.kind, k.dimension) AS family, p.user_id, p.sb - p.sa AS d,
    CASE WHEN k.dimension = 'TC' THEN 'mcnemar' ELSE 'wilcoxon' END AS test
  FROM pairs p JOIN k USING (judge_model, run, kind, cell_a, cell_b, dimension)
)
SELECT k.judge_model, k.run, k.kind, k.cell_a, k.cell_b, k.dimension, st.n, st.n_users, k.mean_a, k.mean_b,
  st.diff, st.diff_lo, st.diff_hi, st.test, st.p, st.p_holm, st.p_bh, st.mde, st.reason
FROM k JOIN paired_stats(x, ps_bootstrap := false) st USING (cid)
ORDER BY k.judge_model, k.run, k.kind DESC, k.cell_a, k.cell_b, k.position;

-- The personalization lift: per assistant, each context block (base+d, base+i, base+s, base+all) against
-- Base on the same scenarios, for TC (points) and P, overall ('all'), per task kind and per domain (an
-- MD scenario counts towards each of its domains). Intervals: clustered bootstrap over users. Family for
-- Holm / BH: the run, dimension and breakdown (scope_type), i.e. the cells of one table.
CREATE OR REPLACE VIEW paired_lift AS
WITH s AS MATERIALIZED (
  SELECT judge_model, run, assistant_model, setting, kind, scenario_id, user_id, relevant_domains, position, dimension, score
  FROM paired_scores WHERE replicate = 0 AND position <= 2 AND score IS NOT NULL AND setting IN ('base', 'base+d', 'base+i', 'base+s', 'base+all')
), pairs AS MATERIALIZED (
  SELECT b.judge_model, b.run, b.assistant_model, x.setting AS block, b.kind, b.relevant_domains, b.position, b.dimension, b.user_id,
    b.score AS base, x.score AS with_block
  FROM s b JOIN s x ON b.setting = 'base' AND x.setting <> 'base' AND x.run = b.run AND x.assistant_model = b.assistant_model
    AND x.scenario_id = b.scenario_id AND x.position = b.position
), scoped AS MATERIALIZED (
  SELECT * EXCLUDE (relevant_domains), 'all' AS scope_type, 'all' AS scope FROM pairs
  UNION ALL SELECT * EXCLUDE (relevant_domains), 'kind', kind FROM pairs
  UNION ALL SELECT * EXCLUDE (relevant_domains), 'domain', unnest(relevant_domains) FROM pairs
), k AS MATERIALIZED (
  SELECT *, row_number() OVER (ORDER BY judge_model, run, assistant_model, block, position, scope_type, scope) AS cid
  FROM (SELECT judge_model, run, assistant_model, block, position, dimension, scope_type, scope, avg(base) AS base, avg(with_block) AS with_block
        FROM scoped GROUP BY ALL)
), x AS (
  SELECT k.cid, concat_ws(' | ', k.judge_model, k.run, k.dimension, k.scope_type) AS family, s.user_id, s.with_block - s.base AS d,
    CASE WHEN k.dimension = 'TC' THEN 'mcnemar' ELSE 'wilcoxon' END AS test
  FROM scoped s JOIN k USING (judge_model, run, assistant_model, block, position, scope_type, scope)
)
SELECT k.judge_model, k.run, k.assistant_model, k.block, k.dimension, k.scope_type, k.scope, st.n, st.n_users,
  k.base, k.with_block, st.diff AS lift, st.diff_lo AS lift_lo, st.diff_hi AS lift_hi, st.test, st.p, st.p_holm, st.p_bh, st.mde, st.reason
FROM k JOIN paired_stats(x) st USING (cid)
ORDER BY k.judge_model, k.run, k.assistant_model, list_position(['base+d', 'base+i', 'base+s', 'base+all'], k.block), k.position,
  list_position(['all', 'kind', 'domain'], k.scope_type), list_position(['SD', 'MD'], k.scope), k.scope;
