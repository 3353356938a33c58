-- Result tables of the paper, from the judgments. Every mean comes with its n and a seeded 95%
-- bootstrap interval (histogram_ci95 over score histograms, in 00_macros.sql), computed once per
-- distinct histogram of a view (the ci CTEs) and seeded by the histogram itself: the same scores get
-- the same interval in every view. Failures and unreadable replies are counted in judgment_status and never
-- enter a mean.
-- requires: judgments, dialogues

-- Columns later plens versions record (judge-stage.ts); judgments of older workspaces lack them.
-- turn_scores: the chain-of-turn judgment's score per assistant turn; original_score: the reply as
-- the released gather script reads it (src/personalens/original-scoring.ts).
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS turn_scores INTEGER[];
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS original_score INTEGER;

CREATE OR REPLACE VIEW judgment_status AS
SELECT judge_model, judge_prompt_version, assistant_model, setting, kind, dimension, target,
  turn IS NOT NULL OR dimension = 'personalization_chain' AS turn_level,
  count(*) FILTER (status = 'ok') AS n_ok,
  count(*) FILTER (status = 'failed') AS n_failed,
  count(*) FILTER (status = 'parse_error') AS n_unparsed
FROM judgments GROUP BY ALL ORDER BY ALL;

-- Every judgment with its experiment configuration. `run` (a short hash) names one configuration:
-- the judge (model, sampling, prompt version) and the dialogues (user model, both agents' sampling,
-- dialogue prompt version). Every result view groups by it, so two configurations are never
-- averaged together.
CREATE OR REPLACE VIEW judgment_configs AS
WITH c AS (
  SELECT j.*,
    concat_ws(' | ', j.judge_model, 'temperature ' || j.judge_temperature, 'max_tokens ' || j.judge_max_tokens, 'prompts ' || j.judge_prompt_version) AS judge_config,
    concat_ws(' | ', 'assistant temperature ' || d.assistant_temperature, 'max_tokens ' || d.assistant_max_tokens,
      'user ' || d.user_model, 'temperature ' || d.user_temperature, 'max_tokens ' || d.user_max_tokens, 'prompts ' || d.prompt_version) AS dialogue_config
  FROM judgments j JOIN dialogues d USING (dialogue_id)
)
SELECT *, left(md5(judge_config || ' || ' || dialogue_config), 6) AS run FROM c;

-- One row per judged dialogue and judge configuration: its dialogue-level scores (NULL where missing
-- or not ok). A table, built once with the warehouse: pivoting every judgment is the costly part of
-- each view that reads it (plens tables --exclude-flagged filters this table too).
CREATE OR REPLACE TABLE dialogue_scores AS
WITH j AS (SELECT * FROM judgment_configs)
SELECT judge_model, judge_config, dialogue_config, run, dialogue_id,
  any_value(scenario_id) AS scenario_id, any_value(kind) AS kind, any_value(setting) AS setting,
  any_value(assistant_model) AS assistant_model, any_value(user_model) AS user_model, any_value(replicate) AS replicate,
  any_value(relevant_domains) AS relevant_domains,
  max(score) FILTER (dimension = 'task_completion' AND status = 'ok') AS tc,
  max(score) FILTER (dimension = 'personalization' AND status = 'ok') AS p,
  max(score) FILTER (dimension = 'naturalness' AND target = 'assistant' AND status = 'ok') AS nat_a,
  max(score) FILTER (dimension = 'coherence' AND target = 'assistant' AND status = 'ok') AS coh_a,
  max(score) FILTER (dimension = 'naturalness' AND target = 'user' AND status = 'ok') AS nat_u,
  max(score) FILTER (dimension = 'coherence' AND target = 'user' AND status = 'ok') AS coh_u,
  count(*) FILTER (status = 'failed') AS n_failed,
  count(*) FILTER (status = 'parse_error') AS n_unparsed,
  -- Task completion as the released gather script counts it: 1/0 for every reply, an unparsed one
  -- included (0 unless its first VERDICT match says True); NULL when the call failed or the reply
  -- was recorded before plens kept this reading.
  max(original_score) FILTER (dimension = 'task_completion' AND status <> 'failed') AS tc_original,
  count(*) FILTER (dimension = 'task_completion' AND status = 'parse_error') AS tc_unparsed
