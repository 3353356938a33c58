-- PERSONA-bench stage outputs, loaded when `plens` has written them (see 81_persona_empty.sql for
-- the empty stand-ins a PersonaLens-only workspace gets).
-- requires-file: persona/scores/metrics.parquet, persona/scores/sample_scores.parquet
CREATE OR REPLACE TABLE persona_metrics AS SELECT * FROM read_parquet(getvariable('workspace') || '/persona/scores/metrics.parquet');
CREATE OR REPLACE TABLE persona_sample_scores AS SELECT * FROM read_parquet(getvariable('workspace') || '/persona/scores/sample_scores.parquet');
