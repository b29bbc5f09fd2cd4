/**
 * The REST contract on the gateway: `GET /openapi.json` (rest-compat/openapi.yaml, parsed once at
 * start) and a browsable reference at `/docs`, rendered by Swagger UI from the installed
 * swagger-ui-dist package: no CDN, no inline script, so the page runs under a strict CSP.
 */
import path from 'node:path';
import express, { Router, type RequestHandler } from 'express';
import type { OpenApiDocument } from '../rest-compat/openapi';
import { pageHeaders } from './page-policy';

export const DOCS_PATH = '/docs';
export const OPENAPI_JSON_PATH = '/openapi.json';

/** The folder of the installed Swagger UI bundle. */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/swagger-ui-bundle.js'));
/** The only files of the package the page needs. */
const SWAGGER_UI_FILES = new Set(['/swagger-ui.css', '/swagger-ui-bundle.js', '/favicon-32x32.png', '/favicon-16x16.png']);

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Bookstore REST API</title>
    <link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/assets/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/assets/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/init.js"></script>
  </body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an outside validator.
const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '${OPENAPI_JSON_PATH}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  });
});
`;

export function apiDocs(document: OpenApiDocument): Router {
  const json = JSON.stringify(document);
  const router = Router();

  router.get(OPENAPI_JSON_PATH, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json').send(json);
  });

  const page: RequestHandler = (_req, res) => {
    pageHeaders(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(PAGE);
  };
  router.get([DOCS_PATH, `${DOCS_PATH}/index.html`], page);

  router.get(`${DOCS_PATH}/init.js`, (_req, res) => {
    pageHeaders(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/javascript').send(INIT);
  });

  const assets = express.static(SWAGGER_UI_DIR, {
    index: false,
    redirect: false,
    dotfiles: 'ignore',
    // The package's version is pinned, but its file names carry no hash: revalidate after an hour.
    maxAge: '1h',
    setHeaders: pageHeaders,
  });
  router.use(`${DOCS_PATH}/assets`, (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !SWAGGER_UI_FILES.has(req.path)) {
      next();
      return;
    }
    assets(req, res, next);
  });

  return router;
}
