-- Agreement between raters (e.g. an LLM judge and human annotators), as pure-SQL macros that work
-- as aggregates over list(...) in GROUP BY queries:
--   SELECT dimension, cohen_kappa(list({'a': judge, 'b': human}), 'quadratic', [1, 2, 3, 4, 5]).kappa
--   FROM ratings GROUP BY dimension;
-- Both return a struct. Where the statistic is undefined or the input is wrong, kappa is NULL and
-- `reason` says why: never an error, never a made-up 0.
--
-- Counts stay integers until the one division that gives each result (so 4 agreements of 20 give
-- p_o = 0.2, not 1 - 16/20 = 0.19999999999999996). Cohen's kappa is computed in its disagreement form
--   kappa = 1 - n D / E,  D = sum over pairs of v(i, j),  E = sum over categories i, j of nA_i nB_j v(i, j)
-- where v is the integer disagreement weight ([i <> j], |i - j| or (i - j)^2), i.e. 1 - w_ij scaled by
-- 1, k - 1 or (k - 1)^2; this equals (p_o - p_e) / (1 - p_e) exactly. So "p_e = 1" is the exact test
-- E = 0 (no floating-point tolerance needed), a constant rater gives exactly 0 (then E = n D) and
-- perfect agreement exactly 1 (D = 0). Fleiss' kappa likewise, from integer sums.
--
-- Cost: one pass over the pairs (two list_position calls into the k categories each) into a histogram
-- of the k x k cells; everything after that works on the histogram (k^2 <= 100 entries for k <= 10).
-- A lambda that runs once per pair or subject captures only small values (the category list), so the
-- work stays linear in the pairs whatever DuckDB does with captured values. A macro argument is pasted
-- wherever its parameter appears, so anything big that is used twice is first bound to a lambda
-- variable with list_transform([x], v -> ...)[1] (pasting the histogram into the per-category lambdas
-- made cohen_kappa four times slower).
-- Helper parameters and lambda variables have unique prefixes (DuckDB expands macros by name). The
-- public parameters keep their documented names (pairs, weights, categories, subjects) so that callers
-- can write weights := and categories :=; they appear only in the outermost macros, and arguments
-- that mention columns of the same names are substituted correctly (tested).

-- Disagreement weight of category positions i, j: 1 - w_ij times 1 (none), k - 1 (linear) or
-- (k - 1)^2 (quadratic), so it stays an integer. NULL for an unknown weighting.
CREATE OR REPLACE MACRO agreement_disagreement(ad_weights, ad_i, ad_j) AS
  CASE ad_weights
    WHEN 'none' THEN (ad_i <> ad_j)::BIGINT
    WHEN 'linear' THEN abs(ad_i - ad_j)::BIGINT
    WHEN 'quadratic' THEN ((ad_i - ad_j) * (ad_i - ad_j))::BIGINT
  END;

-- The factor that turns the integer disagreement weight back into 1 - w_ij.
CREATE OR REPLACE MACRO agreement_weight_scale(aw_weights, aw_k) AS
  CASE aw_weights WHEN 'none' THEN 1 WHEN 'linear' THEN aw_k - 1 WHEN 'quadratic' THEN (aw_k - 1) * (aw_k - 1) END;

-- NULL when a category list is usable, else why not (list_distinct drops NULLs, so both show here).
CREATE OR REPLACE MACRO agreement_categories_problem(ac_categories) AS
  CASE WHEN len(list_distinct(ac_categories)) <> len(ac_categories) THEN 'categories contain duplicates or NULL' END;

-- The message for ratings outside the categories: the smallest such value, so it does not depend on
-- the (unordered) order in which list() collected the rows.
CREATE OR REPLACE MACRO agreement_outside(ao_values, ao_categories) AS
  'value outside the categories: ' || list_min(list_filter(ao_values, ao_x -> list_position(ao_categories, ao_x) IS NULL))::VARCHAR;

