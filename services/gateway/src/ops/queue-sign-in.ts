import { createHash } from 'node:crypto';
import { loginBody } from '@parametric/contracts';
import { AppError } from '@parametric/http';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { retryAfterOf } from '../auth/ops-caller';
import type { SessionCookies, SessionTokens } from '../auth/queue-session';

/** An email and a password, form-encoded. */
const MAX_FORM_BYTES = 4 * 1024;

const STYLE = [
  'body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1f2328;margin:0}',
  'main{max-width:22rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px #0002}',
  'h1{font-size:1.25rem;margin:0 0 1rem}',
  'label{display:block;margin:.75rem 0 .25rem}',
  'input{box-sizing:border-box;width:100%;padding:.5rem;font:inherit}',
  'button{margin-top:1.25rem;padding:.5rem 1rem;font:inherit;cursor:pointer}',
  '.error{color:#a40e26;background:#ffebe9;padding:.5rem;border-radius:.25rem}',
].join('');

/**
 * No script, no asset from anywhere, the one inline style by its hash, the form posted only here,
 * the page framed nowhere.
 */
const CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export interface QueueSignInDeps {
  /** Where the dashboard is under the mount (`/queues` under `/ops`): signed in goes there. */
  path: string;
  /** The operators' own sign-in and sign-out (operators/domain.ts), declared, not imported. */
  operators: {
    login(input: { email: string; password: string }, clientIp: string): Promise<SessionTokens>;
    logout(refreshToken: string): Promise<unknown>;
  };
  cookies: SessionCookies;
  clientIp: (req: Request) => string;
}

/**
 * The queue dashboard's sign-in for a browser (issue 25; docs/ops.md, "Queue dashboard"): a
 * form, answered by the operators' sign-in (its password check and throttle), whose tokens go
 * into the dashboard's session cookies (auth/queue-session.ts); and sign-out, which ends the
 * session. HTML pages and a form body, not the envelope: browser-only routes, not in the ops
 * OpenAPI document (services/gateway/test/docs.test.ts lists them). Mounted with the ops token
 * endpoint, before the caller is resolved and before the JSON body reader.
 */
export function queueSignIn(deps: QueueSignInDeps): Router {
  const signIn = `${deps.path}/sign-in`;
  const signOut = `${deps.path}/sign-out`;
  const parse = express.urlencoded({
    extended: false,
    limit: MAX_FORM_BYTES,
    type: 'application/x-www-form-urlencoded',
  });
  const router = Router();
  // Addresses the browser is given: under the mount (`/ops`), wherever the router is.
  const absolute = (req: Request, path: string) => `${req.baseUrl}${path}`;

  router.get(signIn, (req: Request, res: Response) => {
    page(res, 200, signInForm(absolute(req, signIn), { email: '' }));
  });

  router.post(signIn, parse, async (req: Request, res: Response, next: NextFunction) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const typed = typeof form.email === 'string' ? form.email : '';
    const input = loginBody.safeParse({ email: form.email, password: form.password });
    if (!input.success) {
      page(
        res,
        400,
        signInForm(absolute(req, signIn), { email: typed, error: 'Enter your operator email and password.' }),
      );
      return;
    }
    try {
      const tokens = await deps.operators.login(input.data, deps.clientIp(req));
      deps.cookies.set(req, res, tokens);
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, absolute(req, `${deps.path}/`));
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNAUTHORIZED') {
        // One answer for an unknown email, a wrong password and an operator not active.
        page(
          res,
          401,
          signInForm(absolute(req, signIn), { email: typed, error: 'Wrong email or password.' }),
        );
        return;
      }
      if (err instanceof AppError && err.code === 'RATE_LIMIT_EXCEEDED') {
        const retryAfter = retryAfterOf(err);
        res.setHeader('Retry-After', String(retryAfter));
        page(
          res,
          429,
          signInForm(absolute(req, signIn), {
            email: typed,
            error: `Too many failed sign-ins; try again in ${retryAfter} s.`,
          }),
        );
        return;
      }
      next(err);
    }
  });

  // bull-board's header links here ("Sign out"); a link is a GET, and a GET changes nothing.
  router.get(signOut, (req: Request, res: Response) => {
    page(res, 200, signOutForm(absolute(req, signOut)));
  });

  router.post(signOut, async (req: Request, res: Response) => {
    const { refresh } = deps.cookies.read(req);
    // Ends the session, so its access token stops at once too (operators/domain.ts `resolve`).
    if (refresh !== undefined) await deps.operators.logout(refresh);
    deps.cookies.clear(req, res);
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, absolute(req, signIn));
  });
  return router;
}

function page(res: Response, status: number, body: string): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.send(body);
}

function layout(title: string, content: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${content}
</main>
</body>
</html>
`;
}

function signInForm(action: string, state: { email: string; error?: string }): string {
  return layout(
    'Sign in - Platform queues',
    `<h1>Platform queues</h1>
<p>Sign in with your operator account.</p>
${state.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(state.error)}</p>`}
<form method="post" action="${escapeHtml(action)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(state.email)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

function signOutForm(action: string): string {
  return layout(
    'Sign out - Platform queues',
    `<h1>Platform queues</h1>
<p>Sign out of the queue dashboard on this browser?</p>
<form method="post" action="${escapeHtml(action)}">
<button type="submit">Sign out</button>
</form>`,
  );
}

/** Text and attribute values alike: the five characters HTML gives a meaning. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
