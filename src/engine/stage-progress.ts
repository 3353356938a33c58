import cliProgress from 'cli-progress';

/** done/total, rate, ETA, errors, tokens and cost on stderr, for a terminal only. */
export function createStageProgress(stage: string, total: number, enabled: boolean) {
  if (!enabled || total === 0) return { tick: (_s: ProgressState) => {}, stop: () => {} };
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${stage} [{bar}] {value}/{total} | {rate}/s | ETA {eta_formatted} | failed {failed} | {tokens} tok | $` + '{cost}',
      hideCursor: true,
      etaBuffer: 100,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { rate: '0', failed: 0, tokens: '0', cost: '0.00' });
  return {
    tick(s: ProgressState) {
      const done = s.ok + s.failed;
      const seconds = (Date.now() - started) / 1000;
      bar.update(done, {
        rate: seconds > 0 ? (done / seconds).toFixed(1) : '0',
        failed: s.failed,
        tokens: compact(s.input_tokens + s.output_tokens),
        cost: s.cost_usd.toFixed(2),
      });
    },
    stop() {
      bar.stop();
    },
  };
}

interface ProgressState {
  ok: number;
  failed: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

function compact(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}
