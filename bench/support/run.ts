// What every benchmark shares: service processes it starts and stops, and the median it reports.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

/** The median of several rounds: these machines are noisy, so no single run is quoted. */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
}

/** A TypeScript entry point (e.g. `services/gateway/src/main.ts`) as its own process. */
export function startProcess(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** SIGTERM to each, waiting for each to exit (graceful shutdown is part of the platform). */
export async function stopProcesses(children: ChildProcess[]): Promise<void> {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}
