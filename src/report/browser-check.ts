import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PNG } from 'pngjs';
import { CdpBrowser } from './cdp.js';

/**
 * Opens a report in headless Chromium, as a reader would, and checks what it shows: the DOM holds
 * every chart's SVG, the browser refused no resource (the page's CSP forbids any fetch), every P,
 * Nat/Coh and TCR axis is on its fixed scale, long tables are collapsed, a screenshot has the
 * charts' colour in it, and the layout reads: no chart is scaled below its natural size or wider
 * than the page, no table runs past the page's right edge, and no text shows below MIN_TEXT_PX
 * after scaling. Chromium is driven over the DevTools protocol on a pipe (see cdp.ts), so the
 * sizes are the ones it laid out. `npm run report:check -- FILE` runs it.
 */

export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The smallest text, in CSS px as displayed (after any scaling), that the check accepts. */
export const MIN_TEXT_PX = 9;

export function findChromium(): string | undefined {
  const fromEnv = process.env['PLENS_CHROMIUM'];
  if (fromEnv) return fromEnv;
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p));
}

/** One chart as Chromium laid it out. */
export interface ChartLayout {
  /** The figure's id without `chart-`. */
  id: string;
  /** The SVG's own width (its width attribute), and the width it is shown at. */
  naturalWidth: number;
  renderedWidth: number;
  /** Pixels of the chart past its box's right edge (0 when it fits). */
  overflow: number;
  /** The width its box has on the page. */
  boxWidth: number;
  /** The smallest text in the chart as displayed (font size times the SVG's scale), and that text. */
  smallestTextPx: number | null;
  smallestText: string;
}

/** The page's layout as Chromium has it at the check's window width. */
export interface PageLayout {
  /** The window's width, and the width of the page's content (what scrolls sideways when larger). */
  viewportWidth: number;
  pageWidth: number;
  charts: ChartLayout[];
  /** Tables (their scroll boxes) wider than the box that shows them. */
  tables: Array<{ id: string; width: number; shown: number }>;
  /** The smallest HTML text shown (charts apart), in px, and that text. */
  smallestTextPx: number | null;
  smallestText: string;
}

export interface BrowserCheck {
  file: string;
  /** `<svg` elements in the file, and in the DOM Chromium built from it. */
  svgInFile: number;
  svgInDom: number;
  /** Drawn marks (bars, lines, points, rules) in the DOM. */
  marksInDom: number;
  /** Log lines where Chromium refused to load something. */
  refused: string[];
  /** Every chart's value axes as the browser has them (Vega's aria labels): title and range. */
  axes: Array<{ title: string; from: number; to: number }>;
  /** Long tables collapsed into <details> (closed when the page opens), and the most rows any table shows open. */
  collapsed: { details: number; open: number; mostVisibleRows: number };
  layout: PageLayout;
  screenshot: { file: string; bytes: number; width: number; height: number; distinctColors: number; chartPixels: number };
  ok: boolean;
  problems: string[];
}

/** Vega's first category colour (#4c78a8): the page uses it nowhere else, so seeing it means a chart was drawn. */
const CHART_COLOR = [0x4c, 0x78, 0xa8] as const;

/**
 * Runs in the page: measures every chart (natural vs shown width, overflow, the smallest text as
 * displayed: its font size times the scale of its SVG coordinates on screen), the tables' scroll
 * boxes and the smallest HTML text. Hidden elements (a closed <details>) have no boxes and count not.
 */
