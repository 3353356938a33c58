import { LlmCallError } from './errors.js';

/**
 * The calls waiting on each abort signal. A run passes one long-lived signal to every call: one
 * listener per signal that cancels whatever waits on it, not a listener added and removed per
 * call (Node's EventTarget walks its listeners on every add and remove, and a per-call
 * AbortController costs more than the rest of posting a request).
 */
const waitingBySignal = new WeakMap<AbortSignal, Set<() => void>>();

/** The set of cancel functions waiting on `signal`: add a call's while it is in flight, delete it when it settles. */
export function waitingOn(signal: AbortSignal): Set<() => void> {
  let waiting = waitingBySignal.get(signal);
  if (!waiting) {
    const calls = new Set<() => void>();
    waiting = calls;
    waitingBySignal.set(signal, calls);
    signal.addEventListener(
      'abort',
      () => {
        for (const cancel of [...calls]) cancel();
        calls.clear();
      },
      { once: true },
    );
  }
  return waiting;
}

/** How a call given up by its caller fails: not retryable (the run is stopping). */
export function abortedError(cause?: unknown): LlmCallError {
  return new LlmCallError('aborted', 'call aborted', { retryable: false, ...(cause === undefined ? {} : { cause }) });
}
