-- Every LLM call the stages made or served from the cache: usage, latency, attempts, cost.
-- No prompt text: join turns on (dialogue_id, turn) to read what was said.
-- requires-file: dialogues/*/calls.parquet
CREATE OR REPLACE TABLE llm_calls AS
SELECT 'dialogues' AS stage, "key" AS dialogue_id, * EXCLUDE ("key")
FROM read_parquet(getvariable('workspace') || '/dialogues/*/calls.parquet', union_by_name = true);