const MEASURE = `(() => {
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden' && !el.closest('details:not([open]) > :not(summary)');
  const fontPx = (el) => parseFloat(getComputedStyle(el).fontSize);
  const charts = [...document.querySelectorAll('figure.chart')].map((figure) => {
    const svg = figure.querySelector('svg');
    const box = svg ? svg.parentElement : figure;
    const rect = svg ? svg.getBoundingClientRect() : { width: 0 };
    let smallest = null, text = '';
    for (const t of svg ? svg.querySelectorAll('text') : []) {
      const content = (t.textContent || '').trim();
      if (!content || !shown(t)) continue;
      const m = t.getScreenCTM();
      const size = fontPx(t) * (m ? Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)) : 1);
      if (smallest === null || size < smallest) { smallest = size; text = content.slice(0, 60); }
    }
    return { id: figure.id.replace(/^chart-/, ''), naturalWidth: svg ? parseFloat(svg.getAttribute('width')) || rect.width : 0,
      renderedWidth: rect.width, overflow: Math.max(0, box.scrollWidth - box.clientWidth), boxWidth: box.clientWidth,
      smallestTextPx: smallest, smallestText: text };
  });
  const tables = [...document.querySelectorAll('.scroll')].filter(shown)
    .filter((s) => s.scrollWidth > s.clientWidth + 1)
    .map((s) => ({ id: (s.closest('[id]') || {}).id || '', width: s.scrollWidth, shown: s.clientWidth }));
  let smallest = null, text = '';
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    const content = (n.textContent || '').trim();
    if (!content || !el || el.closest('svg') || !shown(el)) continue;
    const size = fontPx(el);
    if (smallest === null || size < smallest) { smallest = size; text = content.slice(0, 60); }
  }
  return { viewportWidth: document.documentElement.clientWidth, pageWidth: document.documentElement.scrollWidth, charts, tables,
    smallestTextPx: smallest, smallestText: text };
})()`;

/** What Chromium gave: the DOM, its log, the layout and a screenshot. */
interface Rendered {
  dom: string;
  log: string[];
  layout: PageLayout;
  png: Buffer;
}

async function renderInChromium(
  chromium: string,
  url: string,
  o: { width: number; height: number; fullPage: boolean; timeoutMs: number; profile: string },
): Promise<Rendered> {
  // --no-sandbox: containers and CI run as root, where the sandbox cannot start; the page is ours and has no script.
  const browser = CdpBrowser.launch(chromium, [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--hide-scrollbars',
    '--no-first-run',
    '--force-device-scale-factor=1',
    `--user-data-dir=${o.profile}`,
    `--window-size=${o.width},${o.height}`,
  ]);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      browser.kill();
      reject(new Error(`Chromium did not render the page within ${o.timeoutMs / 1000} s`));
    }, o.timeoutMs);
  });
  const work = async (): Promise<Rendered> => {
    const session = await browser.openPage();
    await browser.send('Page.enable', {}, session);
    await browser.send('Log.enable', {}, session);
    await browser.send('Emulation.setDeviceMetricsOverride', { width: o.width, height: o.height, deviceScaleFactor: 1, mobile: false }, session);
    const loaded = browser.waitFor((e) => e.method === 'Page.loadEventFired' && e.sessionId === session);
    await browser.send('Page.navigate', { url }, session);
    await loaded;
    // Layout is done when the load event has fired; one frame more lets it paint.
    await browser.evaluate(session, 'new Promise((r) => requestAnimationFrame(() => r(true)))');
    const layout = await browser.evaluate<PageLayout>(session, MEASURE);
    const dom = await browser.evaluate<string>(session, 'document.documentElement.outerHTML');
    const height = o.fullPage ? Math.max(o.height, await browser.evaluate<number>(session, 'document.documentElement.scrollHeight')) : o.height;
    const shot = await browser.send(
      'Page.captureScreenshot',
      { format: 'png', captureBeyondViewport: o.fullPage, clip: { x: 0, y: 0, width: o.width, height, scale: 1 } },
      session,
    );
    const log = browser.events
      .filter((e) => e.method === 'Log.entryAdded' && e.sessionId === session)
      .map((e) => (e.params['entry'] as { text?: string; source?: string } | undefined) ?? {})
      .map((entry) => `${entry.source ?? 'log'}: ${entry.text ?? ''}`);
    return { dom, log, layout, png: Buffer.from(String(shot['data']), 'base64') };
  };
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
    await browser.close();
  }
}

