/**
 * The validation tables of a built benchmark (warehouse/personalens/46_build_validation.sql and
 * 47_build_records.sql): the paper's section-3 and Appendix-A figures for the built benchmark beside
 * the one it is compared with, and what the build's stages recorded. Present only for a pipeline
 * with a build section.
 */
import type { PaperTable } from '../../../tables/catalog.js';

const BUILT = 'not in the warehouse: it needs a build section in the pipeline (and build.compare_with for the side-by-side tables), then plens make';

export const BUILD_TABLES: PaperTable[] = [
  {
    name: 'build_table1',
    title: 'Built vs compared: tasks and dialogues per domain (Table 1)',
    optional: true,
    missingHint: BUILT,
    caption:
      "Per domain, the SD and MD tasks and the user-task scenarios (dialogues) of the built benchmark and of the benchmark it is compared with (build.compare_with; the released one for the paper's construction). MD tasks count towards each of their domains.",
    columns: [
      { key: 'domain', label: 'Domain' },
      { key: 'built_sd_tasks', label: 'SD tasks (built)', format: 'int', nullText: '-' },
      { key: 'released_sd_tasks', label: 'SD tasks (compared)', format: 'int', nullText: '-' },
      { key: 'built_md_tasks', label: 'MD tasks (built)', format: 'int', nullText: '-' },
      { key: 'released_md_tasks', label: 'MD tasks (compared)', format: 'int', nullText: '-' },
      { key: 'built_dialogues', label: 'Dialogues (built)', format: 'int', nullText: '-' },
      { key: 'released_dialogues', label: 'Dialogues (compared)', format: 'int', nullText: '-' },
    ],
  },
  {
    name: 'build_table6_7',
    title: 'Built vs compared: demographics (Tables 6-7)',
    optional: true,
    missingHint: BUILT,
    caption: 'Count and share of users per demographic value, built and compared (region from country of birth).',
    columns: [
      { key: 'field_label', label: 'Attribute', group: true },
      { key: 'value', label: 'Value' },
      { key: 'built_count', label: 'Built', format: 'int' },
      { key: 'built_percent', label: '% built', format: 'percent2' },
      { key: 'released_count', label: 'Compared', format: 'int' },
      { key: 'released_percent', label: '% compared', format: 'percent2' },
    ],
  },
  {
    name: 'build_table8_9',
    title: 'Built vs compared: preference types (Tables 8-9)',
    optional: true,
    missingHint: BUILT,
    caption:
      'Per preference type: the values generated (distinct; capped at the possible ones for categorical types, as the paper prints) and the Shannon evenness of their distribution, built and compared.',
    columns: [
      { key: 'domain', label: 'Domain', group: true },
      { key: 'preference_type', label: 'Preference type' },
      { key: 'is_categorical', label: 'Categorical', format: 'yesno' },
      { key: 'n_possible', label: '#Possible', format: 'int', nullText: '-' },
      { key: 'built_generated', label: '#Generated (built)', format: 'int', nullText: '-' },
      { key: 'released_generated', label: '#Generated (compared)', format: 'int', nullText: '-' },
      { key: 'built_evenness', label: 'E (built)', format: 'float2', nullText: '-' },
      { key: 'released_evenness', label: 'E (compared)', format: 'float2', nullText: '-' },
    ],
  },
  {
    name: 'build_situations',
    title: 'Built vs compared: situation variables',
    optional: true,
    missingHint: BUILT,
    caption: "Each value's share of the scenarios for the closed situation variables (paper Figure 11), built and compared.",
    columns: [
      { key: 'variable', label: 'Variable', group: true },
      { key: 'value', label: 'Value' },
      { key: 'built_n', label: 'Built', format: 'int' },
      { key: 'built_share', label: 'Share built', format: 'float3' },
      { key: 'released_n', label: 'Compared', format: 'int' },
      { key: 'released_share', label: 'Share compared', format: 'float3' },
    ],
  },
  {
    name: 'build_lexical',
    title: 'Built vs compared: lexical diversity of the generated texts',
    optional: true,
    missingHint: BUILT,
    caption:
      'Dist-1, Dist-2 (distinct n-grams / n-grams) and Ent-4 (entropy of the 4-grams, natural log) of the past-interaction summaries and the task descriptions, words as the "full" protocol of Table 10 takes them.',
    columns: [
      { key: 'texts', label: 'Texts', group: true },
      { key: 'benchmark', label: 'Benchmark' },
      { key: 'n_words', label: 'Words', format: 'int' },
      { key: 'dist_1', label: 'Dist-1', format: 'float3' },
      { key: 'dist_2', label: 'Dist-2', format: 'float3' },
      { key: 'ent_4', label: 'Ent-4', format: 'float2' },
    ],
  },
  {
    name: 'build_parse_states',
    title: "Build: what the stages' replies were read as",
    optional: true,
    missingHint: BUILT,
    caption:
      "Per construction stage: the units, those kept, those kept after the model was asked again (its first reply refused: the states say why), those refused twice or failed (not in the export), and the categorical values kept beyond the schema's lists (the paper allows them).",
    columns: [
      { key: 'stage', label: 'Stage' },
      { key: 'units', label: 'Units', format: 'int' },
      { key: 'ok', label: 'Kept', format: 'int' },
      { key: 'ok_when_asked_again', label: 'Kept when asked again', format: 'int' },
      { key: 'refused', label: 'Refused', format: 'int' },
      { key: 'failed', label: 'Failed', format: 'int' },
      { key: 'off_list_values', label: 'Off-list values', format: 'int' },
      { key: 'reshaped_values', label: 'Reshaped values', format: 'int' },
      { key: 'refusal_states', label: 'Refusals', nullText: '-' },
    ],
  },
  {
    name: 'build_consistency',
    title: 'Build: the consistency check',
    optional: true,
    missingHint: BUILT,
    caption:
      "Profiles the LLM consistency check (paper Figure 21) flagged for a conflict within a domain or across domains. The paper's checker flagged 11 of its 1,500 profiles, and its review kept them.",
    columns: [
      { key: 'profiles_checked', label: 'Profiles', format: 'int' },
      { key: 'profiles_flagged', label: 'Flagged', format: 'int' },
      { key: 'flagged_rate', label: 'Rate', format: 'float3' },
      { key: 'domain_flags', label: 'Domain flags', format: 'int' },
      { key: 'cross_domain_flags', label: 'Cross-domain flags', format: 'int' },
    ],
  },
];
