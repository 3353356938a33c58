import type { MetadataPart } from '../../report/metadata.js';
import { personaComparison } from './comparison.js';

/** PERSONA-bench's part of the report's metadata: its models compared, and its models and predictions in the summary. */
export const PERSONABENCH_METADATA: MetadataPart = {
  comparison: [{ view: 'persona_results', requires: ['persona_result_intervals'], build: personaComparison }],
  counts: [
    // PERSONA-bench (its tables exist, empty, in every warehouse: an empty one gives no figure).
    {
      label: 'PERSONA-bench models',
      requires: 'persona_predictions',
      // The simulator's caveat once, after the list (not after each of its names).
      sql: `SELECT string_agg(model, ', ' ORDER BY model) || CASE WHEN bool_or(model LIKE 'sim:%')
      THEN ' (sim:* is the offline simulator, not a model: its numbers show the pipeline working, not any model''s quality)' ELSE '' END AS v
      FROM (SELECT DISTINCT model FROM persona_predictions)`,
    },
    {
      label: 'PERSONA-bench predictions (scored / unparsed / failed)',
      requires: 'persona_prediction_status',
      sql: "SELECT CASE WHEN sum(total) > 0 THEN format('{:,} / {:,} / {:,}', sum(ok)::BIGINT, sum(unparsed)::BIGINT, sum(failed)::BIGINT) END AS v FROM persona_prediction_status",
    },
  ],
};