export async function checkReportInBrowser(
  file: string,
  options: { chromium?: string; width?: number; height?: number; screenshot?: string; fullPage?: boolean; timeoutMs?: number } = {},
): Promise<BrowserCheck> {
  const chromium = options.chromium ?? findChromium();
  if (!chromium) throw new Error(`no Chromium found (tried ${CHROMIUM_CANDIDATES.join(', ')}; set PLENS_CHROMIUM)`);
  const path = realpathSync(resolve(file));
  const url = pathToFileURL(path).href;
  const width = options.width ?? 1200;
  const height = options.height ?? 3000;
  const profile = mkdtempSync(join(tmpdir(), 'plens-chromium-'));
  const shot = options.screenshot ? resolve(options.screenshot) : join(profile, 'screenshot.png');
  try {
    const rendered = await renderInChromium(chromium, url, {
      width,
      height,
      fullPage: options.fullPage ?? false,
      timeoutMs: options.timeoutMs ?? 90_000,
      profile,
    });
    writeFileSync(shot, rendered.png);
    const html = readFileSync(path, 'utf8');
    const png = decodePng(rendered.png);
    const pixels = pixelStats(png);
    const result: BrowserCheck = {
      file: path,
      svgInFile: count(html, /<svg[\s>]/g),
      svgInDom: count(rendered.dom, /<svg[\s>]/g),
      marksInDom: count(rendered.dom, /<g class="mark-(?:rect|line|symbol|rule|area|arc)[^"]*role-mark/g),
      // A blocked fetch is logged as "... violates the following Content Security Policy directive ...".
      refused: rendered.log.filter((l) => /Content Security Policy|Refused to (load|apply|execute)/.test(l)),
      axes: valueAxes(rendered.dom),
      collapsed: collapsedTables(rendered.dom),
      layout: rendered.layout,
      screenshot: { file: shot, bytes: rendered.png.length, width: png.width, height: png.height, ...pixels },
      ok: true,
      problems: [],
    };
    const p = result.problems;
    if (result.svgInFile === 0) p.push('the report has no chart');
    if (result.svgInDom < result.svgInFile) p.push(`the browser's DOM has ${result.svgInDom} of the file's ${result.svgInFile} SVG charts`);
    if (result.svgInFile > 0 && result.marksInDom === 0) p.push('no chart marks in the DOM');
    for (const a of result.axes) {
      const want = fixedScale(a.title);
      if (want && (a.from !== want[0] || a.to !== want[1]))
        p.push(`the axis '${a.title}' runs ${a.from}-${a.to}, not on its fixed scale ${want[0]}-${want[1]}`);
    }
    if (result.collapsed.open > 0) p.push(`${result.collapsed.open} collapsed table(s) open when the page loads`);
    if (result.collapsed.mostVisibleRows > MAX_VISIBLE_ROWS)
      p.push(`a table shows ${result.collapsed.mostVisibleRows} rows outside <details> (at most ${MAX_VISIBLE_ROWS})`);
    if (result.refused.length) p.push(`the browser refused ${result.refused.length} resource(s): ${result.refused[0]}`);
    if (pixels.distinctColors < 16) p.push(`the screenshot is nearly uniform (${pixels.distinctColors} colours)`);
    if (result.svgInFile > 0 && pixels.chartPixels < 200) p.push(`the screenshot shows no chart (${pixels.chartPixels} pixels of the chart colour)`);
    p.push(...layoutProblems(result.layout));
    result.ok = p.length === 0;
    return result;
  } finally {
    rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
  }
}

const px = (v: number) => `${Math.round(v * 10) / 10} px`;

