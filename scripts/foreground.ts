import { spawn } from 'node:child_process';
import { onStopRequests, type StopReason } from '@parametric/runtime';

/**
 * The launcher's half of `npm start` (docs/decisions.md, "A clean stop for npm start"): the
 * process the terminal (or `npm`) runs stays in the terminal's process group and starts the
 * platform in a process group of its own, which it stops.
 *
 * Why two groups: Ctrl-C signals the whole foreground process group. When the services, the
 * stand-ins, Redis, MongoDB and anvil shared it, each got the terminal's signal and then the
 * launcher's (a "second signal", which forces), and the stores stopped at the same instant as
 * the services still draining into them. In a group of its own, the platform hears a stop only
 * from this launcher: once, and in order (each process after everything that uses it).
 *
 * This process's only work is to relay: the first stop request (SIGINT, SIGTERM; one request
 * even when npm forwards the terminal's signal a moment after the terminal delivered it) asks
 * the platform to stop gracefully; a second one kills every process of the platform at once and
 * says so. If this process is killed outright (SIGKILL), the platform notices its IPC channel
 * close and stops gracefully on its own; if npm is, this process notices its parent gone and
 * stops the platform the same way. Answers with the platform's exit code.
 */

/** How long a graceful stop may take before this launcher kills what is left. */
export const STOP_BUDGET_MS = 30_000;

/** Set in the platform process's environment: it is the group's leader, not the launcher. */
export const PLATFORM_PROCESS_ENV = 'PARAMETRIC_START_PLATFORM';

export function isPlatformProcess(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[PLATFORM_PROCESS_ENV] === '1';
}

/** Runs `script` (this repository's TypeScript, with `args`) as the platform process, and relays stops to it. */
export function runPlatformInOwnGroup(script: string, args: string[]): void {
  const platform = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { ...process.env, [PLATFORM_PROCESS_ENV]: '1' },
    // A new session, hence a new process group: the terminal's signals no longer reach it.
    detached: true,
    // Its output is ours (the terminal, or whatever we write to); the channel tells it we are gone.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let forced = false;
  const killGroup = () => {
    try {
      // Negative: the platform's whole group (it leads it): services, stand-ins, stores.
      process.kill(-(platform.pid as number), 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  const force = (why: string) => {
    if (forced) return;
    forced = true;
    console.error(`[start] ${why}: killing every process of the platform without waiting (exit 1)`);
    killGroup();
  };
  onStopRequests(
    {
      stop: () => {
        platform.kill('SIGTERM');
        // Bounded: a stop that hangs past the budget ends like a second Ctrl-C.
        setTimeout(
          () => force(`the platform did not stop within ${STOP_BUDGET_MS / 1000} s`),
          STOP_BUDGET_MS,
        ).unref();
      },
      force: (reason: StopReason) => force(`second ${reason}`),
    },
    {
      // npm (or whatever ran this) killed outright: this process would live on, and Ctrl-C in the
      // terminal would no longer reach it. Its parent changing is the sign.
      watchParentPid: true,
    },
  );
  platform.on('exit', (code, signal) => {
    if (forced) process.exit(1);
    if (signal)
      console.error(`[start] the platform process ended by ${signal}; its processes stop on their own`);
    process.exit(code ?? 1);
  });
  platform.on('error', (err) => {
    console.error(`[start] cannot start the platform process: ${err.message}`);
    process.exit(1);
  });
}
