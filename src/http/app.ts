// The Elysia application: routing, validation, handlers and the single error mapping. Authentication, request ids,
// body limits and logs sit one layer out, in server.ts, so they hold for every answer, routed or not.
import { Elysia } from 'elysia'
import { TimbreError, type FieldError } from '../errors'
import type { Deps } from '../services/deps'
import { envelopeOf, errorForThrown } from './errors'
import { requestInfo } from './request-context'
import { docsRoutes } from './routes/docs'
import { empresaRoutes } from './routes/empresa'
import { opsRoutes, type Readiness } from './routes/ops'
import { fieldErrorsFromTypeBox } from '../contracts/validation'
import { API_PREFIX } from './prefix'
import { cafRoutes } from './routes/caf'
import { dteRoutes } from './routes/dte'
import { webhookRoutes } from './routes/webhooks'
import { dtePdfRoutes } from './routes/dte-pdf'
import { certificadoRoutes } from './routes/certificado'
import { clienteRoutes } from './routes/clientes'
import { productoRoutes } from './routes/productos'
import { intercambioRoutes } from './routes/intercambio'
import { certificacionRoutes } from './routes/certificacion'
import { recibidoRoutes } from './routes/recibidos'
import { rcvRoutes } from './routes/rcv'

export { API_PREFIX }

type ElysiaValidationError = { all: Parameters<typeof fieldErrorsFromTypeBox>[0]; type?: string }

function validationDetails(error: unknown): FieldError[] {
  const v = error as ElysiaValidationError
  const details = fieldErrorsFromTypeBox(v.all ?? [])
  return details.length > 0 ? details : [{ field: v.type ?? 'body', code: 'INVALID_TYPE', message: 'Valor inválido.' }]
}

/** Route table → methods allowed on a concrete path, for 405 and its Allow header (DESIGN §12). */
function methodsFor(app: { routes: ReadonlyArray<{ method: string; path: string }> }, path: string): string[] {
  const methods = new Set<string>()
  for (const route of app.routes) {
    const pattern = new RegExp(`^${route.path.replace(/:[^/]+/g, '[^/]+').replace(/\/$/, '')}/?$`)
    if (route.method !== 'ALL' && pattern.test(path)) methods.add(route.method)
  }
  if (methods.has('GET')) methods.add('HEAD')
  return [...methods].sort()
}

export function createHttpApp(deps: Deps, readiness: Readiness) {
  const app = new Elysia({ normalize: false })
    .onError({ as: 'global' }, ({ code, error, request, set }) => {
      const info = requestInfo(request)
      let err: TimbreError
      if (error instanceof TimbreError) err = error
      else if (code === 'VALIDATION') err = new TimbreError('VALIDATION_ERROR', { details: validationDetails(error) })
      else if (code === 'PARSE')
        err = new TimbreError('VALIDATION_ERROR', { details: [{ field: 'body', code: 'INVALID_FORMAT', message: 'El cuerpo no es JSON válido.' }] })
      else if (code === 'NOT_FOUND') {
        const allow = methodsFor(app, new URL(request.url).pathname)
        if (allow.length > 0) set.headers['allow'] = allow.join(', ')
        err = new TimbreError(allow.length > 0 ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND')
      } else {
        const thrown = errorForThrown(error, deps.log, { request_id: info.id, route: info.route })
        for (const [name, value] of Object.entries(thrown.headers)) set.headers[name.toLowerCase()] = value
        err = thrown.error
      }
      const { status, body } = envelopeOf(err, info.id)
      set.status = status
      return body
    })
    .onTransform({ as: 'global' }, ({ request, route }) => {
      requestInfo(request).route = route
    })
    .use(docsRoutes())
    .use(opsRoutes(deps, readiness))
    .group(API_PREFIX, (api) => api.use(empresaRoutes(deps)).use(certificadoRoutes(deps)).use(cafRoutes(deps)).use(dteRoutes(deps)).use(dtePdfRoutes(deps)).use(clienteRoutes(deps)).use(productoRoutes(deps)).use(webhookRoutes(deps)))
    .group(API_PREFIX, (api) => api.use(intercambioRoutes(deps)))
    .group(API_PREFIX, (api) => api.use(recibidoRoutes(deps)))
    .group(API_PREFIX, (api) => api.use(certificacionRoutes(deps)))
    .group(API_PREFIX, (api) => api.use(rcvRoutes(deps)))
  return app
}

export type HttpApp = ReturnType<typeof createHttpApp>
