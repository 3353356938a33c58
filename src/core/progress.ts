import cliProgress from 'cli-progress';

/** A progress bar on stderr (done/total, rate, ETA) that stays silent when stderr is not a terminal. */
export interface Progress {
  increment(n?: number): void;
  stop(): void;
}

export interface ProgressOptions {
  label: string;
  total: number;
  unit: string;
  enabled?: boolean;
}

export function createProgress(options: ProgressOptions): Progress {
  const enabled = options.enabled ?? Boolean(process.stderr.isTTY);
  if (!enabled) return { increment() {}, stop() {} };
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${options.label} [{bar}] {value}/{total} ${options.unit} | {rate}/s | ETA {eta_formatted}`,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(options.total, 0, { rate: '0' });
  let value = 0;
  return {
    increment(n = 1) {
      value += n;
      const seconds = (Date.now() - started) / 1000;
      bar.increment(n, { rate: seconds > 0 ? (value / seconds).toFixed(0) : '0' });
    },
    stop() {
      bar.stop();
    },
  };
}