FROM j WHERE turn IS NULL AND dimension <> 'personalization_chain'
GROUP BY judge_model, judge_config, dialogue_config, run, dialogue_id;

-- What each run id stands for.
CREATE OR REPLACE VIEW result_runs AS
SELECT DISTINCT run, judge_model, judge_config, dialogue_config FROM dialogue_scores ORDER BY run;

-- Table 3: per assistant and task kind, base setting: TCR (%), P, assistant naturalness and coherence.
CREATE OR REPLACE VIEW table3 AS
WITH g AS (
  SELECT judge_model, run, assistant_model, kind, count(*) AS n_dialogues,
    map_entries(histogram(tc)) AS tc, map_entries(histogram(p)) AS p,
    map_entries(histogram(nat_a)) AS nat, map_entries(histogram(coh_a)) AS coh,
    sum(n_failed) AS n_failed, sum(n_unparsed) AS n_unparsed,
    sum(tc_unparsed) AS n_tc_unparsed, count(tc_original) AS n_tc_original, 100 * avg(tc_original) AS tcr_original
  FROM dialogue_scores WHERE setting = 'base' GROUP BY ALL
), ci AS (SELECT h, histogram_ci95(h) AS ci FROM (SELECT tc AS h FROM g UNION SELECT p FROM g UNION SELECT nat FROM g UNION SELECT coh FROM g)),
c AS (
  SELECT g.*, tc_ci.ci AS tc_ci, p_ci.ci AS p_ci, nat_ci.ci AS nat_ci, coh_ci.ci AS coh_ci
  FROM g LEFT JOIN ci tc_ci ON tc_ci.h = g.tc LEFT JOIN ci p_ci ON p_ci.h = g.p LEFT JOIN ci nat_ci ON nat_ci.h = g.nat LEFT JOIN ci coh_ci ON coh_ci.h = g.coh
)
SELECT judge_model, run, assistant_model, kind, n_dialogues,
  histogram_n(tc) AS n_tc, 100 * histogram_mean(tc) AS tcr, 100 * tc_ci.lo AS tcr_lo, 100 * tc_ci.hi AS tcr_hi,
  histogram_n(p) AS n_p, histogram_mean(p) AS p, p_ci.lo AS p_lo, p_ci.hi AS p_hi,
  histogram_n(nat) AS n_nat, histogram_mean(nat) AS nat, nat_ci.lo AS nat_lo, nat_ci.hi AS nat_hi,
  histogram_n(coh) AS n_coh, histogram_mean(coh) AS coh, coh_ci.lo AS coh_lo, coh_ci.hi AS coh_hi,
  n_failed, n_unparsed,
  -- TCR over parsed verdicts (tcr) beside the unparsed ones and the original script's count.
  n_tc_unparsed, n_tc_original, tcr_original
FROM c ORDER BY judge_model, run, assistant_model, kind DESC;

