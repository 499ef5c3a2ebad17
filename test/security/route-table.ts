// The API's operations, read from the app itself so a new route is covered by the security checks without editing
// them (issue 18, "Security checks, generated so new routes are covered"). The source is the OpenAPI document the
// server serves at /docs/json; `elysiaOperations` reads Elysia's own route table so a test can prove the document
// leaves no API route out (a route hidden from the docs would otherwise escape every generated check).
import { API_PREFIX, createHttpApp } from '../../src/http/app'
import type { TestServer } from '../support/server'

export const API = API_PREFIX

export interface Operation {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
  /** As the document writes it: `/api/v1/billing/dte/{id}`. */
  readonly path: string
  readonly operationId: string
  readonly hasBody: boolean
  /** Names of the query parameters the operation requires. */
  readonly requiredQuery: readonly string[]
  /** Names of every query parameter it takes. */
  readonly query: readonly string[]
  /** `METHOD path`, how failures name the operation. */
  readonly name: string
}

type DocOperation = {
  operationId?: string
  requestBody?: unknown
  parameters?: Array<{ in: string; name: string; required?: boolean }>
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH'])

/** Every operation of the served document, in its order. */
export async function apiOperations(s: TestServer): Promise<Operation[]> {
  const doc = (await s.request('GET', '/docs/json')).json as { paths: Record<string, Record<string, DocOperation>> }
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => METHODS.has(m.toUpperCase()))
      .map(([m, op]) => {
        const method = m.toUpperCase() as Operation['method']
        return {
          method,
          path,
          operationId: op.operationId ?? `${method} ${path}`,
          hasBody: op.requestBody !== undefined,
          requiredQuery: (op.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => p.name),
          query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
          name: `${method} ${path}`,
        }
      }),
  )
}

/** `METHOD path` of every route Elysia serves under the API prefix, path params written as the document writes them. */
export function elysiaOperations(s: TestServer): string[] {
  // A second app over the same deps: building it only registers routes (it is never served), which is all we read.
  const app = createHttpApp(s.server.deps, { jobsRunning: () => true, isShuttingDown: () => false, sii: () => ({ last_ok_at: null, oldest_pending_s: null }) })
  return app.routes
    .filter((r) => METHODS.has(r.method) && r.path.startsWith(`${API}/`))
    .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z_]\w*)/g, '{$1}').replace(/\/$/, '')}`)
}

/**
 * The concrete path of `op` for `ids`: each path parameter takes the id of the collection named just before it
 * (`/webhooks/{id}/deliveries/{deliveryId}` → ids.webhooks, ids.deliveries). A collection with no id in `ids` throws
 * naming the operation, so a new kind of resource forces whoever adds it to give the checks one to try.
 */
/**
 * Path parameters that name no resource of a company: `{periodo}` is a month (DESIGN §16). They are filled with a value
 * every company shares, so the operation is tried as one without an id.
 */
export const KIND_PARAMS: Readonly<Record<string, () => string>> = {
  periodo: () => {
    const santiago = new Date(Date.now() - 4 * 3600_000)
    return `${santiago.getUTCFullYear()}${String(santiago.getUTCMonth() + 1).padStart(2, '0')}`
  },
}

export function fillPath(op: Operation, ids: Readonly<Record<string, string>>): string {
  const parts = op.path.split('/')
  return parts
    .map((part, i) => {
      if (!part.startsWith('{')) return part
      const kind = KIND_PARAMS[part.slice(1, -1)]
      if (kind) return kind()
      const collection = parts[i - 1]!
      const id = ids[collection]
      if (id === undefined) throw new Error(`${op.name}: no resource of the company under "${collection}" to try it with; create one in test/security/company.ts`)
      return id
    })
    .join('/')
}

export const hasPathId = (op: Operation) => (op.path.match(/\{(\w+)\}/g) ?? []).some((p) => KIND_PARAMS[p.slice(1, -1)] === undefined)
