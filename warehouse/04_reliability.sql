-- Reliability of ratings and judge-corrected estimates, as pure-SQL macros (struct results with a
-- `reason` where undefined, as in 01_agreement.sql). Checked in test/warehouse/reliability.test.ts.

-- Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"), from the
-- coincidence counts: with n_c the pairable values of category c, n = sum n_c, and unit u holding m_u >= 2
-- values of which h_uc are c,
--   D_o = sum_u 1 / (m_u - 1) sum_c sum_k h_uc h_uk delta2(c, k),  D_e = sum_c sum_k n_c n_k delta2(c, k),
--   alpha = 1 - (n - 1) D_o / D_e,
-- delta2 nominal: [c <> k]; interval: (c - k)^2; ordinal: (sum_{g from c to k} n_g - (n_c + n_k) / 2)^2.
-- Internal form: per-unit vectors that do not depend on the units' weights w (all 1 for alpha itself,
-- bootstrap weights for its interval), so that each weighting costs dot products (list_dot_product):
--   m_u (values in the unit), h_c = (h_uc)_u per category, g_ck = (h_uc h_uk / (m_u - 1))_u per pair;
--   n_c = w . h_c, n = w . m, D_o = sum_ck (w . g_ck) delta2(c, k), D_e = sum_ck n_c n_k delta2(c, k).
CREATE OR REPLACE MACRO krippendorff_vectors(kv_units, kv_k) AS {
  'm': list_transform(kv_units, kv_u -> list_sum(list_transform(kv_u, kv_e -> kv_e.c))),
  'h': list_transform(range(1, kv_k + 1), kv_i -> list_transform(kv_units, kv_u ->
         coalesce(list_sum(list_transform(list_filter(kv_u, kv_e -> kv_e.i = kv_i), kv_e -> kv_e.c)), 0.0))),
  'g': list_transform(range(1, kv_k + 1), kv_i -> list_transform(range(1, kv_k + 1), kv_j -> list_transform(kv_units, kv_u ->
         coalesce(list_sum(list_transform(list_filter(kv_u, kv_e -> kv_e.i = kv_i), kv_e -> kv_e.c)), 0.0)
         * coalesce(list_sum(list_transform(list_filter(kv_u, kv_e -> kv_e.i = kv_j), kv_e -> kv_e.c)), 0.0)
         / (list_sum(list_transform(kv_u, kv_e -> kv_e.c)) - 1))))
};

-- Alpha from the vectors kc_v and the units' weights kc_w (kc_w an expression: bound once).
CREATE OR REPLACE MACRO krippendorff_core(kc_v, kc_w, kc_level, kc_vals) AS
  list_transform([kc_w::DOUBLE[]], kc_ww -> list_transform([{
      'ns': list_transform(kc_v.h, kc_h -> list_dot_product(kc_h, kc_ww)),
      'p': list_transform(kc_v.g, kc_gr -> list_transform(kc_gr, kc_g -> list_dot_product(kc_g, kc_ww)))}], kc_t ->
    list_transform([list_transform(range(1, len(kc_vals) + 1), kc_i -> list_transform(range(1, len(kc_vals) + 1), kc_j ->
        CASE kc_level
          WHEN 'nominal' THEN (kc_i <> kc_j)::DOUBLE
          WHEN 'interval' THEN pow(kc_vals[kc_i] - kc_vals[kc_j], 2)::DOUBLE
          WHEN 'ordinal' THEN CASE WHEN kc_i = kc_j THEN 0.0 ELSE pow(list_sum(kc_t.ns[least(kc_i, kc_j):greatest(kc_i, kc_j)]) - (kc_t.ns[kc_i] + kc_t.ns[kc_j]) / 2, 2) END
        END))], kc_d -> list_transform([{
        'n': list_sum(kc_t.ns),
        'do': list_sum(list_transform(range(1, len(kc_vals) + 1), kc_i -> list_sum(list_transform(range(1, len(kc_vals) + 1), kc_j ->
                kc_t.p[kc_i][kc_j] * kc_d[kc_i][kc_j])))),
        'de': list_sum(list_transform(range(1, len(kc_vals) + 1), kc_i -> list_sum(list_transform(range(1, len(kc_vals) + 1), kc_j ->
                kc_t.ns[kc_i] * kc_t.ns[kc_j] * kc_d[kc_i][kc_j]))))}], kc_s ->
      CASE WHEN kc_s.de > 0 THEN 1 - (kc_s.n - 1) * kc_s.do / kc_s.de END)[1])[1])[1])[1];

