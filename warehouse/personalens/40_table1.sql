-- Table 1: tasks and dialogues per domain. MD tasks (and their scenarios) count towards each
-- of their relevant domains; dialogues are the dataset's scenarios over all users.
-- requires: domains, tasks, scenario_pool
CREATE OR REPLACE VIEW table1 AS
WITH task_domains AS (
  SELECT kind, unnest(relevant_domains) AS domain FROM tasks
), scenario_domains AS (
  SELECT kind, unnest(relevant_domains) AS domain FROM scenario_pool
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
FROM domains d
LEFT JOIN t USING (domain)
LEFT JOIN s USING (domain)
ORDER BY d.position;
