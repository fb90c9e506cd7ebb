import { signInAs, startTestGateway, type TestGateway } from './support';

/**
 * The dashboard's refresh-token cookie (docs/dashboard.md, "Sign-in cookie"):
 * `/auth/cookie/{login,refresh,logout}` keep the refresh token out of every body, in an HttpOnly,
 * SameSite=Strict cookie scoped to `/api/auth/cookie`; cross-site requests are refused; the JSON
 * routes of API clients are unchanged.
 */

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ LOGIN_IP_FAILURES: '1000', ANONYMOUS_LIMIT_POINTS: '100000' });
});

afterAll(async () => {
  await gw.stop();
});

const COOKIE_MODE = { 'x-requested-by': 'dashboard' };

/** The `name=value` of the dashboard cookie a response set, and its attributes. */
function refreshCookieOf(headers: Headers): { value: string; attributes: string[] } {
  const cookie = headers.getSetCookie().find((c) => c.startsWith('dashboard_refresh='));
  if (!cookie) throw new Error(`no dashboard_refresh cookie in ${JSON.stringify(headers.getSetCookie())}`);
  const [pair = '', ...attributes] = cookie.split(';').map((part) => part.trim());
  return { value: pair.slice('dashboard_refresh='.length), attributes };
}

async function userInCookieMode(role: 'ORG_ADMIN' | 'ORG_VIEWER' = 'ORG_ADMIN') {
  const org = await gw.register();
  const user = await signInAs(gw, org.apiKey, role);
  const login = await gw.api('POST', '/auth/cookie/login', {
    headers: COOKIE_MODE,
    body: { email: user.email, password: user.password },
  });
  expect(login.status).toBe(200);
  return { org, user, login, cookie: refreshCookieOf(login.headers) };
}

describe('cookie mode', () => {
  it('login sets the refresh token in an HttpOnly, SameSite=Strict cookie on /api/auth, never in the body', async () => {
    const { login, cookie } = await userInCookieMode();
    expect(login.body.data).toEqual({
      accessToken: expect.any(String),
      tokenType: 'Bearer',
      expiresIn: 900,
      refreshExpiresIn: 7 * 24 * 3600,
    });
    expect(JSON.stringify(login.body)).not.toContain(cookie.value);
    expect(cookie.value).toMatch(/^prt_/);
    expect(cookie.attributes).toEqual(
      expect.arrayContaining([
        'Path=/api/auth/cookie',
        `Max-Age=${7 * 24 * 3600}`,
        'HttpOnly',
        'SameSite=Strict',
      ]),
    );
    // Plain http on a test machine, not production: not Secure, or the browser would drop it.
    expect(cookie.attributes).not.toContain('Secure');
    const session = await gw.api('GET', '/auth/session', { token: login.body.data.accessToken });
    expect(session.status).toBe(200);
  });

  it('is Secure when a proxy in front says the request came over https', async () => {
    const org = await gw.register();
    const user = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    const login = await gw.api('POST', '/auth/cookie/login', {
      headers: { ...COOKIE_MODE, 'x-forwarded-proto': 'https' },
      body: { email: user.email, password: user.password },
    });
    expect(login.status).toBe(200);
    expect(refreshCookieOf(login.headers).attributes).toContain('Secure');
  });

  it('refresh spends the cookie and sets the next one; the spent one revokes the session', async () => {
    const { cookie } = await userInCookieMode();
    const refreshed = await gw.api('POST', '/auth/cookie/refresh', {
      headers: { ...COOKIE_MODE, cookie: `dashboard_refresh=${cookie.value}` },
    });
    expect(refreshed.status).toBe(200);
    expect(Object.keys(refreshed.body.data)).not.toContain('refreshToken');
    const next = refreshCookieOf(refreshed.headers);
    expect(next.value).not.toBe(cookie.value);
    const session = await gw.api('GET', '/auth/session', { token: refreshed.body.data.accessToken });
    expect(session.status).toBe(200);

    const replayed = await gw.api('POST', '/auth/cookie/refresh', {
      headers: { ...COOKIE_MODE, cookie: `dashboard_refresh=${cookie.value}` },
    });
    expect(replayed.status).toBe(401);
    const after = await gw.api('POST', '/auth/cookie/refresh', {
      headers: { ...COOKIE_MODE, cookie: `dashboard_refresh=${next.value}` },
    });
    expect(after.status).toBe(401);
  });

  it('refresh without the cookie is 401', async () => {
    const none = await gw.api('POST', '/auth/cookie/refresh', { headers: COOKIE_MODE });
    expect(none.status).toBe(401);
  });

  it('without X-Requested-By: dashboard every cookie route is 400 naming the header', async () => {
    const { cookie } = await userInCookieMode();
    for (const path of ['/auth/cookie/refresh', '/auth/cookie/logout']) {
      const refused = await gw.api('POST', path, {
        headers: { cookie: `dashboard_refresh=${cookie.value}` },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'X-Requested-By' })]);
    }
    const still = await gw.api('POST', '/auth/cookie/refresh', {
      headers: { ...COOKIE_MODE, cookie: `dashboard_refresh=${cookie.value}` },
    });
    expect(still.status).toBe(200);
  });

  it('logout revokes the cookie’s session, its access tokens too, and clears the cookie', async () => {
    const { login, cookie } = await userInCookieMode();
    const out = await gw.api('POST', '/auth/cookie/logout', {
      headers: { ...COOKIE_MODE, cookie: `dashboard_refresh=${cookie.value}` },
    });
    expect(out.status).toBe(200);
    expect(out.body.data).toEqual({ loggedOut: true });
    const cleared = refreshCookieOf(out.headers);
    expect(cleared.value).toBe('');
    expect(cleared.attributes).toContain('Max-Age=0');
    expect((await gw.api('GET', '/auth/session', { token: login.body.data.accessToken })).status).toBe(401);
    const refreshed = await gw.api('POST', '/auth/cookie/refresh', {
      headers: { ...COOKIE_MODE, cookie: `dashboard_refresh=${cookie.value}` },
    });
    expect(refreshed.status).toBe(401);
  });

  it('logout without a cookie still answers 200 and clears it', async () => {
    const out = await gw.api('POST', '/auth/cookie/logout', { headers: COOKIE_MODE });
    expect(out.status).toBe(200);
    expect(refreshCookieOf(out.headers).attributes).toContain('Max-Age=0');
  });
});

