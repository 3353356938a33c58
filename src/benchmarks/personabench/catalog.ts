import type { PaperTable } from '../../tables/catalog.js';
import type { TableGroup } from '../../tables/tables.js';

/** PERSONA-bench's tables: results per task x setting x model, by subreddit, prediction status, the settings compared. */
export const PERSONABENCH_TABLES: PaperTable[] = [
  {
    name: 'persona_results',
    title: 'PERSONA-bench: results per task, metric, setting and model',
    caption:
      'Values from the scoring stage: 3.1 sentiment accuracy / F1 / MCC, 3.2 impact RMSE / MAE, 3.3 next text ROUGE-1 / ROUGE-L / METEOR / BLEU / SBERT (best-of-n or single-sample). Scored M of N: unparsed and failed predictions are planned but not scored.',
    columns: [
      { key: 'task', label: 'Task', group: true },
      { key: 'metric', label: 'Metric', group: true },
      { key: 'mode', label: 'Mode', nullText: '' },
      { key: 'setting', label: 'Setting' },
      { key: 'model', label: 'Model' },
      { key: 'value', label: 'Value', format: 'float4', nullText: '-' },
      { key: 'scored', label: 'Scored' },
      { key: 'n_unparsed', label: 'Unparsed', format: 'int' },
      { key: 'n_failed', label: 'Failed', format: 'int' },
    ],
  },
  {
    name: 'persona_results_by_subreddit',
    title: 'PERSONA-bench: results per subreddit',
    caption: 'The results table split by the subreddit of the target.',
    columns: [
      { key: 'task', label: 'Task', group: true },
      { key: 'metric', label: 'Metric', group: true },
      { key: 'mode', label: 'Mode', nullText: '' },
      { key: 'subreddit', label: 'Subreddit' },
      { key: 'setting', label: 'Setting' },
      { key: 'model', label: 'Model' },
      { key: 'value', label: 'Value', format: 'float4', nullText: '-' },
      { key: 'scored', label: 'Scored' },
    ],
  },
  {
    name: 'persona_prediction_status',
    title: 'PERSONA-bench: prediction outcomes per cell',
    caption: 'Each request counted once, by its last try: ok, unparsed (the reply did not parse) or failed (the call failed).',
    columns: [
      { key: 'task', label: 'Task', group: true },
      { key: 'setting', label: 'Setting' },
      { key: 'model', label: 'Model' },
      { key: 'ok', label: 'OK', format: 'int' },
      { key: 'unparsed', label: 'Unparsed', format: 'int' },
      { key: 'failed', label: 'Failed', format: 'int' },
      { key: 'total', label: 'Total', format: 'int' },
    ],
  },
  {
    name: 'persona_setting_comparison',
    title: 'PERSONA-bench: settings compared on the same targets',
    caption:
      'Mean per-sample difference setting A - setting B over the targets both scored (3.1 correctness, 3.2 absolute error, 3.3 generation scores best-of-n and single-sample), with a 95% bootstrap interval clustered by user.',
    columns: [
      { key: 'task', label: 'Task', group: true },
      { key: 'metric', label: 'Metric', group: true },
      { key: 'mode', label: 'Mode', nullText: '' },
      { key: 'model', label: 'Model' },
      { key: 'setting_a', label: 'A' },
      { key: 'setting_b', label: 'B' },
      { key: 'mean_difference', label: 'A - B', format: 'float4', nullText: '-', ci: ['lo', 'hi'] },
      { key: 'n_pairs', label: 'Pairs', format: 'int' },
      { key: 'n_users', label: 'Users', format: 'int' },
    ],
  },
];

/**
 * PERSONA-bench's tables as the registry lists them. Its views exist (empty) in every warehouse,
 * so a view with no rows means no predictions or scores yet.
 */
export const PERSONABENCH_TABLE_GROUP: TableGroup = {
  holds: (relations) => relations.has('persona_results'),
  tables: PERSONABENCH_TABLES,
  emptyIsMissing: 'no PERSONA-bench predictions or scores in the workspace yet',
};
