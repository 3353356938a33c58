/**
 * The first Ctrl-C (or SIGTERM) asks the running stage to stop: no new work starts, unfinished
 * work is discarded, and what is done stays written. A second one exits at once.
 */
export function interruptSignal(onFirst: () => void): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handler = () => {
    if (controller.signal.aborted) process.exit(130);
    onFirst();
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
