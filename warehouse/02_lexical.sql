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

-- "laps" Self-BLEU units: the lowercased string's characters (code points, spaces included), as
-- their code point numbers: integers group several times faster than one-character strings.
CREATE OR REPLACE MACRO laps_chars(lc_text) AS
  CASE WHEN lc_text = '' THEN []::INTEGER[] ELSE list_transform(string_split(lower(lc_text), ''), lc_c -> unicode(lc_c)) END;

-- Dist-n and Ent-n ----------------------------------------------------------------------------------
-- Input: grp, units (a list per utterance: strings, or ENUM ids, which group faster). n-grams never
-- cross utterances.

-- The n-grams of a list, as lists (exact keys for any n; the slower path, used for n > 4).
CREATE OR REPLACE MACRO lexical_ngrams(ln_units, ln_n) AS
  list_transform(range(1, len(ln_units) - ln_n + 2), ln_i -> ln_units[ln_i:ln_i + ln_n - 1]);

-- The count of every distinct n-gram per grp. For n <= 4 the n tokens of each n-gram are lined up by
-- unnesting n shifted slices side by side and grouped as plain columns (several times faster than
-- list keys); only the branch whose n matches runs.
CREATE OR REPLACE MACRO ngram_counts(nc_tbl, nc_n) AS TABLE
  SELECT grp, count(*) AS c FROM (SELECT grp, unnest(units) AS a FROM query_table(nc_tbl) WHERE nc_n = 1) GROUP BY grp, a
  UNION ALL
  SELECT grp, count(*) FROM (SELECT grp, unnest(units[1:-2]) AS a, unnest(units[2:-1]) AS b FROM query_table(nc_tbl) WHERE nc_n = 2) GROUP BY grp, a, b
  UNION ALL
  SELECT grp, count(*) FROM (SELECT grp, unnest(units[1:-3]) AS a, unnest(units[2:-2]) AS b, unnest(units[3:-1]) AS c FROM query_table(nc_tbl) WHERE nc_n = 3) GROUP BY grp, a, b, c
  UNION ALL
  SELECT grp, count(*) FROM (
    SELECT grp, unnest(units[1:-4]) AS a, unnest(units[2:-3]) AS b, unnest(units[3:-2]) AS c, unnest(units[4:-1]) AS d
    FROM query_table(nc_tbl) WHERE nc_n = 4) GROUP BY grp, a, b, c, d
  UNION ALL
  SELECT grp, count(*) FROM (SELECT grp, unnest(lexical_ngrams(units, nc_n)) AS g FROM query_table(nc_tbl) WHERE nc_n > 4) GROUP BY grp, g;

-- Dist-n = distinct n-grams / n-grams, per grp (grps without any n-gram have no row).
CREATE OR REPLACE MACRO dist_n(dn_tbl, dn_n) AS TABLE
  SELECT grp, sum(c) AS n_ngrams, count(*) AS n_distinct, count(*) / sum(c) AS dist
  FROM ngram_counts(dn_tbl, dn_n) GROUP BY grp;

-- Ent-n = -sum_g (c_g / T) (ln c_g - ln T), natural log, T = total count + en_eps (the reference code
-- adds 1e-10; the full protocol adds 0). Grps without any n-gram have no row.
CREATE OR REPLACE MACRO ent_n(en_tbl, en_n, en_eps := 0) AS TABLE
  SELECT grp, any_value(total) AS n_ngrams, -sum((c / (total + en_eps)) * (ln(c) - ln(total + en_eps))) AS ent
  FROM (SELECT grp, c, sum(c) OVER (PARTITION BY grp) AS total FROM ngram_counts(en_tbl, en_n))
  GROUP BY grp;

-- Self-BLEU, exact and linear ---------------------------------------------------------------------------
-- Each utterance is a hypothesis against all other utterances of its grp: NLTK 3.8 sentence_bleu,
-- weights (1/4, 1/4, 1/4, 1/4), smoothing method1 (a zero precision 0/d becomes 0.1/d), brevity
-- penalty against the closest other length (ties: the shorter). Clipping an n-gram by "the largest
-- count in any other utterance" only bites for the utterance that alone holds the largest count: it
-- keeps the second largest count. So one aggregation per n-gram order replaces the pairwise comparison:
-- per n-gram, the top two per-utterance counts and the holder of the top; the holder loses
-- (top - second) matches when top > second.
-- Input: grp, utt (unique within grp), units (a list per utterance: words or ENUM ids for "full",
-- characters for "laps").

