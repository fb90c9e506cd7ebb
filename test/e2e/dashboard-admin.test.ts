import { eventually } from '@parametric/test-harness';
import type { BrowserContext, Page } from 'playwright-core';
import { accessible, closeAll, launchBrowser, shot, signedIn, signIn } from './browser';
import { bootPlatform, call, type PortName, platformEnv, type Running } from './support';

/**
 * Issue 28, the admin pages of the partner dashboard in Chromium against `npm start`: an admin
 * points the webhook at the local receiver before it knows the secret (so a test event fails),
 * reveals the secret, gives it to the receiver and retries the failed delivery; sends a test
 * event that arrives; rotates the API key (the new key shown once works, the old is refused);
 * invites a viewer, who accepts the link in a browser of their own and finds no write control
 * on any page; is told plainly that the last admin cannot be demoted; deactivates the viewer,
 * who is signed out at their next call, as the admin is when their session is revoked elsewhere;
 * and signs out. axe-core checks every new page (no
 * serious or critical violation); screenshots go to test-artifacts/dashboard/.
 */

const ADMIN_EMAIL = 'admin@dashboard-admin-e2e.example';
const ADMIN_PASSWORD = 'teff-and-finger-millet-2026';
const VIEWER_PASSWORD = 'pigeon-peas-and-cowpeas-2026';
/** The receiver's path for this organization: no secret there until the test gives it one. */
const HOOK_PATH = '/hooks/dashboard-admin';
/** What a viewer may find in a page: reading controls, never a write. */
const READ_ONLY_BUTTONS = ['Apply', 'Previous', 'Next', 'Export CSV', 'Refresh'];

jest.setTimeout(400_000);

/** Clicks Refresh until the delivery log's row for `id` shows `status`. */
async function waitForDelivery(page: Page, id: string, status: string) {
  const row = page.locator('tr', { has: page.locator(`a[href="#/webhooks/deliveries/${id}"]`) });
  await eventually(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await expect(row.getByTestId('delivery-status').textContent()).resolves.toBe(status);
    },
    { timeout: 60_000, interval: 2_000, message: `delivery ${id} ${status}` },
  );
}

/** Sends a test event from the form; answers the id of its delivery, as the page reports it. */
async function sendTestEvent(page: Page, event: string): Promise<string> {
  await page.getByLabel('Event').selectOption(event);
  await page.getByRole('button', { name: 'Send test event' }).click();
  const said = page.getByText(`A test ${event} is on its way`);
  await said.waitFor();
  return /delivery ([0-9a-f-]{36})/.exec(String(await said.textContent()))?.[1] as string;
}

