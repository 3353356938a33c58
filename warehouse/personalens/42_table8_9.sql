-- Tables 8-9: per domain and preference type, over all users (masked domains included):
-- categorical or not, #possible values in the schema (as written, duplicates included),
-- #generated = distinct raw value strings (capped at #possible for categorical types, as the
-- paper prints; n_distinct is uncapped), and Shannon evenness E = H / ln n of the value mentions.
-- requires: preference_schema, affinities, domains
-- A table macro over the names of a dataset's preference_schema, affinities and domains relations.
CREATE OR REPLACE MACRO table8_9_of(t89_schema, t89_affinities, t89_domains) AS TABLE
WITH mentions AS (
  SELECT domain, preference_type, value, count(*)::DOUBLE AS mentions
  FROM query_table(t89_affinities) WHERE value IS NOT NULL
  GROUP BY domain, preference_type, value
), per_type AS (
  SELECT domain, preference_type, count(*) AS n_distinct, list(mentions) AS counts
  FROM mentions GROUP BY domain, preference_type
)
SELECT
  p.domain,
  p.preference_type,
  p.is_categorical,
  CASE WHEN p.is_categorical THEN p.n_possible END AS n_possible,
  CASE WHEN p.is_categorical THEN least(coalesce(t.n_distinct, 0), p.n_possible) ELSE coalesce(t.n_distinct, 0) END AS n_generated,
  coalesce(t.n_distinct, 0) AS n_distinct,
  shannon_evenness(t.counts) AS evenness
FROM query_table(t89_schema) p
JOIN query_table(t89_domains) d USING (domain)
LEFT JOIN per_type t USING (domain, preference_type)
ORDER BY d.position, p.position;

CREATE OR REPLACE VIEW table8_9 AS FROM table8_9_of('preference_schema', 'affinities', 'domains');
