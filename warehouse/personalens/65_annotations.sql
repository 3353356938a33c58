-- Human labels from `plens annotate import` (<workspace>/annotation/labels.parquet), long form: one row
-- per sample, annotator, dialogue, dimension and target with a score (empty cells are not rows).
-- dimension and target take the judgments table's values, so labels pair with the judge's scores.
-- requires-file: annotation/labels.parquet
CREATE OR REPLACE TABLE annotations AS SELECT * FROM read_parquet(getvariable('workspace') || '/annotation/labels.parquet');
