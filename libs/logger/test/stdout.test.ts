import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

const FIXTURE = path.join(__dirname, 'fixtures', 'log-then-die.ts');

describe('createLogger on stdout', () => {
  it('has written every line by the time a call returns: none lost when the process is killed', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
      env: { ...process.env, LINES: '200' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const [, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGKILL');
    const records = out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { i: number; msg: string; service: string });
    expect(records.map((r) => r.i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(records.every((r) => r.msg === 'line before dying' && r.service === 'dying')).toBe(true);
  });
});
