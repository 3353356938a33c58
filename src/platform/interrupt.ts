import { setMaxListeners } from 'node:events';

/**
 * The first Ctrl-C (or SIGTERM) asks the running stage to stop: no new work starts, unfinished
 * work is discarded, and what is done stays written. A second one exits at once.
 */
export function interruptSignal(onFirst: () => void): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  // Every call, rate-limit wait and budget wait in flight listens to this one signal (64 at
  // concurrency 64): many listeners are the design here, not a leak.
  setMaxListeners(0, controller.signal);
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
