import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '@parametric/http';
import express, { type Response, Router } from 'express';

/**
 * The partner dashboard's files (issue 28; docs/dashboard.md), built by services/dashboard to
 * static files and served here on the partner port at `/dashboard/`. The app calls nothing but
 * the public partner API under `/api`, with the signed-in user's bearer token.
 */
export const DASHBOARD_PATH = '/dashboard';

/** Where services/dashboard's build writes, from this file in the sources and in the image alike. */
export const DASHBOARD_BUILD_DIR = path.resolve(__dirname, '..', '..', '..', 'dashboard', 'dist');

/**
 * Scripts, styles and data only from this origin, and no inline script or style at all: a value
 * an attacker slips into a page cannot run. The page may not be framed (clickjacking).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** A year: file names under assets/ carry a hash of their content, so a new build has new names. */
const ASSET_MAX_AGE_SECONDS = 365 * 24 * 3600;

function secureHeaders(res: Response) {
  res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

/**
 * `GET /dashboard/` (index.html, never cached: it names the current build's assets) and
 * `GET /dashboard/assets/*` (hashed, immutable). Without a build, the page says how to make one
 * (`npm start` builds it; an image ships it).
 */
export function dashboardAssets(dir: string = DASHBOARD_BUILD_DIR): Router {
  const router = Router();
  const indexFile = path.join(dir, 'index.html');
  let index: string | undefined;
  const indexHtml = () => {
    index ??= existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;
    return index;
  };
  router.use((req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    secureHeaders(res);
    next();
  });
  // Middleware, not an express route: the page is no API route, and the routes the gateway
  // mounts are held to the contracts (services/gateway/test/docs.test.ts).
  router.use((req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || (req.path !== '/' && req.path !== '/index.html'))
      return next();
    // `/dashboard` without its slash: the page's relative URLs need the directory.
    if (req.originalUrl.split('?')[0] === DASHBOARD_PATH) return res.redirect(308, `${DASHBOARD_PATH}/`);
    const html = indexHtml();
    res.setHeader('Cache-Control', 'no-cache');
    if (html === undefined)
      return res
        .status(503)
        .type('text/plain')
        .send('The dashboard is not built: run `npm run build -w @parametric/dashboard` (npm start does).\n');
    res.type('html').send(html);
  });
  router.use(
    '/assets',
    express.static(path.join(dir, 'assets'), {
      index: false,
      fallthrough: true,
      immutable: true,
      maxAge: ASSET_MAX_AGE_SECONDS * 1000,
    }),
  );
  router.use((req, _res, next) =>
    next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.originalUrl}`)),
  );
  return router;
}
