-- A built benchmark (a pipeline's build section) beside the benchmark it is compared with
-- (build.compare_with, default the source folder, imported to <workspace>/build/reference as
-- import does): Table 1, Tables 6-7 and 8-9 computed by the same macros on both sides, the situation
-- variables' distributions, and the lexical diversity of the generated texts (paper section 3 and
-- Appendix A). "released" is whatever benchmark the build was compared with.
-- requires-file: build/reference/dataset/manifest.json
-- requires: domains, tasks, scenario_pool, users, preference_schema, affinities, interactions
CREATE OR REPLACE TABLE ref_domains AS SELECT * FROM read_parquet(getvariable('workspace') || '/build/reference/dataset/domains.parquet');
CREATE OR REPLACE TABLE ref_preference_schema AS SELECT * FROM read_parquet(getvariable('workspace') || '/build/reference/dataset/preference_schema.parquet');
CREATE OR REPLACE TABLE ref_tasks AS SELECT * FROM read_parquet(getvariable('workspace') || '/build/reference/dataset/tasks.parquet');
CREATE OR REPLACE TABLE ref_users AS SELECT * FROM read_parquet(getvariable('workspace') || '/build/reference/dataset/users.parquet');
CREATE OR REPLACE TABLE ref_affinities AS SELECT * FROM read_parquet(getvariable('workspace') || '/build/reference/dataset/affinities.parquet');
CREATE OR REPLACE TABLE ref_interactions AS SELECT * FROM read_parquet(getvariable('workspace') || '/build/reference/dataset/interactions.parquet');
CREATE OR REPLACE TABLE ref_scenario_pool AS SELECT * FROM read_parquet(getvariable('workspace') || '/build/reference/dataset/scenario_pool.parquet');

-- Table 1 side by side: tasks and dialogues (user x task scenarios) per domain; MD tasks count towards each of their domains.
CREATE OR REPLACE VIEW build_table1 AS
SELECT coalesce(b.domain, r.domain) AS domain,
  b.sd_tasks AS built_sd_tasks, r.sd_tasks AS released_sd_tasks,
  b.md_tasks AS built_md_tasks, r.md_tasks AS released_md_tasks,
  b.n_dialogues AS built_dialogues, r.n_dialogues AS released_dialogues
FROM table1_of('domains', 'tasks', 'scenario_pool') b
FULL JOIN table1_of('ref_domains', 'ref_tasks', 'ref_scenario_pool') r USING (domain)
ORDER BY coalesce((SELECT position FROM domains d WHERE d.domain = coalesce(b.domain, r.domain)), 1000), domain;

-- Tables 6-7 side by side: each demographic value's count and percentage among the built and the compared users.
CREATE OR REPLACE VIEW build_table6_7 AS
SELECT coalesce(b.field, r.field) AS field, coalesce(b.field_label, r.field_label) AS field_label, coalesce(b.value, r.value) AS value,
  coalesce(b.count, 0) AS built_count, coalesce(b.percent, 0) AS built_percent,
  coalesce(r.count, 0) AS released_count, coalesce(r.percent, 0) AS released_percent
FROM table6_7_of('users') b
FULL JOIN table6_7_of('ref_users') r USING (field, value)
ORDER BY list_position(['age', 'gender', 'employment_status', 'education', 'marital_status', 'english_proficiency', 'ethnicity', 'religion', 'region'], coalesce(b.field, r.field)),
  coalesce(r.count, 0) DESC, coalesce(b.count, 0) DESC, value;

-- Tables 8-9 side by side: per preference type, the values generated (distinct, capped at the possible ones
-- for categorical types as the paper prints) and Shannon evenness, built and compared.
CREATE OR REPLACE VIEW build_table8_9 AS
SELECT coalesce(b.domain, r.domain) AS domain, coalesce(b.preference_type, r.preference_type) AS preference_type,
  coalesce(b.is_categorical, r.is_categorical) AS is_categorical, coalesce(b.n_possible, r.n_possible) AS n_possible,
  b.n_generated AS built_generated, r.n_generated AS released_generated,
  b.evenness AS built_evenness, r.evenness AS released_evenness
FROM table8_9_of('preference_schema', 'affinities', 'domains') b
FULL JOIN table8_9_of('ref_preference_schema', 'ref_affinities', 'ref_domains') r USING (domain, preference_type)
ORDER BY coalesce((SELECT position FROM domains d WHERE d.domain = coalesce(b.domain, r.domain)), 1000), domain, preference_type;

-- The situation variables (Figure 11's closed sets) over the scenarios: each value's share, built and compared.
CREATE OR REPLACE VIEW build_situations AS
WITH v AS (
  SELECT 'built' AS side, 1 AS o, 'Device' AS variable, device AS value FROM scenario_pool
  UNION ALL SELECT 'built', 2, 'Time of Day', time_of_day FROM scenario_pool
  UNION ALL SELECT 'built', 3, 'Day of the Week', day_of_week FROM scenario_pool
  UNION ALL SELECT 'built', 4, 'Environment', environment FROM scenario_pool
  UNION ALL SELECT 'released', 1, 'Device', device FROM ref_scenario_pool
  UNION ALL SELECT 'released', 2, 'Time of Day', time_of_day FROM ref_scenario_pool
  UNION ALL SELECT 'released', 3, 'Day of the Week', day_of_week FROM ref_scenario_pool
  UNION ALL SELECT 'released', 4, 'Environment', environment FROM ref_scenario_pool
), c AS (
  SELECT side, o, variable, value, count(*) AS n, count(*) / sum(count(*)) OVER (PARTITION BY side, variable) AS share
  FROM v GROUP BY side, o, variable, value
)
SELECT variable, value,
  coalesce(max(n) FILTER (side = 'built'), 0) AS built_n, coalesce(max(share) FILTER (side = 'built'), 0) AS built_share,
  coalesce(max(n) FILTER (side = 'released'), 0) AS released_n, coalesce(max(share) FILTER (side = 'released'), 0) AS released_share
FROM c GROUP BY o, variable, value
ORDER BY o, released_share DESC, built_share DESC, value;

-- The lexical diversity of the generated texts (the past-interaction summaries and the task descriptions):
-- Dist-1, Dist-2 and Ent-4 on the "full" protocol's words (02_lexical.sql), built and compared.
CREATE OR REPLACE VIEW build_lexical AS
WITH texts AS MATERIALIZED (
  SELECT side || '|' || kind AS grp, lexical_words(text) AS units FROM (
    SELECT 'built' AS side, 'past interactions' AS kind, summary AS text FROM interactions
    UNION ALL SELECT 'released', 'past interactions', summary FROM ref_interactions
    UNION ALL SELECT 'built', 'task descriptions', description FROM tasks
    UNION ALL SELECT 'released', 'task descriptions', description FROM ref_tasks
  ) WHERE text IS NOT NULL
)
SELECT split_part(grp, '|', 2) AS texts, split_part(grp, '|', 1) AS benchmark, d1.n_ngrams AS n_words, d1.dist AS dist_1, d2.dist AS dist_2, e4.ent AS ent_4
FROM dist_n(texts, 1) d1 JOIN dist_n(texts, 2) d2 USING (grp) JOIN ent_n(texts, 4) e4 USING (grp)
ORDER BY texts, benchmark;
