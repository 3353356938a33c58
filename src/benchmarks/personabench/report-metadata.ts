import type { MetadataPart } from '../../report/metadata.js';

/** PERSONA-bench's part of the report's metadata: its models and predictions in the summary. */
export const PERSONABENCH_METADATA: MetadataPart = {
  counts: [
    // PERSONA-bench (its tables exist, empty, in every warehouse: an empty one gives no figure).
    {
      label: 'PERSONA-bench models',
      requires: 'persona_predictions',
      sql: `SELECT string_agg(m, ', ' ORDER BY m) AS v FROM (SELECT DISTINCT model || CASE WHEN model LIKE 'sim:%'
      THEN ' (offline simulator, not a model: its numbers show the pipeline working, not any model''s quality)' ELSE '' END AS m FROM persona_predictions)`,
    },
    {
      label: 'PERSONA-bench predictions (scored / unparsed / failed)',
      requires: 'persona_prediction_status',
      sql: "SELECT CASE WHEN sum(total) > 0 THEN format('{:,} / {:,} / {:,}', sum(ok)::BIGINT, sum(unparsed)::BIGINT, sum(failed)::BIGINT) END AS v FROM persona_prediction_status",
    },
  ],
};