-- Modified precision with method1 smoothing: matches / max(1, hypothesis n-grams), 0 -> 0.1 / that.
CREATE OR REPLACE MACRO self_bleu_precision(sbp_matches, sbp_ngrams) AS
  CASE WHEN sbp_matches > 0 THEN sbp_matches ELSE 0.1 END / greatest(1, sbp_ngrams);

-- Matches lost per (grp, utt) from per-utterance counts (grp, gram, utt, cnt): only the sole holder of
-- the top count loses, down to the second count (0 when nobody else has the n-gram).
CREATE OR REPLACE MACRO self_bleu_lost(sbl_counts) AS TABLE
  SELECT grp, holder AS utt, sum(top[1] - coalesce(top[2], 0)) AS lost
  FROM (SELECT grp, max(cnt, 2) AS top, arg_max(utt, cnt) AS holder FROM query_table(sbl_counts) GROUP BY grp, gram)
  WHERE len(top) = 1 OR top[1] > top[2]
  GROUP BY ALL;

-- The same for orders 3 and 4 without counting every (utterance, n-gram) pair: an utterance can repeat an
-- n-gram only if it repeats its (n-1)-gram prefix, so the exact per-utterance counts >= 2 (`repeats`:
-- grp, gram, utt, cnt) are counted only in those utterances. One pass over all occurrences gives each
-- n-gram's total, lowest and highest holder: a single holder loses all its matches; with several holders
-- only a count >= 2 can make a sole top.
CREATE OR REPLACE MACRO self_bleu_lost_long(sbll_occ, sbll_repeats) AS TABLE
  WITH totals AS (SELECT grp, gram, count(*) AS t, min(utt) AS u1, max(utt) AS u2 FROM query_table(sbll_occ) GROUP BY grp, gram),
  repeats AS (
    SELECT grp, gram, max(cnt, 2) AS top, arg_max(utt, cnt) AS holder, sum(cnt) AS in_repeats
    FROM query_table(sbll_repeats) GROUP BY grp, gram
  ),
  several AS (
    -- the second count: the second repeat count, or 1 when some other holder has the n-gram once
    SELECT r.grp, r.holder AS utt, r.top[1] - greatest(coalesce(r.top[2], 0), CASE WHEN t.t > r.in_repeats THEN 1 ELSE 0 END) AS lost
    FROM repeats r JOIN totals t USING (grp, gram) WHERE t.u1 <> t.u2
  )
  SELECT grp, utt, sum(lost) AS lost FROM (
    SELECT grp, u1 AS utt, t AS lost FROM totals WHERE u1 = u2
    UNION ALL
    SELECT grp, utt, lost FROM several WHERE lost > 0
  ) GROUP BY ALL;

-- The scores from the hypotheses (grp, utt, hyp_len, k: the number of equal copies the row stands for,
-- 1 for an utterance) and the matches each loses per order (grp, utt, lost; absent: none lost).
CREATE OR REPLACE MACRO self_bleu_from_lost(sbf_u, sbf_l1, sbf_l2, sbf_l3, sbf_l4) AS TABLE
  WITH u AS (SELECT grp, utt, hyp_len, k FROM query_table(sbf_u)),
  l1 AS (FROM query_table(sbf_l1)), l2 AS (FROM query_table(sbf_l2)), l3 AS (FROM query_table(sbf_l3)), l4 AS (FROM query_table(sbf_l4)),
  -- Closest other length: the same length when another utterance has it, else the nearer neighbour
  -- among the distinct lengths (the shorter on a tie). NULL when the grp has a single utterance.
  lens AS (SELECT grp, hyp_len, sum(k) AS cnt FROM u GROUP BY ALL),
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
    SELECT u.grp, u.utt, u.k, u.hyp_len, c.ref_len,
      greatest(u.hyp_len - 0, 0) - coalesce(l1.lost, 0) AS m1, greatest(u.hyp_len - 1, 0) - coalesce(l2.lost, 0) AS m2,
      greatest(u.hyp_len - 2, 0) - coalesce(l3.lost, 0) AS m3, greatest(u.hyp_len - 3, 0) - coalesce(l4.lost, 0) AS m4
    FROM u JOIN closest c USING (grp, hyp_len)
      LEFT JOIN l1 USING (grp, utt) LEFT JOIN l2 USING (grp, utt) LEFT JOIN l3 USING (grp, utt) LEFT JOIN l4 USING (grp, utt)
  )
  SELECT grp, utt, k, hyp_len, ref_len, m1, m2, m3, m4,
    CASE
      WHEN ref_len IS NULL THEN NULL
      WHEN m1 = 0 THEN 0.0
      ELSE (CASE WHEN hyp_len > ref_len THEN 1.0 ELSE exp(1 - ref_len / hyp_len) END)
        * exp(0.25 * (ln(self_bleu_precision(m1, hyp_len - 0)) + ln(self_bleu_precision(m2, hyp_len - 1))
                    + ln(self_bleu_precision(m3, hyp_len - 2)) + ln(self_bleu_precision(m4, hyp_len - 3))))
    END AS bleu
  FROM m;

