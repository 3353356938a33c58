-- Dialogues from `plens dialogues` (<workspace>/dialogues/<cell>/dialogues.parquet, one row per key:
-- a result, or a failure with its reason; failures never count as results in any view).
-- Loaded before the dataset: Table 10's step needs only these two tables, so it starts on a second
-- connection beside the dataset's load instead of after it.
-- requires-file: dialogues/*/dialogues.parquet
CREATE OR REPLACE TABLE dialogues AS
SELECT "key" AS dialogue_id, * EXCLUDE ("key")
FROM read_parquet(getvariable('workspace') || '/dialogues/*/dialogues.parquet', union_by_name = true);

-- One row per utterance, in order (turn 0 is the user's opening message).
CREATE OR REPLACE TABLE turns AS
SELECT
  d.dialogue_id, d.scenario_id, d.user_id, d.task_id, d.kind, d.setting, d.assistant_model, d.user_model, d.status,
  m.turn, m.message.role AS speaker, m.message.content AS text,
  m.message.input_tokens, m.message.output_tokens, m.message.latency_ms, m.message.finish_reason
FROM dialogues d,
  LATERAL (SELECT unnest(generate_series(0, len(d.messages) - 1)) AS turn, unnest(d.messages) AS message) m
ORDER BY d.dialogue_id, m.turn;
