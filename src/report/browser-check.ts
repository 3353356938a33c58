import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateSync } from 'node:zlib';

/**
 * Opens a report in headless Chromium, as a reader would, and checks what it shows: the DOM after
 * parsing holds every chart's SVG, the browser refused no resource (the page's CSP forbids any
 * fetch), and a screenshot has the charts' colour in it. `npm run report:check -- FILE` runs it.
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

export async function checkReportInBrowser(file: string, options: { chromium?: string; width?: number; height?: number; screenshot?: string; timeoutMs?: number } = {}): Promise<BrowserCheck> {
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
  const common = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--hide-scrollbars', '--no-first-run', `--user-data-dir=${profile}`, `--window-size=${width},${height}`];
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
      screenshot: { file: shot, bytes: statSync(shot).size, width: png.width, height: png.height, ...pixels },
      ok: true,
      problems: [],
    };
    const p = result.problems;
    if (result.svgInFile === 0) p.push('the report has no chart');
    if (result.svgInDom < result.svgInFile) p.push(`the browser's DOM has ${result.svgInDom} of the file's ${result.svgInFile} SVG charts`);
    if (result.svgInFile > 0 && result.marksInDom === 0) p.push('no chart marks in the DOM');
    if (result.refused.length) p.push(`the browser refused ${result.refused.length} resource(s): ${result.refused[0]}`);
    if (pixels.distinctColors < 16) p.push(`the screenshot is nearly uniform (${pixels.distinctColors} colours)`);
    if (result.svgInFile > 0 && pixels.chartPixels < 200) p.push(`the screenshot shows no chart (${pixels.chartPixels} pixels of the chart colour)`);
    result.ok = p.length === 0;
    return result;
  } finally {
    rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
  }
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

/**
 * A minimal PNG decoder for what Chromium writes: 8-bit greyscale, RGB or RGBA (with or without
 * alpha), not interlaced. Enough to look at pixels without a dependency for one check.
 */
export function decodePng(buf: Buffer): DecodedPng {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!buf.subarray(0, 8).equals(signature)) throw new Error('not a PNG file');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (offset < buf.length) {
    const length = buf.readUInt32BE(offset);
    const type = buf.toString('latin1', offset + 4, offset + 8);
    const body = buf.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const depth = body[8]!;
      const colorType = body[9]!;
      const interlace = body[12]!;
      const byType: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };
      if (depth !== 8 || byType[colorType] === undefined || interlace !== 0) throw new Error(`unsupported PNG (depth ${depth}, colour type ${colorType}, interlace ${interlace})`);
      channels = byType[colorType]!;
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const data = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = y * (stride + 1) + 1;
    const dst = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[dst + x - channels]! : 0;
      const b = y > 0 ? data[dst - stride + x]! : 0;
      const c = x >= channels && y > 0 ? data[dst - stride + x - channels]! : 0;
      const v = raw[src + x]!;
      let out: number;
      switch (filter) {
        case 0:
          out = v;
          break;
        case 1:
          out = v + a;
          break;
        case 2:
          out = v + b;
          break;
        case 3:
          out = v + ((a + b) >> 1);
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          out = v + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default:
          throw new Error(`bad PNG filter ${filter} on row ${y}`);
      }
      data[dst + x] = out & 0xff;
    }
  }
  return { width, height, channels, data };
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