CREATE OR REPLACE MACRO self_bleu_scores(sbs_tbl) AS TABLE
  WITH u AS (SELECT grp, utt, units, len(units) AS hyp_len, 1 AS k FROM query_table(sbs_tbl)),
  -- per-utterance counts of unigrams and bigrams (repeats within an utterance are common there)
  c1 AS (SELECT grp, utt, a AS gram, count(*) AS cnt FROM (SELECT grp, utt, unnest(units) AS a FROM u) GROUP BY ALL),
  c2 AS MATERIALIZED (
    SELECT grp, utt, {'a': a, 'b': b} AS gram, count(*) AS cnt
    FROM (SELECT grp, utt, unnest(units[1:-2]) AS a, unnest(units[2:-1]) AS b FROM u) GROUP BY grp, utt, a, b),
  -- utterances that repeat a bigram, then a trigram: the only ones that can repeat a trigram, a 4-gram
  dirty2 AS MATERIALIZED (SELECT DISTINCT grp, utt FROM c2 WHERE cnt >= 2),
  o3 AS MATERIALIZED (SELECT grp, utt, {'a': a, 'b': b, 'c': c} AS gram FROM (SELECT grp, utt, unnest(units[1:-3]) AS a, unnest(units[2:-2]) AS b, unnest(units[3:-1]) AS c FROM u)),
  o4 AS MATERIALIZED (SELECT grp, utt, {'a': a, 'b': b, 'c': c, 'd': d} AS gram FROM (SELECT grp, utt, unnest(units[1:-4]) AS a, unnest(units[2:-3]) AS b, unnest(units[3:-2]) AS c, unnest(units[4:-1]) AS d FROM u)),
  l1 AS (FROM self_bleu_lost(c1)), l2 AS (FROM self_bleu_lost(c2)),
  r3 AS MATERIALIZED (SELECT grp, gram, utt, count(*) AS cnt FROM o3 SEMI JOIN dirty2 USING (grp, utt) GROUP BY ALL HAVING count(*) >= 2),
  dirty3 AS MATERIALIZED (SELECT DISTINCT grp, utt FROM r3),
  r4 AS (SELECT grp, gram, utt, count(*) AS cnt FROM o4 SEMI JOIN dirty3 USING (grp, utt) GROUP BY ALL HAVING count(*) >= 2),
  l3 AS (FROM self_bleu_lost_long(o3, r3)), l4 AS (FROM self_bleu_lost_long(o4, r4))
  FROM self_bleu_from_lost(u, l1, l2, l3, l4);

