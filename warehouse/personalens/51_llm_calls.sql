-- Every LLM call the stages made or served from the cache: usage, latency, attempts, and cost
-- (0 when the cache or a shared identical call answered it, so sum(cost_usd) is what was spent).
-- work_key is the dialogue's key (stage dialogues) or the judgment's key (stage judge). No prompt
-- text: join turns on (work_key = dialogue_id, turn) to read what was said.
-- requires-file: dialogues/*/calls.parquet
CREATE OR REPLACE TABLE llm_calls AS
SELECT 'dialogues' AS stage, "key" AS work_key, * EXCLUDE ("key")
FROM read_parquet(getvariable('workspace') || '/dialogues/*/calls.parquet', union_by_name = true);
