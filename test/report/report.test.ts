import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportParts } from '../../src/registry/registry.js';
import { scopeSvgIds } from '../../src/report/charts.js';
import { writeReport } from '../../src/report/report.js';
import { PERSONALENS_TABLES as PAPER_TABLES } from '../../src/benchmarks/personalens/catalog.js';
import { escapeHtml } from '../../src/tables/render.js';
import { runCli, runCliJson, tempDir } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';
import { A, B, handMadeWarehouse } from '../helpers/hand-experiment.js';
import { chartSvg, countMarks } from './fixture.js';

describe('plens report on a hand-made experiment', () => {
  let db: string;
  let ws: string;
  let file: string;
  let html: string;
  let result: Awaited<ReturnType<typeof writeReport>>;

  beforeAll(async () => {
    ({ ws, db } = await handMadeWarehouse());
    file = join(tempDir('plens-report-'), 'sub', 'report.html');
    result = await writeReport({
      parts: reportParts(),
      dbPath: db,
      out: file,
      title: 'Run <1> & "co"',
      metadata: { pipeline: 'p<x>', shards: 4, models: [A, B] },
    });
    html = readFileSync(file, 'utf8');
  });

  it('writes one file atomically and says what is in it', () => {
    expect(result.file).toBe(file);
    expect(existsSync(file)).toBe(true);
    // No temp sibling left behind.
    expect(readdirSync(dirname(file))).toEqual(['report.html']);
    expect(result.charts).toBe(5);
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    // Vega and Vega-Lite had nothing to warn about (their warnings would be listed under Notes).
    expect(html).not.toContain('chart warning');
  });

  it('is self-contained: no URL, no script, every link inside the page', () => {
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|javascript:/i);
    const refs = [...html.matchAll(/\b(?:src|href|xlink:href)\s*=\s*["']?([^"'\s>]*)/gi)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(ref, ref).toMatch(/^#/);
    for (const m of html.matchAll(/url\(([^)]*)\)/g)) expect(m[1]).toMatch(/^#/);
    // The browser is told to fetch nothing, whatever ends up in the page.
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
  });

  it('has one inline SVG per chart, each with the right number of marks', () => {
    expect(html.match(/<svg[\s>]/g)).toHaveLength(5);
    for (const id of ['figure4', 'figure5', 'table4-chart', 'lift-chart', 'score-distributions'])
      expect(chartSvg(html, id).match(/<svg[\s>]/g), id).toHaveLength(1);
    // Figure 4 (base): A has Alarm, Books and the MD dialogue's Flights, Hotels, Rental Cars; B has Alarm: 6 bars x (TCR, P).
    const fig4 = chartSvg(html, 'figure4');
    expect(countMarks(fig4, 'bar')).toBe(12);
    // One dialogue per bar has no interval (the view gives NULL), so no error bar.
    expect(countMarks(fig4, 'rule mark')).toBe(0);
    // Table 4: A base SD+MD x (TCR, P) = 4, A base+all SD x 2 = 2, B base SD x 2 = 2; intervals only for A base SD (n = 2).
    const t4 = chartSvg(html, 'table4-chart');
    expect(countMarks(t4, 'bar')).toBe(8);
    expect(countMarks(t4, 'rule mark')).toBe(2);
    // Every bar shows its n: Figure 4's twelve bars each have one (1 dialogue each, the MD one's domains too).
    expect(countMarks(fig4, 'text mark')).toBe(12);
    expect(fig4.match(/n_text: 1"/g)).toHaveLength(12);
    // Figure 5: d1's two turn-level scores, one line (Alarm).
    const fig5 = chartSvg(html, 'figure5');
    // Small multiples: one panel per domain with its n in the header.
    expect(fig5).toContain('Alarm (n=1)');
    expect(countMarks(fig5, 'point')).toBe(2);
    expect(countMarks(fig5, 'line mark')).toBe(1);
    // The lift: A base -> base+all on one scenario, TC and P: one point per panel.
    const lift = chartSvg(html, 'lift-chart');
    expect(countMarks(lift, 'point')).toBe(2);
    // Each panel's name stands above it, level: not rotated at its left, over the y axis title.
    for (const panel of ['TC lift (points)', 'P lift'])
      expect(lift).toMatch(new RegExp(`<text text-anchor="start" transform="translate\\([\\d.,-]+\\)"[^>]*>${panel.replace(/[()]/g, '\\$&')}</text>`));
    expect(lift).not.toMatch(/rotate\(-90\)[^>]*>(TC lift \(points\)|P lift)</);
    // Distinct (assistant, dimension, score): A tc 2, p 4, nat_a 3, coh_a 2, nat_u 2, coh_u 1; B tc 1, p 1.
    expect(countMarks(chartSvg(html, 'score-distributions'), 'bar')).toBe(16);
  });

  it('draws the values of the views', () => {
    const fig4 = chartSvg(html, 'figure4');
    // Each bar is labelled with its panel (the assistant) and data: A's Books TCR is 0, B's Alarm P is 4.
    expect(fig4).toContain('aria-label="openai:a; Domain: Books; Tasks: SD; TCR (%): 0; n: 1"');
    expect(fig4).toMatch(/aria-label="openai:b&lt;i&gt;&amp;&quot;(&#39;|')?; Domain: Alarm; Tasks: SD; P: 4; n: 1"/);
    // A's SD TCR in Table 4 (n = 2) has its interval in the label.
    expect(chartSvg(html, 'table4-chart')).toMatch(/aria-label="openai:a; Setting: base; Tasks: SD; TCR \(%\): 50 \[[\d.]+, [\d.]+\]; n: 2"/);
    expect(chartSvg(html, 'figure4')).toContain('(base setting)');
  });

  it('opens with the models compared, then the charts and result tables; the dataset tables come after them', () => {
    const at = (id: string) => html.indexOf(`<section id="${id}">`);
    expect(at('comparison')).toBeGreaterThan(0);
    expect(at('comparison')).toBeLessThan(at('summary'));
    expect(at('summary')).toBeLessThan(at('charts'));
    expect(at('charts')).toBeLessThan(at('tables'));
    expect(at('tables')).toBeLessThan(at('data-tables'));
    expect(at('data-tables')).toBeLessThan(at('metadata'));
    // Table 1 (the data) is in the dataset section; Table 3 (results) in the results one.
    expect(html.indexOf('id="table-table1"')).toBeGreaterThan(at('data-tables'));
    expect(html.indexOf('id="table-table3"')).toBeGreaterThan(at('tables'));
    expect(html.indexOf('id="table-table3"')).toBeLessThan(at('data-tables'));
    expect(html).toContain('<nav><a href="#comparison">Models compared</a> <a href="#summary">Summary</a>');
  });

  it("lays the comparison out as the paper's Table 3: a row per assistant, SD and MD blocks, intervals under the values", () => {
    const table = html.match(/<div class="table comparison" id="comparison-table3">[\s\S]*?<\/div>\n<\/section>/)![0];
    expect(table).toContain(
      '<th>Model</th><th class="num">n</th><th class="num">TCR (%)</th><th class="num">P</th><th class="num">Nat (A)</th><th class="num">Coh (A)</th>',
    );
    const sd = table.indexOf('Single-domain tasks (SD)');
    const md = table.indexOf('Multi-domain tasks (MD)');
    expect(sd).toBeGreaterThan(0);
    expect(md).toBeGreaterThan(sd);
    // A on SD: n 2, TCR 50 and P 2 with their intervals; B on SD: one dialogue, no interval.
    expect(table).toMatch(
      /<th scope="row">openai:a<\/th><td class="num">2<\/td><td class="num">50\.00<span class="ci">\[[\d.]+, [\d.]+\]<\/span><\/td><td class="num">2\.00<span class="ci">/,
    );
    expect(table).toContain('<th scope="row">openai:b&lt;i&gt;&amp;&quot;&#39;</th><td class="num">1</td><td class="num">100.00</td><td class="num">4.00</td>');
    // Neither is a model of the paper: no Paper column, and a note that says why.
    expect(table).not.toContain('class="num pub"');
    expect(table).toContain('None of these assistants is one the paper evaluated, so no published values are shown.');
  });

  it('contains every paper table the warehouse has, with its title and values', () => {
    for (const name of ['table1', 'table3', 'table4', 'table12', 'table13', 'figure4', 'figure5', 'judgment_status']) {
      const t = PAPER_TABLES.find((p) => p.name === name)!;
      expect(html, name).toContain(`<h3>${escapeHtml(t.title)}</h3>`);
      expect(html).toContain(`id="table-${name}"`);
    }
    expect(result.tables).toBeGreaterThanOrEqual(8);
    // Table 3, A on SD: TCR 50 with its interval (on a line under it), then P 2.
    expect(html).toMatch(/<td class="num">50\.00<span class="ci">\[[0-9.]+, [0-9.]+\]<\/span><\/td><td class="num">2\.00<span class="ci">\[/);
    // Table 5 needs annotations: listed as skipped, not an error.
    expect(html).toMatch(/<li>table5: skipped, not in the warehouse: it needs human labels/);
    // The fix it names is the annotation round, not a rebuild alone.
    expect(html).toMatch(/table5: skipped[^<]*`plens annotate export`[^<]*`plens annotate import`[^<]*`plens warehouse`/);
  });

  it("shows the run metadata: models, prompt versions, counts, failures, cost, and the caller's keys", () => {
    expect(html).toContain('<dt>Dialogues (finished / failed)</dt><dd>5 / 1</dd>');
    expect(html).toContain('<dt>Judgments (scored / failed / unparsed)</dt><dd>21 / 1 / 1</dd>');
    expect(html).toContain('<dt>Cost (USD)</dt><dd>0.0123</dd>');
    expect(html).toContain('<dt>LLM calls (cached)</dt><dd>2 (1)</dd>');
    expect(html).toContain('id="table-meta_runs"');
    expect(html).toContain('<td>jp-1</td>');
    // Failures: the failed dialogue with its (escaped) message, the failed and the unparsed judgment.
    const failures = html.match(/id="table-meta_failures"[\s\S]*?<\/table>/)![0];
    expect(failures).toContain('HTTP 500 &lt;boom&gt;');
    expect(failures).toContain('judgment: naturalness (user)');
    expect(failures).toContain('<td>unparsed</td>');
    const cost = html.match(/id="table-meta_cost"[\s\S]*?<\/table>/)![0];
    expect(cost).toContain('<td class="num">0.0123</td>');
    expect(html).toContain('<td>pipeline</td><td>p&lt;x&gt;</td>');
    expect(html).toContain('<td>shards</td><td>4</td>');
  });

  it('escapes HTML from the data and the title everywhere', () => {
    expect(html).toContain('<title>Run &lt;1&gt; &amp; &quot;co&quot;</title>');
    expect(html).not.toContain('<1>');
    expect(html).not.toContain('b<i>');
    expect(html).not.toContain('<boom>');
    expect(html).toContain('openai:b&lt;i&gt;&amp;');
  });

  it('the CLI writes <workspace>/report.html by default (where a pipeline writes it) and reports it', async () => {
    const r = await runCliJson<{ ok: boolean; file: string; charts: number; tables: number }>(['report', '--db', db, '-w', ws]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ ok: true, file: join(ws, 'report.html'), charts: 5 });
    expect(existsSync(join(ws, 'report.html'))).toBe(true);
    const plain = await runCli(['report', '--db', db, '--out', join(ws, 'x.html'), '--title', 'T']);
    expect(plain.stdout).toMatch(/^Wrote .*x\.html \(5 charts, \d+ tables\)/);
  });

  it('the CLI fails with exit 4 without a warehouse', async () => {
    const r = await runCliJson<{ ok: boolean; error: { code: string } }>(['report', '--db', join(ws, 'none.duckdb')]);
    expect(r.code).toBe(4);
    expect(r.json.error.code).toBe('E_PREREQUISITE');
  });
});

describe('plens report on a warehouse without results', () => {
  it('renders the dataset tables and lists every chart and section as skipped', async () => {
    const ws = await sampleWorkspace(['--users', '0-1']);
    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none'])).code).toBe(0);
    const file = join(ws, 'r.html');
    const result = await writeReport({ parts: reportParts(), dbPath: db, out: file });
    expect(result.charts).toBe(0);
    expect(result.tables).toBe(3);
    const html = readFileSync(file, 'utf8');
    expect(html).not.toContain('<svg');
    for (const chart of ['Figure 4', 'Figure 5', 'Table 4', 'Personalization lift', 'Score distributions'])
      expect(html).toContain(`<li>${chart} chart: skipped, the warehouse has no`);
    expect(html).toContain('<li>Runs: skipped, the warehouse has no result_runs</li>');
    expect(html).toContain('<dt>Scenarios selected</dt>');
  });
});

describe('scopeSvgIds', () => {
  it('prefixes ids and the references to them, and nothing else', () => {
    const svg = '<svg><defs><clipPath id="clip1"><rect/></clipPath></defs><g clip-path="url(#clip1)"><use href="#clip1"/><a href="#other"/></g></svg>';
    expect(scopeSvgIds(svg, 'c')).toBe(
      '<svg><defs><clipPath id="c-clip1"><rect/></clipPath></defs><g clip-path="url(#c-clip1)"><use href="#c-clip1"/><a href="#other"/></g></svg>',
    );
  });
});