-- The same scores when many grps share utterances (the laps subsets redraw the same messages): members
-- (grp, utt, tid) name each hypothesis's text, texts (tid, units) hold each distinct text once. The
-- per-text n-gram counts are made once and joined to every grp that holds the text.
CREATE OR REPLACE MACRO self_bleu_shared_scores(sbs_members, sbs_texts) AS TABLE
  WITH t AS (SELECT tid, units FROM query_table(sbs_texts)),
  mem AS (SELECT grp, utt, tid FROM query_table(sbs_members)),
  t1 AS MATERIALIZED (SELECT tid, a AS gram, count(*) AS cnt FROM (SELECT tid, unnest(units) AS a FROM t) GROUP BY ALL),
  t2 AS MATERIALIZED (SELECT tid, {'a': a, 'b': b} AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-2]) AS a, unnest(units[2:-1]) AS b FROM t) GROUP BY tid, a, b),
  t3 AS MATERIALIZED (SELECT tid, {'a': a, 'b': b, 'c': c} AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-3]) AS a, unnest(units[2:-2]) AS b, unnest(units[3:-1]) AS c FROM t) GROUP BY tid, a, b, c),
  t4 AS MATERIALIZED (SELECT tid, {'a': a, 'b': b, 'c': c, 'd': d} AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-4]) AS a, unnest(units[2:-3]) AS b, unnest(units[3:-2]) AS c, unnest(units[4:-1]) AS d FROM t) GROUP BY tid, a, b, c, d),
  c1 AS (SELECT mem.grp, mem.utt, t1.gram, t1.cnt FROM mem JOIN t1 USING (tid)),
  c2 AS (SELECT mem.grp, mem.utt, t2.gram, t2.cnt FROM mem JOIN t2 USING (tid)),
  c3 AS (SELECT mem.grp, mem.utt, t3.gram, t3.cnt FROM mem JOIN t3 USING (tid)),
  c4 AS (SELECT mem.grp, mem.utt, t4.gram, t4.cnt FROM mem JOIN t4 USING (tid)),
  l1 AS (FROM self_bleu_lost(c1)), l2 AS (FROM self_bleu_lost(c2)), l3 AS (FROM self_bleu_lost(c3)), l4 AS (FROM self_bleu_lost(c4)),
  u AS (SELECT mem.grp, mem.utt, len(t.units) AS hyp_len, 1 AS k FROM mem JOIN t USING (tid))
  FROM self_bleu_from_lost(u, l1, l2, l3, l4);

-- The same scores when each member stands for k equal utterances: members (grp, tid, k) hold text tid k
-- times (k >= 1), texts (tid, units) hold each text once; one row per (grp, tid), to be weighted by k (the
-- k copies score alike). A text held k >= 2 times finds its own count of every n-gram in another copy and
-- so loses no match; a text held once loses, as above, only where it alone holds the top count.
-- Per n-gram, the two largest of (count, held once, utt) packed in one integer (count above bit 32, the
-- held-once flag at bit 31, utt below; utt < 2^31, counts < 2^31): the top count, whether its text is held
-- once and where, and the second count; one top-2 aggregate instead of three.
CREATE OR REPLACE MACRO self_bleu_lost_counted(sblc_counts) AS TABLE
  SELECT grp, (top[1] & 2147483647)::INTEGER AS utt, sum((top[1] >> 32) - coalesce(top[2] >> 32, 0)) AS lost
  FROM (SELECT grp, max((cnt::BIGINT << 32) | (CASE WHEN k = 1 THEN 2147483648 ELSE 0 END) | utt, 2) AS top FROM query_table(sblc_counts) GROUP BY grp, gram)
  WHERE (top[1] & 2147483648) <> 0 AND (len(top) = 1 OR (top[1] >> 32) > (top[2] >> 32))
  GROUP BY ALL;

-- From each text's n-gram counts per order (t1 ... t4: tid, gram, cnt; any gram type) and lengths
-- (tid, hyp_len).
CREATE OR REPLACE MACRO self_bleu_counted_from_counts(sbcc_members, sbcc_lengths, sbcc_t1, sbcc_t2, sbcc_t3, sbcc_t4) AS TABLE
  WITH mem AS MATERIALIZED (SELECT grp, tid, k FROM query_table(sbcc_members)),
  c1 AS (SELECT mem.grp, mem.tid AS utt, mem.k, t.gram, t.cnt FROM mem JOIN query_table(sbcc_t1) t USING (tid)),
  c2 AS (SELECT mem.grp, mem.tid AS utt, mem.k, t.gram, t.cnt FROM mem JOIN query_table(sbcc_t2) t USING (tid)),
  c3 AS (SELECT mem.grp, mem.tid AS utt, mem.k, t.gram, t.cnt FROM mem JOIN query_table(sbcc_t3) t USING (tid)),
  c4 AS (SELECT mem.grp, mem.tid AS utt, mem.k, t.gram, t.cnt FROM mem JOIN query_table(sbcc_t4) t USING (tid)),
  l1 AS (FROM self_bleu_lost_counted(c1)), l2 AS (FROM self_bleu_lost_counted(c2)),
  l3 AS (FROM self_bleu_lost_counted(c3)), l4 AS (FROM self_bleu_lost_counted(c4)),
  u AS (SELECT mem.grp, mem.tid AS utt, l.hyp_len, mem.k FROM mem JOIN query_table(sbcc_lengths) l USING (tid))
  FROM self_bleu_from_lost(u, l1, l2, l3, l4);

