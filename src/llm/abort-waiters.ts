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

/** A call in flight: its outcome, and how to give it up (it then fails as aborted). */
export interface CancellableCall<T> {
  reply: Promise<T>;
  cancel: () => void;
}

/**
 * Starts a call tied to a run's `signal`: its cancel waits on the signal while the call is in
 * flight and is taken off when it settles. `start` gets the function to run on settling. Made
 * here, the closures hold nothing of the request (a closure beside the request body would keep
 * the body alive until the answer came back).
 */
export function tiedTo<T>(signal: AbortSignal, start: (settled: () => void) => CancellableCall<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(abortedError());
  const waiting = waitingOn(signal);
  let cancel: (() => void) | undefined;
  let settled = false;
  let call: CancellableCall<T>;
  try {
    call = start(() => {
      settled = true;
      if (cancel) waiting.delete(cancel);
    });
  } catch (error) {
    // It cannot send at all: the call fails, and never waited on the signal.
    return Promise.reject(error);
  }
  // A call can settle before start() returns (a URL undici refuses): it waits on nothing then.
  if (!settled) waiting.add((cancel = call.cancel));
  return call.reply;
}

/** How a call given up by its caller fails: not retryable (the run is stopping). */
export function abortedError(cause?: unknown): LlmCallError {
  return new LlmCallError('aborted', 'call aborted', { retryable: false, ...(cause === undefined ? {} : { cause }) });
}
