-- Significance tests, multiple-comparison corrections and intervals, as pure-SQL macros. Each returns
-- a struct with a `reason`: where the statistic is undefined the value is NULL and `reason` says why
-- (never an error, never a made-up number). Checked against scipy / statsmodels in
-- test/warehouse/significance.test.ts (reference values from test/expected/significance_reference.py).
-- (Macro parameters and lambda variables have unique prefixes: DuckDB expands macros by name.)

-- erfc(t) for t >= 0, to about 1e-15: the series erf(t) = 2/sqrt(pi) e^(-t^2) sum_n t^(2n+1) 2^n / (2n+1)!!
-- (all terms positive, 120 terms, in Horner form) below 3, the continued fraction erfc(t) = e^(-t^2) / sqrt(pi) /
-- (t + (1/2) / (t + 1 / (t + (3/2) / (t + ...)))) (200 levels, evaluated backwards) from 3 on.
CREATE OR REPLACE MACRO erfc_nonnegative(ef_t) AS
  CASE WHEN ef_t < 3
    -- Horner form of the series: sum_n a_n = t (1 + r_1 (1 + r_2 (1 + ...))), r_n = 2 t^2 / (2n + 1).
    THEN 1 - 2 / sqrt(pi()) * exp(-ef_t * ef_t) * ef_t
           * list_reduce(list_reverse(range(1, 121)), (ef_h, ef_k) -> 1 + 2 * ef_t * ef_t / (2 * ef_k + 1) * ef_h, 1.0::DOUBLE)
    ELSE exp(-ef_t * ef_t) / sqrt(pi()) / list_reduce(list_reverse(range(1, 201)), (ef_f, ef_k) -> ef_t + (ef_k / 2) / ef_f, ef_t::DOUBLE)
  END;

-- Upper tail of the standard normal, P(Z > x).
CREATE OR REPLACE MACRO normal_sf(ns_x) AS
  CASE WHEN ns_x >= 0 THEN erfc_nonnegative(ns_x / sqrt(2)) / 2 ELSE 1 - erfc_nonnegative(-ns_x / sqrt(2)) / 2 END;

-- z quantiles used below: z_0.975 = 1.9599639845400545 (two-sided 5%), z_0.8 = 0.8416212335729143 (80% power).
CREATE OR REPLACE MACRO z_975() AS 1.9599639845400545;
CREATE OR REPLACE MACRO z_80() AS 0.8416212335729143;

-- Binomial(n, 1/2) probability of k, from log-gamma (relative error about 1e-12 for n up to 10^4).
CREATE OR REPLACE MACRO binom_half_pmf(bp_k, bp_n) AS
  exp(lgamma(bp_n + 1) - lgamma(bp_k + 1) - lgamma(bp_n - bp_k + 1) - bp_n * ln(2));