CREATE OR REPLACE MACRO self_bleu_counted_scores(sbc_members, sbc_texts) AS TABLE
  WITH t AS MATERIALIZED (SELECT tid, units FROM query_table(sbc_texts) SEMI JOIN (SELECT DISTINCT tid FROM query_table(sbc_members)) USING (tid)),
  lengths AS (SELECT tid, len(units) AS hyp_len FROM t),
  t1 AS MATERIALIZED (SELECT tid, a AS gram, count(*) AS cnt FROM (SELECT tid, unnest(units) AS a FROM t) GROUP BY ALL),
  t2 AS MATERIALIZED (SELECT tid, {'a': a, 'b': b} AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-2]) AS a, unnest(units[2:-1]) AS b FROM t) GROUP BY tid, a, b),
  t3 AS MATERIALIZED (SELECT tid, {'a': a, 'b': b, 'c': c} AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-3]) AS a, unnest(units[2:-2]) AS b, unnest(units[3:-1]) AS c FROM t) GROUP BY tid, a, b, c),
  t4 AS MATERIALIZED (SELECT tid, {'a': a, 'b': b, 'c': c, 'd': d} AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-4]) AS a, unnest(units[2:-3]) AS b, unnest(units[3:-2]) AS c, unnest(units[4:-1]) AS d FROM t) GROUP BY tid, a, b, c, d)
  FROM self_bleu_counted_from_counts(sbc_members, lengths, t1, t2, t3, t4);

-- The same for laps character units (code points, < 2^21): the n-grams packed exactly into one integer
-- each (21 bits a character), which groups several times faster than a struct.
CREATE OR REPLACE MACRO self_bleu_counted_char_scores(sbcc_members, sbcc_texts) AS TABLE
  WITH t AS MATERIALIZED (SELECT tid, units FROM query_table(sbcc_texts) SEMI JOIN (SELECT DISTINCT tid FROM query_table(sbcc_members)) USING (tid)),
  lengths AS (SELECT tid, len(units) AS hyp_len FROM t),
  t1 AS MATERIALIZED (SELECT tid, a AS gram, count(*) AS cnt FROM (SELECT tid, unnest(units) AS a FROM t) GROUP BY ALL),
  t2 AS MATERIALIZED (SELECT tid, (a::BIGINT << 21) | b AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-2]) AS a, unnest(units[2:-1]) AS b FROM t) GROUP BY ALL),
  t3 AS MATERIALIZED (SELECT tid, (a::BIGINT << 42) | (b::BIGINT << 21) | c AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-3]) AS a, unnest(units[2:-2]) AS b, unnest(units[3:-1]) AS c FROM t) GROUP BY ALL),
  t4 AS MATERIALIZED (SELECT tid, (a::HUGEINT << 63) | (b::HUGEINT << 42) | (c::HUGEINT << 21) | d AS gram, count(*) AS cnt
    FROM (SELECT tid, unnest(units[1:-4]) AS a, unnest(units[2:-3]) AS b, unnest(units[3:-2]) AS c, unnest(units[4:-1]) AS d FROM t) GROUP BY ALL)
  FROM self_bleu_counted_from_counts(sbcc_members, lengths, t1, t2, t3, t4);

-- Self-BLEU per grp: the mean over its utterances (NULL for a grp of one utterance: no references).
CREATE OR REPLACE MACRO self_bleu(sb_tbl) AS TABLE
  SELECT grp, count(*) AS n_utterances, avg(bleu) AS self_bleu FROM self_bleu_scores(sb_tbl) GROUP BY grp;

-- Protocols ---------------------------------------------------------------------------------------------

