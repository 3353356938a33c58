/** Helpers to look inside the report's charts, and a warehouse of any grid size to draw them from. */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { compactPartition, DIALOGUE_COLUMNS } from '../../src/benchmarks/personalens/compact.js';
import { JUDGMENT_COLUMNS } from '../../src/benchmarks/personalens/judge-stage.js';
import { Database } from '../../src/db/database.js';
import { checkReportInBrowser } from '../../src/report/browser-check.js';
import type { ComparisonTable } from '../../src/report/comparison.js';
import { type ReportPage, renderPage } from '../../src/report/html.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

/** A report page with only what `parts` gives it (a chart, a table, a comparison), for the layout checks. */
export function barePage(parts: Partial<ReportPage>): string {
  return renderPage({
    title: 't',
    generatedAt: 'now',
    plensVersion: 'x',
    warehouse: 'w',
    summary: [],
    charts: [],
    tables: [],
    metadata: [],
    skipped: [],
    warnings: [],
    ...parts,
  });
}

/**
 * Debian's chromium's check of a page holding one comparison table in a 1200 px window: its
 * problems (but "the report has no chart", which such a page always has) and the tables it finds
 * cut off. PLENS_SHOT names a screenshot to take.
 */
export async function checkComparisonAlone(table: ComparisonTable): Promise<{ problems: string[]; cutOff: unknown[] }> {
  const file = join(tempDir('plens-comparison-page-'), 'page.html');
  writeFileSync(file, barePage({ comparisons: [table] }));
  const shot = process.env['PLENS_SHOT'];
  const check = await checkReportInBrowser(file, { chromium: '/usr/bin/chromium', width: 1200, height: 1200, ...(shot ? { screenshot: shot } : {}) });
  return { problems: check.problems.filter((p) => p !== 'the report has no chart'), cutOff: check.layout.tables };
}

/** The SVG of one chart of the report, by its id. */
export function chartSvg(html: string, id: string): string {
  const m = html.match(new RegExp(`<figure class="chart" id="chart-${id}">([\\s\\S]*?)</figure>`));
  return m?.[1] ?? '';
}

/** Drawn items of one kind (Vega labels each with its role: bar, point, line mark, rule mark). */
export function countMarks(svg: string, role: string): number {
  return svg.split(`aria-roledescription="${role}"`).length - 1;
}

/** The paper's six settings, in its order. */
export const PAPER_SETTINGS = ['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'];

export interface GridOptions {
  assistants: string[];
  settings: string[];
  /** The sample's first N users' scenarios (of 8). */
  users: number;
  user?: string;
  userTemperature?: number;
  judge?: string;
  judgeTemperature?: number;
  assistantTemperature?: number;
  promptVersion?: string;
  judgePromptVersion?: string;
}

