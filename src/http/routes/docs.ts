// GET /docs (API reference UI, served by the binary: no internet needed) and GET /docs/json (OpenAPI 3.0.3, made valid by
// http/openapi.ts; test/http/openapi.test.ts validates what is served).
import { Elysia } from 'elysia'
import { swagger } from '@elysiajs/swagger'
import uiBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import uiCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import { API_VERSION } from '../../version'
import { toOpenApi303 } from '../openapi'
import { ErrorEnvelopeSchema } from '../../contracts/common'

const PAGE = `<!doctype html>
<html lang="es">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Timbre API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`

// A file, not an inline <script>, so the page's policy needs no 'unsafe-inline' for scripts. validatorUrl null: Swagger
// UI would otherwise load a badge from validator.swagger.io (the docs need no internet, DESIGN §12).
const INIT = `window.ui = SwaggerUIBundle({ url: '/docs/json', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true, validatorUrl: null })\n`

/**
 * The docs are served to browsers without a credential (issue 18, test/security/docs-headers.test.ts): never framed
 * (clickjacking), never sniffed into another type, no referrer sent elsewhere. The page runs and styles itself only with
 * its own files (Swagger UI sets styles through the DOM, which style-src does not govern), calls the API on this origin
 * (connect-src: "Try it out"), and its CSS draws icons as data: images. Everything else, /docs/json included, loads nothing.
 */
const BASE_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'no-referrer' } as const
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')
const FILE_CSP = "default-src 'none'; frame-ancestors 'none'"
const PAGE_HEADERS = { ...BASE_HEADERS, 'Content-Security-Policy': PAGE_CSP }
const FILE_HEADERS = { ...BASE_HEADERS, 'Content-Security-Policy': FILE_CSP }

const DESCRIPTION = [
  'API REST de facturación electrónica chilena (DTE) autoalojada.',
  'Autenticación: `X-Api-Key` (lectura, o escritura si se creó con --write) o `Authorization: Bearer` (JWT RS256).',
  'Errores: sobre de error (ErrorResponse) con `code`, `message`, `action` (qué hacer), `details` en notación de puntos y `context.request_id`.',
  'Las operaciones marcadas `x-timbre-extension` no están en la especificación 0.2.0 y son aditivas.',
].join('\n\n')

const asset = (body: string | Bun.BunFile, type: string) => () =>
  new Response(body, { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400', ...FILE_HEADERS } })

const SPEC_PATH = '/docs/json'

export const docsRoutes = () => {
  // The plugin's document is JSON Schema 2020-12 under an "openapi: 3.0.3" label; the routes never change after start,
  // so the fixed document (openapi.ts) is made once, on the first request. Registered before the plugin so it wraps
  // the plugin's own route, and local: no other route sees it.
  let served: Record<string, unknown> | undefined
  return new Elysia({ normalize: false })
    .onAfterHandle(({ route, response, set }) => {
      if (route !== SPEC_PATH) return
      Object.assign(set.headers, FILE_HEADERS)
      served ??= toOpenApi303(response as Record<string, unknown>)
      return served
    })
    .use(
      swagger({
        path: '/docs',
        specPath: SPEC_PATH,
        provider: 'swagger-ui',
        exclude: [/^\/docs/],
        // The plugin drops every path with a dot as a static file; the RCV's files (`/rcv/{periodo}/compras.csv`) are
        // operations, and /docs (the only static files) is excluded above.
        excludeStaticFile: false,
        documentation: {
          info: { title: 'Timbre: facturación electrónica (DTE)', version: API_VERSION, description: DESCRIPTION },
          servers: [{ url: '/' }],
          tags: [
            { name: 'DTE' },
            { name: 'CAF' },
            { name: 'Empresa' },
            { name: 'Webhooks' },
            { name: 'Clientes' },
            { name: 'Productos' },
            { name: 'Operación' },
          ],
          components: {
            securitySchemes: {
              ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
              BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
            },
            // Every error response points here (ErrorEnvelopeSchema's $id), instead of repeating the envelope.
            schemas: { ErrorResponse: ErrorEnvelopeSchema },
          },
          security: [{ ApiKeyAuth: [] }, { BearerAuth: [] }],
        },
      }),
    )
    // Registered after the plugin: replaces its page, which loads the UI from a CDN.
    .get('/docs', () => new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8', ...PAGE_HEADERS } }), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui-bundle.js', asset(Bun.file(uiBundle), 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/assets/init.js', asset(INIT, 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui.css', asset(Bun.file(uiCss), 'text/css; charset=utf-8'), { detail: { hide: true } })
}