/** What a reader would struggle with: squeezed or cut-off charts, tables past the page's edge, text too small to read. */
export function layoutProblems(layout: PageLayout, minTextPx = MIN_TEXT_PX): string[] {
  const p: string[] = [];
  for (const c of layout.charts) {
    if (c.naturalWidth > 0 && c.renderedWidth < c.naturalWidth * 0.99)
      p.push(
        `chart ${c.id} is scaled down to ${Math.round((100 * c.renderedWidth) / c.naturalWidth)}% (${px(c.naturalWidth)} wide, shown at ${px(c.renderedWidth)}): draw it smaller or as small multiples`,
      );
    if (c.overflow > 1)
      p.push(`chart ${c.id} is ${px(c.naturalWidth)} wide, wider than the page (${px(c.boxWidth)}): the reader must scroll to see ${px(c.overflow)} of it`);
    if (c.smallestTextPx !== null && c.smallestTextPx < minTextPx)
      p.push(`chart ${c.id}: text shows at ${px(c.smallestTextPx)} (below ${minTextPx} px), e.g. "${c.smallestText}"`);
  }
  for (const t of layout.tables) p.push(`table ${t.id || '(no id)'} is ${px(t.width)} wide in a ${px(t.shown)} box: its right part is cut off`);
  if (layout.smallestTextPx !== null && layout.smallestTextPx < minTextPx)
    p.push(`page text shows at ${px(layout.smallestTextPx)} (below ${minTextPx} px), e.g. "${layout.smallestText}"`);
  if (layout.pageWidth > layout.viewportWidth + 1)
    p.push(`the page is ${px(layout.pageWidth)} wide in a ${px(layout.viewportWidth)} window: it scrolls sideways`);
  return p;
}

/** The fixed scale of a measure by its axis title: P 1-4, Naturalness/Coherence 1-5, TCR 0-100. */
export function fixedScale(title: string): [number, number] | null {
  if (/\bTCR\b/.test(title)) return [0, 100];
  if (/(^|\s)P$/.test(title)) return [1, 4];
  if (/\b(Nat|Coh|Naturalness|Coherence)\b/.test(title)) return [1, 5];
  return null;
}

/** A table longer than this shows its first rows and collapses the rest (see TABLE_PREVIEW_ROWS). */
const MAX_VISIBLE_ROWS = 15;

/** Linear value axes: Vega labels each "Y-axis titled 'P' for a linear scale with values from 1.0 to 4.0". */
function valueAxes(dom: string): BrowserCheck['axes'] {
  const out: BrowserCheck['axes'] = [];
  for (const m of dom.matchAll(/aria-label="[XY]-axis titled '([^']*)' for a linear scale with values from (-?[\d,.]+) to (-?[\d,.]+)"/g)) {
    out.push({ title: m[1]!.replace(/&amp;/g, '&'), from: Number(m[2]!.replace(/,/g, '')), to: Number(m[3]!.replace(/,/g, '')) });
  }
  return out;
}

function collapsedTables(dom: string): BrowserCheck['collapsed'] {
  const details = [...dom.matchAll(/<details\b([^>]*)>/g)];
  const outside = dom.replace(/<details\b[\s\S]*?<\/details>/g, '');
  const visible = [...outside.matchAll(/<tbody>([\s\S]*?)<\/tbody>/g)].map((m) => count(m[1]!, /<tr[\s>]/g));
  return { details: details.length, open: details.filter((d) => /\bopen\b/.test(d[1]!)).length, mostVisibleRows: Math.max(0, ...visible) };
}

function count(text: string, re: RegExp): number {
  return text.match(re)?.length ?? 0;
}

/** Distinct colours, and pixels within a small distance of the chart colour (anti-aliasing and colour management move it a little). */
function pixelStats(png: DecodedPng): { distinctColors: number; chartPixels: number } {
  const colors = new Set<number>();
  let chartPixels = 0;
  const { data, channels } = png;
  for (let i = 0; i < data.length; i += channels) {
    const r = data[i]!;
    const g = channels >= 3 ? data[i + 1]! : r;
    const b = channels >= 3 ? data[i + 2]! : r;
    if (colors.size < 65536) colors.add((r << 16) | (g << 8) | b);
    if (Math.abs(r - CHART_COLOR[0]) <= 8 && Math.abs(g - CHART_COLOR[1]) <= 8 && Math.abs(b - CHART_COLOR[2]) <= 8) chartPixels++;
  }
  return { distinctColors: colors.size, chartPixels };
}

