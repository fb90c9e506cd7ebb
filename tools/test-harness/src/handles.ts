// globalSetup and globalTeardown run in the same parent process, so a module-level
// registry on globalThis is how the teardown finds what the setup started.
interface Stoppable {
  stop(): Promise<void>;
}

const KEY = Symbol.for('parametric.test-harness.handles');
type Registry = { handles: Stoppable[] };

function registry(): Registry {
  const holder = globalThis as unknown as Record<symbol, Registry | undefined>;
  holder[KEY] ??= { handles: [] };
  return holder[KEY];
}

export function rememberForTeardown(handle: Stoppable): void {
  registry().handles.push(handle);
}

export async function stopAll(): Promise<void> {
  const { handles } = registry();
  while (handles.length > 0) await handles.pop()?.stop();
}
