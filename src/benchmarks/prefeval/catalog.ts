import type { PaperTable } from '../../tables/catalog.js';
import type { TableGroup } from '../../tables/tables.js';

const CONFIG = [
  { key: 'model', label: 'Model', group: true },
  { key: 'judge_model', label: 'Judge', group: true },
  { key: 'form', label: 'Form' },
  { key: 'baseline', label: 'Baseline' },
  { key: 'inter_turns', label: 'Turns', format: 'int' },
] as const;

/** The paired comparisons' columns (the generation task's name the judge). */
function pairedColumns(judge: boolean): PaperTable['columns'] {
  return [
    { key: 'comparison', label: 'Comparison', group: true },
    { key: 'model', label: 'Model', nullText: '-' },
    ...(judge ? [{ key: 'judge_model', label: 'Judge' }] : []),
    { key: 'form', label: 'Form' },
    { key: 'inter_turns', label: 'Turns', format: 'int' },
    { key: 'a', label: 'A' },
    { key: 'b', label: 'B' },
    { key: 'n_pairs', label: 'Pairs', format: 'int' },
    { key: 'accuracy_a', label: 'Acc. A', format: 'float2' },
    { key: 'accuracy_b', label: 'Acc. B', format: 'float2' },
    { key: 'difference', label: 'B - A', format: 'float2' },
    { key: 'difference_lo', label: 'lo', format: 'float2', nullText: '-' },
    { key: 'difference_hi', label: 'hi', format: 'float2', nullText: '-' },
    { key: 'mde', label: 'MDE', format: 'float2', nullText: '-' },
    { key: 'n_a_only', label: 'A only', format: 'int' },
    { key: 'n_b_only', label: 'B only', format: 'int' },
    { key: 'p_mcnemar', label: 'p (McNemar)', format: 'float3' },
  ];
}

/** PrefEval's tables: the leaderboard's accuracy with its error types, and the same per topic. */
export const PREFEVAL_TABLES: PaperTable[] = [
  {
    name: 'prefeval_results',
    title: 'PrefEval: preference-following accuracy',
    optional: true,
    missingHint: 'not in the warehouse: the generation task did not run (prefeval.tasks holds generation by default), or its checks are missing',
    caption:
      "Generation task, per preference form (explicit: stated; choice and persona: implicit, revealed in a conversation): the share of judged responses with none of the original's four errors (unhelpful, inconsistent, hallucinated preference with a violation, preference-unaware violation), with a 95% Wilson interval, per model, form, baseline and number of filler turns between the preference and the question (the README leaderboard's layout). Failed calls are counted apart, never scored.",
    columns: [
      ...CONFIG,
      { key: 'n', label: 'n', format: 'int' },
      { key: 'accuracy', label: 'Accuracy', format: 'float2' },
      { key: 'accuracy_lo', label: 'lo', format: 'float2' },
      { key: 'accuracy_hi', label: 'hi', format: 'float2' },
      { key: 'n_acknowledged', label: 'Acknowledged', format: 'int' },
      { key: 'n_unhelpful', label: 'Unhelpful', format: 'int' },
      { key: 'n_inconsistent', label: 'Inconsistent', format: 'int' },
      { key: 'n_hallucinated_violation', label: 'Hallucinated + violated', format: 'int' },
      { key: 'n_unaware_violation', label: 'Unaware violation', format: 'int' },
      { key: 'n_failed_responses', label: 'Failed responses', format: 'int' },
      { key: 'n_failed_checks', label: 'Failed checks', format: 'int' },
    ],
  },
  {
    name: 'prefeval_by_topic',
    title: 'PrefEval: accuracy per topic',
    optional: true,
    caption: 'The accuracy and error counts of prefeval_results, per topic.',
    columns: [
      ...CONFIG,
      { key: 'topic', label: 'Topic' },
      { key: 'n', label: 'n', format: 'int' },
      { key: 'accuracy', label: 'Accuracy', format: 'float2' },
      { key: 'n_unhelpful', label: 'Unhelpful', format: 'int' },
      { key: 'n_inconsistent', label: 'Inconsistent', format: 'int' },
      { key: 'n_hallucinated_violation', label: 'Hallucinated + violated', format: 'int' },
      { key: 'n_unaware_violation', label: 'Unaware violation', format: 'int' },
    ],
  },
  {
    name: 'prefeval_paired',
    title: 'PrefEval: paired comparisons',
    optional: true,
    caption:
      "The same preferences answered two ways at the same number of filler turns: each baseline against zero-shot for a model, and each pair of models for a baseline. Accuracy on each side over the pairs judged on both, the difference (b - a) with a 95% Bayesian-bootstrap interval over preferences and its minimum detectable effect (80% power), and McNemar's exact p on the discordant pairs.",
    columns: pairedColumns(true),
  },
  {
    name: 'prefeval_leaderboard',
    title: "PrefEval: plens beside the README's leaderboard",
    optional: true,
    missingHint: "not in the warehouse: it needs prefeval.published in the pipeline (each model's row of the checkout README's leaderboard), then plens make",
    caption:
      "For each model mapped to a row of the PrefEval README's leaderboard (prefeval.published): the published accuracy and plens's on the same protocol (travel_restaurant, explicit preferences, generation task), per baseline and number of filler turns. Published figures are read from your checkout at run time.",
    columns: [
      { key: 'published_as', label: 'Leaderboard row', group: true },
      { key: 'model', label: 'Model' },
      { key: 'judge_model', label: 'Judge', nullText: '-' },
      { key: 'baseline', label: 'Baseline' },
      { key: 'inter_turns', label: 'Turns', format: 'int' },
      { key: 'n', label: 'n', format: 'int', nullText: '-' },
      { key: 'accuracy', label: 'plens', format: 'float2', nullText: '-' },
      { key: 'published', label: 'Published', format: 'float2', nullText: '-' },
      { key: 'difference', label: 'plens - published', format: 'float2', nullText: '-' },
    ],
  },
];

