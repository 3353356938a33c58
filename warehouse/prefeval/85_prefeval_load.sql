-- PrefEval: the answered questions (prefeval/responses/*/responses.parquet, one row per task,
-- baseline, inter-turn count and model) and the judge's four checks of each (prefeval/checks/).
-- requires-file: prefeval/responses/*/responses.parquet
CREATE OR REPLACE TABLE prefeval_responses AS
SELECT * FROM read_parquet(getvariable('workspace') || '/prefeval/responses/*/responses.parquet', union_by_name = true);
