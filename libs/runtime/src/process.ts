/**
 * When a process is asked to stop, and when it is told to stop at once: the one rule every
 * long-running process of the platform follows (the services through `runService`, and the
 * `npm start` launcher and its platform process), so that one Ctrl-C is one graceful stop and a
 * second one forces, whoever delivers it.
 *
 * A stop request is SIGTERM, SIGINT, or, for a process started with an IPC channel by a launcher
 * (`npm start`), that channel closing: the launcher is gone (crashed or SIGKILLed), and a process
 * it started must not live on with its ports bound. A process with no channel to its parent (the
 * launcher itself, under npm) can watch its parent's pid instead: when it changes, the parent is
 * gone. Docker and Kubernetes start a service with no channel and send one SIGTERM to it (PID 1):
 * only the signals apply there.
 *
 * The same request often arrives more than once, a few milliseconds apart: a terminal's Ctrl-C
 * signals its whole foreground process group, and `npm` (in that group) forwards the same signal
 * to its child, which so receives it twice. Requests within `REPEAT_WINDOW_MS` of the first are
 * that same request; a later one is a second request and forces. A person who wants to force
 * presses Ctrl-C again after seeing the first stop begin, well past the window. The launcher
 * going away never forces: it is a consequence of stopping as often as a cause.
 */

/** Requests within this long after the first are the first one delivered again (see above). */
export const REPEAT_WINDOW_MS = 1_000;

/** What asked the process to stop: a signal's name, or `parent gone` (the IPC channel closed). */
export type StopReason = 'SIGTERM' | 'SIGINT' | 'parent gone';

export interface StopRequestHandlers {
  /** The first request: stop gracefully. Called once. */
  stop(reason: StopReason): void;
  /** A second request (a signal past the repeat window): stop at once. Called at most once. */
  force(reason: StopReason): void;
}

export interface StopRequestOptions {
  /** Default REPEAT_WINDOW_MS. */
  repeatWindowMs?: number;
  /** Milliseconds since some origin; `Date.now` by default (tests pass their own clock). */
  now?: () => number;
  /**
   * Also a stop request: this process's parent pid changing (the parent is gone, and this
   * process was handed to another). Checked every PARENT_CHECK_MS.
   */
  watchParentPid?: boolean;
}

/** How often `watchParentPid` looks. */
export const PARENT_CHECK_MS = 500;

/**
 * Routes this process's stop requests to `handlers` from now on: SIGTERM and SIGINT, the IPC
 * channel's disconnect when the process has one, and with `watchParentPid` its parent's pid
 * changing. Answers a function that removes them.
 */
export function onStopRequests(handlers: StopRequestHandlers, options: StopRequestOptions = {}): () => void {
  const request = stopRequests(handlers, options);
  const onTerm = () => request('SIGTERM');
  const onInt = () => request('SIGINT');
  const onDisconnect = () => request('parent gone');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  if (process.channel) {
    process.on('disconnect', onDisconnect);
    // Listening for the disconnect keeps the channel referenced; it must not keep the process
    // alive by itself (the process ends when its work does, as without a launcher).
    process.channel.unref();
  }
  const parent = process.ppid;
  const watch = options.watchParentPid
    ? setInterval(() => {
        if (process.ppid !== parent) onDisconnect();
      }, PARENT_CHECK_MS).unref()
    : undefined;
  return () => {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    process.off('disconnect', onDisconnect);
    clearInterval(watch);
  };
}

/**
 * The rule itself, without the process: answers the function to call with each request. The
 * first calls `stop`; a signal more than the repeat window after it calls `force` (once);
 * everything else is ignored.
 */
export function stopRequests(
  handlers: StopRequestHandlers,
  options: StopRequestOptions = {},
): (reason: StopReason) => void {
  const windowMs = options.repeatWindowMs ?? REPEAT_WINDOW_MS;
  const now = options.now ?? Date.now;
  let firstAt: number | undefined;
  let forced = false;
  return (reason) => {
    if (firstAt === undefined) {
      firstAt = now();
      handlers.stop(reason);
      return;
    }
    if (forced || reason === 'parent gone' || now() - firstAt <= windowMs) return;
    forced = true;
    handlers.force(reason);
  };
}
