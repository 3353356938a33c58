-- Judgments from `plens judge` (<workspace>/judgments/<judge>/judgments.parquet): one row per
-- judgment key. status 'ok' carries a score (task completion: verdict and score 1/0); 'failed'
-- (the call failed) and 'parse_error' (the reply did not parse; `raw` holds it) never count.
-- requires-file: judgments/*/judgments.parquet
CREATE OR REPLACE TABLE judgments AS
SELECT "key" AS judgment_id, * EXCLUDE ("key")
FROM read_parquet(getvariable('workspace') || '/judgments/*/judgments.parquet', union_by_name = true);
