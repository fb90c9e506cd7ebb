import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { type Running, root } from './support';

/**
 * What the dashboard's browser tests share (test/e2e/dashboard*.test.ts): Debian's Chromium
 * driven by playwright-core with a fresh profile, axe-core over a page, screenshots into
 * test-artifacts/dashboard/ (gitignored), and sign-in.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.join(root, 'test-artifacts', 'dashboard');

/** axe-core's rules over the page as it is: no serious or critical violation. */
export async function accessible(page: Page, name: string) {
  const source = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated over the DevTools protocol, not as a page script: the page's CSP stays as served.
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: Array<{ id: string; impact: string | null; help: string }> }> };
      }
    ).axe;
    return (await axe.run()).violations.map(({ id, impact, help }) => ({ id, impact, help }));
  });
  expect({
    page: name,
    violations: violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
  }).toEqual({
    page: name,
    violations: [],
  });
}

export async function shot(page: Page, name: string) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export async function signIn(page: Page, dashboard: string, email: string, password: string) {
  await page.goto(dashboard);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await signedIn(page, `sign-in-${email.split('@')[0]}`);
}

/** Waits for the overview, the first page after any sign-in; if it does not come, screenshots what did. */
export async function signedIn(page: Page, what: string) {
  try {
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  } catch (err) {
    await shot(page, `failed-${what}`);
    throw new Error(`not signed in: the page shows ${await page.locator('body').textContent()}`, {
      cause: err,
    });
  }
}

/** Chromium with a profile of its own (removed by `closeBrowser`), the artifacts folder made. */
export async function launchBrowser(): Promise<{ context: BrowserContext; profile: string }> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does when it is missing)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = mkdtempSync(path.join(tmpdir(), 'dashboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  return { context, profile };
}

/** The browser and its profile gone, and the platform stopped (SIGTERM, awaited). */
export async function closeAll(context?: BrowserContext, profile?: string, platform?: Running) {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  if (platform && platform.child.exitCode === null && platform.child.signalCode === null) {
    const exited = once(platform.child, 'exit');
    platform.child.kill('SIGTERM');
    await exited;
  }
}
