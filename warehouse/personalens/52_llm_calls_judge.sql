-- The judge's calls, next to the dialogue stage's in llm_calls.
-- requires-file: judgments/*/calls.parquet
-- requires: llm_calls
INSERT INTO llm_calls BY NAME
SELECT 'judge' AS stage, "key" AS work_key, * EXCLUDE ("key")
FROM read_parquet(getvariable('workspace') || '/judgments/*/calls.parquet', union_by_name = true);
