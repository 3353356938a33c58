import type { PaperTable } from '../../tables/catalog.js';
import { LEXICAL_METRIC_COLUMNS } from '../../tables/catalog.js';
import type { ColumnSpec } from '../../tables/render.js';
import type { TableGroup } from '../../tables/tables.js';
import { BUILD_TABLES } from './construction/catalog.js';
import { PlensError } from '../../core/errors.js';
import type { Database } from '../../db/database.js';

/** The judge and the run id (judge + dialogue configuration) that lead every result table. */
const JUDGE_RUN: ColumnSpec[] = [
  { key: 'judge_model', label: 'Judge', group: true },
  { key: 'run', label: 'Run', group: true },
];

/** PersonaLens's tables: the paper's, and the checks plens adds (judge validity, paired comparisons, audit, coverage). */
export const PERSONALENS_TABLES: PaperTable[] = [
  {
    name: 'table1',
    title: 'Table 1: Tasks and dialogues per domain',
    caption: 'Multi-domain tasks and dialogues count towards each of their domains; dialogues are all user-task scenarios of the dataset.',
    columns: [
      { key: 'domain', label: 'Domain' },
      { key: 'n_tasks', label: '#Tasks', format: 'int' },
      { key: 'n_dialogues', label: '#Dialogues', format: 'int' },
      { key: 'sd_tasks', label: 'SD tasks', format: 'int' },
      { key: 'md_tasks', label: 'MD tasks', format: 'int' },
      { key: 'sd_dialogues', label: 'SD dialogues', format: 'int' },
      { key: 'md_dialogues', label: 'MD dialogues', format: 'int' },
    ],
  },
  {
    name: 'table6_7',
    title: 'Tables 6-7: Demographics of the users',
    caption: 'Count and share of users per attribute value; region grouped from country of birth.',
    notes: async (db, relations) => {
      if (!relations.has('unmapped_birth_countries')) return [];
      const unmapped = await db.all<{ birth_country: string; users: number }>('SELECT * FROM unmapped_birth_countries');
      return unmapped.map((u) => `birth country "${u.birth_country}" (${u.users} users) has no region; shown as "Unmapped: ${u.birth_country}"`);
    },
    columns: [
      { key: 'field_label', label: 'Attribute', group: true },
      { key: 'value', label: 'Value' },
      { key: 'count', label: 'Count', format: 'int' },
      { key: 'percent', label: '%', format: 'percent2' },
    ],
  },
  {
    name: 'table8_9',
    title: 'Tables 8-9: Preference types per domain',
    caption:
      '#Possible: values listed in the schema; #Generated: distinct values in the profiles (capped at #Possible for categorical types; #Distinct uncapped); E: Shannon evenness of the value distribution.',
    columns: [
      { key: 'domain', label: 'Domain', group: true },
      { key: 'preference_type', label: 'Preference type' },
      { key: 'is_categorical', label: 'Categorical', format: 'yesno' },
      { key: 'n_possible', label: '#Possible', format: 'int', nullText: '-' },
      { key: 'n_generated', label: '#Generated', format: 'int' },
      { key: 'n_distinct', label: '#Distinct', format: 'int' },
      { key: 'evenness', label: 'E', format: 'float2', nullText: '-' },
    ],
  },
  {
    name: 'table3',
    title: 'Table 3: Task completion and personalization per assistant (base setting)',
    caption:
      "TCR: share of dialogues the judge found completed, over parsed verdicts; P: personalization 1-4; Nat, Coh: the assistant's naturalness and coherence 1-5. Means with seeded 95% bootstrap intervals; failed and unparsed judgments are counted, never scored. TC unparsed: verdicts plens could not read; TCR (orig.): TCR as the released gather script counts it, over every reply (a reply without a first `VERDICT: True` match, unparsed included, counts as not completed).",
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant' },
      { key: 'kind', label: 'Kind' },
      { key: 'n_dialogues', label: 'n', format: 'int' },
      { key: 'tcr', label: 'TCR (%)', format: 'float2', ci: ['tcr_lo', 'tcr_hi'] },
      { key: 'p', label: 'P', format: 'float2', ci: ['p_lo', 'p_hi'] },
      { key: 'nat', label: 'Nat (A)', format: 'float2', ci: ['nat_lo', 'nat_hi'] },
      { key: 'coh', label: 'Coh (A)', format: 'float2', ci: ['coh_lo', 'coh_hi'] },
      { key: 'n_failed', label: 'Failed', format: 'int' },
      { key: 'n_unparsed', label: 'Unparsed', format: 'int' },
      { key: 'n_tc_unparsed', label: 'TC unparsed', format: 'int' },
      { key: 'tcr_original', label: 'TCR (orig., %)', format: 'float2', nullText: '-' },
    ],
  },
  {
    name: 'table4',
    title: 'Table 4: Settings ablation (TCR and P for SD and MD)',
    caption:
      'Vanilla and Base prompts; +D demographics, +I past interactions, +S situation, +all all three. Means with seeded 95% bootstrap intervals. TCR over parsed verdicts; TC unp.: unparsed verdicts; TCR (orig.): as the released gather script counts it (unparsed = not completed).',
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'setting', label: 'Setting' },
      { key: 'sd_tcr', label: 'SD TCR (%)', format: 'float2', ci: ['sd_tcr_lo', 'sd_tcr_hi'] },
      { key: 'sd_p', label: 'SD P', format: 'float2', ci: ['sd_p_lo', 'sd_p_hi'] },
      { key: 'md_tcr', label: 'MD TCR (%)', format: 'float2', ci: ['md_tcr_lo', 'md_tcr_hi'] },
      { key: 'md_p', label: 'MD P', format: 'float2', ci: ['md_p_lo', 'md_p_hi'] },
      { key: 'sd_n', label: 'SD n', format: 'int' },
      { key: 'md_n', label: 'MD n', format: 'int' },
      { key: 'n_not_scored', label: 'Not scored', format: 'int' },
      { key: 'sd_tc_unparsed', label: 'SD TC unp.', format: 'int', nullText: '-' },
      { key: 'sd_tcr_original', label: 'SD TCR (orig., %)', format: 'float2', nullText: '-' },
      { key: 'md_tc_unparsed', label: 'MD TC unp.', format: 'int', nullText: '-' },
      { key: 'md_tcr_original', label: 'MD TCR (orig., %)', format: 'float2', nullText: '-' },
    ],
  },
  {
    name: 'table5',
    title: 'Table 5: Agreement of the judge with human annotators',
    missingHint:
      'not in the warehouse: it needs human labels. Export a sample with `plens annotate export`, have annotators label it, load their files with `plens annotate import`, then run `plens warehouse` again',
    caption:
      "Cohen's kappa between the judge and each annotator (unweighted, on the dialogues both scored), averaged over annotators, with its range; Fleiss' kappa among the annotators on the dialogues all of them labelled. Samples from plens annotate export, labels from plens annotate import.",
    columns: [
      ...JUDGE_RUN,
      { key: 'sample', label: 'Sample', group: true },
      { key: 'label', label: 'Dimension' },
      { key: 'n_dialogues', label: 'n', format: 'int' },
      { key: 'n_annotators', label: 'Annotators', format: 'int' },
      { key: 'cohen_kappa', label: "Cohen's κ (J, A)", format: 'float3', nullText: '-' },
      { key: 'cohen_kappa_min', label: 'min', format: 'float3', nullText: '-' },
      { key: 'cohen_kappa_max', label: 'max', format: 'float3', nullText: '-' },
      { key: 'fleiss_kappa', label: "Fleiss' κ (A)", format: 'float3', nullText: '-' },
      { key: 'fleiss_n_dialogues', label: 'n (all A)', format: 'int' },
      { key: 'reason', label: 'Note', nullText: '' },
    ],
  },
  {
    name: 'judge_validity',
    title: 'Judge validity: Krippendorff alpha and bias against the annotators',
    caption:
      "Alpha (nominal for TC, ordinal for the scores) of the judge against each annotator (one unit per dialogue and annotator) and among the annotators (the human-human ceiling), with seeded bootstrap intervals over units; bias: mean of judge - human mean (TC in points) with a normal 95% interval. Beside Table 5's kappas.",
    columns: [
      ...JUDGE_RUN,
      { key: 'sample', label: 'Sample', group: true },
      { key: 'label', label: 'Dimension' },
      { key: 'n_dialogues', label: 'n', format: 'int' },
      { key: 'alpha_judge_human', label: 'α (J, A)', format: 'float3', nullText: '-', ci: ['alpha_judge_human_lo', 'alpha_judge_human_hi'] },
      { key: 'alpha_humans', label: 'α (A, A) ceiling', format: 'float3', nullText: '-', ci: ['alpha_humans_lo', 'alpha_humans_hi'] },
      { key: 'bias', label: 'Bias (J - A)', format: 'float2', nullText: '-', ci: ['bias_lo', 'bias_hi'] },
      { key: 'reason', label: 'Note', nullText: '' },
    ],
  },
  {
    name: 'ppi_estimates',
    title: 'Prediction-powered estimates of TCR and P beside the raw judge means',
    caption:
      "Raw: the judge's mean over every judged dialogue of the cell. PPI: raw plus the mean of (human mean - judge) on the cell's annotated dialogues, with a 95% interval (Angelopoulos et al. 2023). TCR in %.",
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'setting', label: 'Setting' },
      { key: 'dimension', label: 'Dim.' },
      { key: 'raw', label: 'Raw', format: 'float2', nullText: '-' },
      { key: 'ppi', label: 'PPI', format: 'float2', nullText: '-', ci: ['ppi_lo', 'ppi_hi'] },
      { key: 'n', label: 'n', format: 'int' },
      { key: 'n_labeled', label: 'Annotated', format: 'int' },
      { key: 'reason', label: 'Note', nullText: '' },
    ],
  },
  {
    name: 'judge_swap',
    title: 'Judge swap: the same dialogues under two judges',
    caption:
      "Paired change b - a per dimension (seeded bootstrap over users; McNemar exact or Wilcoxon pratt; Holm over the dimensions) and the two judges' agreement (Cohen's kappa, Krippendorff's alpha).",
    columns: [
      { key: 'judge_a', label: 'Judge a', group: true },
      { key: 'judge_b', label: 'Judge b', group: true },
      { key: 'dimension', label: 'Dim.' },
      { key: 'diff', label: 'b - a', format: 'float2', nullText: '-', ci: ['diff_lo', 'diff_hi'] },
      { key: 'p_holm', label: 'p (Holm)', format: 'float3', nullText: '-' },
      { key: 'cohen_kappa', label: 'κ', format: 'float3', nullText: '-' },
      { key: 'alpha', label: 'α', format: 'float3', nullText: '-' },
      { key: 'n', label: 'n', format: 'int' },
      { key: 'reason', label: 'Note', nullText: '' },
    ],
  },
  {
    name: 'judge_repeatability',
    title: 'Judge repeatability: a dimension judged more than once',
    caption:
      'Dialogues the same judge configuration scored k times: share whose scores changed, and intra-judge Krippendorff alpha with a seeded bootstrap interval.',
    columns: [
      { key: 'judge_model', label: 'Judge', group: true },
      { key: 'dimension', label: 'Dimension' },
      { key: 'target', label: 'Target' },
      { key: 'n_dialogues', label: 'n', format: 'int' },
      { key: 'k', label: 'k', format: 'int' },
      { key: 'share_changed', label: 'Changed', format: 'percent2' },
      { key: 'alpha', label: 'α', format: 'float3', nullText: '-', ci: ['alpha_lo', 'alpha_hi'] },
      { key: 'reason', label: 'Note', nullText: '' },
    ],
  },
  {
    name: 'table10',
    title: 'Table 10: Lexical diversity of the dialogues',
    caption:
      "Finished dialogues per assistant and task kind (all settings pooled). laps: the LAPS reference procedure the paper uses (mean of 100 subsets of 7,012 tokens drawn with Python's random stream seeded 42; character-level Self-BLEU; both speakers, as in the paper, unless the warehouse was built with --laps-speakers); full: the whole corpus, word tokens, exact Self-BLEU, for both speakers and each alone.",
    columns: [
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'kind', label: 'Kind', group: true },
      { key: 'speakers', label: 'Speakers', group: true },
      { key: 'protocol', label: 'Protocol' },
      { key: 'n_utterances', label: 'Utterances', format: 'int' },
      ...LEXICAL_METRIC_COLUMNS,
    ],
  },
  {
    name: 'table12',
    title: "Table 12: The user agent's naturalness and coherence (base setting)",
    caption: "Judged on the simulated user's utterances, per assistant it talked to and task kind (SD and MD apart, as the original reports them).",
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant' },
      { key: 'kind', label: 'Kind' },
      { key: 'nat', label: 'Nat (U)', format: 'float2', ci: ['nat_lo', 'nat_hi'] },
      { key: 'coh', label: 'Coh (U)', format: 'float2', ci: ['coh_lo', 'coh_hi'] },
      { key: 'n_nat', label: 'n', format: 'int' },
    ],
  },
  {
    name: 'table13',
    title: 'Table 13: Dialogue statistics',
    caption: "Turns per dialogue: assistant replies; tokens per turn: mean output tokens of an utterance (all, and the assistant's). Finished dialogues only.",
    columns: [
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'user_model', label: 'User agent', group: true },
      { key: 'setting', label: 'Setting' },
      { key: 'kind', label: 'Kind' },
      { key: 'n_dialogues', label: '#Dialogues', format: 'int' },
      { key: 'turns_per_dialogue', label: 'Turns/dialogue', format: 'float2' },
      { key: 'tokens_per_turn', label: 'Tokens/turn', format: 'float2' },
      { key: 'assistant_tokens_per_turn', label: 'Tokens/assistant turn', format: 'float2' },
    ],
  },
  {
    name: 'figure4',
    title: 'Figure 4: TCR and P per domain',
    caption: 'SD and MD apart, as the original reports them; multi-domain dialogues count towards each of their domains.',
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'setting', label: 'Setting', group: true },
      { key: 'kind', label: 'Kind', group: true },
      { key: 'domain', label: 'Domain' },
      { key: 'tcr', label: 'TCR (%)', format: 'float2', ci: ['tcr_lo', 'tcr_hi'] },
      { key: 'p', label: 'P', format: 'float2', ci: ['p_lo', 'p_hi'] },
      { key: 'n_tc', label: 'n', format: 'int' },
    ],
  },
  {
    name: 'figure5',
    title: 'Figure 5: Personalization by assistant turn, per domain',
    caption:
      "Method per_prefix: the judge scores each prefix of a dialogue that ends with an assistant turn, one call each (plens judge --dimensions personalization_turns); chain_of_turn: the original's prompt, one call per dialogue scoring every assistant turn in one reply (--dimensions personalization_chain).",
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'setting', label: 'Setting', group: true },
      { key: 'method', label: 'Method', group: true },
      { key: 'domain', label: 'Domain', group: true },
      { key: 'turn', label: 'Turn', format: 'int' },
      { key: 'p', label: 'P', format: 'float2', ci: ['p_lo', 'p_hi'] },
      { key: 'n', label: 'n', format: 'int' },
    ],
  },
  {
    name: 'paired_differences',
    title: 'Paired differences between cells on the same scenarios',
    caption: 'Mean of (b - a) over scenarios judged in both cells (first replicate): TC in percentage points, P in score points.',
    columns: [
      ...JUDGE_RUN,
      { key: 'kind', label: 'Kind', group: true },
      { key: 'cell_a', label: 'a' },
      { key: 'cell_b', label: 'b' },
      { key: 'd_tcr', label: 'ΔTCR', format: 'float2', ci: ['d_tcr_lo', 'd_tcr_hi'] },
      { key: 'd_p', label: 'ΔP', format: 'float2', ci: ['d_p_lo', 'd_p_hi'] },
      { key: 'n_p', label: 'n', format: 'int' },
    ],
  },
  {
    name: 'paired_lift',
    title: 'The personalization lift: each context block against Base on the same scenarios',
    caption:
      'Lift = mean of (block - Base) over the scenarios judged in both (TC in percentage points, P in score points), overall, per task kind and per domain, with a seeded bootstrap interval over users (scenarios are nested in users). p: McNemar exact (TC) or Wilcoxon signed-rank, zero_method pratt (P); Holm and BH corrected over the cells of one breakdown; MDE: the smallest lift this sample detects with 80% power.',
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'block', label: 'Block', group: true },
      { key: 'dimension', label: 'Dim.' },
      { key: 'scope', label: 'Scope' },
      { key: 'lift', label: 'Lift', format: 'float2', ci: ['lift_lo', 'lift_hi'] },
      { key: 'p', label: 'p', format: 'float3', nullText: '-' },
      { key: 'p_holm', label: 'p (Holm)', format: 'float3', nullText: '-' },
      { key: 'mde', label: 'MDE', format: 'float2', nullText: '-' },
      { key: 'n', label: 'n', format: 'int' },
      { key: 'n_users', label: 'Users', format: 'int' },
      { key: 'reason', label: 'Note', nullText: '' },
    ],
  },
  {
    name: 'paired_comparisons',
    title: 'Paired comparisons of every two cells of a run',
    caption:
      'Difference b - a over the scenarios judged in both (first replicate), per dimension, with mean +- 1.96 cluster-robust (by user) standard errors; McNemar exact (TC) or Wilcoxon signed-rank, pratt (others); Holm-corrected over the run, kind and dimension. plens compare A B gives one pair with a bootstrap interval.',
    columns: [
      ...JUDGE_RUN,
      { key: 'kind', label: 'Kind', group: true },
      { key: 'cell_a', label: 'a' },
      { key: 'cell_b', label: 'b' },
      { key: 'dimension', label: 'Dim.' },
      { key: 'diff', label: 'b - a', format: 'float2', ci: ['diff_lo', 'diff_hi'] },
      { key: 'p', label: 'p', format: 'float3', nullText: '-' },
      { key: 'p_holm', label: 'p (Holm)', format: 'float3', nullText: '-' },
      { key: 'mde', label: 'MDE', format: 'float2', nullText: '-' },
      { key: 'n', label: 'n', format: 'int' },
    ],
  },
  {
    name: 'simulator_audit_counts',
    title: 'Simulator audit: flagged dialogues per assistant, setting and user agent',
    caption:
      'Deterministic rules over the finished dialogues (warehouse/personalens/73_simulator_audit.sql): the user agent talking like an assistant, TERMINATE in or as the opening, never emitted, or right after the first assistant question, empty or repeated utterances, user turns not in English, a profile preference value verbatim in the opening message, round-limit endings. Flagged: any flag but the two endings. plens tables --exclude-flagged leaves flagged dialogues out.',
    columns: [
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'setting', label: 'Setting' },
      { key: 'user_model', label: 'User agent' },
      { key: 'n_dialogues', label: 'n', format: 'int' },
      { key: 'n_flagged', label: 'Flagged', format: 'int' },
      { key: 'role_inversion', label: 'Role inv.', format: 'int' },
      { key: 'terminate_opening', label: 'TERM. opening', format: 'int' },
      { key: 'terminate_early', label: 'TERM. early', format: 'int' },
      { key: 'terminate_never', label: 'TERM. never', format: 'int' },
      { key: 'empty_turn', label: 'Empty', format: 'int' },
      { key: 'duplicate_turn', label: 'Duplicate', format: 'int' },
      { key: 'non_english', label: 'Not English', format: 'int' },
      { key: 'preference_leak', label: 'Leak', format: 'int' },
      { key: 'round_limit', label: 'Round limit', format: 'int' },
    ],
  },
  {
    name: 'result_coverage',
    title: 'Coverage: how many planned items each result cell scored',
    caption:
      'Planned: the dialogues of the cell in the run, finished or failed. Scored M of N per dimension; failed dialogues and failed or unparsed judgments are planned but not scored. TCR of the scored dialogues with its Wilson 95% interval, and its worst / best case with every item not scored counted as not completed / completed.',
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'setting', label: 'Setting', group: true },
      { key: 'kind', label: 'Kind' },
      { key: 'dimension', label: 'Dim.' },
      { key: 'scored', label: 'Scored' },
      { key: 'n_dialogues_failed', label: 'Dialogues failed', format: 'int' },
      { key: 'tcr', label: 'TCR (%)', format: 'float2', nullText: '', ci: ['tcr_wilson_lo', 'tcr_wilson_hi'] },
      { key: 'tcr_worst', label: 'worst', format: 'float2', nullText: '' },
      { key: 'tcr_best', label: 'best', format: 'float2', nullText: '' },
    ],
  },
  {
    name: 'original_scoring',
    title: 'Judge replies read by plens and by the original gather script',
    caption:
      "plens: its own parse (tolerant of formatting, strict about range and conflicts; unreadable replies never scored). Original: the released gather script's reading (task completion: first `VERDICT: True|False` match, no match = not completed; scores: first `<Name> Score: <digits>` match, no range check). Differ: both read a value and they disagree.",
    columns: [
      ...JUDGE_RUN,
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'setting', label: 'Setting', group: true },
      { key: 'kind', label: 'Kind' },
      { key: 'dimension', label: 'Dimension' },
      { key: 'target', label: 'Target' },
      { key: 'n_replies', label: 'Replies', format: 'int' },
      { key: 'plens_mean', label: 'plens', format: 'float3', nullText: '-' },
      { key: 'n_plens', label: 'n (plens)', format: 'int' },
      { key: 'original_mean', label: 'Original', format: 'float3', nullText: '-' },
      { key: 'n_original', label: 'n (orig.)', format: 'int' },
      { key: 'n_differ', label: 'Differ', format: 'int' },
      { key: 'n_plens_only', label: 'plens only', format: 'int' },
      { key: 'n_original_only', label: 'Orig. only', format: 'int' },
    ],
  },
  {
    name: 'judgment_status',
    title: 'Judgments by status',
    caption:
      'Failed: the judge call failed after retries; unparsed: the reply did not parse (kept in judgments.raw). Neither enters any mean; plens judge --retry-failed judges them again.',
    columns: [
      { key: 'judge_model', label: 'Judge', group: true },
      { key: 'assistant_model', label: 'Assistant', group: true },
      { key: 'setting', label: 'Setting' },
      { key: 'kind', label: 'Kind' },
      { key: 'dimension', label: 'Dimension' },
      { key: 'target', label: 'Target' },
      { key: 'turn_level', label: 'Turn-level', format: 'yesno' },
      { key: 'n_ok', label: 'Scored', format: 'int' },
      { key: 'n_failed', label: 'Failed', format: 'int' },
      { key: 'n_unparsed', label: 'Unparsed', format: 'int' },
    ],
  },
];

