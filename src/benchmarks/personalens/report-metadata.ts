import type { ComparisonRow, ComparisonTable } from '../../report/comparison.js';
import type { MetadataPart } from '../../report/metadata.js';
import { isVersion, PAPER_CITATION, PAPER_PROTOCOL, paperRowFor } from './paper-values.js';
import { PromptSet } from './prompt-set.js';
import { num, str } from '../../report/row-values.js';

type Row = Record<string, unknown>;

/** What a run of an assistant was made with: the models, temperatures and prompt versions the protocol names. */
export interface RunConfig {
  run: string;
  assistant_model: string;
  assistant_temperature: number | null;
  user_model: string;
  user_temperature: number | null;
  judge_model: string;
  judge_temperature: number | null;
  prompt_version: string;
  judge_prompt_version: string;
}

/** The configurations of the base-setting runs, one row per run and assistant. */
export const RUN_CONFIG_SQL = `SELECT DISTINCT c.run, c.assistant_model, d.assistant_temperature, d.user_model, d.user_temperature,
    c.judge_model, c.judge_temperature, d.prompt_version, c.judge_prompt_version
  FROM judgment_configs c JOIN dialogues d USING (dialogue_id) WHERE c.setting = 'base'`;

/**
 * What differs from the paper's protocol in a run's configuration (empty: it follows it). The rule:
 * the user agent and judge of Table 11 (any provider's id for them), the temperatures of Appendix B
 * (user 0.5, assistant and judge 0), and plens's bundled prompts for the dialogues and the judge.
 * The assistant itself must be one the paper evaluated (paperRowFor); the setting is base, as in Table 3.
 */
export function protocolDifferences(c: RunConfig, prompts: { dialogue: string; judge: string }): string[] {
  const p = PAPER_PROTOCOL;
  const out: string[] = [];
  if (!isVersion(c.user_model, p.user.version)) out.push(`user agent ${c.user_model}, not ${p.user.version}`);
  if (c.user_temperature !== p.user.temperature) out.push(`user temperature ${c.user_temperature ?? 'unset'}, not ${p.user.temperature}`);
  if (!isVersion(c.judge_model, p.judge.version)) out.push(`judge ${c.judge_model}, not ${p.judge.version}`);
  if (c.judge_temperature !== p.judge.temperature) out.push(`judge temperature ${c.judge_temperature ?? 'unset'}, not ${p.judge.temperature}`);
  if (c.assistant_temperature !== p.assistantTemperature)
    out.push(`assistant temperature ${c.assistant_temperature ?? 'unset'}, not ${p.assistantTemperature}`);
  if (c.prompt_version !== prompts.dialogue) out.push(`dialogue prompts ${c.prompt_version}, not the bundled ${prompts.dialogue}`);
  if (c.judge_prompt_version !== prompts.judge) out.push(`judge prompts ${c.judge_prompt_version}, not the bundled ${prompts.judge}`);
  return out;
}

const MEASURES = [
  { key: 'tcr', label: 'TCR (%)', digits: 2 },
  { key: 'p', label: 'P', digits: 2 },
  { key: 'nat', label: 'Nat (A)', digits: 2 },
  { key: 'coh', label: 'Coh (A)', digits: 2 },
] as const;

/**
 * The report's opening table: Table 3's layout (a row per assistant, TCR, P, Nat and Coh for SD and
 * MD tasks, base setting) from the `table3` rows, with the paper's values beside a run that follows
 * its protocol.
 */
