import { DASHBOARD_COOKIE_PATH, DASHBOARD_REFRESH_COOKIE } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import type { Request } from 'express';
import { cookieIsSecure, parseCookies } from './queue-session';

/**
 * The partner dashboard's refresh-token cookie (docs/dashboard.md, "Sign-in cookie";
 * docs/decisions.md, "The dashboard's refresh-token cookie"). The dashboard keeps its access
 * token in memory and never sees the refresh token: login and refresh set it in an HttpOnly,
 * SameSite=Strict cookie sent only to `/api/auth/cookie`, so a script injected into the page can
 * use the session while the page is open but cannot carry it away.
 *
 * Cross-site request forgery: the cookie routes require the `X-Requested-By` header, which a page of another site can only send after a CORS preflight the gateway never grants; a
 * browser that says the request is cross-site (`Sec-Fetch-Site`) or from another origin
 * (`Origin`) is refused as well, so SameSite is not the only guard.
 */
export interface DashboardCookie {
  /** Refuses a request a browser marks as coming from another site or origin. */
  assertSameOrigin(): void;
  /** The refresh token the browser sent, if any. */
  read(): string | undefined;
  /** The `Set-Cookie` value that stores `refreshToken` for `maxAgeSeconds`. */
  set(refreshToken: string, maxAgeSeconds: number): string;
  /** The `Set-Cookie` value that removes it. */
  clear(): string;
}

const crossSite = () =>
  AppError.forbidden('The sign-in cookie is for the dashboard’s own pages; a cross-site request is refused');

export function dashboardCookie(req: Request, options: { production: boolean }): DashboardCookie {
  const attributes = (maxAgeSeconds: number) =>
    `Path=${DASHBOARD_COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${
      cookieIsSecure(req, options.production) ? '; Secure' : ''
    }`;
  return {
    assertSameOrigin() {
      const site = req.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin') throw crossSite();
      const origin = req.headers.origin;
      if (origin === undefined) return;
      let host: string | null = null;
      try {
        host = new URL(origin).host;
      } catch {
        // `Origin: null` (a sandboxed frame, a redirect across sites) or garbage: not this origin.
      }
      if (host === null || host.toLowerCase() !== req.host.toLowerCase()) throw crossSite();
    },
    read: () => parseCookies(req.headers.cookie ?? '')[DASHBOARD_REFRESH_COOKIE],
    set: (refreshToken, maxAgeSeconds) =>
      `${DASHBOARD_REFRESH_COOKIE}=${refreshToken}; ${attributes(maxAgeSeconds)}`,
    clear: () => `${DASHBOARD_REFRESH_COOKIE}=; ${attributes(0)}`,
  };
}
