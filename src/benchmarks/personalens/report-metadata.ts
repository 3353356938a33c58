import type { MetadataPart } from '../../report/metadata.js';

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
