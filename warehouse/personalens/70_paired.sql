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

-- One row per resample: the weights of all users as a vector (in uid order), so that a resampled mean
-- is two dot products (list_dot_product) per comparison instead of a join over users x resamples.
CREATE OR REPLACE TABLE cluster_bootstrap_weights AS
SELECT r.rep, list(cluster_weight('plens.cluster', r.rep, u.user_id) ORDER BY u.uid) AS w
FROM cluster_users u, range(1000) r(rep) GROUP BY r.rep;

-- One row per judged dialogue and dialogue-level dimension (labels as in Table 5). TC is 0 or 100 so
-- that means and differences read as TCR in %. A table, built once with the warehouse: dialogue_scores
-- is the costly part of every view that reads it (plens tables --exclude-flagged filters this table too).
CREATE OR REPLACE TABLE paired_scores AS
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
  SELECT cid, any_value(family) AS family, any_value(test) AS test, count(*) AS n, avg(d) AS mean,
    count(*) FILTER (d < 0) AS n_down, count(*) FILTER (d > 0) AS n_up, map_entries(histogram(d)) AS dh
  FROM x GROUP BY cid
), u AS MATERIALIZED (
  SELECT x.cid, c.uid, sum(x.d) AS s, count(*) AS n FROM x JOIN cluster_users c USING (user_id) GROUP BY x.cid, c.uid
), se AS (
  SELECT u.cid, count(*) AS n_users, CASE WHEN count(*) >= 2 THEN sqrt(count(*) / (count(*) - 1.0) * sum(pow(u.s - u.n * a.mean, 2))) / sum(u.n) END AS se
  FROM u JOIN a USING (cid) GROUP BY u.cid
), dense AS (
  -- Per comparison, the users' sums and counts as vectors over all users (0 for users without pairs).
  SELECT c.cid, list(coalesce(u.s, 0)::DOUBLE ORDER BY cu.uid) AS sv, list(coalesce(u.n, 0)::DOUBLE ORDER BY cu.uid) AS nv
  FROM (SELECT DISTINCT cid FROM u) c CROSS JOIN cluster_users cu LEFT JOIN u ON u.cid = c.cid AND u.uid = cu.uid
  WHERE ps_bootstrap GROUP BY c.cid
), b AS (
  SELECT d.cid, list_dot_product(d.sv, w.w) / list_dot_product(d.nv, w.w) AS m FROM dense d CROSS JOIN cluster_bootstrap_weights w
), ci AS (
  SELECT cid, list_sort(list(m)) AS ms FROM b GROUP BY cid
), t AS (
  SELECT a.*, se.n_users, se.se,
    CASE WHEN a.test = 'mcnemar' THEN mcnemar_test(a.n_down, a.n_up) END AS mc,
    CASE WHEN a.test = 'wilcoxon' THEN wilcoxon_signed_rank(a.dh, zero_method := 'pratt') END AS wx,
    CASE WHEN se.n_users >= 2 THEN CASE WHEN ps_bootstrap THEN ci.ms[25] ELSE a.mean - z_975() * se.se END END AS lo,
    CASE WHEN se.n_users >= 2 THEN CASE WHEN ps_bootstrap THEN ci.ms[976] ELSE a.mean + z_975() * se.se END END AS hi
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

-- Pairs of cells of a run that differ in one factor (two settings of one assistant, or two assistants in
-- one setting) on the same scenarios, per task kind, for TC and P (plens compare gives all six
-- dimensions of any two cells): intervals mean +- 1.96 cluster-robust
-- se (the bootstrap over users for every pair would cost pairs x users x 1000; plens compare bootstraps
-- the pair it is asked about, and any two cells). Family for Holm / BH: the run, kind and dimension.
CREATE OR REPLACE VIEW paired_comparisons AS
WITH c AS MATERIALIZED (
  SELECT *, row_number() OVER (ORDER BY judge_model, run, assistant_model, list_position(['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'], setting), setting) AS cell
  FROM (SELECT DISTINCT judge_model, run, assistant_model, setting FROM paired_scores)
), s AS MATERIALIZED (
  SELECT c.cell, c.judge_model, c.run, c.assistant_model, c.setting, p.kind, p.scenario_id, p.user_id, p.position, p.score
  FROM paired_scores p JOIN c USING (judge_model, run, assistant_model, setting) WHERE p.replicate = 0 AND p.score IS NOT NULL AND p.position <= 2
), pairs AS MATERIALIZED (
  SELECT a.kind, a.cell AS ca, b.cell AS cb, a.position, a.user_id, a.score AS sa, b.score AS sb
  FROM s a JOIN s b ON a.run = b.run AND a.kind = b.kind AND a.scenario_id = b.scenario_id AND a.position = b.position AND a.cell < b.cell
    AND a.assistant_model = b.assistant_model
  UNION ALL
  SELECT a.kind, a.cell AS ca, b.cell AS cb, a.position, a.user_id, a.score AS sa, b.score AS sb
  FROM s a JOIN s b ON a.run = b.run AND a.kind = b.kind AND a.scenario_id = b.scenario_id AND a.position = b.position AND a.cell < b.cell
    AND a.setting = b.setting AND a.assistant_model <> b.assistant_model
), k AS MATERIALIZED (
  SELECT *, row_number() OVER (ORDER BY ca, cb, kind DESC, position) AS cid, dense_rank() OVER (ORDER BY run, kind, position) AS family
  FROM (SELECT kind, ca, cb, position, avg(sa) AS mean_a, avg(sb) AS mean_b FROM pairs GROUP BY kind, ca, cb, position) g
    JOIN (SELECT cell AS ca, run FROM c) USING (ca)
), x AS (
  SELECT k.cid, k.family, p.user_id, p.sb - p.sa AS d, CASE WHEN k.position = 1 THEN 'mcnemar' ELSE 'wilcoxon' END AS test
  FROM pairs p JOIN k USING (kind, ca, cb, position)
)
SELECT a.judge_model, a.run, k.kind, a.assistant_model || ' | ' || a.setting AS cell_a, b.assistant_model || ' | ' || b.setting AS cell_b,
  ['TC', 'P', 'Nat (U)', 'Nat (A)', 'Coh (U)', 'Coh (A)'][k.position] AS dimension, st.n, st.n_users, k.mean_a, k.mean_b,
  st.diff, st.diff_lo, st.diff_hi, st.test, st.p, st.p_holm, st.p_bh, st.mde, st.reason
FROM k JOIN paired_stats(x, ps_bootstrap := false) st USING (cid) JOIN c a ON a.cell = k.ca JOIN c b ON b.cell = k.cb
ORDER BY k.cid;

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