/** The page fits a phone's width: nothing wider than the screen but the tables' own scroll areas. */
async function fitsThePhone(page: Page, name: string) {
  await page.setViewportSize({ width: 390, height: 844 });
  // What sticks out past the screen's right edge (a table scrolls inside its own box instead).
  const outside = `[...document.querySelectorAll('body *')]
    .filter((e) => !e.closest('.table-wrap') && e.getBoundingClientRect().right > innerWidth + 0.5)
    .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ' + (e.textContent ?? '').slice(0, 40))`;
  await expect(page.evaluate(outside)).resolves.toEqual([]);
  await expect(page.evaluate('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
  await shot(page, `${name}-phone`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe('the dashboard’s admin pages in Chromium, against npm start', () => {
  let platform: Running | undefined;
  let ports: Record<PortName, number>;
  let api: string;
  let dashboard: string;
  let receiver: string;
  let oldKey: string;
  let admin: { context: BrowserContext; profile: string } | undefined;
  let page: Page;
  let viewerEmail: string;
  let viewer: { context: BrowserContext; profile: string } | undefined;
  let viewerPage: Page;

  beforeAll(async () => {
    // One attempt per delivery: a failing one is FAILED at once, not after the 7.5 minutes of
    // the promised schedule (docs/webhooks.md), which the webhooks service's tests hold to.
    const started = await platformEnv({ DELIVERY_MAX_ATTEMPTS: '1' });
    ports = started.ports;
    platform = await bootPlatform(started.env);
    api = `http://127.0.0.1:${ports.GATEWAY_PORT}/api`;
    dashboard = `http://127.0.0.1:${ports.GATEWAY_PORT}/dashboard/`;
    receiver = `http://127.0.0.1:${ports.WEBHOOK_RECEIVER_PORT}`;
    const { organization } = await call(
      'POST',
      `${api}/auth/register-organization`,
      {},
      {
        name: 'Dashboard Admin Co-op',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        adminEmail: ADMIN_EMAIL,
        adminPassword: ADMIN_PASSWORD,
      },
    );
    oldKey = organization.apiKey;
    admin = await launchBrowser();
    page = await admin.context.newPage();
    await signIn(page, dashboard, ADMIN_EMAIL, ADMIN_PASSWORD);
  });

  afterAll(async () => {
    await closeAll(viewer?.context, viewer?.profile);
    await closeAll(admin?.context, admin?.profile, platform);
  });

  it('retries a failed delivery once the receiver is fixed, and sends a test event', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await accessible(page, 'webhooks (no URL)');

    // The receiver answers 401 on a path it has no secret for: every delivery there fails.
    await page.getByLabel('URL').fill(`${receiver}${HOOK_PATH}`);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The webhook URL is saved.').waitFor();
    const failed = await sendTestEvent(page, 'determination.delivered');
    await waitForDelivery(page, failed, 'FAILED');
    await shot(page, '20-webhooks-failed');
    await accessible(page, 'webhooks');

    await page.locator(`a[href="#/webhooks/deliveries/${failed}"]`).click();
    await page.getByRole('heading', { name: `Delivery ${failed}` }).waitFor();
    await page.getByRole('table', { name: 'Attempts' }).waitFor();
    await expect(
      page.getByRole('table', { name: 'Attempts' }).locator('tbody tr').allTextContents(),
    ).resolves.toEqual([expect.stringMatching(/^01.*401HTTP 401/)]);
    await accessible(page, 'delivery');
    await page.getByRole('link', { name: 'Back to webhooks' }).click();

    // The secret is shown only when asked for; the fix is the receiver knowing it.
    await expect(page.getByTestId('webhook-secret').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const secret = String(await page.getByTestId('webhook-secret').textContent());
    expect(secret.length).toBeGreaterThan(20);
    await call('PUT', `${receiver}/_secret`, {}, { secret, path: HOOK_PATH });
    await page.getByRole('button', { name: 'Hide secret' }).click();
    await expect(page.getByTestId('webhook-secret').count()).resolves.toBe(0);

    // Only failed rows offer a retry; the failed one is retried and arrives.
    await page.getByLabel('Status', { exact: true }).selectOption('FAILED');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: `Retry determination.delivered delivery ${failed}` }).click();
    await page.getByText('Sent again. Refresh to see the outcome.').waitFor();
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await waitForDelivery(page, failed, 'DELIVERED');
    await page.locator(`a[href="#/webhooks/deliveries/${failed}"]`).click();
    await page.getByRole('heading', { name: `Delivery ${failed}` }).waitFor();
    await page.getByRole('table', { name: 'Attempts' }).waitFor();
    await expect(page.getByTestId('delivery-status').textContent()).resolves.toBe('DELIVERED');
    // Every attempt is kept: the failed one, then the retry's cycle.
    await expect(
      page.getByRole('table', { name: 'Attempts' }).locator('tbody tr').allTextContents(),
    ).resolves.toEqual([expect.stringMatching(/^01.*401HTTP 401/), expect.stringMatching(/^11.*200—/)]);
    await shot(page, '21-delivery-retried');
    await page.getByRole('link', { name: 'Back to webhooks' }).click();

    // A test event now arrives at once, signed with the secret the receiver holds.
    const sent = await sendTestEvent(page, 'payout.completed');
    await waitForDelivery(page, sent, 'DELIVERED');
    // The receiver's own answer, not the platform's envelope.
    const { deliveries } = (await (await fetch(`${receiver}/_received`)).json()) as {
      deliveries: Array<{ deliveryId: string; event: string; verified: boolean }>;
    };
    expect(
      deliveries.filter((d) => [failed, sent].includes(d.deliveryId)).map((d) => [d.event, d.verified]),
    ).toEqual([
      ['payout.completed', true],
      ['determination.delivered', true],
      ['determination.delivered', false],
    ]);

    // Rotating the secret asks first; cancelled, nothing changes.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByTestId('webhook-secret').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('The secret is rotated.').waitFor();
    const rotated = String(await page.getByTestId('webhook-secret').textContent());
    expect(rotated).not.toBe(secret);
    await fitsThePhone(page, '22-webhooks');
  });

  it('rotates the API key: the new key is shown once and works, the old one is refused', async () => {
    await page.getByRole('link', { name: 'API key' }).click();
    await page.getByRole('heading', { name: 'API key' }).waitFor();
    await expect(page.getByTestId('api-key-masked').textContent()).resolves.toContain(oldKey.slice(-4));
    await expect(page.getByTestId('api-key-masked').textContent()).resolves.not.toBe(oldKey);
    await accessible(page, 'API key');

    // By keyboard: the dialog takes the focus on Cancel, Escape closes it and gives the focus back.
    await page.getByRole('button', { name: 'Rotate key' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Rotate the API key?' });
    await dialog.waitFor();
    await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe('Cancel');
    await accessible(page, 'API key (confirmation)');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe('Rotate key');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');

    const newKey = String(await page.getByTestId('new-api-key-value').textContent());
    expect(newKey).not.toBe(oldKey);
    await expect(page.getByTestId('new-api-secret-value').textContent()).resolves.toMatch(/\S{20,}/);
    await shot(page, '23-api-key-rotated');
    await accessible(page, 'API key (rotated)');
    const me = (key: string) => fetch(`${api}/organizations/me`, { headers: { 'x-api-key': key } });
    expect((await me(newKey)).status).toBe(200);
    expect((await me(oldKey)).status).toBe(401);
    await page
      .getByTestId('api-key-masked')
      .filter({ hasText: newKey.slice(-4) })
      .waitFor();

    // Shown once: another visit shows the masked key only.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: 'API key' }).click();
    await page.getByTestId('api-key-masked').waitFor();
    await expect(page.getByTestId('new-api-key').count()).resolves.toBe(0);
    await expect(page.locator('body').textContent()).resolves.not.toContain(newKey);
  });

  it('invites a viewer, who accepts the link in their own browser and finds no write control anywhere', async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await accessible(page, 'users');
    viewerEmail = `viewer-${Date.now()}@dashboard-admin-e2e.example`;
    await page.getByLabel('Email').fill(viewerEmail);
    await page.getByLabel('Name').fill('Vusi Viewer');
    await page.getByLabel('Role', { exact: true }).first().selectOption('ORG_VIEWER');
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = await page.getByLabel('Invitation link').inputValue();
    expect(link).toMatch(new RegExp(`^${dashboard}#/accept-invitation/\\S+$`));
    await page.locator('tr', { hasText: viewerEmail }).getByText('INVITED', { exact: true }).waitFor();
    await shot(page, '24-users-invited');
    await accessible(page, 'users (invited)');
    await fitsThePhone(page, '24-users');

    viewer = await launchBrowser();
    viewerPage = await viewer.context.newPage();
    await viewerPage.goto(link);
    await viewerPage.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    await accessible(viewerPage, 'accept invitation');
    await viewerPage.getByLabel('New password').fill(VIEWER_PASSWORD);
    await viewerPage.getByLabel('Repeat the password').fill(`${VIEWER_PASSWORD}!`);
    await viewerPage.getByRole('button', { name: 'Set password and sign in' }).click();
    await viewerPage.getByText('The two passwords differ.').waitFor();
    await shot(viewerPage, '25-accept-invitation');
    await viewerPage.getByLabel('Repeat the password').fill(VIEWER_PASSWORD);
    await viewerPage.getByRole('button', { name: 'Set password and sign in' }).click();
    await signedIn(viewerPage, 'accepted-invitation');
    await expect(viewerPage.locator('.who').getAttribute('data-role')).resolves.toBe('ORG_VIEWER');
    // The spent token left the address bar.
    expect(viewerPage.url()).toBe(`${dashboard}#/`);

    // Every page the viewer is offered, and every admin page by its URL (which shows the overview).
    const offered: string[] = [];
    for (const link of await viewerPage.locator('header nav a').all())
      offered.push(String(await link.getAttribute('href')));
    for (const hash of [...offered, '#/users', '#/webhooks', '#/api-key', '#/determinations']) {
      await viewerPage.goto(`${dashboard}${hash}`);
      await viewerPage.locator('main h1').waitFor();
      await viewerPage.locator('main', { hasText: 'Loading…' }).waitFor({ state: 'detached' });
      const buttons = await viewerPage.locator('main button').allTextContents();
      expect({ hash, writes: buttons.filter((b) => !READ_ONLY_BUTTONS.includes(b)) }).toEqual({
        hash,
        writes: [],
      });
      // Inputs only to filter what is read.
      await expect(
        viewerPage.locator('main :is(input, select, textarea):not(form.filters *)').count(),
      ).resolves.toBe(0);
    }
    await expect(viewerPage.getByRole('heading', { name: 'Overview' }).count()).resolves.toBe(1);
    await shot(viewerPage, '26-viewer');

    // The accepted invitation cannot be used twice.
    const again = await viewer.context.newPage();
    await again.goto(link);
    await again.getByLabel('New password').fill(VIEWER_PASSWORD);
    await again.getByLabel('Repeat the password').fill(VIEWER_PASSWORD);
    await again.getByRole('button', { name: 'Set password and sign in' }).click();
    await again.getByText(/This invitation link no longer works/).waitFor();
    await again.close();
  });

  it('says plainly that the last admin stays one; a deactivated user and a revoked session are signed out at the next call', async () => {
    // A visit reads the list afresh: the viewer has accepted since it was read. (Not by way of
    // the overview: its counts spend a tenth of the organization's 100 requests a minute.)
    await page.getByRole('link', { name: 'API key' }).click();
    await page.getByRole('link', { name: 'Users' }).click();
    const self = page.locator('tr', { hasText: ADMIN_EMAIL });
    await self.getByRole('combobox').selectOption('ORG_VIEWER');
    await self.getByRole('button', { name: 'Change role' }).click();
    await self.getByText(/is the only active administrator/).waitFor();
    await shot(page, '27-users-last-admin');

    const row = page.locator('tr', { hasText: viewerEmail });
    await row.getByText('ACTIVE', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Deactivate' }).click();
    await page
      .getByRole('dialog', { name: 'Deactivate Vusi Viewer?' })
      .getByRole('button', { name: 'Deactivate' })
      .click();
    await page.getByText('Vusi Viewer is deactivated.').waitFor();
    await row.getByText('DEACTIVATED', { exact: true }).waitFor();

    // The viewer's page is still open: the next call it makes finds the session gone.
    await viewerPage.getByRole('link', { name: 'Overview' }).click();
    await viewerPage.getByRole('heading', { name: 'Sign in' }).waitFor();
    await viewerPage.getByText('Your session ended. Sign in again.').waitFor();
    await shot(viewerPage, '28-viewer-signed-out');
    await accessible(viewerPage, 'sign-in (session ended)');

    // A session revoked elsewhere (here: its refresh cookie spent on a logout outside this
    // browser) ends the same way: the access token in the page's memory is refused at once.
    const cookie = (await page.context().cookies()).find((c) => c.name === 'dashboard_refresh');
    const logout = await fetch(`${api}/auth/cookie/logout`, {
      method: 'POST',
      headers: { 'x-requested-by': 'dashboard', cookie: `${cookie?.name}=${cookie?.value}` },
    });
    expect(logout.status).toBe(200);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('Your session ended. Sign in again.').waitFor();

    await signIn(page, dashboard, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByText('You are signed out.').waitFor();
    expect((await page.context().cookies()).filter((c) => c.name === 'dashboard_refresh')).toEqual([]);
  });
});
