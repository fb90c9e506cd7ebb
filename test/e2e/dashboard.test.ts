import { randomBytes } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { assessment } from '../../services/determinations/test/support';
import { accessible, closeAll, launchBrowser, shot, signIn } from './browser';
import { bootPlatform, call, type PortName, paidTier2Policy, platformEnv, type Running } from './support';

/**
 * Issue 28, first slice: the partner dashboard in a real browser (Debian's Chromium driven by
 * playwright-core; `.ci/run` installs it) against the platform as `npm start` runs it. A finance
 * admin signs in, sees a determination whose signature the browser verified, sees a tampered copy
 * (served by a stand-in on the browser's network) marked invalid, reloads (silent refresh from
 * the cookie) and signs out; a viewer finds no write controls. Every page is screenshotted into
 * test-artifacts/dashboard/ (gitignored) and checked with axe-core (no serious or critical
 * violations).
 */

const ADMIN_EMAIL = 'admin@dashboard-e2e.example';
const ADMIN_PASSWORD = 'sorghum-and-millet-2026';
const VIEWER_PASSWORD = 'cassava-and-beans-2026';
const PHONE = '+254712398762';

jest.setTimeout(300_000);

describe('the partner dashboard in Chromium, against npm start', () => {
  let platform: Running;
  let ports: Record<PortName, number>;
  let context: BrowserContext;
  let profile: string;
  let dashboard: string;
  let determinationId: string;
  let viewerEmail: string;
  const secrets = { OPS_TOKEN: randomBytes(24).toString('base64url') };

  beforeAll(async () => {
    const started = await platformEnv(secrets);
    ports = started.ports;
    platform = await bootPlatform(started.env);
    expect(platform.output()).toMatch(/Partner dashboard: +http:\/\/127\.0\.0\.1:\d+\/dashboard\//);
    expect(platform.output()).toMatch(
      /\[start\] Dashboard: JavaScript: [\d.]+ KB gzipped \(budget 250\.0 KB\)/,
    );
    const api = `http://127.0.0.1:${ports.GATEWAY_PORT}/api`;
    const ops = `http://127.0.0.1:${ports.OPS_PORT}/ops`;
    dashboard = `http://127.0.0.1:${ports.GATEWAY_PORT}/dashboard/`;
    const asOps = { authorization: `Bearer ${secrets.OPS_TOKEN}` };

    // A Tier 2 organization with an active, paid policy and a triggered determination.
    const { organization } = await call(
      'POST',
      `${api}/auth/register-organization`,
      {},
      {
        name: 'Dashboard Co-op',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        adminEmail: ADMIN_EMAIL,
        adminPassword: ADMIN_PASSWORD,
      },
    );
    const key = { 'x-api-key': organization.apiKey };
    const policy = await paidTier2Policy({
      api,
      ops,
      asOps,
      organizationId: organization.id,
      key,
      licenceNumber: 'IRA-DASH-1',
      farmer: { phoneNumber: PHONE, nationalId: 'KE73910285' },
    });
    await call('POST', `${ops}/determinations`, asOps, assessment({ policyId: policy.id }));
    const listed = await call('GET', `${api}/determinations?policyId=${policy.id}`, key);
    determinationId = listed[0].determinationId;

    // A viewer, invited and accepted as a person would.
    viewerEmail = `viewer-${Date.now()}@dashboard-e2e.example`;
    const invited = await call('POST', `${api}/organizations/me/users`, key, {
      email: viewerEmail,
      name: 'Vera Viewer',
      role: 'ORG_VIEWER',
    });
    await call(
      'POST',
      `${api}/auth/accept-invitation`,
      {},
      {
        token: invited.invitationToken,
        password: VIEWER_PASSWORD,
      },
    );

    ({ context, profile } = await launchBrowser());
  });

  afterAll(() => closeAll(context, profile, platform));

  it('serves the page with a strict CSP, no framing, and a no-cache index', async () => {
    const page = await context.newPage();
    const response = await page.goto(dashboard);
    const headers = response?.headers() ?? {};
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['cache-control']).toBe('no-cache');
    const script = await page.locator('script[type=module]').getAttribute('src');
    const asset = await fetch(new URL(script ?? '', dashboard));
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot(page, '01-sign-in');
    await accessible(page, 'sign-in');
    await page.close();
  });

  it('signs the admin in, verifies a determination’s signature in the browser, and signs out', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await signIn(page, dashboard, ADMIN_EMAIL, ADMIN_PASSWORD);
    await expect(page.getByTestId('count-active-policies').textContent()).resolves.toBe('1');
    await shot(page, '02-overview-admin');
    await accessible(page, 'overview');

    // The access token is in memory only; the refresh token in an HttpOnly cookie.
    expect(await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]')).toEqual([
      0,
      0,
      '',
    ]);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'dashboard_refresh')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
      path: '/api/auth/cookie',
    });

    await page.getByRole('link', { name: 'Determinations' }).click();
    await page.getByRole('heading', { name: 'Determinations' }).waitFor();
    await shot(page, '03-determinations');
    await accessible(page, 'determinations');
    await page.locator(`a[href="#/determinations/${determinationId}"]`).click();
    const badge = page.getByTestId('signature-badge');
    await expect(badge.getAttribute('data-valid')).resolves.toBe('true');
    await expect(badge.textContent()).resolves.toContain('Signature verified');
    // Tier 2: the service settles, so the signed record carries no amount, and says why.
    await expect(page.getByTestId('amount-owed').textContent()).resolves.toBe(
      'No amount: SETTLED_BY_SERVICE',
    );
    await shot(page, '04-determination-verified');
    await accessible(page, 'determination');

    // A stand-in on the browser's network serves a copy with one signed field changed.
    await page.route(`**/api/determinations/${determinationId}`, async (route) => {
      const real = await route.fetch();
      const body = (await real.json()) as { data: { damagePercentBp: number } };
      body.data.damagePercentBp += 100;
      await route.fulfill({ response: real, json: body });
    });
    // A reload: the access token is gone with the page; the cookie signs the user in silently.
    await page.reload();
    await expect(badge.getAttribute('data-valid')).resolves.toBe('false');
    await expect(badge.textContent()).resolves.toContain('Signature invalid');
    await expect(badge.textContent()).resolves.toContain('damagePercentBp differs');
    await shot(page, '05-determination-tampered');
    await page.unroute(`**/api/determinations/${determinationId}`);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await context.cookies()).filter((c) => c.name === 'dashboard_refresh')).toEqual([]);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot(page, '06-signed-out');
    expect(errors.filter((e) => !/401|Failed to load resource/.test(e))).toEqual([]);
    await page.close();
  });

  it('shows a viewer no write controls and no page its role cannot read', async () => {
    // A browser of its own: whatever session an earlier test left is not the viewer's.
    await context.clearCookies();
    const page = await context.newPage();
    await signIn(page, dashboard, viewerEmail, VIEWER_PASSWORD);
    await expect(page.locator('.who').getAttribute('data-role')).resolves.toBe('ORG_VIEWER');
    await expect(page.getByRole('link', { name: 'Determinations' }).count()).resolves.toBe(0);
    // Sign-out is the one control: no form, no other button anywhere.
    await expect(page.locator('main form, main button, main input, main select').count()).resolves.toBe(0);
    await expect(page.getByRole('button').allTextContents()).resolves.toEqual(['Sign out']);
    // The determinations page is not offered even by its URL.
    await page.goto(`${dashboard}#/determinations`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await shot(page, '07-overview-viewer');
    await accessible(page, 'overview (viewer)');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.close();
  });
});
