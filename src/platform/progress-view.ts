import { usageError } from '../core/errors.js';
import { compactCount, type ProgressSink, type ProgressState, type ProgressTask } from '../engine/stage-progress.js';

/**
 * The progress of a `plens make`: one view over every stage it runs, whatever the benchmark.
 *
 * - `live` (stderr is a terminal): a block of lines at the bottom of the terminal, redrawn in
 *   place: the step's total, then one line per running stage (a grid cell, say).
 * - `lines` (stderr is a file or a pipe: nohup, Slurm, Kubernetes): plain lines that start with
 *   `progress `, one when each step starts and ends, and every `intervalS` seconds one per running
 *   stage and the step's total. A log shows the run is alive and how far it is.
 */
export type ProgressMode = 'live' | 'lines';

export interface MakeProgressOptions {
  mode: ProgressMode;
  /** `lines`: seconds between two progress reports. */
  intervalS: number;
  /** Where the view writes (default process.stderr). */
  stream?: NodeJS.WriteStream;
  /** `live`: how often the block is redrawn (default 200 ms). */
  redrawMs?: number;
}

/** The default seconds between two progress lines, and the variable that changes it. */
export const DEFAULT_PROGRESS_INTERVAL_S = 10;
export const PROGRESS_INTERVAL_ENV = 'PLENS_PROGRESS_INTERVAL';

/** What one stage run has done so far. */
interface Task {
  stage: string;
  where: string;
  total: number;
  state: ProgressState;
  started: number;
  ended?: number;
}

interface StepState {
  name: string;
  started: number;
  tasks: Task[];
}

/** The numbers a progress line shows. */
interface Counts {
  done: number;
  total: number;
  failed: number;
  tokens: number;
  cost: number;
  seconds: number;
}

const CSI = '\u001b[';

export class MakeProgress implements ProgressSink {
  private readonly stream: NodeJS.WriteStream;
  private readonly started = Date.now();
  private step: StepState | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** `live`: how many lines of the block are on the screen now. */
  private drawn = 0;
  private drawing = false;
  private restore: Array<() => void> = [];
  /** The stream's own write, which the view draws with (live mode wraps the stream's). */
  private write: (text: string) => void;

  constructor(private readonly o: MakeProgressOptions) {
    this.stream = o.stream ?? process.stderr;
    const stream = this.stream;
    const write = stream.write;
    this.write = (text) => void write.call(stream, text);
  }

  start(): void {
    if (this.timer) return;
    if (this.o.mode === 'live') {
      this.wrapWrites();
      this.timer = setInterval(() => this.draw(), this.o.redrawMs ?? 200);
    } else {
      this.timer = setInterval(() => this.report(), this.o.intervalS * 1000);
    }
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
    for (const undo of this.restore.splice(0)) undo();
  }

  stepStarted(name: string): void {
    this.step = { name, started: Date.now(), tasks: [] };
    if (this.o.mode === 'lines') this.line(`${name}: started`);
  }

  /** `outcome` says how the step ended: `done`, `FAILED`, `up to date`, ... */
  stepEnded(name: string, outcome: string): void {
    const step = this.step;
    this.step = undefined;
    if (this.o.mode === 'live') {
      this.clear();
      return;
    }
    const took = step ? ` in ${seconds(Date.now() - step.started)}` : '';
    const work = step?.tasks.length ? `, ${this.countsText(this.totals(step), false)}` : '';
    this.line(`${name}: ${outcome}${took}${work}`);
  }

  open(stage: string, total: number, where: string): ProgressTask {
    const task: Task = { stage, where, total, state: { ok: 0, failed: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 }, started: Date.now() };
    const step = this.step ?? (this.step = { name: stage, started: Date.now(), tasks: [] });
    step.tasks.push(task);
    if (this.o.mode === 'live') this.draw();
    return {
      tick: (s) => {
        task.state = { ok: s.ok, failed: s.failed, input_tokens: s.input_tokens, output_tokens: s.output_tokens, cost_usd: s.cost_usd };
      },
      stop: () => {
        task.ended = Date.now();
        if (this.o.mode === 'live') this.draw();
      },
    };
  }

