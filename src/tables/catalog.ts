import type { ColumnSpec } from './render.js';

/** A table of the paper, as a warehouse view plus how to present it. */
export interface PaperTable {
  name: string;
  title: string;
  caption: string;
  columns: ColumnSpec[];
}

export const PAPER_TABLES: PaperTable[] = [
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
];

export function paperTable(name: string): PaperTable | undefined {
  return PAPER_TABLES.find((t) => t.name === name);
}
