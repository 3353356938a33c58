import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAPER_TABLE3, paperRowFor } from '../../src/benchmarks/personalens/paper-values.js';
import { PromptSet } from '../../src/benchmarks/personalens/prompt-set.js';
import { reportParts } from '../../src/registry/registry.js';
import { writeReport } from '../../src/report/report.js';
import { tempDir } from '../helpers/cli.js';
import { gridWarehouse } from './fixture.js';

describe("the paper's Table 3 values", () => {
  it("find the paper's row of an assistant by its model version, whatever the provider's id", () => {
    const row = (spec: string) => paperRowFor(spec)?.name;
    expect(row('anthropic:claude-3-haiku-20240307')).toBe('Claude 3 Haiku');
    expect(row('bedrock:us.anthropic.claude-3-haiku-20240307-v1:0')).toBe('Claude 3 Haiku');
    expect(row('anthropic:claude-3-5-haiku-20241022?price_in=0.8')).toBe('Claude 3.5 Haiku');
    expect(row('bedrock:anthropic.claude-3-sonnet-20240229-v1:0')).toBe('Claude 3 Sonnet');
    expect(row('bedrock:meta.llama3-1-70b-instruct-v1:0')).toBe('Llama 3.1 70B Instruct');
    expect(row('openai:meta-llama/Llama-3.1-8B-Instruct?base_url=http://127.0.0.1:8000/v1')).toBe('Llama 3.1 8B Instruct');
    expect(row('bedrock:mistral.mistral-7b-instruct-v0:2')).toBe('Mistral 7B Instruct');
    expect(row('bedrock:mistral.mixtral-8x7b-instruct-v0:1')).toBe('Mixtral 8x7B Instruct');
    // The judge is no assistant of Table 3, nor are models the paper did not run.
    expect(row('anthropic:claude-3-5-sonnet-20241022')).toBeUndefined();
    expect(row('openai:gpt-4o')).toBeUndefined();
    expect(row('sim:default')).toBeUndefined();
  });

  it("hold Table 3's numbers", () => {
    expect(PAPER_TABLE3).toHaveLength(7);
    expect(PAPER_TABLE3.find((r) => r.name === 'Claude 3 Sonnet')).toEqual({
      name: 'Claude 3 Sonnet',
      version: 'claude-3-sonnet-20240229',
      sd: { tcr: 95.98, p: 2.13, nat: 3.86, coh: 4.71 },
      md: { tcr: 77.49, p: 2.01, nat: 3.84, coh: 4.79 },
    });
  });
});

/** The comparison table of a report over a one-user, base-setting grid. */
async function comparison(o: Partial<Parameters<typeof gridWarehouse>[0]>): Promise<string> {
  const prompts = PromptSet.load();
  const { db } = await gridWarehouse({
    assistants: ['bedrock:anthropic.claude-3-sonnet-20240229-v1:0', 'anthropic:claude-3-haiku-20240307', 'openai:gpt-4o'],
    settings: ['base'],
    users: 1,
    user: 'anthropic:claude-3-sonnet-20240229',
    judge: 'bedrock:us.anthropic.claude-3-5-sonnet-20241022-v2:0',
    promptVersion: prompts.dialogueVersion,
    judgePromptVersion: prompts.judgeVersion,
    ...o,
  });
  const file = join(tempDir('plens-comparison-'), 'report.html');
  await writeReport({ parts: reportParts(), dbPath: db, out: file });
  return readFileSync(file, 'utf8').match(/<div class="table comparison" id="comparison-table3">[\s\S]*?<\/div>\n<\/section>/)![0];
}

/** A row of the comparison: its cells' text, in order. */
function cells(table: string, block: 'SD' | 'MD', model: string): string[] {
  const start = table.indexOf(block === 'SD' ? 'Single-domain tasks (SD)' : 'Multi-domain tasks (MD)');
  const row = table.slice(start).match(new RegExp(`<tr><th scope="row">${model.replace(/[.?]/g, '\\$&')}</th>([\\s\\S]*?)</tr>`))![1]!;
  return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.replace(/<span class="ci">([^<]*)<\/span>/, ' $1'));
}

describe("the report's comparison table beside the paper", () => {
  it("shows the paper's values beside a run that follows its protocol, and only there", async () => {
    const table = await comparison({});
    expect(table).toContain(
      '<th class="num pub" title="Zhao et al. (2025), PersonaLens: A Benchmark for Personalization Evaluation in Conversational AI Assistants, Table 3">Paper</th>',
    );
    expect(table).toContain("<th>Paper's protocol</th>");
    // Claude 3 Sonnet on SD: n, then ours and the paper's for TCR, P, Nat, Coh; the protocol followed.
    const sonnet = cells(table, 'SD', 'bedrock:anthropic.claude-3-sonnet-20240229-v1:0');
    expect(sonnet).toHaveLength(1 + 8 + 1);
    expect(sonnet.filter((_, i) => i > 0 && i % 2 === 0)).toEqual(['95.98', '2.13', '3.86', '4.71']);
    expect(sonnet.at(-1)).toBe('followed');
    expect(cells(table, 'MD', 'bedrock:anthropic.claude-3-sonnet-20240229-v1:0').filter((_, i) => i > 0 && i % 2 === 0)).toEqual([
      '77.49',
      '2.01',
      '3.84',
      '4.79',
    ]);
    expect(cells(table, 'SD', 'anthropic:claude-3-haiku-20240307').filter((_, i) => i > 0 && i % 2 === 0)).toEqual(['95.95', '2.20', '3.77', '4.62']);
    // GPT-4o is no model of the paper: no values beside it, nothing to say about the protocol.
    const gpt = cells(table, 'SD', 'openai:gpt-4o');
    expect(gpt.filter((_, i) => i > 0 && i % 2 === 0)).toEqual(['-', '-', '-', '-']);
    expect(gpt.at(-1)).toBe('');
    // Ours: a number with its interval under it.
    expect(sonnet[1]).toMatch(/^\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]$/);
  });

  it('says what differs from the protocol, and then shows no paper values', async () => {
    const table = await comparison({ judgeTemperature: 0.7, user: 'openai:gpt-4o-mini', promptVersion: 'my-prompts' });
    expect(table).not.toContain('class="num pub"');
    expect(table).not.toContain('95.98');
    const why = cells(table, 'SD', 'anthropic:claude-3-haiku-20240307').at(-1)!;
    expect(why).toContain('user agent openai:gpt-4o-mini, not claude-3-sonnet-20240229');
    expect(why).toContain('judge temperature 0.7, not 0');
    expect(why).toMatch(/dialogue prompts my-prompts, not the bundled personalens-v\d+\+[0-9a-f]{8}/);
    expect(why).not.toContain('judge prompts');
  });
});
