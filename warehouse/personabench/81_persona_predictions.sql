-- PERSONA-bench predictions (one row per request key and try).
-- requires-file: persona/predictions/*/predictions.parquet
CREATE OR REPLACE TABLE persona_predictions AS SELECT * FROM read_parquet(getvariable('workspace') || '/persona/predictions/*/predictions.parquet', union_by_name = true);