-- Cohen, last step: from the cell counts cr_counts = {n, k, placed, d, na, nb} (placed = pairs whose two
-- ratings are both in the categories) to the result struct.
-- (cr_counts is an expression: it is bound to a lambda variable once, so that it is evaluated once.)
CREATE OR REPLACE MACRO cohen_kappa_result(cr_counts, cr_weights, cr_pairs, cr_categories) AS
  list_transform([cr_counts], cr_s -> list_transform([{
      's': cr_s,
      -- E = sum_ij nA_i nB_j v(i, j): k x k terms.
      'e': coalesce(list_sum(list_transform(range(1, cr_s.k + 1), cr_i -> list_sum(list_transform(range(1, cr_s.k + 1), cr_j ->
             cr_s.na[cr_i]::HUGEINT * cr_s.nb[cr_j] * agreement_disagreement(cr_weights, cr_i, cr_j))))), 0)::HUGEINT,
      'scale': agreement_weight_scale(cr_weights, cr_s.k)
    }], cr_t -> list_transform([
      CASE
        WHEN cr_weights IS NULL OR cr_weights NOT IN ('none', 'linear', 'quadratic')
          THEN 'unknown weights: ' || coalesce(cr_weights, 'NULL') || ' (use none, linear or quadratic)'
        WHEN agreement_categories_problem(cr_categories) IS NOT NULL THEN agreement_categories_problem(cr_categories)
        WHEN cr_t.s.n = 0 THEN 'no pairs'
        WHEN cr_t.s.placed < cr_t.s.n
          THEN agreement_outside(list_concat(list_transform(cr_pairs, cr_p -> cr_p.a), list_transform(cr_pairs, cr_p -> cr_p.b)), cr_categories)
        WHEN cr_weights <> 'none' AND cr_t.s.k < 2 THEN 'weighted kappa needs at least 2 categories'
        WHEN cr_t.e = 0 THEN 'expected agreement is 1: kappa undefined'
      END], cr_r -> {
        'kappa': CASE WHEN cr_r IS NULL THEN (cr_t.e - cr_t.s.n * cr_t.s.d) / cr_t.e END::DOUBLE,
        'observed': CASE WHEN cr_r IS NULL OR cr_r = 'expected agreement is 1: kappa undefined'
                      THEN (cr_t.s.n * cr_t.scale - cr_t.s.d) / (cr_t.s.n * cr_t.scale) END::DOUBLE,
        'expected': CASE WHEN cr_r IS NULL OR cr_r = 'expected agreement is 1: kappa undefined'
                      THEN (cr_t.s.n::HUGEINT * cr_t.s.n * cr_t.scale - cr_t.e) / (cr_t.s.n::HUGEINT * cr_t.s.n * cr_t.scale) END::DOUBLE,
        'n': cr_t.s.n::BIGINT,
        'k': cr_t.s.k::BIGINT,
        'reason': cr_r::VARCHAR
      })[1])[1])[1];

