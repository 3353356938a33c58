import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportParts } from '../../src/registry/registry.js';
import { checkReportInBrowser, MIN_TEXT_PX } from '../../src/report/browser-check.js';
import { CHART_MAX_WIDTH, type ChartSpec, renderChart } from '../../src/report/charts.js';
import { writeReport } from '../../src/report/report.js';
import { tempDir } from '../helpers/cli.js';
import { barePage, chartSvg, countMarks, gridWarehouse, PAPER_SETTINGS } from './fixture.js';

// Debian's chromium; CI machines do not have it (install: apt-get install -y chromium).
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const skipNote = hasChromium ? '' : ' [skipped: no /usr/bin/chromium; apt-get install -y chromium to run it]';

const ASSISTANTS = [
  'openai:gpt-4o',
  'openai:gpt-4o-mini',
  'anthropic:claude-3-5-sonnet-20241022',
  'anthropic:claude-3-haiku-20240307',
  'openai:llama-3.1-8b-instruct',
];

describe(`a 5-assistant x 6-setting report in headless Chromium${skipNote}`, () => {
  let file: string;
  let html: string;

  beforeAll(async () => {
    const { db } = await gridWarehouse({ assistants: ASSISTANTS, settings: PAPER_SETTINGS, users: 2 });
    file = join(tempDir('plens-grid-report-'), 'report.html');
    await writeReport({ parts: reportParts(), dbPath: db, out: file, title: '5 x 6' });
    html = readFileSync(file, 'utf8');
  });

  it('draws every assistant in small multiples: a panel per assistant and measure', () => {
    // Figure 4 and Table 4: a block per measure (TCR, P), a panel per assistant in each.
    for (const id of ['figure4', 'table4-chart']) {
      const svg = chartSvg(html, id);
      for (const a of ASSISTANTS) expect(svg.split(`aria-label="Title text '${a}'"`).length - 1, `${id} ${a}`).toBe(2);
    }
    // Table 4: 5 assistants x 6 settings x (SD, MD) x (TCR, P) bars, each with its interval.
    const t4 = chartSvg(html, 'table4-chart');
    expect(countMarks(t4, 'bar')).toBe(5 * 6 * 2 * 2);
    expect(countMarks(t4, 'rule mark')).toBe(5 * 6 * 2 * 2);
    // Each bar says what it is: the panel's assistant, the setting, the tasks, the value with its interval, n.
    expect(t4).toMatch(/aria-label="openai:gpt-4o-mini; Setting: base\+i; Tasks: MD; P: [\d.]+ \[[\d.]+, [\d.]+\]; n: \d+"/);
  });

  it.skipIf(!hasChromium)('passes the browser check: no chart scaled down or wider than the page, no text below 9 px', async () => {
    const shot = join(tempDir('plens-grid-shot-'), 'shot.png');
    const check = await checkReportInBrowser(file, { chromium: CHROMIUM, screenshot: shot, fullPage: true });
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
    expect(check.layout.charts.map((c) => c.id)).toEqual(['figure4', 'figure5', 'table4-chart', 'lift-chart', 'score-distributions']);
    for (const c of check.layout.charts) {
      // Shown at the size it was drawn, within the page, its smallest text at least 9 px.
      expect(c.renderedWidth, c.id).toBeCloseTo(c.naturalWidth, 0);
      expect(c.naturalWidth, c.id).toBeLessThanOrEqual(CHART_MAX_WIDTH);
      expect(c.overflow, c.id).toBe(0);
      expect(c.smallestTextPx!, c.id).toBeGreaterThanOrEqual(MIN_TEXT_PX);
    }
    expect(check.layout.tables).toEqual([]);
    expect(check.layout.pageWidth).toBe(check.layout.viewportWidth);
    // The full page: taller than the window, as wide.
    expect(check.screenshot.width).toBe(1200);
    expect(check.screenshot.height).toBeGreaterThan(3000);
  });

  it.skipIf(!hasChromium)('fails the same grid drawn the old way: one wide row of grouped bars, scaled into the page', async () => {
    // Figure 4 as plens drew it before: TCR and P side by side, a group of five bars per domain,
    // 56 px a bar. The browser check must refuse it, scaled (the old stylesheet) or not.
    const domains = [...new Set([...chartSvg(html, 'figure4').matchAll(/Domain: ([^;]+); Tasks: SD/g)].map((m) => m[1]!))];
    expect(domains.length).toBeGreaterThan(3);
    const values = ASSISTANTS.flatMap((assistant, i) =>
      domains.flatMap((domain) => [
        { assistant, domain, panel: 'TCR (%)', value: 50 + 5 * i },
        { assistant, domain, panel: 'P', value: 2 + 0.2 * i },
      ]),
    );
    const old: ChartSpec = {
      id: 'figure4',
      title: 'Figure 4 (the old layout)',
      caption: '',
      spec: {
        data: { values },
        hconcat: ['TCR (%)', 'P'].map((panel) => ({
          transform: [{ filter: { field: 'panel', equal: panel } }],
          width: { step: 56 },
          height: 220,
          mark: 'bar',
          encoding: {
            x: { field: 'domain', type: 'nominal', axis: { labelAngle: -40 } },
            xOffset: { field: 'assistant', type: 'nominal' },
            y: { field: 'value', type: 'quantitative', title: panel },
            color: { field: 'assistant', type: 'nominal' },
          },
        })),
      } as ChartSpec['spec'],
    };
    const page = barePage({ title: 'old', charts: [await renderChart(old)] });
    const dir = tempDir('plens-old-layout-');
    const wide = join(dir, 'wide.html');
    writeFileSync(wide, page);
    const unscaled = await checkReportInBrowser(wide, { chromium: CHROMIUM, width: 1200, height: 1200 });
    expect(unscaled.ok).toBe(false);
    expect(unscaled.problems.join('\n')).toMatch(/chart figure4 is \d+ px wide, wider than the page \(1136 px\): the reader must scroll/);

    // The old stylesheet scaled every SVG into the page: then the text is what is too small.
    const scaled = join(dir, 'scaled.html');
    writeFileSync(scaled, page.replace('.svg svg { display: block; max-width: none; }', '.svg svg { max-width: 100%; height: auto; }'));
    const check = await checkReportInBrowser(scaled, { chromium: CHROMIUM, width: 1200, height: 1200 });
    expect(check.ok).toBe(false);
    const fig = check.layout.charts[0]!;
    expect(fig.renderedWidth).toBeLessThan(fig.naturalWidth / 4);
    expect(fig.smallestTextPx!).toBeLessThan(MIN_TEXT_PX);
    expect(check.problems.join('\n')).toMatch(/chart figure4 is scaled down to \d+% \(\d+ px wide, shown at 1136 px\)/);
    expect(check.problems.join('\n')).toMatch(/chart figure4: text shows at [\d.]+ px \(below 9 px\)/);
  });

  it.skipIf(!hasChromium)('fails a table wider than the page, and text set below 9 px', async () => {
    const dir = tempDir('plens-narrow-');
    const columns = Array.from({ length: 30 }, (_, i) => ({ key: `c${i}`, label: `column_number_${i}` }));
    const page = barePage({
      tables: [{ name: 'wide', title: 'Wide', columns, rows: [Object.fromEntries(columns.map((c) => [c.key, 'a_long_unbreakable_value']))] }],
    });
    const file = join(dir, 'wide.html');
    writeFileSync(
      file,
      page.replace('</style>', '.caption { font-size: 6px; }\n</style>').replace('<h3>Wide</h3>', '<h3>Wide</h3><p class="caption">tiny</p>'),
    );
    const check = await checkReportInBrowser(file, { chromium: CHROMIUM, width: 1200, height: 800 });
    expect(check.layout.tables).toHaveLength(1);
    expect(check.problems.join('\n')).toMatch(/table table-wide is \d+ px wide in a 1136 px box: its right part is cut off/);
    expect(check.problems).toContain('page text shows at 6 px (below 9 px), e.g. "tiny"');
  });
});