describe('cross-site requests in cookie mode', () => {
  const crossSite: Array<[string, Record<string, string>]> = [
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['an Origin of another site', { origin: 'https://evil.example' }],
    ['Origin: null', { origin: 'null' }],
  ];

  it.each(crossSite)('refresh with %s is 403 and spends nothing', async (_name, headers) => {
    const { cookie } = await userInCookieMode();
    const refused = await gw.api('POST', '/auth/cookie/refresh', {
      headers: { ...COOKIE_MODE, ...headers, cookie: `dashboard_refresh=${cookie.value}` },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.getSetCookie()).toEqual([]);
    const still = await gw.api('POST', '/auth/cookie/refresh', {
      headers: { ...COOKIE_MODE, cookie: `dashboard_refresh=${cookie.value}` },
    });
    expect(still.status).toBe(200);
  });

  it.each(crossSite)('logout with %s is 403 and the session lives on', async (_name, headers) => {
    const { login, cookie } = await userInCookieMode();
    const refused = await gw.api('POST', '/auth/cookie/logout', {
      headers: { ...COOKIE_MODE, ...headers, cookie: `dashboard_refresh=${cookie.value}` },
    });
    expect(refused.status).toBe(403);
    expect((await gw.api('GET', '/auth/session', { token: login.body.data.accessToken })).status).toBe(200);
  });

  it('login with a cross-site Origin is 403 (no sign-in forced on a victim’s browser)', async () => {
    const org = await gw.register();
    const user = await signInAs(gw, org.apiKey, 'ORG_VIEWER');
    const refused = await gw.api('POST', '/auth/cookie/login', {
      headers: { ...COOKIE_MODE, origin: 'https://evil.example' },
      body: { email: user.email, password: user.password },
    });
    expect(refused.status).toBe(403);
  });

  it('the gateway’s own origin and Sec-Fetch-Site: same-origin pass', async () => {
    const { cookie } = await userInCookieMode();
    const origin = new URL(gw.gateway.partnerUrl).origin;
    const refreshed = await gw.api('POST', '/auth/cookie/refresh', {
      headers: {
        ...COOKIE_MODE,
        origin,
        'sec-fetch-site': 'same-origin',
        cookie: `dashboard_refresh=${cookie.value}`,
      },
    });
    expect(refreshed.status).toBe(200);
  });
});

describe('the JSON routes (API clients) are unchanged', () => {
  it('login and refresh answer the refresh token in the body and set no cookie', async () => {
    const org = await gw.register();
    const user = await signInAs(gw, org.apiKey, 'ORG_OPERATOR');
    const login = await gw.api('POST', '/auth/login', {
      body: { email: user.email, password: user.password },
    });
    expect(login.body.data.refreshToken).toMatch(/^prt_/);
    expect(login.headers.getSetCookie()).toEqual([]);
    const refreshed = await gw.api('POST', '/auth/refresh', {
      body: { refreshToken: login.body.data.refreshToken },
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data.refreshToken).toMatch(/^prt_/);
    expect(refreshed.headers.getSetCookie()).toEqual([]);
  });

  it('the cookie holds an ordinary refresh token of the same sessions', async () => {
    const { cookie } = await userInCookieMode();
    // The cookie's token is a refresh token like any other; a page that could read it could
    // spend it on the JSON route too, which is why no script can (HttpOnly).
    const refreshed = await gw.api('POST', '/auth/refresh', { body: { refreshToken: cookie.value } });
    expect(refreshed.status).toBe(200);
  });
});