-- Table 4: the settings ablation, TCR and P for SD and MD, per assistant.
CREATE OR REPLACE VIEW table4 AS
WITH g AS (
  SELECT judge_model, run, assistant_model, setting, kind, map_entries(histogram(tc)) AS tc, map_entries(histogram(p)) AS p,
    sum(n_failed) + sum(n_unparsed) AS n_not_scored,
    sum(tc_unparsed) AS tc_unparsed, 100 * avg(tc_original) AS tcr_original
  FROM dialogue_scores GROUP BY ALL
), ci AS (SELECT h, histogram_ci95(h) AS ci FROM (SELECT tc AS h FROM g UNION SELECT p FROM g)),
c AS (SELECT g.*, tc_ci.ci AS tc_ci, p_ci.ci AS p_ci FROM g LEFT JOIN ci tc_ci ON tc_ci.h = g.tc LEFT JOIN ci p_ci ON p_ci.h = g.p)
SELECT judge_model, run, assistant_model, setting,
  any_value(histogram_n(tc)) FILTER (kind = 'SD') AS sd_n, any_value(100 * histogram_mean(tc)) FILTER (kind = 'SD') AS sd_tcr,
  any_value(100 * tc_ci.lo) FILTER (kind = 'SD') AS sd_tcr_lo, any_value(100 * tc_ci.hi) FILTER (kind = 'SD') AS sd_tcr_hi,
  any_value(histogram_mean(p)) FILTER (kind = 'SD') AS sd_p, any_value(p_ci.lo) FILTER (kind = 'SD') AS sd_p_lo, any_value(p_ci.hi) FILTER (kind = 'SD') AS sd_p_hi,
  any_value(histogram_n(tc)) FILTER (kind = 'MD') AS md_n, any_value(100 * histogram_mean(tc)) FILTER (kind = 'MD') AS md_tcr,
  any_value(100 * tc_ci.lo) FILTER (kind = 'MD') AS md_tcr_lo, any_value(100 * tc_ci.hi) FILTER (kind = 'MD') AS md_tcr_hi,
  any_value(histogram_mean(p)) FILTER (kind = 'MD') AS md_p, any_value(p_ci.lo) FILTER (kind = 'MD') AS md_p_lo, any_value(p_ci.hi) FILTER (kind = 'MD') AS md_p_hi,
  sum(n_not_scored) AS n_not_scored,
  any_value(tc_unparsed) FILTER (kind = 'SD') AS sd_tc_unparsed, any_value(tcr_original) FILTER (kind = 'SD') AS sd_tcr_original,
  any_value(tc_unparsed) FILTER (kind = 'MD') AS md_tc_unparsed, any_value(tcr_original) FILTER (kind = 'MD') AS md_tcr_original
FROM c GROUP BY judge_model, run, assistant_model, setting
ORDER BY judge_model, run, assistant_model,
  list_position(['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'], setting), setting;

-- Table 12: the user agent's naturalness and coherence, per assistant it talked to and task kind
-- (base setting; the original always reports SD and MD apart).
CREATE OR REPLACE VIEW table12 AS
WITH g AS (
  SELECT judge_model, run, assistant_model, kind, map_entries(histogram(nat_u)) AS nat, map_entries(histogram(coh_u)) AS coh
  FROM dialogue_scores WHERE setting = 'base' GROUP BY ALL
), ci AS (SELECT h, histogram_ci95(h) AS ci FROM (SELECT nat AS h FROM g UNION SELECT coh FROM g)),
c AS (SELECT g.*, nat_ci.ci AS nat_ci, coh_ci.ci AS coh_ci FROM g LEFT JOIN ci nat_ci ON nat_ci.h = g.nat LEFT JOIN ci coh_ci ON coh_ci.h = g.coh)
SELECT judge_model, run, assistant_model, kind, histogram_n(nat) AS n_nat, histogram_mean(nat) AS nat, nat_ci.lo AS nat_lo, nat_ci.hi AS nat_hi,
  histogram_n(coh) AS n_coh, histogram_mean(coh) AS coh, coh_ci.lo AS coh_lo, coh_ci.hi AS coh_hi
FROM c ORDER BY judge_model, run, assistant_model, kind DESC;

-- Figure 4: TCR and P per domain and task kind (SD and MD apart, as the original reports them);
-- an MD dialogue counts towards each of its domains.
CREATE OR REPLACE VIEW figure4 AS
WITH d AS (SELECT *, unnest(relevant_domains) AS domain FROM dialogue_scores),
g AS (
  SELECT judge_model, run, assistant_model, setting, kind, domain, map_entries(histogram(tc)) AS tc, map_entries(histogram(p)) AS p
  FROM d GROUP BY ALL
), ci AS (SELECT h, histogram_ci95(h) AS ci FROM (SELECT tc AS h FROM g UNION SELECT p FROM g)),
c AS (SELECT g.*, tc_ci.ci AS tc_ci, p_ci.ci AS p_ci FROM g LEFT JOIN ci tc_ci ON tc_ci.h = g.tc LEFT JOIN ci p_ci ON p_ci.h = g.p)
SELECT judge_model, run, assistant_model, setting, kind, domain, histogram_n(tc) AS n_tc, 100 * histogram_mean(tc) AS tcr, 100 * tc_ci.lo AS tcr_lo, 100 * tc_ci.hi AS tcr_hi,
  histogram_n(p) AS n_p, histogram_mean(p) AS p, p_ci.lo AS p_lo, p_ci.hi AS p_hi