/** A number in [0, 1) from a string: the fixture's scores are the same in every run. */
function unit(...parts: Array<string | number>): number {
  return createHash('sha256').update(parts.join('|')).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * A warehouse over the sample's scenarios with every assistant in every setting: a dialogue per
 * scenario and cell, judged on TC, P (and P after each turn), and the assistant's and the user's
 * naturalness and coherence. Scores are drawn from a hash, better for later assistants and richer
 * settings and worse on MD tasks, so the charts have differences to show.
 */
export async function gridWarehouse(o: GridOptions): Promise<{ ws: string; db: string }> {
  const ws = await sampleWorkspace(['--kind', 'all']);
  const mem = await Database.open(':memory:');
  let scenarios: Array<{ scenario_id: string; user_id: string; task_id: string; kind: 'SD' | 'MD'; relevant_domains: string[] }>;
  try {
    scenarios = await mem.all(
      'SELECT scenario_id, user_id, task_id, kind, relevant_domains FROM read_parquet(?) WHERE user_index < ? ORDER BY scenario_id',
      undefined,
      [join(ws, 'scenarios', 'scenarios.parquet'), o.users],
    );
  } finally {
    mem.close();
  }
  const user = o.user ?? 'openai:user-agent';
  const judge = o.judge ?? 'openai:judge';
  const judgeLines: string[] = [];
  for (const [ai, assistant] of o.assistants.entries()) {
    for (const [si, setting] of o.settings.entries()) {
      const dir = join(ws, 'dialogues', `cell-${ai}-${si}`);
      mkdirSync(dir, { recursive: true });
      const lines = scenarios.map((s) => {
        const key = `${ai}-${si}-${s.scenario_id}`;
        const rounds = 2 + Math.floor(unit(key, 'rounds') * 3);
        const messages = Array.from({ length: 2 * rounds }, (_, i) => ({
          role: i % 2 ? 'assistant' : 'user',
          content: `m${i}`,
          input_tokens: 10,
          output_tokens: 20 + i,
          latency_ms: 1,
          finish_reason: 'stop',
        }));
        const md = s.kind === 'MD';
        const scores = {
          tc: unit(key, 'tc') < 0.7 + 0.05 * ai + 0.02 * si - (md ? 0.2 : 0) ? 1 : 0,
          p: Math.min(4, 1 + Math.floor(unit(key, 'p') * (1.6 + 0.25 * ai + 0.3 * si))),
          nat_a: 3 + Math.floor(unit(key, 'nat_a') * 3),
          coh_a: 3 + Math.floor(unit(key, 'coh_a') * 3),
          nat_u: 3 + Math.floor(unit(key, 'nat_u') * 3),
          coh_u: 3 + Math.floor(unit(key, 'coh_u') * 3),
        };
        const judged: Array<[string, string, number | null, number]> = [
          ['task_completion', 'dialogue', null, scores.tc],
          ['personalization', 'assistant', null, scores.p],
          ['naturalness', 'assistant', null, scores.nat_a],
          ['coherence', 'assistant', null, scores.coh_a],
          ['naturalness', 'user', null, scores.nat_u],
          ['coherence', 'user', null, scores.coh_u],
          ...Array.from(
            { length: rounds },
            (_, t) => ['personalization', 'assistant', t + 1, Math.min(4, 1 + Math.floor(unit(key, 'pt', t) * 4))] as [string, string, number, number],
          ),
        ];
        for (const [dimension, target, turn, score] of judged)
          judgeLines.push(
            JSON.stringify({
              key: `${key}-${dimension}-${target}-${turn}`,
              try: 1,
              status: 'ok',
              dialogue_id: key,
              scenario_id: s.scenario_id,
              user_id: s.user_id,
              task_id: s.task_id,
              kind: s.kind,
              setting,
              assistant_model: assistant,
              user_model: user,
              dialogue_prompt_version: o.promptVersion ?? 'dp-1',
              replicate: 0,
              relevant_domains: s.relevant_domains,
              dimension,
              target,
              turn,
              judge_model: judge,
              judge_temperature: o.judgeTemperature ?? 0,
              judge_max_tokens: 4000,
              judge_prompt_version: o.judgePromptVersion ?? 'jp-1',
              score,
              original_score: dimension === 'task_completion' ? score : null,
              verdict: dimension === 'task_completion' ? score === 1 : null,
            }),
          );
        return JSON.stringify({
          key,
          try: 1,
          status: 'ok',
          scenario_id: s.scenario_id,
          user_id: s.user_id,
          task_id: s.task_id,
          kind: s.kind,
          setting,
          replicate: 0,
          assistant_model: assistant,
          assistant_temperature: o.assistantTemperature ?? 0,
          assistant_max_tokens: 800,
          user_model: user,
          user_temperature: o.userTemperature ?? 0.5,
          user_max_tokens: 800,
          prompt_version: o.promptVersion ?? 'dp-1',
          end_reason: 'terminated',
          rounds,
          messages,
        });
      });
      writeFileSync(join(dir, 'records.jsonl'), lines.join('\n') + '\n');
      await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS);
    }
  }
  const jdir = join(ws, 'judgments', 'j');
  mkdirSync(jdir, { recursive: true });
  writeFileSync(join(jdir, 'records.jsonl'), judgeLines.join('\n') + '\n');
  await compactPartition(jdir, 'judgments', JUDGMENT_COLUMNS);
  const db = join(ws, '..', 'grid.duckdb');
  const built = await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none']);
  expect(built.code, built.stderr).toBe(0);
  return { ws, db };
}
