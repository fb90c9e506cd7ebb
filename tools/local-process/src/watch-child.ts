import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * Kills `childPid` if this process dies without stopping it (crash, SIGKILL), so no local
 * server outlives its test run or `npm start`. Exit handlers cannot do this: a SIGKILLed
 * process runs none, hence a detached watchdog process. Call `release()` when stopping the
 * child yourself.
 */
export function watchChild(childPid: number | undefined): { release(): void } {
  if (childPid === undefined) return { release: () => {} };
  const watchdog = spawn(
    process.execPath,
    [path.join(__dirname, 'watchdog.js'), String(process.pid), String(childPid)],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();
  return { release: () => watchdog.kill() };
}
