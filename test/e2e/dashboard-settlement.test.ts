import { readFileSync } from 'node:fs';
import { eventually } from '@parametric/test-harness';
import type { BrowserContext, Page } from 'playwright-core';
import { accessible, closeAll, launchBrowser, shot, signIn } from './browser';
import { bootPlatform, call, platformEnv, type Running } from './support';

/**
 * Issue 28, the money pages, in Chromium against `npm start`: in a sandbox organization (Tier 1:
 * the partner settles) the admin records a settlement report from a determination's page, is
 * refused by the form's rules and by the API (shown as the API said it), corrects the report and
 * sees the chain as a timeline; the policies, farmers and payouts pages show the organization's
 * real data; CSV export writes what the table lists; an operator (no `settlement-report:write`)
 * is offered no form. axe-core on every page; screenshots to test-artifacts/dashboard/.
 */

const ADMIN_EMAIL = 'admin@settlement-e2e.example';
const ADMIN_PASSWORD = 'teff-and-sesame-2026';
const OPERATOR_PASSWORD = 'pigeon-peas-2026';

jest.setTimeout(300_000);

describe('settlement reports, policies, farmers and payouts in the dashboard', () => {
  let platform: Running;
  let context: BrowserContext;
  let profile: string;
  let dashboard: string;
  let api: string;
  let key: Record<string, string>;
  let determinationId: string;
  let policy: { id: string; policyNumber: string };
  let farmerId: string;
  let operatorEmail: string;

  beforeAll(async () => {
    // The organization's budget (100 requests a minute, the dashboard's and the API key's
    // together) is spent here in well under a minute: four sign-ins, each overview eight counts,
    // the scene's setup. A person clicking through takes longer; the test raises the budget
    // rather than wait for it.
    const started = await platformEnv({ RATE_LIMIT_POINTS: '1000' });
    platform = await bootPlatform(started.env);
    api = `http://127.0.0.1:${started.ports.GATEWAY_PORT}/api`;
    dashboard = `http://127.0.0.1:${started.ports.GATEWAY_PORT}/dashboard/`;

    // docs/getting-started.md's journey: a sandbox organization needs no operator of the insurer.
    const { organization } = await call(
      'POST',
      `${api}/auth/register-organization`,
      {},
      {
        name: 'Settlement Growers (sandbox)',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        environment: 'sandbox',
        adminEmail: ADMIN_EMAIL,
        adminPassword: ADMIN_PASSWORD,
      },
    );
    key = { 'x-api-key': organization.apiKey };
    const farmer = await call('POST', `${api}/farmers`, key, {
      firstName: 'Achieng',
      lastName: 'Odhiambo',
      phoneNumber: '+254712398700',
      nationalId: 'KE55120987',
      region: 'Kisumu, Nyanza',
    });
    farmerId = farmer.id;
    const plot = await call('POST', `${api}/plots`, key, {
      farmerId,
      name: 'Lakeside field',
      latitude: -0.0917,
      longitude: 34.768,
      areaHectares: 1.5,
      cropType: 'MAIZE',
    });
    await call('POST', `${api}/herds`, key, {
      farmerId,
      name: 'Zebu herd',
      headCount: 12,
      estimatedValue: 240_000,
      latitude: -0.0917,
      longitude: 34.768,
    });
    ({ policy } = await call('POST', `${api}/policies/purchase`, key, {
      farmerId,
      productType: 'CROP',
      plotId: plot.id,
      sumInsured: 50_000,
      coverageType: 'DROUGHT',
      durationDays: 180,
    }));
    await call('PUT', `${api}/policies/${policy.id}/activate`, key);
    // 40 % of 50,000 KES: 20,000.00 owed.
    const issued = await call('POST', `${api}/sandbox/determinations`, key, {
      policyId: policy.id,
      triggered: true,
      damagePercentBp: 4000,
    });
    determinationId = issued.determinationId;
    expect(issued.amountOwed.amount).toBe('20000.00');

    operatorEmail = `operator-${Date.now()}@settlement-e2e.example`;
    const invited = await call('POST', `${api}/organizations/me/users`, key, {
      email: operatorEmail,
      name: 'Otto Operator',
      role: 'ORG_OPERATOR',
    });
    await call(
      'POST',
      `${api}/auth/accept-invitation`,
      {},
      {
        token: invited.invitationToken,
        password: OPERATOR_PASSWORD,
      },
    );

    ({ context, profile } = await launchBrowser());
  });

  afterAll(() => closeAll(context, profile, platform));

  // Each test signs in afresh: the session an earlier one left is not carried over.
  beforeEach(() => context.clearCookies());

  /** The page's main part once its heading is shown. */
  async function open(page: Page, route: string, heading: string | RegExp) {
    await page.goto(`${dashboard}#${route}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  }

  it('records a settlement report, is refused by the rules and the API, corrects it, and shows the chain', async () => {
    const page = await context.newPage();
    await signIn(page, dashboard, ADMIN_EMAIL, ADMIN_PASSWORD);
    await open(page, `/determinations/${determinationId}`, /^Determination /);
    const form = page.getByRole('form', { name: 'Record a settlement report' });
    await form.waitFor();
    await expect(form.textContent()).resolves.toContain('2000000 minor units');
    await shot(page, '10-determination-report-form');
    await accessible(page, 'determination with the report form');

    // The form's own check, in the server's words: a partial settlement of the whole amount.
    await page.getByLabel('Your reference').fill('MPESA-RCPT-001');
    await page.getByLabel('Outcome').selectOption('SETTLED_PARTIAL');
    await page.getByLabel(/^Amount settled/).fill('20000');
    await form.getByRole('button', { name: 'Record a settlement report' }).click();
    const problems = page.getByTestId('report-problems');
    await expect(problems.textContent()).resolves.toContain(
      'must be more than 0 and less than the amount owed when the outcome is SETTLED_PARTIAL',
    );

    // The API's refusal shown as it said it: a settlement dated in the future.
    await page.getByLabel(/^Amount settled/).fill('5000.50');
    await page.getByLabel('Settled at').fill('2099-01-01T10:00');
    await form.getByRole('button', { name: 'Record a settlement report' }).click();
    await expect(problems.textContent()).resolves.toContain('settledAt: must not be in the future');
    await shot(page, '11-determination-report-refused');

    const now = new Date(Date.now() - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('Settled at').fill(now);
    await form.getByRole('button', { name: 'Record a settlement report' }).click();
    const timeline = page.getByTestId('report-timeline');
    await timeline.locator('li').first().waitFor();
    await expect(timeline.locator('li').count()).resolves.toBe(1);
    await expect(timeline.textContent()).resolves.toContain('SETTLED_PARTIAL');
    await expect(timeline.textContent()).resolves.toContain('MPESA-RCPT-001');

    // The correction: the form now replaces the current report.
    const correction = page.getByRole('form', { name: 'Correct the settlement report' });
    await correction.waitFor();
    await expect(correction.textContent()).resolves.toContain('replaces report MPESA-RCPT-001');
    await page.getByLabel('Your reference').fill('MPESA-RCPT-002');
    await page.getByLabel('Outcome').selectOption('SETTLED_FULL');
    await expect(page.getByLabel(/^Amount settled/).inputValue()).resolves.toBe('20000.00');
    await page.getByLabel('Settled at').fill(now);
    await correction.getByRole('button', { name: 'Correct the settlement report' }).click();
    await eventually(async () => expect(await timeline.locator('li').count()).toBe(2), {
      timeout: 10_000,
      interval: 200,
      message: 'the correction in the timeline',
    });
    const [first, second] = await timeline.locator('li').all();
    await expect(first?.getAttribute('class')).resolves.toBe('superseded');
    await expect(second?.getAttribute('class')).resolves.toBe('current');
    await expect(second?.textContent()).resolves.toContain('corrects MPESA-RCPT-001');
    await expect(second?.textContent()).resolves.toContain('SETTLED_FULL');
    await shot(page, '12-determination-report-corrected');
    await accessible(page, 'determination with the report timeline');

    // What the API holds: the correction current, in exact minor units.
    const reports = await call('GET', `${api}/determinations/${determinationId}/settlement-report`, key);
    expect(reports.current).toMatchObject({
      partnerReference: 'MPESA-RCPT-002',
      outcome: 'SETTLED_FULL',
      settledAmountMinor: '2000000',
    });
    expect(
      reports.reports.find((r: { partnerReference: string }) => r.partnerReference === 'MPESA-RCPT-001'),
    ).toMatchObject({ settledAmountMinor: '500050', supersededByReportId: reports.current.id });

    // On a phone: one column, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByTestId('report-timeline').waitFor();
    await shot(page, '13-determination-phone');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.close();
  });

  it('lists policies with their filters and shows one with its determinations', async () => {
    const page = await context.newPage();
    await signIn(page, dashboard, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('link', { name: 'Policies' }).click();
    await page.getByRole('heading', { level: 1, name: 'Policies' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: policy.policyNumber });
    await expect(row.textContent()).resolves.toContain('ACTIVE');
    await shot(page, '14-policies');
    await accessible(page, 'policies');

    // A filter the policy does not match empties the list; the API did the filtering.
    await page.getByLabel('Product').selectOption('LIVESTOCK');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No policies match.').waitFor();

    await open(page, `/policies/${policy.id}`, `Policy ${policy.policyNumber}`);
    await expect(page.getByTestId('policy-status').textContent()).resolves.toBe('ACTIVE');
    await page.locator(`a[href="#/determinations/${determinationId}"]`).waitFor();
    await expect(page.getByTestId('policy-history').textContent()).resolves.toContain('Now ACTIVE');
    await shot(page, '15-policy');
    await accessible(page, 'policy');
    await page.close();
  });

  it('lists farmers with their plots and herds, and exports the list as CSV', async () => {
    const page = await context.newPage();
    await signIn(page, dashboard, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('link', { name: 'Farmers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Farmers' }).waitFor();
    await page.getByRole('link', { name: 'Achieng Odhiambo' }).waitFor();
    await shot(page, '16-farmers');
    await accessible(page, 'farmers');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('farmers.csv');
    const csv = readFileSync(String(await download.path()), 'utf8');
    expect(csv).toBe(
      '\uFEFFName,Phone,Region,KYC,Created\r\n' +
        // The phone number starts with +, which a spreadsheet would run as a formula; the region holds a comma.
        `Achieng Odhiambo,'+254712398700,"Kisumu, Nyanza",APPROVED,${csv.split(',').at(-1)}`,
    );
    await page.getByRole('status').filter({ hasText: 'Exported 1 rows.' }).waitFor();

    await page.getByRole('link', { name: 'Achieng Odhiambo' }).click();
    await page.getByRole('heading', { level: 1, name: 'Achieng Odhiambo' }).waitFor();
    await page.getByRole('cell', { name: 'Lakeside field' }).waitFor();
    await page.getByRole('cell', { name: 'Zebu herd' }).waitFor();
    await shot(page, '17-farmer');
    await accessible(page, 'farmer');
    await page.close();
  });

  it('shows the payouts page (none in Tier 1) and offers an operator no settlement form', async () => {
    const page = await context.newPage();
    await signIn(page, dashboard, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('link', { name: 'Payouts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    // Tier 1: the partner settles its own claims, so the organization has no payouts.
    await page.getByText('No payouts.').waitFor();
    await shot(page, '18-payouts');
    await accessible(page, 'payouts');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    await signIn(page, dashboard, operatorEmail, OPERATOR_PASSWORD);
    await expect(page.getByRole('link', { name: 'Payouts' }).count()).resolves.toBe(0);
    await open(page, `/determinations/${determinationId}`, /^Determination /);
    await page.getByTestId('report-timeline').waitFor();
    await expect(page.locator('form.report-form').count()).resolves.toBe(0);
    await shot(page, '19-determination-operator');
    await accessible(page, 'determination (operator)');
    await page.close();
  });
});
