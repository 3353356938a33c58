-- Table 1: tasks and dialogues per domain. MD tasks (and their scenarios) count towards each
-- of their relevant domains; dialogues are the dataset's scenarios over all users.
-- A table macro over the names of a dataset's domains, tasks and scenario_pool relations, so a built
-- benchmark and the released one are counted by the same SQL (46_build_validation.sql).
-- requires: domains, tasks, scenario_pool
CREATE OR REPLACE MACRO table1_of(t1_domains, t1_tasks, t1_pool) AS TABLE
WITH task_domains AS (
  SELECT kind, unnest(relevant_domains) AS domain FROM query_table(t1_tasks)
), scenario_domains AS (
  SELECT kind, unnest(relevant_domains) AS domain FROM query_table(t1_pool)
), t AS (
  SELECT domain, count(*) FILTER (kind = 'SD') AS sd, count(*) FILTER (kind = 'MD') AS md FROM task_domains GROUP BY domain
), s AS (
  SELECT domain, count(*) FILTER (kind = 'SD') AS sd, count(*) FILTER (kind = 'MD') AS md FROM scenario_domains GROUP BY domain
)
SELECT
  d.domain,
  coalesce(t.sd, 0) + coalesce(t.md, 0) AS n_tasks,
  coalesce(s.sd, 0) + coalesce(s.md, 0) AS n_dialogues,
  coalesce(t.sd, 0) AS sd_tasks,
  coalesce(t.md, 0) AS md_tasks,
  coalesce(s.sd, 0) AS sd_dialogues,
  coalesce(s.md, 0) AS md_dialogues
FROM query_table(t1_domains) d
LEFT JOIN t USING (domain)
LEFT JOIN s USING (domain)
ORDER BY d.position;

CREATE OR REPLACE VIEW table1 AS FROM table1_of('domains', 'tasks', 'scenario_pool');