export interface DecodedPng {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

/** Decodes a PNG (any bit depth, palette or interlace, via pngjs) to 8-bit RGBA. */
export function decodePng(buf: Buffer): DecodedPng {
  const png = PNG.sync.read(buf);
  return { width: png.width, height: png.height, channels: 4, data: png.data };
}

const USAGE = 'usage: npm run report:check -- REPORT.html [--screenshot FILE] [--full-page] [--width PX] [--height PX]';

/**
 * `node dist/report/browser-check.js REPORT.html [--screenshot FILE] [--full-page] [--width PX]`:
 * exit 0 when the report renders with its charts and reads at that window width (default 1200).
 */
async function cli(argv: string[]): Promise<number> {
  const valued = new Set(['--screenshot', '--width', '--height']);
  const given: Record<string, string> = {};
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (valued.has(a)) {
      const v = argv[++i];
      if (v === undefined) {
        process.stderr.write(`report:check: ${a} needs a value\n${USAGE}\n`);
        return 2;
      }
      given[a] = v;
    } else if (a === '--full-page') given[a] = 'true';
    else if (a.startsWith('--')) {
      process.stderr.write(`report:check: unknown option ${a}\n${USAGE}\n`);
      return 2;
    } else files.push(a);
  }
  const size = (flag: string): number | undefined => {
    if (given[flag] === undefined) return undefined;
    const n = Number(given[flag]);
    if (!Number.isInteger(n) || n < 200) throw new Error(`${flag} ${given[flag]}: give a width or height in px, at least 200`);
    return n;
  };
  if (files.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const width = size('--width');
  const height = size('--height');
  const result = await checkReportInBrowser(files[0]!, {
    ...(given['--screenshot'] ? { screenshot: given['--screenshot'] } : {}),
    ...(given['--full-page'] ? { fullPage: true } : {}),
    ...(width ? { width } : {}),
    ...(height ? { height } : {}),
  });
  const s = result.screenshot;
  const l = result.layout;
  const widest = l.charts.reduce((m, c) => Math.max(m, c.naturalWidth), 0);
  const smallestChartText = l.charts.reduce<number | null>(
    (m, c) => (c.smallestTextPx !== null && (m === null || c.smallestTextPx < m) ? c.smallestTextPx : m),
    null,
  );
  process.stdout.write(
    [
      `${result.file}`,
      `  SVG charts: ${result.svgInDom} in the browser's DOM, ${result.svgInFile} in the file; ${result.marksInDom} mark groups`,
      `  refused resources: ${result.refused.length}`,
      `  value axes: ${[...new Set(result.axes.map((a) => `${a.title} ${a.from}-${a.to}`))].join('; ') || 'none'}`,
      `  long tables collapsed: ${result.collapsed.details} (${result.collapsed.open} open); at most ${result.collapsed.mostVisibleRows} rows shown per table`,
      `  layout at ${l.viewportWidth} px: widest chart ${Math.round(widest)} px; smallest chart text ${smallestChartText === null ? '-' : px(smallestChartText)}, page text ${l.smallestTextPx === null ? '-' : px(l.smallestTextPx)} (at least ${MIN_TEXT_PX} px); ${l.tables.length} table(s) wider than the page`,
      `  screenshot ${s.width}x${s.height}: ${s.bytes} bytes, ${s.distinctColors} colours, ${s.chartPixels} chart-colour pixels${given['--screenshot'] ? ` (${s.file})` : ''}`,
      result.ok ? 'OK: the report renders with its charts, every one legible' : `FAILED:\n${result.problems.map((p) => `  - ${p}`).join('\n')}`,
    ].join('\n') + '\n',
  );
  return result.ok ? 0 : 1;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (invokedDirectly) {
  process.exitCode = await cli(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`report:check: ${(error as Error).message}\n`);
    return 1;
  });
}