  /** `lines`: one line per running stage and, when the step ran more than one, the step's total. */
  report(): void {
    const step = this.step;
    if (!step) return;
    const running = step.tasks.filter((t) => t.ended === undefined);
    for (const t of running) this.line(`${taskName(t)}: ${this.countsText(taskCounts(t))}`);
    if (step.tasks.length > 1 || (step.tasks.length === 1 && running.length === 0))
      this.line(`${step.name} total (${tally(step)}): ${this.countsText(this.totals(step), false)}`);
    if (step.tasks.length === 0) this.line(`${step.name}: running, ${seconds(Date.now() - step.started)} so far`);
  }

  /** `live`: the block as it would be drawn now (the step's total, then a line per running stage). */
  frame(columns = this.stream.columns || 80, rows = this.stream.rows || 24): string[] {
    const step = this.step;
    if (!step || step.tasks.length === 0) return [];
    const running = step.tasks.filter((t) => t.ended === undefined);
    const width = Math.max(20, columns - 1);
    const lines = [`${step.name} ${clock(Date.now() - this.started)} | ${tally(step)} | ${this.countsText(this.totals(step), false)}`];
    const room = Math.max(1, rows - 3);
    const names = running.map(taskName);
    const pad = Math.min(48, Math.max(0, ...names.map((n) => n.length)));
    for (const [i, t] of running.slice(0, room).entries()) {
      const c = taskCounts(t);
      lines.push(`  ${names[i]!.padEnd(pad)} ${bar(c.done, c.total, 20)} ${this.countsText(c)}`);
    }
    if (running.length > room) lines.push(`  ... and ${running.length - room} more running`);
    return lines.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
  }

  private totals(step: StepState): Counts {
    const c: Counts = { done: 0, total: 0, failed: 0, tokens: 0, cost: 0, seconds: (Date.now() - Math.min(...step.tasks.map((t) => t.started))) / 1000 };
    for (const t of step.tasks) {
      const tc = taskCounts(t);
      c.done += tc.done;
      c.total += tc.total;
      c.failed += tc.failed;
      c.tokens += tc.tokens;
      c.cost += tc.cost;
    }
    return c;
  }

  /**
   * `12/24 (50%), 2.40/s, ETA 0:00:05, 0 failed, 6.1k tokens, $0.0061`. A step's total has no ETA:
   * it counts only the stage runs started so far, not those still to come.
   */
  private countsText(c: Counts, eta = true): string {
    const rate = c.seconds > 0 ? c.done / c.seconds : 0;
    const left = c.total - c.done;
    const pct = c.total > 0 ? Math.floor((100 * c.done) / c.total) : 100;
    return [
      `${c.done}/${c.total} (${pct}%)`,
      `${rate < 10 ? rate.toFixed(2) : rate.toFixed(1)}/s`,
      ...(eta ? [left <= 0 ? 'ETA 0:00:00' : rate > 0 ? `ETA ${clock((left / rate) * 1000)}` : 'ETA ?'] : []),
      `${c.failed} failed`,
      `${compactCount(c.tokens)} tokens`,
      `$${c.cost.toFixed(c.cost < 100 ? 4 : 2)}`,
    ].join(this.o.mode === 'live' ? '  ' : ', ');
  }

  private line(text: string): void {
    this.write(`progress ${clock(Date.now() - this.started)} ${text}\n`);
  }

  private clear(): void {
    if (this.drawn === 0) return;
    this.write(`\r${CSI}${this.drawn}A${CSI}0J`);
    this.drawn = 0;
  }

