-- The normalised dataset written by `plens import` (<workspace>/dataset/*.parquet).
-- requires-file: dataset/manifest.json
CREATE OR REPLACE TABLE domains AS SELECT * FROM read_parquet(getvariable('workspace') || '/dataset/domains.parquet');
CREATE OR REPLACE TABLE preference_schema AS SELECT * FROM read_parquet(getvariable('workspace') || '/dataset/preference_schema.parquet');
CREATE OR REPLACE TABLE tasks AS SELECT * FROM read_parquet(getvariable('workspace') || '/dataset/tasks.parquet');
CREATE OR REPLACE TABLE users AS SELECT * FROM read_parquet(getvariable('workspace') || '/dataset/users.parquet');
CREATE OR REPLACE TABLE interests AS SELECT * FROM read_parquet(getvariable('workspace') || '/dataset/interests.parquet');
-- One row per value: list preferences have one row per element (position = index);
-- an empty list is kept as one row with value NULL.
CREATE OR REPLACE TABLE affinities AS SELECT * FROM read_parquet(getvariable('workspace') || '/dataset/affinities.parquet');
CREATE OR REPLACE TABLE interactions AS SELECT * FROM read_parquet(getvariable('workspace') || '/dataset/interactions.parquet');
-- Every scenario the dataset defines (user x task with situational context).
CREATE OR REPLACE TABLE scenario_pool AS SELECT * FROM read_parquet(getvariable('workspace') || '/dataset/scenario_pool.parquet');