-- krippendorff_alpha(units, level := 'nominal', seed := NULL): units is a list with one list of numeric
-- ratings per unit (NULL: missing; units with fewer than 2 ratings are not pairable and left out).
-- Returns {alpha, lo, hi, n_units (pairable), n_values (pairable values), k (categories), reason}.
-- With a seed, lo and hi are the 25th and 976th of 1000 Bayesian-bootstrap alphas over units (weights
-- Exp(1) from key_uniform(resample_key(seed, rep), unit position), scaled to mean 1); NULL without a seed.
CREATE OR REPLACE MACRO krippendorff_alpha(units, level := 'nominal', seed := NULL) AS
  list_transform([list_filter(list_transform(coalesce(units, []), ka_u -> list_filter(ka_u, ka_v -> ka_v IS NOT NULL)), ka_u -> len(ka_u) >= 2)], ka_p ->
    list_transform([list_sort(list_distinct(flatten(ka_p)))], ka_vals ->
      list_transform([krippendorff_vectors(list_transform(ka_p, ka_u -> list_transform(map_entries(list_aggregate(ka_u, 'histogram')), ka_e ->
          {'i': list_position(ka_vals, ka_e.key)::BIGINT, 'c': ka_e.value::DOUBLE})), len(ka_vals))], ka_units ->
        list_transform([CASE
            WHEN level IS NULL OR level NOT IN ('nominal', 'ordinal', 'interval') THEN 'unknown level: ' || coalesce(level, 'NULL') || ' (use nominal, ordinal or interval)'
            WHEN len(ka_p) = 0 THEN 'no unit has 2 or more ratings'
            WHEN len(ka_vals) < 2 THEN 'a single category: expected disagreement is 0, alpha undefined'
          END], ka_reason -> list_transform([CASE WHEN ka_reason IS NULL AND seed IS NOT NULL THEN list_sort(list_transform(list_transform(range(1000), ka_r -> resample_key(seed, ka_r)), ka_key ->
              list_transform([list_transform(range(len(ka_p)), ka_x -> -ln(key_uniform(ka_key, ka_x)))], ka_w ->
                krippendorff_core(ka_units, list_transform([len(ka_w) / list_sum(ka_w)], ka_sc -> list_transform(ka_w, ka_y -> ka_y * ka_sc))[1], level, ka_vals))[1])) END], ka_b -> {
            'alpha': CASE WHEN ka_reason IS NULL THEN krippendorff_core(ka_units, list_transform(ka_p, ka_u -> 1.0), level, ka_vals) END::DOUBLE,
            'lo': ka_b[25]::DOUBLE, 'hi': ka_b[976]::DOUBLE,
            'n_units': len(ka_p)::BIGINT, 'n_values': len(flatten(ka_p))::BIGINT, 'k': len(ka_vals)::BIGINT,
            'reason': ka_reason::VARCHAR})[1])[1])[1])[1])[1];

-- Prediction-powered inference of a mean (Angelopoulos et al. 2023, the plain estimator, lambda = 1):
-- the judge scores every item (unlabeled: the judge's scores yhat of the N items), people label a
-- subset (labeled: {y, yhat} for n items). The judge's mean is corrected by its mean error on the
-- labeled subset:
--   estimate = mean(yhat over N) + mean(y - yhat over n),
--   se = sqrt(s^2(yhat over N) / N + s^2(y - yhat over n) / n)  (sample variances, n - 1),
--   95% interval estimate +- 1.959964 se.
-- Returns {estimate, lo, hi, se, raw (the judge's mean), rectifier (mean y - yhat), n_labeled,
-- n_unlabeled, reason}; NULL below 2 items on either side.
CREATE OR REPLACE MACRO ppi_mean(labeled, unlabeled) AS
  list_transform([{
      'd': list_transform(list_filter(coalesce(labeled, []), pp_l -> pp_l.y IS NOT NULL AND pp_l.yhat IS NOT NULL), pp_l -> (pp_l.y - pp_l.yhat)::DOUBLE),
      'f': list_transform(list_filter(coalesce(unlabeled, []), pp_f -> pp_f IS NOT NULL), pp_f -> pp_f::DOUBLE)}], pp_s ->
    list_transform([{
        'ok': len(pp_s.d) >= 2 AND len(pp_s.f) >= 2,
        'raw': list_avg(pp_s.f), 'rect': list_avg(pp_s.d),
        'se': CASE WHEN len(pp_s.d) >= 2 AND len(pp_s.f) >= 2 THEN sqrt(list_var_samp(pp_s.f) / len(pp_s.f) + list_var_samp(pp_s.d) / len(pp_s.d)) END}], pp_t -> {
      'estimate': CASE WHEN pp_t.ok THEN pp_t.raw + pp_t.rect END::DOUBLE,
      'lo': CASE WHEN pp_t.ok THEN pp_t.raw + pp_t.rect - z_975() * pp_t.se END::DOUBLE,
      'hi': CASE WHEN pp_t.ok THEN pp_t.raw + pp_t.rect + z_975() * pp_t.se END::DOUBLE,
      'se': pp_t.se::DOUBLE, 'raw': pp_t.raw::DOUBLE, 'rectifier': pp_t.rect::DOUBLE,
      'n_labeled': len(pp_s.d)::BIGINT, 'n_unlabeled': len(pp_s.f)::BIGINT,
      'reason': CASE WHEN len(pp_s.d) < 2 THEN 'fewer than 2 labeled items' WHEN len(pp_s.f) < 2 THEN 'fewer than 2 judged items' END::VARCHAR})[1])[1];