-- McNemar's test for paired binary outcomes, from the discordant counts: b pairs went 1 -> 0, c pairs
-- 0 -> 1. Exact: p = min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2) (statsmodels mcnemar(exact=True),
-- scipy binomtest(b, b + c)); mid-p: 2 P(X <= min(b, c)) - P(X = min(b, c)) (Fagerland et al. 2013).
-- No discordant pairs: p = 1 (statsmodels' value; nothing contradicts the null), with the reason said.
CREATE OR REPLACE MACRO mcnemar_test(mc_b, mc_c) AS
  list_transform([{'b': mc_b::BIGINT, 'c': mc_c::BIGINT}], mc_s ->
    CASE WHEN mc_s.b IS NULL OR mc_s.c IS NULL OR mc_s.b < 0 OR mc_s.c < 0
      THEN {'n_discordant': NULL::BIGINT, 'b': mc_s.b, 'c': mc_s.c, 'p_exact': NULL::DOUBLE, 'p_mid': NULL::DOUBLE, 'reason': 'discordant counts must be non-negative integers'}
    ELSE list_transform([list_transform(range(0, least(mc_s.b, mc_s.c) + 1), mc_i -> binom_half_pmf(mc_i, mc_s.b + mc_s.c))], mc_pmf -> {
      'n_discordant': mc_s.b + mc_s.c, 'b': mc_s.b, 'c': mc_s.c,
      'p_exact': least(1.0, 2 * list_sum(mc_pmf))::DOUBLE,
      'p_mid': least(1.0, 2 * list_sum(mc_pmf) - mc_pmf[-1])::DOUBLE,
      'reason': CASE WHEN mc_s.b + mc_s.c = 0 THEN 'no discordant pairs: p = 1' END::VARCHAR})[1]
    END)[1];

-- Number of ways to reach each sum 0 .. n(n+1)/2 with distinct ranks 1..n: the exact null distribution of
-- the signed-rank statistic (counts; 2^50 still fits a double exactly).
CREATE OR REPLACE MACRO signed_rank_counts(sr_n) AS
  -- (list_reduce needs its state and the list's elements of one type: each rank k comes as [k].)
  list_reduce(list_transform(range(1, sr_n + 1), sr_k -> [sr_k::DOUBLE]), (sr_acc, sr_k) -> list_transform(range(0, (len(sr_acc) + sr_k[1])::BIGINT), sr_w ->
    coalesce(sr_acc[sr_w + 1], 0) + coalesce(CASE WHEN sr_w >= sr_k[1] THEN sr_acc[(sr_w - sr_k[1] + 1)::BIGINT] END, 0)), [1.0::DOUBLE]);

-- Wilcoxon signed-rank test, two-sided, on a histogram of paired differences (map_entries(histogram(d)):
-- a list of {key: d, value: count}), as scipy.stats.wilcoxon(d, zero_method=..., correction=False):
--   zero_method 'wilcox': zero differences are dropped; 'pratt': ranked with the others, then their ranks
--   dropped (Cureton's correction of the mean and variance); 'zsplit': ranked, their rank sum split
--   between the positive and negative sides.
--   Tied |d| get the mean of their ranks. statistic = min(R+, R-).
--   method 'exact' (the exact null distribution, p = min(1, 2 P(W <= statistic))) when there are no zero
--   differences, no ties and at most 50 differences (scipy 'auto' also goes exact with ties below 51;
--   its exact distribution ignores ties, so plens uses the normal approximation there); otherwise
--   'normal': z = (statistic - n(n+1)/4) / sqrt(n(n+1)(2n+1)/24 - sum(t^3 - t)/48), the tie correction
--   over groups of t tied |d| (for 'pratt' without the zeros' group and with the zeros' share of the
--   mean and variance removed), no continuity correction; p = 2 P(Z > |z|).
-- Cost: O(K^2) in the number K of distinct differences (scores are discrete: K is small).
CREATE OR REPLACE MACRO wilcoxon_signed_rank_result(wr_s, wr_zero_method) AS
  list_transform([{
      's': wr_s,
      -- Distinct |d| in order, with their counts (all signs) and the counts of positive / negative d.
      'g': list_transform(list_sort(list_distinct(list_transform(wr_s.entries, wr_e -> abs(wr_e.key)))), wr_v -> {
          'v': wr_v,
          't': list_sum(list_transform(list_filter(wr_s.entries, wr_e -> abs(wr_e.key) = wr_v), wr_e -> wr_e.value)),
          'pos': coalesce(list_sum(list_transform(list_filter(wr_s.entries, wr_e -> wr_e.key = wr_v AND wr_v > 0), wr_e -> wr_e.value)), 0),
          'neg': coalesce(list_sum(list_transform(list_filter(wr_s.entries, wr_e -> wr_e.key = -wr_v AND wr_v > 0), wr_e -> wr_e.value)), 0)})
    }], wr_u -> list_transform([list_transform(wr_u.g, (wr_x, wr_i) -> {
        'v': wr_x.v, 't': wr_x.t, 'pos': wr_x.pos, 'neg': wr_x.neg,
        'rank': coalesce(list_sum(list_transform(wr_u.g[1:wr_i - 1], wr_y -> wr_y.t)), 0) + (wr_x.t + 1) / 2.0})], wr_r ->
      list_transform([{
          'n': wr_s.n, 'n0': wr_s.n0,
          'rp': coalesce(list_sum(list_transform(wr_r, wr_x -> wr_x.rank * wr_x.pos)), 0)
                + CASE WHEN wr_zero_method = 'zsplit' THEN coalesce(list_sum(list_transform(list_filter(wr_r, wr_x -> wr_x.v = 0), wr_x -> wr_x.rank * wr_x.t)), 0) / 2 ELSE 0 END,
          'rm': coalesce(list_sum(list_transform(wr_r, wr_x -> wr_x.rank * wr_x.neg)), 0)
                + CASE WHEN wr_zero_method = 'zsplit' THEN coalesce(list_sum(list_transform(list_filter(wr_r, wr_x -> wr_x.v = 0), wr_x -> wr_x.rank * wr_x.t)), 0) / 2 ELSE 0 END,
          'ties': coalesce(list_sum(list_transform(list_filter(wr_r, wr_x -> NOT (wr_zero_method = 'pratt' AND wr_x.v = 0)),
                    wr_x -> wr_x.t::DOUBLE * wr_x.t * wr_x.t - wr_x.t)), 0),
          'exact': wr_s.n0_input = 0 AND wr_s.n <= 50 AND len(list_filter(wr_r, wr_x -> wr_x.t > 1)) = 0
        }], wr_w -> list_transform([{
            'w': wr_w, 'stat': least(wr_w.rp, wr_w.rm),
            'mn': wr_w.n * (wr_w.n + 1) / 4.0 - CASE WHEN wr_zero_method = 'pratt' THEN wr_w.n0 * (wr_w.n0 + 1) / 4.0 ELSE 0 END,
            'var': (wr_w.n::DOUBLE * (wr_w.n + 1) * (2 * wr_w.n + 1) - CASE WHEN wr_zero_method = 'pratt' THEN wr_w.n0::DOUBLE * (wr_w.n0 + 1) * (2 * wr_w.n0 + 1) ELSE 0 END
                    - wr_w.ties / 2) / 24
          }], wr_z -> list_transform([
            CASE
              WHEN wr_zero_method IS NULL OR wr_zero_method NOT IN ('wilcox', 'pratt', 'zsplit') THEN 'unknown zero_method: ' || coalesce(wr_zero_method, 'NULL') || ' (use wilcox, pratt or zsplit)'
              WHEN wr_s.n_input = 0 THEN 'no differences'
              WHEN wr_zero_method <> 'zsplit' AND wr_s.n_input = wr_s.n0_input THEN 'every difference is zero: no signed ranks (' || wr_zero_method || ')'
              WHEN NOT wr_w.exact AND wr_z.var <= 0 THEN 'zero variance: test undefined'
            END], wr_reason -> {
              'n': wr_w.n::BIGINT, 'n_zero': wr_s.n0_input::BIGINT,
              'statistic': CASE WHEN wr_reason IS NULL THEN wr_z.stat END::DOUBLE,
              'r_plus': CASE WHEN wr_reason IS NULL THEN wr_w.rp END::DOUBLE,
              'r_minus': CASE WHEN wr_reason IS NULL THEN wr_w.rm END::DOUBLE,
              'z': CASE WHEN wr_reason IS NULL AND NOT wr_w.exact THEN (wr_z.stat - wr_z.mn) / sqrt(wr_z.var) END::DOUBLE,
              'p': CASE WHEN wr_reason IS NULL THEN
                     CASE WHEN wr_w.exact
                       THEN least(1.0, 2 * list_transform([signed_rank_counts(wr_w.n)], wr_c -> list_sum(wr_c[1:wr_z.stat::BIGINT + 1]) / pow(2, wr_w.n))[1])
                       ELSE least(1.0, 2 * normal_sf(abs((wr_z.stat - wr_z.mn) / sqrt(wr_z.var)))) END
                   END::DOUBLE,
              'method': CASE WHEN wr_reason IS NULL THEN CASE WHEN wr_w.exact THEN 'exact' ELSE 'normal' END END::VARCHAR,
              'reason': wr_reason::VARCHAR
            })[1])[1])[1])[1])[1];

CREATE OR REPLACE MACRO wilcoxon_signed_rank(differences, zero_method := 'wilcox') AS
  list_transform([coalesce(list_filter(differences, ws_e -> ws_e.key IS NOT NULL), [])], ws_all ->
    list_transform([list_filter(ws_all, ws_e -> zero_method IN ('pratt', 'zsplit') OR ws_e.key <> 0)], ws_kept ->
      wilcoxon_signed_rank_result({
        'entries': ws_kept,
        'n_input': coalesce(list_sum(list_transform(ws_all, ws_e -> ws_e.value::BIGINT)), 0)::BIGINT,
        'n0_input': coalesce(list_sum(list_transform(list_filter(ws_all, ws_e -> ws_e.key = 0), ws_e -> ws_e.value::BIGINT)), 0)::BIGINT,
        'n': coalesce(list_sum(list_transform(ws_kept, ws_e -> ws_e.value::BIGINT)), 0)::BIGINT,
        'n0': coalesce(list_sum(list_transform(list_filter(ws_kept, ws_e -> ws_e.key = 0), ws_e -> ws_e.value::BIGINT)), 0)::BIGINT
      }, zero_method))[1])[1];

-- The same from a plain list of differences.
CREATE OR REPLACE MACRO wilcoxon_signed_rank_list(diffs, zero_method := 'wilcox') AS
  wilcoxon_signed_rank(map_entries(list_aggregate(list_filter(diffs, wl_d -> wl_d IS NOT NULL), 'histogram')), zero_method := zero_method);

-- Adjusted p-values of a family of tests, in the order given (NULL p-values are left out of the family
-- and stay NULL). Holm: sorted p_(1) <= ... <= p_(m), adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j));
-- Benjamini-Hochberg: adj_(i) = min_{j >= i} min(1, m p_(j) / j) (statsmodels multipletests 'holm',
-- 'fdr_bh'); Bonferroni: min(1, m p). method is 'holm', 'bh' (or statsmodels' 'fdr_bh') or
-- 'bonferroni', in any case; any other is an error, never a list of NULLs. O(m^2): meant for the
-- cells of a table.
CREATE OR REPLACE MACRO p_adjust(pvalues, method := 'holm') AS
  list_transform([list_sort(list_filter(pvalues, pa_p -> pa_p IS NOT NULL))], pa_s ->
    list_transform([CASE lower(method)
        WHEN 'holm' THEN list_transform(pa_s, (pa_p, pa_i) -> least(1.0, list_max(list_transform(pa_s[1:pa_i], (pa_q, pa_j) -> (len(pa_s) - pa_j + 1) * pa_q))))
        WHEN 'bh' THEN list_transform(pa_s, (pa_p, pa_i) -> least(1.0, list_min(list_transform(pa_s[pa_i:], (pa_q, pa_j) -> len(pa_s) * pa_q / (pa_i + pa_j - 1)))))
        WHEN 'fdr_bh' THEN list_transform(pa_s, (pa_p, pa_i) -> least(1.0, list_min(list_transform(pa_s[pa_i:], (pa_q, pa_j) -> len(pa_s) * pa_q / (pa_i + pa_j - 1)))))
        WHEN 'bonferroni' THEN list_transform(pa_s, pa_p -> least(1.0, len(pa_s) * pa_p))
        ELSE error('p_adjust: unknown method ''' || coalesce(method, 'NULL') || '''; use holm, bh (statsmodels: fdr_bh) or bonferroni')::DOUBLE[]
      END], pa_adj -> list_transform(pvalues, pa_p ->
        CASE WHEN pa_p IS NOT NULL THEN pa_adj[list_position(pa_s, pa_p)] END::DOUBLE))[1])[1];

-- Wilson score interval (95%) for x successes of n (statsmodels proportion_confint(method='wilson')).
CREATE OR REPLACE MACRO wilson_ci95(wi_x, wi_n) AS
  CASE WHEN wi_n IS NULL OR wi_n <= 0 OR wi_x IS NULL OR wi_x < 0 OR wi_x > wi_n
    THEN {'lo': NULL::DOUBLE, 'hi': NULL::DOUBLE, 'reason': CASE WHEN coalesce(wi_n, 0) <= 0 THEN 'no observations' ELSE 'successes outside 0..n' END}
    ELSE list_transform([{'p': wi_x / wi_n::DOUBLE, 'z2': z_975() * z_975(), 'n': wi_n::DOUBLE}], wi_s -> list_transform([{
        'center': (wi_s.p + wi_s.z2 / (2 * wi_s.n)) / (1 + wi_s.z2 / wi_s.n),
        'dist': z_975() * sqrt(wi_s.p * (1 - wi_s.p) / wi_s.n + wi_s.z2 / (4 * wi_s.n * wi_s.n)) / (1 + wi_s.z2 / wi_s.n)}], wi_c ->
      {'lo': greatest(0.0, wi_c.center - wi_c.dist), 'hi': least(1.0, wi_c.center + wi_c.dist), 'reason': NULL::VARCHAR})[1])[1]
  END;

-- Minimum detectable effect of a two-sided 5% test at 80% power, from the standard error of the
-- estimate at hand: MDE = (z_0.975 + z_0.8) se = 2.8015852 se (normal approximation).
CREATE OR REPLACE MACRO mde80(md_se) AS (z_975() + z_80()) * md_se;

-- Paired mean difference with user clusters: clusters is a list of {cluster, sum, n} (one per user: the
-- sum of that user's differences and how many there are). Returns {n, n_clusters, mean, se, lo, hi, mde,
-- reason}: mean = sum / n; se the cluster-robust standard error
--   se = sqrt(G / (G - 1) * sum_g (sum_g - n_g mean)^2) / n
-- (with one scenario per user this is the paired-t s / sqrt(n)); mde = mde80(se); lo, hi the 25th and
-- 976th of 1000 seeded Bayesian-bootstrap means over users: weights w_g ~ Exp(1) (the Dirichlet(1..1)
-- of Rubin 1981) drawn as -ln(key_uniform(resample_key(seed, rep), hash(cluster))), mean_rep = sum w_g sum_g / sum w_g n_g.
-- NULL below 2 clusters. Cost 1000 x G per call (the views share one weight table instead).
CREATE OR REPLACE MACRO cluster_weight(cw_seed, cw_rep, cw_cluster) AS -ln(key_uniform(resample_key(cw_seed, cw_rep), hash(cw_cluster)));

CREATE OR REPLACE MACRO paired_cluster_mean(clusters, seed := 'plens') AS
  list_transform([coalesce(list_filter(clusters, pc_c -> pc_c.n > 0), [])], pc_g -> list_transform([{
      'n': coalesce(list_sum(list_transform(pc_g, pc_c -> pc_c.n)), 0)::BIGINT,
      'g': len(pc_g)::BIGINT,
      'mean': list_sum(list_transform(pc_g, pc_c -> pc_c.sum)) / list_sum(list_transform(pc_g, pc_c -> pc_c.n))}], pc_s ->
    list_transform([CASE WHEN pc_s.g >= 2 THEN
        sqrt(pc_s.g / (pc_s.g - 1.0) * list_sum(list_transform(pc_g, pc_c -> pow(pc_c.sum - pc_c.n * pc_s.mean, 2)))) / pc_s.n END], pc_se ->
      list_transform([CASE WHEN pc_s.g >= 2 THEN list_sort(list_transform(range(1000), pc_r ->
          list_sum(list_transform(pc_g, pc_c -> cluster_weight(seed, pc_r, pc_c.cluster) * pc_c.sum))
          / list_sum(list_transform(pc_g, pc_c -> cluster_weight(seed, pc_r, pc_c.cluster) * pc_c.n)))) END], pc_b -> {
        'n': pc_s.n, 'n_clusters': pc_s.g, 'mean': pc_s.mean::DOUBLE, 'se': pc_se::DOUBLE,
        'lo': pc_b[25]::DOUBLE, 'hi': pc_b[976]::DOUBLE, 'mde': mde80(pc_se)::DOUBLE,
        'reason': CASE WHEN pc_s.n = 0 THEN 'no pairs' WHEN pc_s.g < 2 THEN 'fewer than 2 users: no clustered interval' END::VARCHAR
      })[1])[1])[1])[1];
