import { createHash } from 'node:crypto';
import { QUEUES } from '@parametric/queue';
import { eventually, testRedisUrl } from '@parametric/test-harness';
import { Queue, Worker } from 'bullmq';
import {
  GOOD_PASSWORD,
  movingClock,
  OPS_TOKEN,
  type SignedInOperator,
  signInOperator,
  startTestGateway,
  type TestGateway,
} from './support';

/**
 * The ops queue dashboard (@bull-board at `/ops/queues` on the ops port): every queue of the
 * registry, behind an operator's session (the sign-in form's cookies, or HTTP Basic with their
 * email and password) or the ops token (a bearer token, or HTTP Basic with the token as password),
 * read-only unless QUEUE_DASHBOARD_WRITABLE, and each change it makes is audited.
 */

const bearer = { authorization: `Bearer ${OPS_TOKEN}` };
const basic = (password: string) => ({
  authorization: `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`,
});

interface BoardQueue {
  name: string;
  readOnlyMode: boolean;
  counts: Record<string, number>;
  jobs: Array<{ id: string; failedReason?: string }>;
}

async function boardQueues(g: TestGateway, query = ''): Promise<BoardQueue[]> {
  const res = await fetch(`${dashboardUrl(g)}/api/queues${query}`, { headers: bearer });
  expect(res.status).toBe(200);
  return ((await res.json()) as { queues: BoardQueue[] }).queues;
}

const dashboardUrl = (g: TestGateway) => `${g.gateway.opsUrl}/queues`;

/** A job on the gateway's `events` queue that failed its only attempt. */
async function failedJob(g: TestGateway): Promise<{ queue: Queue; id: string; close(): Promise<void> }> {
  const connection = { url: testRedisUrl() };
  const queue = new Queue('events', { connection, prefix: g.config.REDIS_PREFIX });
  const job = await queue.add('broken', { event: 'not-an-event' }, { attempts: 1 });
  const worker = new Worker(
    'events',
    async () => {
      throw new Error('refused by the test worker');
    },
    { connection, prefix: g.config.REDIS_PREFIX },
  );
  await new Promise<void>((resolve) => worker.on('failed', () => resolve()));
  await worker.close();
  return { queue, id: String(job.id), close: () => queue.close() };
}

describe('the queue dashboard, read-only by default', () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway();
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('refuses a request without credentials, asking for them', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token' }, basic('wrong-token')]) {
      const res = await fetch(dashboardUrl(g), { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="ops"/);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    }
    // The rest of the ops API takes the bearer token only.
    const api = await fetch(`${g.gateway.opsUrl}/audit`, { headers: basic(OPS_TOKEN) });
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBeNull();
  });

  it('serves the dashboard to the ops token, as a bearer token or a browser’s Basic password', async () => {
    for (const headers of [bearer, basic(OPS_TOKEN)]) {
      const res = await fetch(dashboardUrl(g), { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(await res.text()).toContain('Platform queues');
    }
    // Never on the partner port, whoever asks.
    const { apiKey } = await g.register();
    expect((await fetch(`${g.gateway.partnerUrl}/queues`, { headers: { 'x-api-key': apiKey } })).status).toBe(
      404,
    );
  });

  it('shows every queue of the registry, read-only, with a failed job and its reason', async () => {
    const failed = await failedJob(g);
    try {
      const queues = await boardQueues(g, '?activeQueue=events&status=failed');
      expect(queues.map((q) => q.name).sort()).toEqual(Object.keys(QUEUES).sort());
      expect(queues.every((q) => q.readOnlyMode)).toBe(true);
      const events = queues.find((q) => q.name === 'events');
      expect(events?.counts.failed).toBe(1);
      expect(events?.jobs.map((j) => [j.id, j.failedReason])).toEqual([
        [failed.id, 'refused by the test worker'],
      ]);

      // A retry is refused and changes nothing.
      const retry = await fetch(`${dashboardUrl(g)}/api/queues/events/${failed.id}/retry`, {
        method: 'PUT',
        headers: bearer,
      });
      expect(retry.status).toBe(403);
      expect(((await retry.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
      expect(await (await failed.queue.getJob(failed.id))?.getState()).toBe('failed');
    } finally {
      await failed.queue.obliterate({ force: true });
      await failed.close();
    }
  });
});

describe('the queue dashboard with QUEUE_DASHBOARD_WRITABLE=true', () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ QUEUE_DASHBOARD_WRITABLE: 'true' });
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('retries a failed job and records the action in the ops audit trail', async () => {
    const failed = await failedJob(g);
    try {
      expect((await boardQueues(g, '?activeQueue=events&status=failed')).every((q) => !q.readOnlyMode)).toBe(
        true,
      );
      const retry = await fetch(`${dashboardUrl(g)}/api/queues/events/${failed.id}/retry`, {
        method: 'PUT',
        headers: bearer,
      });
      expect(retry.status).toBe(204);
      expect(await (await failed.queue.getJob(failed.id))?.getState()).toBe('waiting');
      // Written once the answer has gone (the retry happened whether or not the entry is).
      const trail = await eventually(async () => {
        const reply = await g.ops('GET', '/audit?action=opsQueueDashboard');
        expect(reply.body.data).toHaveLength(1);
        return reply;
      });
      expect(trail.body.data).toEqual([
        expect.objectContaining({
          action: 'opsQueueDashboard',
          method: 'PUT',
          path: `/ops/queues/api/queues/events/${failed.id}/retry`,
          status: 204,
        }),
      ]);
    } finally {
      await failed.queue.obliterate({ force: true });
      await failed.close();
    }
  });
});

