import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { eventually } from '@parametric/test-harness';

const PARENT = path.join(__dirname, 'fixtures', 'parent.ts');
const started: number[] = [];

/** Whether `pid` is a live process; a zombie (dead, not yet reaped by init) counts as gone. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true; // no /proc: kill(pid, 0) is all we can know
  }
}

/** Starts the fixture parent and returns it with the pid of the child it watches. */
async function startParent(...args: string[]): Promise<{ parent: ChildProcess; childPid: number }> {
  const parent = spawn(process.execPath, ['--import', 'tsx', PARENT, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: parent.stdout as NodeJS.ReadableStream });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  const childPid = Number(line);
  started.push(childPid);
  return { parent, childPid };
}

async function sigkill(parent: ChildProcess): Promise<void> {
  const exited = once(parent, 'exit');
  parent.kill('SIGKILL');
  await exited;
}

afterEach(() => {
  // A failed test must not leave its child behind.
  for (const pid of started.splice(0)) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
});

describe('watchChild', () => {
  it('kills the child when its parent is SIGKILLed (no exit handler of the parent runs)', async () => {
    const { parent, childPid } = await startParent();
    expect(isRunning(childPid)).toBe(true);
    await sigkill(parent);
    await eventually(() => expect(isRunning(childPid)).toBe(false), {
      timeout: 5_000,
      message: `child ${childPid} killed by the watchdog`,
    });
  });

  it('after release(), leaves the child alone when the parent dies', async () => {
    const { parent, childPid } = await startParent('release');
    await sigkill(parent);
    // Proving a kill does NOT happen: the watchdog checks once a second, so 1.5 s would see it.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(isRunning(childPid)).toBe(true);
  });
});