-- "full": the whole corpus of each grp at once, word tokens. Input: grp, utt, units (lexical_words of
-- the text, or those words interned as an ENUM). Utterances without any token are counted (n_empty) and
-- left out of every metric: they hold no n-gram, and as Self-BLEU hypotheses they would score 0 by
-- construction. Ent-4 uses T exactly.
CREATE OR REPLACE MACRO lexical_full_units(lfu_tbl) AS TABLE
  WITH w AS (SELECT grp, utt, units FROM query_table(lfu_tbl)),
  ne AS MATERIALIZED (SELECT * FROM w WHERE len(units) > 0),
  counts AS (SELECT grp, count(*) AS n_utterances, count(*) FILTER (len(units) = 0) AS n_empty, sum(len(units)) AS n_tokens FROM w GROUP BY grp)
  SELECT grp, 'full' AS protocol, counts.n_utterances, n_empty, n_tokens, NULL::BIGINT AS iterations,
    d1.dist AS dist_1, d2.dist AS dist_2, e4.ent AS ent_4, sb.self_bleu
  FROM counts LEFT JOIN dist_n(ne, 1) d1 USING (grp) LEFT JOIN dist_n(ne, 2) d2 USING (grp)
    LEFT JOIN ent_n(ne, 4) e4 USING (grp) LEFT JOIN self_bleu(ne) sb USING (grp);

-- The same from text (grp, utt, text); tokenises with lexical_words.
CREATE OR REPLACE MACRO lexical_full(lf_tbl) AS TABLE
  WITH w AS MATERIALIZED (SELECT grp, utt, lexical_words(text) AS units FROM query_table(lf_tbl))
  FROM lexical_full_units(w);

-- "laps": the reference procedure's subsets, drawn in TypeScript (Python's random stream):
-- Input: grp, stream ('dist' serves Dist-n and Ent-n; 'self_bleu' has the extra shuffle), iteration,
-- pos (order in the subset), text. Each metric is computed per subset (one row per grp and iteration);
-- the value is the mean over the iterations. Self-BLEU is character-level, as in the reference code.
-- Subsets are independent, so a caller may feed them in batches and average the rows at the end.
CREATE OR REPLACE MACRO lexical_laps_iterations(lli_tbl) AS TABLE
  -- One integer per (grp, iteration): the metrics group by it, and integers group faster than structs.
  WITH s AS MATERIALIZED (SELECT *, dense_rank() OVER (ORDER BY grp, iteration)::INTEGER AS gi FROM query_table(lli_tbl)),
  subsets AS (SELECT DISTINCT gi, grp, iteration FROM s),
  -- The subsets redraw the same messages: each distinct text is tokenised (and its character n-grams
  -- counted) once, and the subsets refer to it by tid.
  tx AS MATERIALIZED (SELECT text, row_number() OVER ()::INTEGER AS tid FROM (SELECT DISTINCT text FROM s)),
  tk AS MATERIALIZED (SELECT tid, laps_dist_tokens(text) AS dist_units, laps_ent_tokens(text) AS ent_units, laps_chars(text) AS units FROM tx),
  st AS MATERIALIZED (SELECT s.gi, s.stream, s.pos, tx.tid FROM s JOIN tx USING (text)),
  dt AS MATERIALIZED (SELECT st.gi AS grp, tk.dist_units AS units FROM st JOIN tk USING (tid) WHERE st.stream = 'dist'),
  et AS MATERIALIZED (SELECT st.gi AS grp, tk.ent_units AS units FROM st JOIN tk USING (tid) WHERE st.stream = 'dist'),
  cm AS MATERIALIZED (SELECT gi AS grp, pos AS utt, tid FROM st WHERE stream = 'self_bleu'),
  ct AS (SELECT tid, units FROM tk),
  sb AS (SELECT grp, avg(bleu) AS self_bleu FROM self_bleu_shared_scores(cm, ct) GROUP BY grp)
  SELECT i.grp, i.iteration, d1.dist AS dist_1, d2.dist AS dist_2, e4.ent AS ent_4, sb.self_bleu
  FROM subsets i
    LEFT JOIN dist_n(dt, 1) d1 ON d1.grp = i.gi LEFT JOIN dist_n(dt, 2) d2 ON d2.grp = i.gi
    LEFT JOIN ent_n(et, 4, 1e-10) e4 ON e4.grp = i.gi LEFT JOIN sb ON sb.grp = i.gi;

