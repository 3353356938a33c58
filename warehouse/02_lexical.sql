-- Lexical diversity (PersonaLens Table 10): Dist-n, Ent-n and Self-BLEU, in two protocols.
-- Definitions: ../shared/spec/lexical-diversity.md. Everything here is SQL; TypeScript only draws the
-- "laps" subsets (Python's random stream) and moves data in and out.
--
-- The table macros take the name of a table, view or CTE (query_table) with the columns they list.
-- `grp` is any grouping value (a string, a struct ...): every statistic is computed per grp.

-- Tokenisers -----------------------------------------------------------------------------------------

-- "full" protocol words: lowercase; a token is a maximal run of Unicode letters or digits, runs joined
-- by single inner apostrophes ("don't", "o'clock"); every other character separates tokens.
CREATE OR REPLACE MACRO lexical_words(lw_text) AS
  regexp_extract_all(lower(lw_text), '[\pL\pN]+(?:''[\pL\pN]+)*');

-- Python's str.split() with no argument: runs of Python whitespace separate, no empty tokens.
CREATE OR REPLACE MACRO python_split(ps_text) AS
  regexp_extract_all(ps_text, '[^\t\n\x0b\x0c\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+');

-- "laps" Dist-n tokens: lowercase, delete '.' and '\n', split on single spaces, drop empty strings.
CREATE OR REPLACE MACRO laps_dist_tokens(ldt_text) AS
  list_filter(string_split(replace(replace(lower(ldt_text), '.', ''), chr(10), ''), ' '), ldt_x -> ldt_x <> '');

-- "laps" Ent-n tokens: lowercase, strip trailing '2's (a quirk of the reference code), Python split.
CREATE OR REPLACE MACRO laps_ent_tokens(let_text) AS python_split(rtrim(lower(let_text), '2'));

-- "laps" Self-BLEU units: the lowercased string's characters (code points, spaces included).
CREATE OR REPLACE MACRO laps_chars(lc_text) AS
  CASE WHEN lc_text = '' THEN []::VARCHAR[] ELSE string_split(lower(lc_text), '') END;

-- Dist-n and Ent-n ----------------------------------------------------------------------------------
-- Input: grp, units (a list per utterance). n-grams never cross utterances.

-- The n-grams of a list, as lists (exact keys for any n).
CREATE OR REPLACE MACRO lexical_ngrams(ln_units, ln_n) AS
  list_transform(range(1, len(ln_units) - ln_n + 2), ln_i -> ln_units[ln_i:ln_i + ln_n - 1]);

-- Dist-n = distinct n-grams / n-grams, per grp. Groups without any n-gram have dist NULL.
CREATE OR REPLACE MACRO dist_n(dn_tbl, dn_n) AS TABLE
  SELECT grp, count(g) AS n_ngrams, count(DISTINCT g) AS n_distinct,
    CASE WHEN count(g) > 0 THEN count(DISTINCT g) / count(g) END AS dist
  FROM (SELECT grp, unnest(lexical_ngrams(units, dn_n)) AS g FROM query_table(dn_tbl))
  GROUP BY grp;

-- Ent-n = -sum_g (c_g / T) (ln c_g - ln T), natural log, T = total count + en_eps (the reference code
-- adds 1e-10; the full protocol adds 0). Groups without any n-gram have ent NULL.
CREATE OR REPLACE MACRO ent_n(en_tbl, en_n, en_eps := 0) AS TABLE
  SELECT grp, sum(c) AS n_ngrams,
    CASE WHEN sum(c) > 0 THEN -sum((c / (total + en_eps)) * (ln(c) - ln(total + en_eps))) END AS ent
  FROM (
    SELECT grp, c, sum(c) OVER (PARTITION BY grp) AS total
    FROM (SELECT grp, g, count(*) AS c FROM (SELECT grp, unnest(lexical_ngrams(units, en_n)) AS g FROM query_table(en_tbl)) GROUP BY grp, g)
  )
  GROUP BY grp, total;

-- Self-BLEU, exact and linear ---------------------------------------------------------------------------
-- Each utterance is a hypothesis against all other utterances of its grp: NLTK 3.8 sentence_bleu,
-- weights (1/4, 1/4, 1/4, 1/4), smoothing method1 (a zero precision 0/d becomes 0.1/d), brevity
-- penalty against the closest other length (ties: the shorter). Clipping an n-gram by "the largest
-- count in any other utterance" only bites for the utterance that alone holds the largest count: it
-- keeps the second largest count. So one aggregation per n-gram order replaces the pairwise comparison:
-- per n-gram, the top two per-utterance counts and the holder of the top; the holder loses
-- (top - second) matches when top > second.
-- Input: grp, utt (unique within grp), units (a list per utterance: words, or characters for laps).

-- Modified precision with method1 smoothing: matches / max(1, hypothesis n-grams), 0 -> 0.1 / that.
CREATE OR REPLACE MACRO self_bleu_precision(sbp_matches, sbp_ngrams) AS
  CASE WHEN sbp_matches > 0 THEN sbp_matches ELSE 0.1 END / greatest(1, sbp_ngrams);

-- Matches lost per (grp, utt) for the n-grams of one order, from (grp, utt, gram columns...) rows.
CREATE OR REPLACE MACRO self_bleu_lost(sbl_occ) AS TABLE
  SELECT grp, holder AS utt, sum(top[1] - coalesce(top[2], 0)) AS lost
  FROM (
    SELECT grp, max(cnt, 2) AS top, arg_max(utt, cnt) AS holder
    FROM (SELECT grp, utt, gram, count(*) AS cnt FROM query_table(sbl_occ) GROUP BY ALL)
    GROUP BY grp, gram
  )
  WHERE len(top) = 1 OR top[1] > top[2]
  GROUP BY ALL;

CREATE OR REPLACE MACRO self_bleu_scores(sbs_tbl) AS TABLE
  WITH u AS (SELECT grp, utt, units, len(units) AS hyp_len FROM query_table(sbs_tbl)),
  -- n-gram occurrences per order; the slices line up the n tokens of each n-gram.
  o1 AS (SELECT grp, utt, unnest(units) AS gram FROM u),
  o2 AS (SELECT grp, utt, {'a': a, 'b': b} AS gram FROM (SELECT grp, utt, unnest(units[1:-2]) AS a, unnest(units[2:-1]) AS b FROM u)),
  o3 AS (SELECT grp, utt, {'a': a, 'b': b, 'c': c} AS gram FROM (SELECT grp, utt, unnest(units[1:-3]) AS a, unnest(units[2:-2]) AS b, unnest(units[3:-1]) AS c FROM u)),
  o4 AS (SELECT grp, utt, {'a': a, 'b': b, 'c': c, 'd': d} AS gram FROM (SELECT grp, utt, unnest(units[1:-4]) AS a, unnest(units[2:-3]) AS b, unnest(units[3:-2]) AS c, unnest(units[4:-1]) AS d FROM u)),
  l1 AS (FROM self_bleu_lost(o1)), l2 AS (FROM self_bleu_lost(o2)), l3 AS (FROM self_bleu_lost(o3)), l4 AS (FROM self_bleu_lost(o4)),
  -- Closest other length: the same length when another utterance has it, else the nearer neighbour
  -- among the distinct lengths (the shorter on a tie). NULL when the grp has a single utterance.
  lens AS (SELECT grp, hyp_len, count(*) AS cnt FROM u GROUP BY ALL),
  nb AS (SELECT grp, hyp_len, cnt, lag(hyp_len) OVER w AS below, lead(hyp_len) OVER w AS above
         FROM lens WINDOW w AS (PARTITION BY grp ORDER BY hyp_len)),
  closest AS (
    SELECT grp, hyp_len, CASE
      WHEN cnt >= 2 THEN hyp_len
      WHEN below IS NULL THEN above
      WHEN above IS NULL THEN below
      WHEN hyp_len - below <= above - hyp_len THEN below
      ELSE above END AS ref_len
    FROM nb),
  m AS (
    SELECT u.grp, u.utt, u.hyp_len, c.ref_len,
      greatest(u.hyp_len - 0, 0) - coalesce(l1.lost, 0) AS m1, greatest(u.hyp_len - 1, 0) - coalesce(l2.lost, 0) AS m2,
      greatest(u.hyp_len - 2, 0) - coalesce(l3.lost, 0) AS m3, greatest(u.hyp_len - 3, 0) - coalesce(l4.lost, 0) AS m4
    FROM u JOIN closest c USING (grp, hyp_len)
      LEFT JOIN l1 USING (grp, utt) LEFT JOIN l2 USING (grp, utt) LEFT JOIN l3 USING (grp, utt) LEFT JOIN l4 USING (grp, utt)
  )
  SELECT grp, utt, hyp_len, ref_len, m1, m2, m3, m4,
    CASE
      WHEN ref_len IS NULL THEN NULL
      WHEN m1 = 0 THEN 0.0
      ELSE (CASE WHEN hyp_len > ref_len THEN 1.0 ELSE exp(1 - ref_len / hyp_len) END)
        * exp(0.25 * (ln(self_bleu_precision(m1, hyp_len - 0)) + ln(self_bleu_precision(m2, hyp_len - 1))
                    + ln(self_bleu_precision(m3, hyp_len - 2)) + ln(self_bleu_precision(m4, hyp_len - 3))))
    END AS bleu
  FROM m;

-- Self-BLEU per grp: the mean over its utterances (NULL for a grp of one utterance: no references).
CREATE OR REPLACE MACRO self_bleu(sb_tbl) AS TABLE
  SELECT grp, count(*) AS n_utterances, avg(bleu) AS self_bleu FROM self_bleu_scores(sb_tbl) GROUP BY grp;

-- Protocols ---------------------------------------------------------------------------------------------

-- "full": the whole corpus of each grp at once, word tokens (lexical_words). Input: grp, utt, text.
-- Utterances without any word token are counted (n_empty) and left out of every metric: they hold
-- no n-gram, and as Self-BLEU hypotheses they would score 0 by construction. Ent-4 uses T exactly.
CREATE OR REPLACE MACRO lexical_full(lf_tbl) AS TABLE
  WITH w AS MATERIALIZED (SELECT grp, utt, lexical_words(text) AS units FROM query_table(lf_tbl)),
  ne AS MATERIALIZED (SELECT * FROM w WHERE len(units) > 0),
  counts AS (SELECT grp, count(*) AS n_utterances, count(*) FILTER (len(units) = 0) AS n_empty, sum(len(units)) AS n_tokens FROM w GROUP BY grp),
  d1 AS (FROM dist_n(ne, 1)), d2 AS (FROM dist_n(ne, 2)), e4 AS (FROM ent_n(ne, 4)), sb AS (FROM self_bleu(ne))
  SELECT grp, 'full' AS protocol, counts.n_utterances, n_empty, n_tokens, NULL::BIGINT AS iterations,
    d1.dist AS dist_1, d2.dist AS dist_2, e4.ent AS ent_4, sb.self_bleu
  FROM counts LEFT JOIN d1 USING (grp) LEFT JOIN d2 USING (grp) LEFT JOIN e4 USING (grp) LEFT JOIN sb USING (grp);

-- "laps": the reference procedure's subsets, drawn in TypeScript (Python's random stream):
-- Input: grp, stream ('dist' serves Dist-n and Ent-n; 'self_bleu' has the extra shuffle), iteration,
-- pos (order in the subset), text. Each metric is computed per subset; the value is the mean over
-- the iterations. Self-BLEU is character-level, as in the reference code.
CREATE OR REPLACE MACRO lexical_laps(ll_tbl) AS TABLE
  WITH s AS MATERIALIZED (SELECT * FROM query_table(ll_tbl)),
  dt AS MATERIALIZED (SELECT {'grp': grp, 'iteration': iteration} AS grp, laps_dist_tokens(text) AS units FROM s WHERE stream = 'dist'),
  et AS MATERIALIZED (SELECT {'grp': grp, 'iteration': iteration} AS grp, laps_ent_tokens(text) AS units FROM s WHERE stream = 'dist'),
  ct AS MATERIALIZED (SELECT {'grp': grp, 'iteration': iteration} AS grp, pos AS utt, laps_chars(text) AS units FROM s WHERE stream = 'self_bleu'),
  per_iteration AS (
    SELECT grp, d1.dist AS dist_1, d2.dist AS dist_2, e4.ent AS ent_4, sb.self_bleu
    FROM (SELECT DISTINCT {'grp': grp, 'iteration': iteration} AS grp FROM s) i
      LEFT JOIN dist_n(dt, 1) d1 USING (grp) LEFT JOIN dist_n(dt, 2) d2 USING (grp)
      LEFT JOIN ent_n(et, 4, 1e-10) e4 USING (grp) LEFT JOIN self_bleu(ct) sb USING (grp)
  ),
  sizes AS (SELECT grp, count(DISTINCT iteration) AS iterations FROM s GROUP BY grp)
  SELECT p.grp.grp AS grp, 'laps' AS protocol, NULL::BIGINT AS n_utterances, NULL::BIGINT AS n_empty, NULL::BIGINT AS n_tokens,
    any_value(sizes.iterations) AS iterations,
    avg(dist_1) AS dist_1, avg(dist_2) AS dist_2, avg(ent_4) AS ent_4, avg(self_bleu) AS self_bleu
  FROM per_iteration p JOIN sizes ON sizes.grp = p.grp.grp
  GROUP BY p.grp.grp;