const MCQ_MISSING = 'not in the warehouse: the classification task did not run (add classification to prefeval.tasks, then plens make)';

/** The classification task's tables. */
export const PREFEVAL_MCQ_TABLES: PaperTable[] = [
  {
    name: 'prefeval_mcq_results',
    title: 'PrefEval: MCQ classification accuracy',
    optional: true,
    missingHint: MCQ_MISSING,
    caption:
      'Classification task: the share of answered records whose chosen letter is the option that follows the preference (options shuffled as the original shuffles them; chance is 0.25), with a 95% Wilson interval, per model, form, baseline and number of filler turns. An answer with no letter counts as wrong, as in the original; failed calls are counted apart, never scored.',
    columns: [
      { key: 'model', label: 'Model', group: true },
      { key: 'form', label: 'Form' },
      { key: 'baseline', label: 'Baseline' },
      { key: 'inter_turns', label: 'Turns', format: 'int' },
      { key: 'n', label: 'n', format: 'int' },
      { key: 'accuracy', label: 'Accuracy', format: 'float2' },
      { key: 'accuracy_lo', label: 'lo', format: 'float2' },
      { key: 'accuracy_hi', label: 'hi', format: 'float2' },
      { key: 'n_no_choice', label: 'No letter', format: 'int' },
      { key: 'n_failed', label: 'Failed', format: 'int' },
    ],
  },
  {
    name: 'prefeval_mcq_by_topic',
    title: 'PrefEval: MCQ accuracy per topic',
    optional: true,
    missingHint: MCQ_MISSING,
    caption: 'The accuracy of prefeval_mcq_results, per topic.',
    columns: [
      { key: 'model', label: 'Model', group: true },
      { key: 'form', label: 'Form' },
      { key: 'baseline', label: 'Baseline' },
      { key: 'inter_turns', label: 'Turns', format: 'int' },
      { key: 'topic', label: 'Topic' },
      { key: 'n', label: 'n', format: 'int' },
      { key: 'accuracy', label: 'Accuracy', format: 'float2' },
      { key: 'n_no_choice', label: 'No letter', format: 'int' },
    ],
  },
  {
    name: 'prefeval_mcq_paired',
    title: 'PrefEval: MCQ paired comparisons',
    optional: true,
    missingHint: MCQ_MISSING,
    caption:
      "prefeval_paired's comparisons on the classification task: each baseline against zero-shot for a model, each pair of models for a baseline, on the same records at the same number of filler turns; the difference with its Bayesian-bootstrap interval and MDE, and McNemar's exact p.",
    columns: pairedColumns(false),
  },
];

export const PREFEVAL_TABLE_GROUP: TableGroup = {
  holds: (relations) => relations.has('prefeval_results') || relations.has('prefeval_mcq_results'),
  tables: [...PREFEVAL_TABLES, ...PREFEVAL_MCQ_TABLES],
};
