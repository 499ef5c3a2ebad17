// GET /docs (API reference UI, served by the binary: no internet needed) and GET /docs/json (OpenAPI 3.0.3, made valid by
// http/openapi.ts; test/http/openapi.test.ts validates what is served).
//
// The document is made by @elysiajs/swagger's own functions (registerSchemaPath, filterPaths) over the app's routes, as
// its plugin does, but from its `utils` entry, loaded at the first request: the plugin's main entry also loads its
// Scalar page and Scalar's zod schemas, which cost start-up ~10-15 ms for a page Timbre replaces anyway
// (docs/decisions/performance.md «Issue 31, session 14»).
import { Elysia, type HTTPMethod } from 'elysia'
import type { TSchema } from '@sinclair/typebox'
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

/** The document's fixed parts: what the plugin's `documentation` option held (test/http/openapi.test.ts compares). */
export const DOCS_DOCUMENTATION = {
  info: { title: 'Timbre: facturación electrónica (DTE)', description: DESCRIPTION, version: API_VERSION },
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
}

/**
 * The methods the plugin documents, as it does: a route on ALL under each of them, OPTIONS included; a route of its own
 * method when it is one of them and not OPTIONS.
 */
const DOCUMENTED_METHODS: readonly HTTPMethod[] = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']
const methodsOf = (method: string): readonly HTTPMethod[] =>
  method === 'ALL' ? DOCUMENTED_METHODS : method !== 'OPTIONS' && DOCUMENTED_METHODS.includes(method as HTTPMethod) ? [method as HTTPMethod] : []

/** What Elysia gives a plugin about the whole app (protected in its types; the swagger plugin reads the same). */
interface AppRoutes {
  getGlobalRoutes(): ReadonlyArray<{ method: string; path: string; hooks: { detail?: { hide?: boolean }; type?: string } & Record<string, unknown> }>
  getGlobalDefinitions?(): { type: Record<string, TSchema> }
}

/** The plugin's document (the same object, key for key), then made valid OpenAPI 3.0.3 by openapi.ts. */
async function openApiDocument(app: AppRoutes): Promise<Record<string, unknown>> {
  const { registerSchemaPath, filterPaths } = await import('@elysiajs/swagger/utils')
  const models = app.getGlobalDefinitions?.().type ?? {}
  const schema = {}
  for (const route of app.getGlobalRoutes()) {
    if (route.hooks?.detail?.hide === true) continue
    for (const method of methodsOf(route.method)) registerSchemaPath({ schema, hook: route.hooks, method, path: route.path, models, contentType: route.hooks.type })
  }
  return toOpenApi303({
    openapi: '3.0.3',
    ...DOCS_DOCUMENTATION,
    paths: filterPaths(schema, { excludeStaticFile: false, exclude: [/^\/docs/] }),
    components: { ...DOCS_DOCUMENTATION.components, schemas: { ...models, ...DOCS_DOCUMENTATION.components.schemas } },
  })
}

export const docsRoutes = () => {
  // The routes never change after start, so the document is made once, on the first request. The RCV's files
  // (`/rcv/{periodo}/compras.csv`) are operations: no path is dropped for its dot (the plugin's excludeStaticFile), and
  // /docs itself is left out.
  let served: Promise<Record<string, unknown>> | undefined
  const docs = new Elysia({ normalize: false })
  return docs
    .get(
      SPEC_PATH,
      ({ set }) => {
        Object.assign(set.headers, FILE_HEADERS)
        // A failed first try (a chunk that did not load) is not kept: the next request makes it again.
        served ??= openApiDocument(docs as unknown as AppRoutes).catch((err: unknown) => {
          served = undefined
          throw err
        })
        return served
      },
      { detail: { hide: true } },
    )
    .get('/docs', () => new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8', ...PAGE_HEADERS } }), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui-bundle.js', asset(Bun.file(uiBundle), 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/assets/init.js', asset(INIT, 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui.css', asset(Bun.file(uiCss), 'text/css; charset=utf-8'), { detail: { hide: true } })
}