export async function table3Comparison(rows: Row[], query: ((sql: string) => Promise<Row[]>) | null): Promise<ComparisonTable | null> {
  if (rows.length === 0) return null;
  const runs = new Set(rows.map((r) => `${str(r['judge_model'])}\u0000${str(r['run'])}`));
  const configs = query ? ((await query(RUN_CONFIG_SQL)) as unknown as RunConfig[]) : null;
  const bundled = PromptSet.load();
  const prompts = { dialogue: bundled.dialogueVersion, judge: bundled.judgeVersion };
  const notes: string[] = [];
  let paperModels = 0;
  const rowOf = (r: Row): ComparisonRow => {
    const assistant = str(r['assistant_model']);
    const kind = str(r['kind']) === 'MD' ? 'md' : 'sd';
    const out: ComparisonRow = {
      label: runs.size > 1 ? `${assistant} (run ${str(r['run'])}, judge ${str(r['judge_model'])})` : assistant,
      n: num(r['n_dialogues']),
      cells: Object.fromEntries(
        MEASURES.map((m) => {
          const prefix = m.key === 'tcr' ? 'tcr' : m.key;
          return [m.key, { value: num(r[prefix]), lo: num(r[`${prefix}_lo`]), hi: num(r[`${prefix}_hi`]) }];
        }),
      ),
    };
    const paper = paperRowFor(assistant);
    if (!paper) return out;
    paperModels++;
    const config = configs?.find((c) => c.run === r['run'] && c.assistant_model === assistant);
    const differs = config ? protocolDifferences(config, prompts) : ['its configuration is not in the warehouse (no dialogues)'];
    if (differs.length === 0) out.published = { ...paper[kind] };
    else out.differs = differs.join('; ');
    return out;
  };
  const blocks = [
    { label: 'Single-domain tasks (SD)', rows: rows.filter((r) => r['kind'] !== 'MD').map(rowOf) },
    { label: 'Multi-domain tasks (MD)', rows: rows.filter((r) => r['kind'] === 'MD').map(rowOf) },
  ];
  if (paperModels === 0) notes.push('None of these assistants is one the paper evaluated, so no published values are shown.');
  return {
    id: 'table3',
    title: 'Assistants compared (Table 3 layout, base setting)',
    caption:
      "A row per assistant, as in the paper's Table 3: task completion rate (TCR, %, over parsed verdicts), personalization (P, 1-4) and the assistant's naturalness and coherence (1-5), each with its seeded 95% bootstrap interval under it; n: dialogues. Table 3 under Result tables has all of its columns.",
    measures: MEASURES.map((m) => ({ ...m })),
    blocks,
    source: {
      label: 'Paper',
      citation: PAPER_CITATION,
      rule: `The paper's values stand beside a run that follows its protocol: an assistant the paper evaluated (Table 11's version, any provider's id for it), the user agent ${PAPER_PROTOCOL.user.version} at temperature ${PAPER_PROTOCOL.user.temperature}, the judge ${PAPER_PROTOCOL.judge.version} at temperature ${PAPER_PROTOCOL.judge.temperature}, the assistant at temperature ${PAPER_PROTOCOL.assistantTemperature}, and plens's bundled dialogue and judge prompts. The paper ran 50 users (3,283 SD and 813 MD dialogues) and counted TCR as its gather script does (see TCR (orig.) in Table 3 below).`,
    },
    notes,
  };
}

/**
 * PersonaLens's part of the report's metadata: the result runs, the dialogues' and judgments'
 * models, parameters and prompt versions, the failures, and LLM usage and cost per stage and model.
 */