  private draw(): void {
    if (this.o.mode !== 'live' || this.drawing) return;
    this.drawing = true;
    try {
      const lines = this.frame();
      // One write per frame: back to the line's start (the terminal may have echoed a ^C), up over
      // the old block, clear to the end of the screen, draw.
      const up = this.drawn ? `\r${CSI}${this.drawn}A${CSI}0J` : '';
      if (up || lines.length) this.write(up + lines.map((l) => `${l}\n`).join(''));
      this.drawn = lines.length;
    } finally {
      this.drawing = false;
    }
  }

  /**
   * `live`: whatever else writes to the terminal (a step's line, a warning) is written above the
   * block: the block is cleared before the write and drawn again after it.
   */
  private wrapWrites(): void {
    const streams = new Set<NodeJS.WriteStream>([this.stream]);
    if (process.stdout.isTTY) streams.add(process.stdout);
    for (const stream of streams) {
      const original = stream.write;
      const view = this;
      stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
        if (view.drawing) return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
        view.clear();
        const ok = (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
        const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString() : '';
        // A partial line is left alone; the next redraw puts the block under it.
        if (text.endsWith('\n')) view.draw();
        return ok;
      } as typeof stream.write;
      this.restore.push(() => {
        stream.write = original;
      });
      if (stream === this.stream) {
        this.write = (text) => void original.call(stream, text);
      }
    }
  }
}

/**
 * The view a make gets from its flags: none with --no-progress or --quiet; on a terminal the live
 * view; else progress lines every --progress-interval seconds (env PLENS_PROGRESS_INTERVAL, default
 * 10; 0 turns them off).
 */
export function makeProgressView(
  args: { progress: boolean; quiet: boolean; 'progress-interval'?: number | undefined },
  env: NodeJS.ProcessEnv = process.env,
  stream: NodeJS.WriteStream = process.stderr,
): MakeProgress | undefined {
  const intervalS = progressInterval(args['progress-interval'], env);
  if (!args.progress || args.quiet) return undefined;
  if (stream.isTTY) return new MakeProgress({ mode: 'live', intervalS, stream });
  return intervalS > 0 ? new MakeProgress({ mode: 'lines', intervalS, stream }) : undefined;
}

/** Seconds between progress lines: the flag, else the variable, else the default; checked where it came from. */
export function progressInterval(flag: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const ok = (v: number) => Number.isFinite(v) && v >= 0;
  if (flag !== undefined) {
    if (!ok(flag)) throw usageError('--progress-interval must be a number of seconds >= 0', 'e.g. --progress-interval 30; 0 turns the progress lines off');
    return flag;
  }
  const raw = env[PROGRESS_INTERVAL_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_PROGRESS_INTERVAL_S;
  const v = Number(raw);
  if (!ok(v))
    throw usageError(
      `${PROGRESS_INTERVAL_ENV}=${JSON.stringify(raw)} must be a number of seconds >= 0`,
      `e.g. export ${PROGRESS_INTERVAL_ENV}=30; 0 turns the progress lines off; or unset it for the default of ${DEFAULT_PROGRESS_INTERVAL_S}`,
    );
  return v;
}

function taskName(t: Task): string {
  return t.where ? `${t.stage} ${t.where}` : t.stage;
}

function taskCounts(t: Task): Counts {
  const s = t.state;
  return {
    done: s.ok + s.failed,
    total: t.total,
    failed: s.failed,
    tokens: s.input_tokens + s.output_tokens,
    cost: s.cost_usd,
    seconds: ((t.ended ?? Date.now()) - t.started) / 1000,
  };
}

/** `2 running, 1 finished so far`. */
function tally(step: StepState): string {
  const running = step.tasks.filter((t) => t.ended === undefined).length;
  return `${running} running, ${step.tasks.length - running} finished so far`;
}

function bar(done: number, total: number, width: number): string {
  const full = total > 0 ? Math.min(width, Math.round((width * done) / total)) : width;
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}]`;
}

/** h:mm:ss. */
function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
