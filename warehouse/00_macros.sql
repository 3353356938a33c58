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
-- (exactly, as sums of exponentials, for c_k <= 16; Wilson-Hilferty above). Cost per group: 1000 x K,
-- whatever n is. The bounds are the 25th and 976th of the sorted resample means; NULL for n < 2.
-- The interval depends on the histogram and the seed alone, so the views compute it once per distinct
-- histogram (small groups repeat theirs) with histogram_ci95 below: the same scores get the same
-- interval in every view.
-- (Macro parameters and lambda variables have unique names: DuckDB expands macros by name.)
--
-- Random numbers: each resample has a 64-bit key, the hash of the string 'seed:rep'; its draws are
-- hashes of the key XOR the draw's index. DuckDB's hash of an integer is MurmurHash64's finaliser,
-- which spreads every input bit over the output, so the draws are uniform and independent (tested);
-- integer hashes cost a fraction of building and hashing one string per draw.
CREATE OR REPLACE MACRO key_uniform(ku_key, ku_index) AS
  ((hash(xor(ku_key, ku_index::UBIGINT)) >> 11)::DOUBLE + 0.5) / 9007199254740992.0;

-- The key of resample rep under a seed.
CREATE OR REPLACE MACRO resample_key(rk_seed, rk_rep) AS hash(concat_ws(':', rk_seed, rk_rep));

-- Gamma(shape, 1) for the histogram's value at position val (0-based), from the resample's key: a
-- value's draws use indices 64 val .. 64 val + 17, so no two values share one.
CREATE OR REPLACE MACRO gamma_draw_key(gk_shape, gk_key, gk_val) AS
  CASE WHEN gk_shape <= 16
    -- A sum of shape Exp(1) variables, -ln of the product of shape uniforms (each >= 2^-54: no underflow).
    THEN -ln(list_product(list_transform(range(gk_shape::BIGINT), gk_i -> key_uniform(gk_key, gk_val * 64 + 2 + gk_i))))
    ELSE gk_shape * pow(greatest(0.0, 1 - 1 / (9.0 * gk_shape)
      + sqrt(-2 * ln(key_uniform(gk_key, gk_val * 64))) * cos(2 * pi() * key_uniform(gk_key, gk_val * 64 + 1)) / (3 * sqrt(gk_shape))), 3)
  END;

CREATE OR REPLACE MACRO gamma_draw(gd_shape, gd_seed, gd_rep, gd_val) AS gamma_draw_key(gd_shape, resample_key(gd_seed, gd_rep), gd_val);

CREATE OR REPLACE MACRO histogram_n(hn_h) AS coalesce(list_sum(list_transform(hn_h, hn_x -> hn_x.value)), 0);

CREATE OR REPLACE MACRO histogram_mean(hm_h) AS
  list_sum(list_transform(hm_h, hm_x -> hm_x.key * hm_x.value)) / list_sum(list_transform(hm_h, hm_x -> hm_x.value));

-- Each resample's draws travel with their values as {w, key} (no lambda captures the histogram).
CREATE OR REPLACE MACRO bootstrap_means(bm_h, bm_seed) AS
  list_sort(list_transform(list_transform(range(1000), bm_rep -> resample_key(bm_seed, bm_rep)), bm_key ->
    list_transform([list_transform(bm_h, (bm_x, bm_k) -> {'w': gamma_draw_key(bm_x.value, bm_key, bm_k), 'key': bm_x.key})], bm_g ->
      list_sum(list_transform(bm_g, bm_e -> bm_e.w * bm_e.key)) / list_sum(list_transform(bm_g, bm_e -> bm_e.w)))[1]));

CREATE OR REPLACE MACRO bootstrap_ci95(bc_h, bc_seed) AS
  CASE WHEN histogram_n(bc_h) >= 2 THEN list_transform([bootstrap_means(bc_h, bc_seed)], bc_m -> {'lo': bc_m[25], 'hi': bc_m[976]})[1] END;

-- The interval the result views give a histogram: seeded by 'plens' and the histogram's own hash, so
-- the same scores get the same interval in every view, and different histograms independent draws
-- (with one seed for all, every histogram would reuse the same uniforms and the intervals' Monte
-- Carlo errors would move together).
CREATE OR REPLACE MACRO histogram_ci95(hc_h) AS bootstrap_ci95(hc_h, concat_ws(':', 'plens', hash(hc_h)));
