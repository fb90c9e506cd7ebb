import path from 'node:path';
import {
  getApiDocs,
  getOpenApiDocument,
  getOpsOpenApiDocument,
  opsDocument,
  partnerDocument,
} from '@parametric/contracts';
import { AppError, type Binding, implement, raw } from '@parametric/http';
import express, { Router } from 'express';

/** swagger-ui-dist's own files, served from the package: the page needs nothing from outside. */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = new Set(['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-32x32.png', 'favicon-16x16.png']);

// Relative URLs: the page is `/api/docs`, so they resolve under `/api/` whatever host or proxy serves it.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Parametric insurance partner API</title>
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/assets/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an online validator.
const INIT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
});
`;

/** `/docs/assets/*`: the docs page's scripts and styles (not API routes, so not in the document). */
export function docsAssets(): Router {
  const router = Router();
  router.use('/docs/assets/init.js', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    res.type('application/javascript').send(INIT);
  });
  router.use(
    '/docs/assets',
    (req, _res, next) =>
      ASSETS.has(req.path.slice(1))
        ? next()
        : next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.originalUrl}`)),
    express.static(SWAGGER_UI_DIR, { index: false, fallthrough: false, maxAge: '1h' }),
  );
  return router;
}

// Serialised once, on first request: the declarations do not change while the process runs.
let partnerJsonText: string | undefined;
let opsJsonText: string | undefined;
const partnerJson = () => {
  partnerJsonText ??= JSON.stringify(partnerDocument());
  return partnerJsonText;
};
const opsJson = () => {
  opsJsonText ??= JSON.stringify(opsDocument());
  return opsJsonText;
};

/** `GET /api/openapi.json` and `GET /api/docs`: no key needed. */
export const docsRoutes: Binding<unknown>[] = [
  implement(getOpenApiDocument, async () => raw(partnerJson())),
  implement(getApiDocs, async () => raw(PAGE)),
];

/** `GET /ops/openapi.json` on the ops port (behind the ops token). */
export const opsDocsRoutes: Binding<unknown>[] = [
  implement(getOpsOpenApiDocument, async () => raw(opsJson())),
];
