-- Run records (<workspace>/runs/<run_id>.json, src/engine/run-record.ts): what produced each
-- number. Every real run of an LLM stage (dialogues, judge, persona-predict) writes one, and so may
-- a make run (kind 'make'; its stages name it as parent_run_id). Every call event carries its run's
-- run_id (llm_calls.run_id), so any result joins through its calls to the run that made it (see
-- result_stage_runs in 64_result_runs.sql). `record` keeps the whole record as JSON; a file that is
-- not JSON keeps only its file name and run_id. status is running until the run ends (a run killed
-- outright stays running); failed means it stopped on an error, while units of work that failed in a
-- finished run are counted in counts['failed'].
-- requires-file: runs/*.json
CREATE OR REPLACE TABLE runs AS
WITH f AS (
  SELECT filename, TRY_CAST(content AS JSON) AS record FROM read_text(getvariable('workspace') || '/runs/*.json')
), r AS (
  SELECT filename, record, json_transform(record, '{
    "record_version": "INTEGER", "run_id": "VARCHAR", "kind": "VARCHAR", "name": "VARCHAR", "parent_run_id": "VARCHAR",
    "spec": {
      "benchmark": "VARCHAR",
      "models": [{"role": "VARCHAR", "spec": "VARCHAR"}],
      "prompts": {"dir": "VARCHAR", "sha256": "VARCHAR"},
      "pipeline": {"name": "VARCHAR", "file": "VARCHAR", "sha256": "VARCHAR"},
      "dataset_fingerprint": "VARCHAR"
    },
    "provenance": {
      "plens_version": "VARCHAR", "git_revision": "VARCHAR", "node_version": "VARCHAR", "duckdb_version": "VARCHAR",
      "host": "VARCHAR", "platform": "VARCHAR"
    },
    "outcome": {
      "status": "VARCHAR", "started_at": "TIMESTAMP", "ended_at": "TIMESTAMP", "elapsed_ms": "BIGINT",
      "counts": "MAP(VARCHAR, BIGINT)",
      "spend": {"by_model": "MAP(VARCHAR, STRUCT(calls BIGINT, cached_calls BIGINT, cost_usd DOUBLE))"},
      "error": "VARCHAR"
    }
  }') AS t
  FROM f
)
SELECT
  coalesce(t.run_id, regexp_extract(filename, '([^/\\]+)\.json$', 1)) AS run_id,
  t.kind, t.name, t.parent_run_id, t.outcome.status AS status,
  t.outcome.started_at AS started_at, t.outcome.ended_at AS ended_at, t.outcome.elapsed_ms AS elapsed_ms,
  t.provenance.plens_version AS plens_version, t.provenance.git_revision AS git_revision,
  t.provenance.node_version AS node_version, t.provenance.duckdb_version AS duckdb_version,
  t.provenance.host AS host, t.provenance.platform AS platform,
  t.spec.benchmark AS benchmark,
  t.spec.pipeline.name AS pipeline_name, t.spec.pipeline.file AS pipeline_file, t.spec.pipeline.sha256 AS pipeline_sha256,
  t.spec.prompts.dir AS prompts_dir, t.spec.prompts.sha256 AS prompts_sha256,
  t.spec.dataset_fingerprint AS dataset_fingerprint,
  t.spec.models AS models,
  record -> '$.spec.limits' AS limits,
  record -> '$.spec.settings' AS settings,
  t.outcome.counts AS counts,
  -- What the run's calls cost now (cache answers cost nothing); unknown while it runs.
  CASE WHEN t.outcome.status IS NULL OR t.outcome.status = 'running' THEN NULL
    ELSE coalesce(list_sum(list_transform(map_values(t.outcome.spend.by_model), m -> m.cost_usd)), 0) END AS cost_usd,
  t.outcome.error AS error,
  t.record_version AS record_version,
  record,
  filename AS file
FROM r
ORDER BY started_at, run_id;
