-- The scenarios selected by `plens scenarios` for this experiment.
-- requires-file: scenarios/scenarios.parquet
CREATE OR REPLACE TABLE scenarios AS SELECT * FROM read_parquet(getvariable('workspace') || '/scenarios/scenarios.parquet');
