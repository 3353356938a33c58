import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportParts } from '../../src/registry/registry.js';
import { checkReportInBrowser, decodePng } from '../../src/report/browser-check.js';
import { barePage } from './fixture.js';
import { writeReport } from '../../src/report/report.js';
import { repoRoot, tempDir } from '../helpers/cli.js';
import { handMadeWarehouse } from '../helpers/hand-experiment.js';

// Debian's chromium; CI machines do not have it (install: apt-get install -y chromium).
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const skipNote = hasChromium ? '' : ' [skipped: no /usr/bin/chromium; apt-get install -y chromium to run it]';

describe(`the report in headless Chromium${skipNote}`, () => {
  it.skipIf(!hasChromium)('renders every chart: SVG in the DOM, nothing refused, chart colour on the screenshot', async () => {
    const { db } = await handMadeWarehouse();
    const dir = tempDir('plens-browser-');
    const file = join(dir, 'report.html');
    const written = await writeReport({ parts: reportParts(), dbPath: db, out: file });
    const shot = join(dir, 'shot.png');
    const check = await checkReportInBrowser(file, { chromium: CHROMIUM, screenshot: shot });
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
    expect(check.svgInFile).toBe(written.charts);
    expect(check.svgInDom).toBe(written.charts);
    expect(check.marksInDom).toBeGreaterThanOrEqual(written.charts);
    expect(check.refused).toEqual([]);
    // Fixed scales: every P axis runs 1-4 and every TCR axis 0-100, whatever the data (A's Books TCR is 0, B's Alarm P is 4).
    const axes = new Set(check.axes.map((a) => `${a.title} ${a.from}-${a.to}`));
    expect(axes).toContain('P 1-4');
    expect(axes).toContain('TCR (%) 0-100');
    // Figure 4 and Table 4: a TCR and a P axis for each assistant's panel (A and B).
    expect(check.axes.filter((a) => a.title === 'TCR (%)').length).toBeGreaterThanOrEqual(4);
    for (const a of check.axes.filter((x) => /P$|TCR/.test(x.title))) expect([a.from, a.to]).toEqual(/TCR/.test(a.title) ? [0, 100] : [1, 4]);
    // Every chart at its natural size, its text legible.
    expect(check.layout.charts).toHaveLength(written.charts);
    for (const c of check.layout.charts) expect(c.renderedWidth, c.id).toBeCloseTo(c.naturalWidth, 0);
    // 1200x3000 of a blank page compresses to a few KB; charts and tables make it far larger.
    expect(check.screenshot).toMatchObject({ width: 1200, height: 3000 });
    expect(check.screenshot.bytes).toBeGreaterThan(30_000);
    expect(check.screenshot.distinctColors).toBeGreaterThan(50);
    expect(check.screenshot.chartPixels).toBeGreaterThan(1_000);
    expect(decodePng(readFileSync(shot)).channels).toBeGreaterThanOrEqual(3);

    // The documented script (`npm run report:check -- FILE`) says the same, with exit 0.
    const script = spawnSync(process.execPath, [join(repoRoot, 'dist', 'report', 'browser-check.js'), file], {
      encoding: 'utf8',
      env: { ...process.env, PLENS_CHROMIUM: CHROMIUM },
    });
    expect(script.status, script.stderr + script.stdout).toBe(0);
    expect(script.stdout).toContain('OK: the report renders with its charts, every one legible');
    expect(script.stdout).toMatch(/layout at 1200 px: widest chart \d+ px; smallest chart text (9|1\d)(\.\d)? px/);
    // In a 600 px window the charts are wider than the page: the check says so and exits 1.
    const narrow = spawnSync(process.execPath, [join(repoRoot, 'dist', 'report', 'browser-check.js'), '--width', '600', file], {
      encoding: 'utf8',
      env: { ...process.env, PLENS_CHROMIUM: CHROMIUM },
    });
    expect(narrow.status, narrow.stderr).toBe(1);
    expect(narrow.stdout).toMatch(/FAILED:\n {2}- chart figure4 is \d+ px wide, wider than the page \(\d+ px\)/);
    // A mistyped option is refused with the usage line (exit 2).
    const typo = spawnSync(process.execPath, [join(repoRoot, 'dist', 'report', 'browser-check.js'), '--widht', '600', file], { encoding: 'utf8' });
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('report:check: unknown option --widht');
  });

  it.skipIf(!hasChromium)('long tables show their first 10 rows, the rest collapsed in a closed <details>', async () => {
    const dir = tempDir('plens-browser-long-');
    const file = join(dir, 'long.html');
    const rows = Array.from({ length: 40 }, (_, i) => ({ domain: `d${i}`, n: i }));
    const short = Array.from({ length: 12 }, (_, i) => ({ domain: `s${i}`, n: i }));
    const columns = [
      { key: 'domain', label: 'Domain' },
      { key: 'n', label: 'n', format: 'int' as const },
    ];
    writeFileSync(
      file,
      barePage({
        tables: [
          { name: 'long', title: 'Long', columns, rows },
          { name: 'short', title: 'Short', columns, rows: short },
        ],
      }),
    );
    const check = await checkReportInBrowser(file, { chromium: CHROMIUM, width: 800, height: 1200 });
    // One table collapsed (40 rows), the 12-row one shown whole; nothing open when the page loads.
    expect(check.collapsed).toEqual({ details: 1, open: 0, mostVisibleRows: 12 });
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('<summary>All 40 rows (the first 10 are shown above)</summary>');
    // A page with a table of 40 rows in the open fails the check.
    const open = join(dir, 'open.html');
    writeFileSync(open, html.replace('<details class="more">', '<details class="more" open>'));
    expect((await checkReportInBrowser(open, { chromium: CHROMIUM, width: 800, height: 1200 })).problems).toContain(
      '1 collapsed table(s) open when the page loads',
    );
  });

  it.skipIf(!hasChromium)('fails a chart whose P axis is not on 1-4', async () => {
    const dir = tempDir('plens-browser-scale-');
    const file = join(dir, 'scale.html');
    writeFileSync(
      file,
      `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><svg width="300" height="300"><rect width="300" height="300" fill="#4c78a8"/><g aria-label="Y-axis titled 'P' for a linear scale with values from 0.0 to 1.0"></g></svg></body></html>`,
    );
    const check = await checkReportInBrowser(file, { chromium: CHROMIUM, width: 400, height: 400 });
    expect(check.axes).toEqual([{ title: 'P', from: 0, to: 1 }]);
    expect(check.problems).toContain("the axis 'P' runs 0-1, not on its fixed scale 1-4");
  });

  it.skipIf(!hasChromium)('fails a page that loads something from outside, or shows no chart', async () => {
    const dir = tempDir('plens-browser-bad-');
    const page = (body: string) =>
      `<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head><body>${body}</body></html>`;
    const external = join(dir, 'external.html');
    writeFileSync(
      external,
      page('<svg width="300" height="300"><rect width="300" height="300" fill="#4c78a8"/></svg><img src="https://example.invalid/x.png">'),
    );
    const bad = await checkReportInBrowser(external, { chromium: CHROMIUM, width: 400, height: 400 });
    expect(bad.ok).toBe(false);
    expect(bad.refused.length).toBe(1);
    expect(bad.refused[0]).toContain('example.invalid');

    const blank = join(dir, 'blank.html');
    writeFileSync(blank, page('<svg width="10" height="10"></svg>'));
    const empty = await checkReportInBrowser(blank, { chromium: CHROMIUM, width: 400, height: 400 });
    expect(empty.ok).toBe(false);
    expect(empty.problems.join('\n')).toMatch(/nearly uniform|shows no chart/);
  });
});