-- "laps", counted: the same per-iteration rows from multisets of texts. A subset's metrics do not depend
-- on the order of its messages (n-grams never cross messages; each Self-BLEU hypothesis is scored against
-- all the others), and the subsets redraw the same few texts many times over: members (grp, stream,
-- iteration, tid, k) say that the subset holds text tid k times, texts (tid, text) hold each text once.
-- Each distinct text is tokenised and its n-grams counted once; a subset's counts are the sums of its
-- texts' counts times k.
CREATE OR REPLACE MACRO lexical_laps_counted_iterations(llc_members, llc_texts) AS TABLE
  WITH m AS MATERIALIZED (
    SELECT *, dense_rank() OVER (ORDER BY grp, iteration)::INTEGER AS gi FROM query_table(llc_members)),
  subsets AS (SELECT DISTINCT gi, grp, iteration FROM m),
  tk AS MATERIALIZED (
    SELECT tid, laps_dist_tokens(text) AS dist_units, laps_ent_tokens(text) AS ent_units, laps_chars(text) AS units
    FROM query_table(llc_texts) SEMI JOIN (SELECT DISTINCT tid FROM m) USING (tid)),
  dm AS MATERIALIZED (SELECT gi, tid, k FROM m WHERE stream = 'dist'),
  -- per-text n-gram counts of the Dist-n and Ent-n tokens
  d1 AS (SELECT tid, a, count(*) AS cnt FROM (SELECT tid, unnest(dist_units) AS a FROM tk) GROUP BY ALL),
  d2 AS (SELECT tid, a, b, count(*) AS cnt FROM (SELECT tid, unnest(dist_units[1:-2]) AS a, unnest(dist_units[2:-1]) AS b FROM tk) GROUP BY ALL),
  e4 AS (SELECT tid, a, b, c, d, count(*) AS cnt FROM (
    SELECT tid, unnest(ent_units[1:-4]) AS a, unnest(ent_units[2:-3]) AS b, unnest(ent_units[3:-2]) AS c, unnest(ent_units[4:-1]) AS d FROM tk)
    GROUP BY ALL),
  -- each n-gram's count in each subset
  s1 AS (SELECT dm.gi AS grp, sum(dm.k * d1.cnt)::BIGINT AS c FROM dm JOIN d1 USING (tid) GROUP BY dm.gi, d1.a),
  s2 AS (SELECT dm.gi AS grp, sum(dm.k * d2.cnt)::BIGINT AS c FROM dm JOIN d2 USING (tid) GROUP BY dm.gi, d2.a, d2.b),
  s4 AS (SELECT dm.gi AS grp, sum(dm.k * e4.cnt)::BIGINT AS c FROM dm JOIN e4 USING (tid) GROUP BY dm.gi, e4.a, e4.b, e4.c, e4.d),
  dist1 AS (SELECT grp, count(*) / sum(c) AS dist FROM s1 GROUP BY grp),
  dist2 AS (SELECT grp, count(*) / sum(c) AS dist FROM s2 GROUP BY grp),
  ent4 AS (
    SELECT grp, -sum((c / (total + 1e-10)) * (ln(c) - ln(total + 1e-10))) AS ent
    FROM (SELECT grp, c, sum(c) OVER (PARTITION BY grp) AS total FROM s4) GROUP BY grp),
  cm AS MATERIALIZED (SELECT gi AS grp, tid, k FROM m WHERE stream = 'self_bleu'),
  ct AS (SELECT tid, units FROM tk),
  sb AS (SELECT grp, sum(k * bleu) / sum(k) FILTER (bleu IS NOT NULL) AS self_bleu FROM self_bleu_counted_char_scores(cm, ct) GROUP BY grp)
  SELECT i.grp, i.iteration, d1.dist AS dist_1, d2.dist AS dist_2, e4.ent AS ent_4, sb.self_bleu
  FROM subsets i
    LEFT JOIN dist1 d1 ON d1.grp = i.gi LEFT JOIN dist2 d2 ON d2.grp = i.gi
    LEFT JOIN ent4 e4 ON e4.grp = i.gi LEFT JOIN sb ON sb.grp = i.gi;

-- The laps values of per-iteration rows (grp, iteration, dist_1, dist_2, ent_4, self_bleu): means.
CREATE OR REPLACE MACRO lexical_laps_means(llm_tbl) AS TABLE
  SELECT grp, 'laps' AS protocol, NULL::BIGINT AS n_utterances, NULL::BIGINT AS n_empty, NULL::BIGINT AS n_tokens,
    count(DISTINCT iteration) AS iterations,
    avg(dist_1) AS dist_1, avg(dist_2) AS dist_2, avg(ent_4) AS ent_4, avg(self_bleu) AS self_bleu
  FROM query_table(llm_tbl)
  GROUP BY grp;

CREATE OR REPLACE MACRO lexical_laps(ll_tbl) AS TABLE
  WITH per_iteration AS (FROM lexical_laps_iterations(ll_tbl))
  FROM lexical_laps_means(per_iteration);