FROM c ORDER BY judge_model, run, assistant_model, setting, kind DESC, domain;

-- Figure 5: turn-level personalization, mean P after each assistant turn, per domain, by method:
-- 'per_prefix' (dimension personalization_turns: one judgment of each prefix ending with an
-- assistant turn) or 'chain_of_turn' (dimension personalization_chain, the original's prompt: one
-- judgment per dialogue holding a score per assistant turn).
CREATE OR REPLACE VIEW figure5 AS
WITH s AS (
  SELECT judge_model, run, assistant_model, setting, relevant_domains, 'per_prefix' AS method, turn, score
  FROM judgment_configs WHERE dimension = 'personalization' AND turn IS NOT NULL AND status = 'ok'
  UNION ALL
  SELECT judge_model, run, assistant_model, setting, relevant_domains, 'chain_of_turn' AS method,
    unnest(generate_series(1, len(turn_scores))) AS turn, unnest(turn_scores) AS score
  FROM judgment_configs WHERE dimension = 'personalization_chain' AND status = 'ok'
), t AS (SELECT * EXCLUDE (relevant_domains), unnest(relevant_domains) AS domain FROM s),
g AS (SELECT judge_model, run, assistant_model, setting, method, domain, turn, map_entries(histogram(score)) AS p FROM t GROUP BY ALL),
ci AS (SELECT h, histogram_ci95(h) AS ci FROM (SELECT DISTINCT p AS h FROM g)),
c AS (SELECT g.*, ci.ci FROM g LEFT JOIN ci ON ci.h = g.p)
SELECT judge_model, run, assistant_model, setting, method, domain, turn, histogram_n(p) AS n, histogram_mean(p) AS p, ci.lo AS p_lo, ci.hi AS p_hi
FROM c ORDER BY judge_model, run, assistant_model, setting, method DESC, domain, turn;

-- Paired comparison: two cells (assistant | setting) of the same run (same judge configuration and
-- same dialogue configuration) on the same scenarios (first replicate): the mean difference b - a
-- of TC (in points) and P, with intervals.
CREATE OR REPLACE VIEW paired_differences AS
WITH s AS MATERIALIZED (
  SELECT judge_model, run, kind, scenario_id, assistant_model || ' | ' || setting AS cell, tc, p
  FROM dialogue_scores WHERE replicate = 0
), pairs AS (
  SELECT a.judge_model, a.run, a.kind, a.cell AS cell_a, b.cell AS cell_b,
    map_entries(histogram(100 * (b.tc - a.tc))) AS d_tc,
    map_entries(histogram(b.p - a.p)) AS d_p
  FROM s a JOIN s b ON a.run = b.run AND a.kind = b.kind AND a.scenario_id = b.scenario_id AND a.cell < b.cell
  GROUP BY ALL
), ci AS (SELECT h, histogram_ci95(h) AS ci FROM (SELECT d_tc AS h FROM pairs UNION SELECT d_p FROM pairs)),
c AS (SELECT pairs.*, tc_ci.ci AS tc_ci, p_ci.ci AS p_ci FROM pairs LEFT JOIN ci tc_ci ON tc_ci.h = pairs.d_tc LEFT JOIN ci p_ci ON p_ci.h = pairs.d_p)
SELECT judge_model, run, kind, cell_a, cell_b, histogram_n(d_tc) AS n_tc, histogram_mean(d_tc) AS d_tcr, tc_ci.lo AS d_tcr_lo, tc_ci.hi AS d_tcr_hi,
  histogram_n(d_p) AS n_p, histogram_mean(d_p) AS d_p, p_ci.lo AS d_p_lo, p_ci.hi AS d_p_hi
FROM c ORDER BY judge_model, run, kind DESC, cell_a, cell_b;