/** The cookies a response sets, by name: value, or '' for one it clears. */
function setCookies(res: Response): Record<string, string> {
  const jar: Record<string, string> = {};
  for (const cookie of res.headers.getSetCookie()) {
    const pair = cookie.split(';')[0] as string;
    jar[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
  }
  return jar;
}

/** A Cookie header holding `jar`'s non-empty cookies, as a browser would send them. */
const cookieHeader = (jar: Record<string, string>) => ({
  cookie: Object.entries(jar)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}=${value}`)
    .join('; '),
});

/** What a browser sends when it opens a page. */
const navigating = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('operators on the queue dashboard: the sign-in form, its cookies, and Basic', () => {
  let g: TestGateway;
  const clock = movingClock();
  const ACCESS_TTL_MS = 900_000;
  beforeAll(async () => {
    g = await startTestGateway(
      { QUEUE_DASHBOARD_WRITABLE: 'true', LOGIN_IP_FAILURES: '1000' },
      undefined,
      clock.now,
    );
  });
  afterAll(async () => {
    await g?.stop();
  });

  const signInPage = () => `${dashboardUrl(g)}/sign-in`;
  const formSignIn = (email: string, password: string) =>
    fetch(signInPage(), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...navigating },
      body: new URLSearchParams({ email, password }).toString(),
    });
  /** An operator with `role`, signed in with the form: their session cookies. */
  async function browserSignIn(role: 'OPS_ADMIN' | 'SUPPORT') {
    const operator = await signInOperator(g, role);
    const res = await formSignIn(operator.email, GOOD_PASSWORD);
    expect(res.status).toBe(303);
    return { operator, jar: setCookies(res) };
  }
  const readQueues = (headers: Record<string, string>) =>
    fetch(`${dashboardUrl(g)}/api/queues`, { headers, redirect: 'manual' });
  const basicOf = (operator: SignedInOperator, password = GOOD_PASSWORD) => ({
    authorization: `Basic ${Buffer.from(`${operator.email}:${password}`).toString('base64')}`,
  });
  const deactivate = async (operator: SignedInOperator) =>
    expect(
      (await g.ops('PATCH', `/operators/${operator.id}`, { body: { status: 'DEACTIVATED' } })).status,
    ).toBe(200);
  const lastLoginAt = async (operator: SignedInOperator): Promise<Date> =>
    (await g.db.collection('operators').findOne({ email: operator.email }))?.lastLoginAt;

  it('serves a self-contained sign-in form under a strict content security policy', async () => {
    const res = await fetch(signInPage(), { headers: navigating });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain('<form method="post" action="/ops/queues/sign-in">');
    expect(html).not.toMatch(/<script|https?:\/\//);
    // Its one inline style is the one the policy allows, by hash.
    const style = /<style>([^<]*)<\/style>/.exec(html)?.[1] ?? '';
    expect(csp).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);

    // What was typed comes back escaped.
    const hostile = await formSignIn('"><script>alert(1)</script>', 'x');
    expect(hostile.status).toBe(400);
    const page = await hostile.text();
    expect(page).not.toContain('<script>');
    expect(page).toContain('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('sends a browser without a session to the sign-in page, and answers fetches 401 in the envelope', async () => {
    const page = await fetch(`${dashboardUrl(g)}/`, { headers: navigating, redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/ops/queues/sign-in');
    const api = await readQueues({ accept: 'application/json' });
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBeNull();
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
  });

  it('signs a SUPPORT operator in with cookies that read the dashboard, and refuses their retry', async () => {
    const operator = await signInOperator(g, 'SUPPORT');
    const res = await formSignIn(operator.email, GOOD_PASSWORD);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/ops/queues/');
    const cookies = res.headers.getSetCookie();
    expect(cookies.map((c) => c.split('=')[0]).sort()).toEqual(['ops_queues_access', 'ops_queues_refresh']);
    for (const cookie of cookies) {
      expect(cookie).toContain('; Path=/ops/queues;');
      expect(cookie).toContain('; HttpOnly');
      expect(cookie).toContain('; SameSite=Strict');
      // Plain http outside production (docs/decisions.md, "The queue dashboard's sign-in").
      expect(cookie).not.toContain('Secure');
    }
    const jar = setCookies(res);

    const page = await fetch(`${dashboardUrl(g)}/`, { headers: { ...navigating, ...cookieHeader(jar) } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Platform queues');
    const failed = await failedJob(g);
    try {
      const read = await readQueues(cookieHeader(jar));
      expect(read.status).toBe(200);
      expect(((await read.json()) as { queues: BoardQueue[] }).queues.map((q) => q.name)).toContain('events');
      const retry = await fetch(`${dashboardUrl(g)}/api/queues/events/${failed.id}/retry`, {
        method: 'PUT',
        headers: cookieHeader(jar),
      });
      expect(retry.status).toBe(403);
      expect(((await retry.json()) as { error: { message: string } }).error.message).toBe(
        'Your role SUPPORT lacks the capability ops.queues:write this endpoint needs',
      );
      expect(await (await failed.queue.getJob(failed.id))?.getState()).toBe('failed');
    } finally {
      await failed.queue.obliterate({ force: true });
      await failed.close();
    }
  });

  it('lets an OPS_ADMIN signed in with cookies retry a job, audited under their email', async () => {
    const { operator, jar } = await browserSignIn('OPS_ADMIN');
    const failed = await failedJob(g);
    try {
      const retry = await fetch(`${dashboardUrl(g)}/api/queues/events/${failed.id}/retry`, {
        method: 'PUT',
        headers: cookieHeader(jar),
      });
      expect(retry.status).toBe(204);
      expect(await (await failed.queue.getJob(failed.id))?.getState()).toBe('waiting');
      const trail = await eventually(async () => {
        const reply = await g.ops('GET', `/audit?action=opsQueueDashboard&actor=${operator.id}`);
        expect(reply.body.data).toHaveLength(1);
        return reply;
      });
      expect(trail.body.data).toEqual([
        expect.objectContaining({
          actor: `operator:${operator.id}`,
          actorKind: 'operator',
          actorEmail: operator.email,
          actorRole: 'OPS_ADMIN',
          method: 'PUT',
          path: `/ops/queues/api/queues/events/${failed.id}/retry`,
          status: 204,
        }),
      ]);
    } finally {
      await failed.queue.obliterate({ force: true });
      await failed.close();
    }
  });

  it('marks the cookies Secure when the request came over https', async () => {
    const operator = await signInOperator(g, 'SUPPORT');
    const res = await fetch(signInPage(), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-proto': 'https',
        ...navigating,
      },
      body: new URLSearchParams({ email: operator.email, password: GOOD_PASSWORD }).toString(),
    });
    expect(res.status).toBe(303);
    expect(res.headers.getSetCookie()).toEqual([
      expect.stringMatching(/^ops_queues_access=.*; Secure$/),
      expect.stringMatching(/^ops_queues_refresh=.*; Secure$/),
    ]);
  });

  it('answers a wrong password 401 with one generic message and no cookie, and throttles with Retry-After', async () => {
    const operator = await signInOperator(g, 'SUPPORT');
    const wrong = await formSignIn(operator.email, 'not-the-password-at-all');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    const html = await wrong.text();
    expect(html).toContain('Wrong email or password.');
    // The email typed is kept in the form; the password never comes back.
    expect(html).toContain(`value="${operator.email}"`);
    expect(html).not.toContain('not-the-password-at-all');
    const unknown = await formSignIn('nobody@ops.example', GOOD_PASSWORD);
    expect(unknown.status).toBe(401);
    expect(await unknown.text()).toContain('Wrong email or password.');

    // The operators' own throttle (LOGIN_ACCOUNT_FAILURES, 5), shared with POST /ops/auth/login.
    for (let i = 0; i < 4; i++)
      expect((await formSignIn(operator.email, 'still-wrong-password')).status).toBe(401);
    const throttled = await formSignIn(operator.email, GOOD_PASSWORD);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(throttled.headers.getSetCookie()).toEqual([]);
    expect(await throttled.text()).toContain('Too many failed sign-ins');
  });

  it('refuses a deactivated operator’s cookies at once, clearing them', async () => {
    const { operator, jar } = await browserSignIn('SUPPORT');
    expect((await readQueues(cookieHeader(jar))).status).toBe(200);
    await deactivate(operator);
    const refused = await readQueues(cookieHeader(jar));
    expect(refused.status).toBe(401);
    expect(setCookies(refused)).toEqual({ ops_queues_access: '', ops_queues_refresh: '' });
    const page = await fetch(`${dashboardUrl(g)}/`, {
      headers: { ...navigating, ...cookieHeader(jar) },
      redirect: 'manual',
    });
    expect([page.status, page.headers.get('location')]).toEqual([303, '/ops/queues/sign-in']);
  });

  it('refreshes an expired access token from the refresh cookie, once for concurrent requests', async () => {
    const { jar } = await browserSignIn('SUPPORT');
    clock.advance(ACCESS_TTL_MS + 60_000);
    // The page's fetches arrive together with the same expired cookies: one refresh serves them all.
    const [first, second] = await Promise.all([readQueues(cookieHeader(jar)), readQueues(cookieHeader(jar))]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const renewed = setCookies(first);
    expect(setCookies(second)).toEqual(renewed);
    expect(renewed.ops_queues_access).not.toBe(jar.ops_queues_access);
    expect(renewed.ops_queues_refresh).not.toBe(jar.ops_queues_refresh);
    const later = await readQueues(cookieHeader(renewed));
    expect(later.status).toBe(200);
    expect(setCookies(later)).toEqual({});
    // Once the access cookie's Max-Age has passed, a browser sends the refresh cookie alone.
    clock.advance(ACCESS_TTL_MS + 60_000);
    const alone = await readQueues(
      cookieHeader({ ops_queues_refresh: renewed.ops_queues_refresh as string }),
    );
    expect(alone.status).toBe(200);
    expect(Object.keys(setCookies(alone)).sort()).toEqual(['ops_queues_access', 'ops_queues_refresh']);
  });

  it('signs out: the session ends, and neither old cookie works again', async () => {
    const { operator, jar } = await browserSignIn('SUPPORT');
    const confirm = await fetch(`${dashboardUrl(g)}/sign-out`, { headers: navigating });
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('<form method="post" action="/ops/queues/sign-out">');
    const out = await fetch(`${dashboardUrl(g)}/sign-out`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...navigating, ...cookieHeader(jar) },
    });
    expect([out.status, out.headers.get('location')]).toEqual([303, '/ops/queues/sign-in']);
    expect(setCookies(out)).toEqual({ ops_queues_access: '', ops_queues_refresh: '' });
    expect((await readQueues(cookieHeader(jar))).status).toBe(401);
    expect(
      (await readQueues(cookieHeader({ ops_queues_refresh: jar.ops_queues_refresh as string }))).status,
    ).toBe(401);
    // The operator's other sessions are theirs to keep.
    expect((await readQueues({ authorization: `Bearer ${operator.accessToken}` })).status).toBe(200);
  });

  it('takes an operator’s email and password in Basic, checking the password once a minute', async () => {
    const operator = await signInOperator(g, 'SUPPORT');
    clock.advance(1_000);
    expect((await readQueues(basicOf(operator))).status).toBe(200);
    const checked = await lastLoginAt(operator);
    // Within the minute the same credentials are not checked again: no scrypt, no sign-in recorded.
    clock.advance(30_000);
    expect((await readQueues(basicOf(operator))).status).toBe(200);
    expect(await lastLoginAt(operator)).toEqual(checked);
    // A wrong password is never taken from the cache, nor a write from a SUPPORT operator.
    expect((await readQueues(basicOf(operator, 'not-the-password-at-all'))).status).toBe(401);
    const write = await fetch(`${dashboardUrl(g)}/api/queues/events/1/retry`, {
      method: 'PUT',
      headers: basicOf(operator),
    });
    expect(write.status).toBe(403);
    // After the minute, checked again.
    clock.advance(31_000);
    expect((await readQueues(basicOf(operator))).status).toBe(200);
    expect((await lastLoginAt(operator)).getTime()).toBeGreaterThan(checked.getTime());
  });

  it('counts Basic failures on the operators’ sign-in throttle, which the form shares', async () => {
    const operator = await signInOperator(g, 'SUPPORT');
    for (let i = 0; i < 5; i++) {
      const wrong = await readQueues(basicOf(operator, `wrong-password-${i}-long`));
      expect([wrong.status, wrong.headers.get('retry-after')]).toEqual([401, null]);
    }
    const throttled = await readQueues(basicOf(operator));
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await throttled.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect((await formSignIn(operator.email, GOOD_PASSWORD)).status).toBe(429);
  });

  it('refuses a deactivated operator’s Basic at once, within the minute', async () => {
    const operator = await signInOperator(g, 'SUPPORT');
    expect((await readQueues(basicOf(operator))).status).toBe(200);
    await deactivate(operator);
    const refused = await readQueues(basicOf(operator));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
  });
});
