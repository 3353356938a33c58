import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PNG } from 'pngjs';

/**
 * Opens a report in headless Chromium, as a reader would, and checks what it shows: the DOM after
 * parsing holds every chart's SVG, the browser refused no resource (the page's CSP forbids any
 * fetch), every P, Nat/Coh and TCR axis is on its fixed scale, long tables are collapsed, and a
 * screenshot has the charts' colour in it. `npm run report:check -- FILE` runs it.
 */

export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export function findChromium(): string | undefined {
  const fromEnv = process.env['PLENS_CHROMIUM'];
  if (fromEnv) return fromEnv;
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p));
}

export interface BrowserCheck {
  file: string;
  /** `<svg` elements in the file, and in the DOM Chromium built from it. */
  svgInFile: number;
  svgInDom: number;
  /** Drawn marks (bars, lines, points, rules) in the DOM. */
  marksInDom: number;
  /** Console lines where Chromium refused to load something. */
  refused: string[];
  /** Every chart's value axes as the browser has them (Vega's aria labels): title and range. */
  axes: Array<{ title: string; from: number; to: number }>;
  /** Long tables collapsed into <details> (closed when the page opens), and the most rows any table shows open. */
  collapsed: { details: number; open: number; mostVisibleRows: number };
  screenshot: { file: string; bytes: number; width: number; height: number; distinctColors: number; chartPixels: number };
  ok: boolean;
  problems: string[];
}

/** Vega's first category colour (#4c78a8): the page uses it nowhere else, so seeing it means a chart was drawn. */
const CHART_COLOR = [0x4c, 0x78, 0xa8] as const;

function run(cmd: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${cmd} failed: ${error.message}\n${stderr}`));
      else resolvePromise({ stdout, stderr });
    });
  });
}

export async function checkReportInBrowser(
  file: string,
  options: { chromium?: string; width?: number; height?: number; screenshot?: string; timeoutMs?: number } = {},
): Promise<BrowserCheck> {
  const chromium = options.chromium ?? findChromium();
  if (!chromium) throw new Error(`no Chromium found (tried ${CHROMIUM_CANDIDATES.join(', ')}; set PLENS_CHROMIUM)`);
  const path = realpathSync(resolve(file));
  const url = pathToFileURL(path).href;
  const width = options.width ?? 1200;
  const height = options.height ?? 3000;
  const timeout = options.timeoutMs ?? 90_000;
  const profile = mkdtempSync(join(tmpdir(), 'plens-chromium-'));
  const shot = options.screenshot ? resolve(options.screenshot) : join(profile, 'screenshot.png');
  // --no-sandbox: containers and CI run as root, where the sandbox cannot start; the page is ours and has no script.
  const common = [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--hide-scrollbars',
    '--no-first-run',
    `--user-data-dir=${profile}`,
    `--window-size=${width},${height}`,
  ];
  try {
    const dom = await run(chromium, [...common, '--enable-logging=stderr', '--log-level=0', '--dump-dom', url], timeout);
    await run(chromium, [...common, `--screenshot=${shot}`, url], timeout);
    const html = readFileSync(path, 'utf8');
    const png = decodePng(readFileSync(shot));
    const pixels = pixelStats(png);
    const result: BrowserCheck = {
      file: path,
      svgInFile: count(html, /<svg[\s>]/g),
      svgInDom: count(dom.stdout, /<svg[\s>]/g),
      marksInDom: count(dom.stdout, /<g class="mark-(?:rect|line|symbol|rule|area|arc)[^"]*role-mark/g),
      // Console messages reach stderr at log level 0; a blocked fetch reads "... violates the following Content Security Policy ...".
      refused: dom.stderr.split('\n').filter((l) => /Content Security Policy|Refused to (load|apply|execute)/.test(l)),
      axes: valueAxes(dom.stdout),
      collapsed: collapsedTables(dom.stdout),
      screenshot: { file: shot, bytes: statSync(shot).size, width: png.width, height: png.height, ...pixels },
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
    result.ok = p.length === 0;
    return result;
  } finally {
    rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
  }
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

/** `node dist/report/browser-check.js REPORT.html [--screenshot FILE]`: exit 0 when the report renders with its charts. */
async function cli(argv: string[]): Promise<number> {
  const file = argv.find((a) => !a.startsWith('--'));
  const shotAt = argv.indexOf('--screenshot');
  if (!file) {
    process.stderr.write('usage: npm run report:check -- REPORT.html [--screenshot FILE]\n');
    return 2;
  }
  const result = await checkReportInBrowser(file, shotAt >= 0 && argv[shotAt + 1] ? { screenshot: argv[shotAt + 1]! } : {});
  const s = result.screenshot;
  process.stdout.write(
    [
      `${result.file}`,
      `  SVG charts: ${result.svgInDom} in the browser's DOM, ${result.svgInFile} in the file; ${result.marksInDom} mark groups`,
      `  refused resources: ${result.refused.length}`,
      `  value axes: ${[...new Set(result.axes.map((a) => `${a.title} ${a.from}-${a.to}`))].join('; ') || 'none'}`,
      `  long tables collapsed: ${result.collapsed.details} (${result.collapsed.open} open); at most ${result.collapsed.mostVisibleRows} rows shown per table`,
      `  screenshot ${s.width}x${s.height}: ${s.bytes} bytes, ${s.distinctColors} colours, ${s.chartPixels} chart-colour pixels${argv.includes('--screenshot') ? ` (${s.file})` : ''}`,
      result.ok ? 'OK: the report renders with its charts' : `FAILED:\n${result.problems.map((p) => `  - ${p}`).join('\n')}`,
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