export const PERSONALENS_METADATA: MetadataPart = {
  sections: [
    {
      name: 'meta_runs',
      title: 'Runs',
      caption: 'Each result view groups by run: one judge configuration over one dialogue configuration (result_runs).',
      requires: ['result_runs'],
      sql: 'SELECT run, judge_model, judge_config, dialogue_config FROM result_runs ORDER BY run',
      columns: [
        { key: 'run', label: 'Run' },
        { key: 'judge_model', label: 'Judge' },
        { key: 'judge_config', label: 'Judge configuration' },
        { key: 'dialogue_config', label: 'Dialogue configuration' },
      ],
    },
    {
      name: 'meta_dialogues',
      title: 'Dialogues: models, parameters and prompt versions',
      caption: 'Per assistant and user agent with their sampling parameters and the dialogue prompt version (dialogues).',
      requires: ['dialogues'],
      sql: `SELECT assistant_model, assistant_temperature, assistant_max_tokens, user_model, user_temperature, user_max_tokens, prompt_version,
        string_agg(DISTINCT setting, ', ' ORDER BY list_position(['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'], setting), setting) AS settings,
        count(*) AS n, count(*) FILTER (status = 'ok') AS n_ok, count(*) FILTER (status <> 'ok') AS n_failed,
        sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
      FROM dialogues GROUP BY ALL ORDER BY ALL`,
      columns: [
        { key: 'assistant_model', label: 'Assistant' },
        { key: 'assistant_temperature', label: 'temp.', format: 'auto' },
        { key: 'assistant_max_tokens', label: 'max tokens', format: 'int' },
        { key: 'user_model', label: 'User agent' },
        { key: 'user_temperature', label: 'temp.', format: 'auto' },
        { key: 'user_max_tokens', label: 'max tokens', format: 'int' },
        { key: 'prompt_version', label: 'Prompts' },
        { key: 'settings', label: 'Settings' },
        { key: 'n', label: 'Dialogues', format: 'int' },
        { key: 'n_ok', label: 'Finished', format: 'int' },
        { key: 'n_failed', label: 'Failed', format: 'int' },
        { key: 'input_tokens', label: 'Input tokens', format: 'int', nullText: '-' },
        { key: 'output_tokens', label: 'Output tokens', format: 'int', nullText: '-' },
      ],
    },
    {
      name: 'meta_judgments',
      title: 'Judgments: judge, parameters and prompt version',
      caption: 'Per judge configuration and dimension (judgments). Failed and unparsed judgments never enter a mean.',
      requires: ['judgments'],
      sql: `SELECT judge_model, judge_temperature, judge_max_tokens, judge_prompt_version, dimension,
        count(*) AS n, count(*) FILTER (status = 'ok') AS n_ok, count(*) FILTER (status = 'failed') AS n_failed,
        count(*) FILTER (status = 'parse_error') AS n_unparsed
      FROM judgments GROUP BY ALL ORDER BY ALL`,
      columns: [
        { key: 'judge_model', label: 'Judge', group: true },
        { key: 'judge_temperature', label: 'temp.', format: 'auto' },
        { key: 'judge_max_tokens', label: 'max tokens', format: 'int' },
        { key: 'judge_prompt_version', label: 'Prompts' },
        { key: 'dimension', label: 'Dimension' },
        { key: 'n', label: 'Judgments', format: 'int' },
        { key: 'n_ok', label: 'Scored', format: 'int' },
        { key: 'n_failed', label: 'Failed', format: 'int' },
        { key: 'n_unparsed', label: 'Unparsed', format: 'int' },
      ],
    },
    {
      name: 'meta_failures',
      title: 'Failures',
      caption:
        'Dialogues that failed (by error kind, with one message), and judgments that failed or did not parse (judgment_status). Rerun the stage with --retry-failed.',
      requires: ['dialogues', 'judgment_status'],
      sql: `SELECT 'dialogue' AS what, assistant_model AS model, setting, coalesce(error.kind, status) AS reason, count(*) AS n, any_value(error.message) AS example
        FROM dialogues WHERE status <> 'ok' GROUP BY ALL
      UNION ALL
      SELECT 'judgment: ' || dimension || ' (' || target || ')', judge_model || ' on ' || assistant_model, setting, reason, sum(n)::BIGINT, NULL
        FROM (SELECT *, 'failed' AS reason, n_failed AS n FROM judgment_status UNION ALL SELECT *, 'unparsed', n_unparsed FROM judgment_status)
        WHERE n > 0 GROUP BY ALL
      ORDER BY 1, 2, 3, 4`,
      columns: [
        { key: 'what', label: 'What' },
        { key: 'model', label: 'Model' },
        { key: 'setting', label: 'Setting' },
        { key: 'reason', label: 'Reason' },
        { key: 'n', label: 'n', format: 'int' },
        { key: 'example', label: 'Example message', nullText: '' },
      ],
    },
    {
      name: 'meta_cost',
      title: 'LLM calls: usage and cost',
      caption:
        'Every call made or served from the cache (llm_calls); cache hits cost 0, so the cost is what was spent. Cost needs prices in the model spec (price_in, price_out).',
      requires: ['llm_calls'],
      sql: `SELECT stage, model, count(*) AS calls, count(*) FILTER (cached) AS cached, count(*) FILTER (status <> 'ok') AS failed,
        sum(attempts) AS attempts, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd
      FROM llm_calls GROUP BY ROLLUP (stage, model)
      ORDER BY stage IS NULL, stage, model IS NULL, model`,
      columns: [
        { key: 'stage', label: 'Stage', nullText: 'all' },
        { key: 'model', label: 'Model', nullText: 'all' },
        { key: 'calls', label: 'Calls', format: 'int' },
        { key: 'cached', label: 'Cached', format: 'int' },
        { key: 'failed', label: 'Failed', format: 'int' },
        { key: 'attempts', label: 'Attempts', format: 'int' },
        { key: 'input_tokens', label: 'Input tokens', format: 'int', nullText: '-' },
        { key: 'output_tokens', label: 'Output tokens', format: 'int', nullText: '-' },
        { key: 'cost_usd', label: 'Cost (USD)', format: 'float4', nullText: '-' },
      ],
    },
  ],
  comparison: [{ view: 'table3', requires: ['judgment_configs', 'dialogues'], build: table3Comparison }],
  // Tables of the data (the dataset and its construction): shown after the results.
  datasetTables: [
    'table1',
    'table6_7',
    'table8_9',
    'build_table1',
    'build_table6_7',
    'build_table8_9',
    'build_situations',
    'build_lexical',
    'build_parse_states',
    'build_consistency',
  ],
  counts: [
    { label: 'Users', requires: 'users', sql: 'SELECT count(*) AS v FROM users' },
    { label: 'Scenarios selected', requires: 'scenarios', sql: 'SELECT count(*) AS v FROM scenarios' },
    {
      label: 'Dialogues (finished / failed)',
      requires: 'dialogues',
      sql: "SELECT format('{:,} / {:,}', count(*) FILTER (status = 'ok'), count(*) FILTER (status <> 'ok')) AS v FROM dialogues",
    },
    {
      label: 'Judgments (scored / failed / unparsed)',
      requires: 'judgments',
      sql: "SELECT format('{:,} / {:,} / {:,}', count(*) FILTER (status = 'ok'), count(*) FILTER (status = 'failed'), count(*) FILTER (status = 'parse_error')) AS v FROM judgments",
    },
    { label: 'Dialogues judged', requires: 'dialogue_scores', sql: 'SELECT count(*) AS v FROM dialogue_scores' },
    { label: 'Runs', requires: 'result_runs', sql: 'SELECT count(*) AS v FROM result_runs' },
    { label: 'LLM calls (cached)', requires: 'llm_calls', sql: "SELECT format('{:,} ({:,})', count(*), count(*) FILTER (cached)) AS v FROM llm_calls" },
    {
      label: 'Tokens (input / output)',
      requires: 'llm_calls',
      sql: "SELECT format('{:,} / {:,}', coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0)) AS v FROM llm_calls",
    },
    { label: 'Cost (USD)', requires: 'llm_calls', sql: "SELECT printf('%.4f', coalesce(sum(cost_usd), 0)) AS v FROM llm_calls" },
  ],
};