-- Cohen, middle step: from the histogram of cells (key (i) * (k + 1) + j for positions i of a and j of
-- b; a pair with a rating outside the categories has a NULL key and is not counted) to the counts.
-- (cc_histogram is an expression: it is bound to a lambda variable once, so that it is evaluated once.)
CREATE OR REPLACE MACRO cohen_kappa_cells(cc_pairs, cc_categories, cc_weights, cc_histogram) AS
  list_transform([cc_histogram], cc_cells -> cohen_kappa_result({
      'n': len(cc_pairs)::BIGINT,
      'k': len(cc_categories)::BIGINT,
      'placed': coalesce(list_sum(list_transform(cc_cells, cc_e -> cc_e.value::BIGINT)), 0)::BIGINT,
      'd': coalesce(list_sum(list_transform(cc_cells, cc_e -> cc_e.value::HUGEINT
             * agreement_disagreement(cc_weights, cc_e.key // (len(cc_categories) + 1), cc_e.key % (len(cc_categories) + 1)))), 0)::HUGEINT,
      'na': list_transform(range(1, len(cc_categories) + 1), cc_i -> coalesce(list_sum(list_transform(
              list_filter(cc_cells, cc_e -> cc_e.key // (len(cc_categories) + 1) = cc_i), cc_e -> cc_e.value::BIGINT)), 0)::BIGINT),
      'nb': list_transform(range(1, len(cc_categories) + 1), cc_j -> coalesce(list_sum(list_transform(
              list_filter(cc_cells, cc_e -> cc_e.key % (len(cc_categories) + 1) = cc_j), cc_e -> cc_e.value::BIGINT)), 0)::BIGINT)
    }, cc_weights, cc_pairs, cc_categories))[1];

-- Cohen's kappa of two raters: pairs is a list of {a, b} (NULL a or b: pair ignored); weights 'none',
-- 'linear' (w_ij = 1 - |i - j| / (k - 1)) or 'quadratic' (w_ij = 1 - (i - j)^2 / (k - 1)^2), i and j
-- positions in the ordered categories (default: the observed values of a and b, sorted).
-- Returns {kappa, observed (p_o), expected (p_e), n (pairs used), k (categories), reason}.
CREATE OR REPLACE MACRO cohen_kappa(pairs, weights := 'none', categories := NULL) AS
  list_transform([coalesce(list_filter(pairs, ck_p -> ck_p.a IS NOT NULL AND ck_p.b IS NOT NULL), [])], ck_v ->
    list_transform([coalesce(categories,
        list_sort(list_distinct(list_concat(list_transform(ck_v, ck_p -> ck_p.a), list_transform(ck_v, ck_p -> ck_p.b)))))], ck_c ->
      cohen_kappa_cells(ck_v, ck_c, weights, map_entries(list_aggregate(list_transform(ck_v, ck_p ->
        list_position(ck_c, ck_p.a) * (len(ck_c) + 1) + list_position(ck_c, ck_p.b)), 'histogram')))
    )[1])[1];

-- Fleiss, last step: from fr_counts = {n_subjects, sizes (distinct numbers of ratings per subject),
-- sum_sq (sum over subjects and categories of n_ij^2), totals (histogram of all ratings)} to the result.
-- With M = N n ratings and T = sum_j (sum_i n_ij)^2:
--   P-bar = (sum_sq - M) / (M (n - 1)),  P-bar_e = T / M^2,
--   kappa = (M (sum_sq - M) - T (n - 1)) / ((n - 1) (M^2 - T)).
CREATE OR REPLACE MACRO fleiss_kappa_result(fr_counts, fr_categories) AS
  list_transform([fr_counts], fr_s -> list_transform([{
      's': fr_s,
      'n': CASE WHEN len(fr_s.sizes) = 1 THEN fr_s.sizes[1] END::BIGINT,
      'm': CASE WHEN len(fr_s.sizes) = 1 THEN fr_s.n_subjects * fr_s.sizes[1] END::HUGEINT,
      't': coalesce(list_sum(list_transform(fr_s.totals, fr_e -> fr_e.value::HUGEINT * fr_e.value)), 0)::HUGEINT
    }], fr_t -> list_transform([
      CASE
        WHEN fr_t.s.n_subjects = 0 THEN 'no subjects'
        WHEN fr_t.n IS NULL THEN 'subjects have different numbers of ratings'
        WHEN fr_t.n < 2 THEN 'fewer than 2 ratings per subject'
        WHEN agreement_categories_problem(fr_categories) IS NOT NULL THEN agreement_categories_problem(fr_categories)
        WHEN len(list_filter(fr_t.s.totals, fr_e -> list_position(fr_categories, fr_e.key) IS NULL)) > 0
          THEN agreement_outside(list_transform(fr_t.s.totals, fr_e -> fr_e.key), fr_categories)
        WHEN fr_t.t = fr_t.m * fr_t.m THEN 'expected agreement is 1: kappa undefined'
      END], fr_r -> {
        'kappa': CASE WHEN fr_r IS NULL
                   THEN (fr_t.m * (fr_t.s.sum_sq - fr_t.m) - fr_t.t * (fr_t.n - 1)) / ((fr_t.n - 1) * (fr_t.m * fr_t.m - fr_t.t)) END::DOUBLE,
        'observed': CASE WHEN fr_r IS NULL OR fr_r = 'expected agreement is 1: kappa undefined'
                      THEN (fr_t.s.sum_sq - fr_t.m) / (fr_t.m * (fr_t.n - 1)) END::DOUBLE,
        'expected': CASE WHEN fr_r IS NULL OR fr_r = 'expected agreement is 1: kappa undefined'
                      THEN fr_t.t / (fr_t.m * fr_t.m) END::DOUBLE,
        'n_subjects': fr_t.s.n_subjects::BIGINT,
        'n_raters': fr_t.n::BIGINT,
        'k': len(fr_categories)::BIGINT,
        'reason': fr_r::VARCHAR
      })[1])[1])[1];

-- Fleiss' kappa of a fixed number n >= 2 of ratings per subject: subjects is a list (one per subject)
-- of lists of ratings (NULL ratings dropped; a NULL subject is ignored); categories default to the
-- observed ratings. Returns {kappa, observed (P-bar), expected (P-bar_e), n_subjects, n_raters, k, reason}.
-- sum_j n_ij^2 comes from a histogram of each subject's own ratings: linear in the number of raters.
CREATE OR REPLACE MACRO fleiss_kappa(subjects, categories := NULL) AS
  list_transform([list_transform(coalesce(list_filter(subjects, fk_s -> fk_s IS NOT NULL), []), fk_s -> list_filter(fk_s, fk_r -> fk_r IS NOT NULL))], fk_v ->
    list_transform([coalesce(map_entries(list_aggregate(flatten(fk_v), 'histogram')), [])], fk_h ->
      fleiss_kappa_result({
          'n_subjects': len(fk_v)::BIGINT,
          'sizes': list_distinct(list_transform(fk_v, fk_s -> len(fk_s))),
          'sum_sq': coalesce(list_sum(list_transform(fk_v, fk_s ->
                      list_sum(list_transform(map_values(list_aggregate(fk_s, 'histogram')), fk_c -> fk_c::BIGINT * fk_c)))), 0)::HUGEINT,
          'totals': fk_h
        }, coalesce(categories, list_sort(list_transform(fk_h, fk_e -> fk_e.key))))
    )[1])[1];
