-- What the build's LLM stages recorded (<workspace>/build/<stage>/*/records.parquet): per stage the
-- units done, how many replies were refused and asked again (and why the first was refused), how
-- many stayed refused or failed, and the categorical values kept beyond the schema's lists; and the
-- consistency check's flags (the paper's checker flagged 11 of its 1,500 profiles).
-- requires-file: build/*/*/records.parquet
CREATE OR REPLACE TABLE build_records AS
SELECT * FROM read_parquet(getvariable('workspace') || '/build/*/*/records.parquet', union_by_name = true);

CREATE OR REPLACE VIEW build_parse_states AS
SELECT stage, count(*) AS units,
  count(*) FILTER (status = 'ok') AS ok,
  count(*) FILTER (reasked AND status = 'ok') AS ok_when_asked_again,
  count(*) FILTER (status = 'parse_error') AS refused,
  count(*) FILTER (status = 'failed') AS failed,
  coalesce(sum(n_off_list), 0) AS off_list_values,
  coalesce(sum(n_reshaped), 0) AS reshaped_values,
  string_agg(DISTINCT coalesce(first_parse_state, parse_state), ', ' ORDER BY coalesce(first_parse_state, parse_state)) AS refusal_states
FROM build_records GROUP BY stage
ORDER BY list_position(['masks', 'preferences', 'interactions', 'sd-tasks', 'md-tasks', 'situations', 'consistency'], stage);

CREATE OR REPLACE VIEW build_consistency AS
WITH v AS (
  SELECT unit AS user_id, json_extract(value, '$.domains') AS domains, json_extract(value, '$.cross_domain.label')::INT AS cross_label
  FROM build_records WHERE stage = 'consistency' AND status = 'ok'
), d AS (
  SELECT user_id, cross_label, (SELECT count(*) FROM (SELECT unnest(json_keys(domains)) AS k) WHERE (domains -> k ->> 'label')::INT = 1) AS domain_flags
  FROM v
)
SELECT count(*) AS profiles_checked,
  count(*) FILTER (domain_flags > 0 OR cross_label = 1) AS profiles_flagged,
  count(*) FILTER (domain_flags > 0 OR cross_label = 1) / count(*) AS flagged_rate,
  sum(domain_flags) AS domain_flags,
  count(*) FILTER (cross_label = 1) AS cross_domain_flags
FROM d;
