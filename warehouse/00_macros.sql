-- Statistics shared by the views. Pure SQL so analysts can reuse them in their own queries.

-- Shannon entropy H = -sum p_i ln p_i of a list of counts (natural log). A zero count adds nothing
-- (0 ln 0 = 0, the limit), so evenness over a padded category list works; no counts at all: NULL.
CREATE OR REPLACE MACRO shannon_entropy(counts) AS
  coalesce(list_sum(list_transform(list_filter(counts, se_c -> se_c > 0), se_c -> -(se_c / list_sum(counts)) * ln(se_c / list_sum(counts)))),
    CASE WHEN list_sum(counts) > 0 THEN 0.0 END);

-- Shannon evenness E = H / ln n over n categories; undefined (NULL) when n < 2.
CREATE OR REPLACE MACRO shannon_evenness(counts) AS
  CASE WHEN len(counts) >= 2 THEN shannon_entropy(counts) / ln(len(counts)) END;

-- Means with a seeded 95% bootstrap interval, from a histogram: the list of {key: value, value: count}
-- that map_entries(histogram(x)) gives. Scores are discrete, so the interval is the Bayesian
-- bootstrap (Rubin 1981): weights over the n observations ~ Dirichlet(1, ..., 1), which over the K
-- distinct values is Dirichlet(c_1, ..., c_K); each of 1000 resamples draws K Gamma(c_k) variables
-- (exactly, as sums of exponentials, for c_k <= 16; Wilson-Hilferty above) from uniforms made by
-- hashing (seed, resample, value, i). Cost per group: 1000 x K, whatever n is. The bounds are the
-- 25th and 976th of the sorted resample means; NULL for n < 2.
-- (Macro parameters and lambda variables have unique names: DuckDB expands macros by name.)
-- Cost: the seed expression and the string 'seed:rep' are built once per resample, not once per draw
-- (a macro argument is expanded, and so evaluated, wherever it is used); the draws are the same.
CREATE OR REPLACE MACRO hash_uniform(hu_seed, hu_rep, hu_val, hu_i) AS
  -- One string per draw: DuckDB's multi-argument hash combines its arguments too weakly for this.
  ((hash(concat_ws(':', hu_seed, hu_rep, hu_val, hu_i)) >> 11)::DOUBLE + 0.5) / 9007199254740992.0;

-- The same uniform from the prefix concat_ws(':', seed, rep) built once.
CREATE OR REPLACE MACRO hash_uniform_at(hua_prefix, hua_val, hua_i) AS
  ((hash(concat_ws(':', hua_prefix, hua_val, hua_i)) >> 11)::DOUBLE + 0.5) / 9007199254740992.0;

CREATE OR REPLACE MACRO gamma_draw_at(gda_shape, gda_prefix, gda_val) AS
  CASE WHEN gda_shape <= 16
    THEN -list_sum(list_transform(range(gda_shape::BIGINT), gda_i -> ln(hash_uniform_at(gda_prefix, gda_val, gda_i))))
    ELSE gda_shape * pow(greatest(0.0, 1 - 1 / (9.0 * gda_shape)
      + sqrt(-2 * ln(hash_uniform_at(gda_prefix, gda_val, -1))) * cos(2 * pi() * hash_uniform_at(gda_prefix, gda_val, -2)) / (3 * sqrt(gda_shape))), 3)
  END;

CREATE OR REPLACE MACRO gamma_draw(gd_shape, gd_seed, gd_rep, gd_val) AS gamma_draw_at(gd_shape, concat_ws(':', gd_seed, gd_rep), gd_val);

CREATE OR REPLACE MACRO histogram_n(hn_h) AS coalesce(list_sum(list_transform(hn_h, hn_x -> hn_x.value)), 0);

CREATE OR REPLACE MACRO histogram_mean(hm_h) AS
  list_sum(list_transform(hm_h, hm_x -> hm_x.key * hm_x.value)) / list_sum(list_transform(hm_h, hm_x -> hm_x.value));

-- Each resample's draws travel with their values as {w, key} (no lambda captures the histogram).
CREATE OR REPLACE MACRO bootstrap_means(bm_h, bm_seed) AS
  list_sort(list_transform(list_transform(range(1000), bm_rep -> concat_ws(':', bm_seed, bm_rep)), bm_prefix ->
    list_transform([list_transform(bm_h, (bm_x, bm_k) -> {'w': gamma_draw_at(bm_x.value, bm_prefix, bm_k), 'key': bm_x.key})], bm_g ->
      list_sum(list_transform(bm_g, bm_e -> bm_e.w * bm_e.key)) / list_sum(list_transform(bm_g, bm_e -> bm_e.w)))[1]));

CREATE OR REPLACE MACRO bootstrap_ci95(bc_h, bc_seed) AS
  CASE WHEN histogram_n(bc_h) >= 2 THEN list_transform([bootstrap_means(bc_h, bc_seed)], bc_m -> {'lo': bc_m[25], 'hi': bc_m[976]})[1] END;