/**
 * `--exclude-flagged`: shadows dialogues, turns, judgments, dialogue_scores and paired_scores with
 * temporary views (temp names come first on DuckDB's search path, and views rebind on every query)
 * that leave out the dialogues the simulator audit flags; every result view then works on the rest.
 * The warehouse file is untouched. Returns what was done.
 */
export async function excludeFlaggedDialogues(db: Database, relations: ReadonlySet<string>): Promise<string> {
  if (!relations.has('simulator_audit_flagged')) {
    throw new PlensError('E_PREREQUISITE', '--exclude-flagged: the warehouse has no simulator audit', {
      hint: 'it needs dialogues and the dataset profiles; run plens warehouse',
    });
  }
  const { sqlIdentifier } = await import('../../db/database.js');
  // The warehouse's own catalog name: "main" alone would also name the temp catalog's schema.
  const [{ catalog }] = (await db.all<{ catalog: string }>(`SELECT current_database() AS catalog`)) as [{ catalog: string }];
  const q = `${sqlIdentifier(catalog)}.main`;
  await db.run(`CREATE TEMP TABLE audit_flagged_ids AS SELECT DISTINCT dialogue_id FROM ${q}.simulator_audit_flagged`);
  for (const t of ['dialogues', 'turns', 'judgments', 'dialogue_scores', 'paired_scores']) {
    if (relations.has(t)) await db.run(`CREATE TEMP VIEW ${t} AS SELECT * FROM ${q}.${t} WHERE dialogue_id NOT IN (SELECT dialogue_id FROM audit_flagged_ids)`);
  }
  const [row] = await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM audit_flagged_ids`);
  return `--exclude-flagged: ${row!.n} dialogue(s) flagged by the simulator audit are left out of every table but table10 (lexical diversity is computed when the warehouse is built)`;
}

/** PersonaLens's tables as the registry lists them: a warehouse holds its results when the dataset is there. */
export const PERSONALENS_TABLE_GROUP: TableGroup = {
  holds: (relations) => relations.has('domains'),
  tables: [...PERSONALENS_TABLES, ...BUILD_TABLES],
  excludeFlagged: excludeFlaggedDialogues,
};
