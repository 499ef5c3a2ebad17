// What the fuzzer aims at: a running server (in process for npm test, the compiled binary for the soak), company A
// with one of every resource (test/security/company.ts), A's read key, company B's write key, the route table and the
// request schemas of the served /docs/json, and a valid body for every write, so that only the injected faults refuse it.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { provisionCompanyA, QUIET_SERVER, type CompanyA } from '../company'
import { apiOperations } from '../route-table'
import { requester, type Tenant, type TestServer } from '../../support/server'
import type { FuzzWorld, JsonSchema } from './mutations'

type DocOperation = { requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }

/** Bodies the API would accept from A (or answer without a change: A's CAF again is 409, A's envelope again is 200). */
function validBodies(A: CompanyA, api: string): Record<string, () => unknown> {
  const op = (method: string, path: string) => `${method} ${api}${path}`
  return {
    [op('PUT', '/empresa')]: () => ({ giro: 'Giro cambiado por el fuzzer' }),
    [op('POST', '/empresa/certificado/pfx')]: () => ({ pfx_base64: randomBytes(64).toString('base64'), password: 'x' }),
    [op('POST', '/caf')]: () => ({ tipo_dte: 33, caf_xml: A.sent.caf.xml }),
    [op('POST', '/dte')]: () => structuredClone(A.sent.dteBody),
    [op('POST', '/clientes')]: () => ({ rut: '11.111.111-1', razon_social: 'Cliente nuevo', email: 'a@b.cl' }),
    [op('PUT', '/clientes/{id}')]: () => ({ razon_social: 'Cliente cambiado', telefono: '+56 2 1234 5678' }),
    [op('POST', '/productos')]: () => ({ nombre: 'Producto nuevo', codigo: 'NUEVO-1', precio_unitario: 1000, es_exento: false }),
    [op('PUT', '/productos/{id}')]: () => ({ nombre: 'Producto cambiado', precio_unitario: 2000 }),
    [op('POST', '/webhooks')]: () => ({ url: 'https://hooks.example.cl/timbre', events: ['dte.created'] }),
    [op('PUT', '/empresa/intercambio')]: () => ({
      inbound_email: A.sent.inboundEmail,
      imap: { host: '127.0.0.1', port: 9, tls: false, user: 'dte-a', password: 'otra-clave' },
      smtp: { host: '127.0.0.1', port: 9, security: 'none', user: 'dte-a', password: 'otra-clave', from: A.sent.inboundEmail },
    }),
    [op('POST', '/recibidos/importar')]: () => ({ xml_base64: A.sent.envelopeBase64 }),
    [op('POST', '/recibidos/{id}/acciones')]: () => ({ accion: 'ACD' }),
    [op('POST', '/caf/solicitar')]: () => ({ tipo_dte: 34, cantidad: 10 }),
    [op('POST', '/caf/{id}/anular')]: () => ({ motivo: 'Folios vencidos sin usar' }),
    [op('PUT', '/empresa/folios-automaticos')]: () => ({ activo: false, tipos: [33], cantidad: 50 }),
  }
}

/** The request body schema (application/json) of every operation of the served document. */
async function bodySchemas(s: Pick<TestServer, 'request'>): Promise<Record<string, JsonSchema | undefined>> {
  const doc = (await s.request('GET', '/docs/json')).json as { paths: Record<string, Record<string, DocOperation>> }
  const out: Record<string, JsonSchema | undefined> = {}
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) out[`${method.toUpperCase()} ${path}`] = op.requestBody?.content?.['application/json']?.schema
  return out
}

export interface WorldParts {
  readonly server: Pick<TestServer, 'url' | 'request'>
  readonly a: Pick<Tenant, 'empresa' | 'writeKey' | 'readKey'>
  readonly writeKeyB: string
  readonly receiverUrl: string
  readonly api: string
}

/** Provisions A over HTTP and reads what the fuzzer needs from the server itself. */
export async function buildWorld(p: WorldParts): Promise<{ world: FuzzWorld; A: CompanyA }> {
  // provisionCompanyA and the issuance helpers it calls use only `url`, `request` and these tenant fields.
  const A = await provisionCompanyA(p.server as TestServer, p.a as Tenant, p.receiverUrl)
  const ops = await apiOperations(p.server as TestServer)
  const world: FuzzWorld = {
    port: Number(new URL(p.server.url).port),
    ops,
    keys: { writeA: p.a.writeKey, readA: p.a.readKey, writeB: p.writeKeyB },
    ids: A.ids,
    schemas: await bodySchemas(p.server),
    bodies: validBodies(A, p.api),
  }
  return { world, A }
}

/** `request` of test/support/server.ts for a server the test did not start (the compiled binary). */
export function httpClient(url: string): Pick<TestServer, 'url' | 'request'> {
  return { url, request: requester(url) }
}

/** The flags of the fuzz target: no job due during the run (QUIET_SERVER), no rate limit (it would answer most with 429). */
export const FUZZ_SERVER_FLAGS = { ...QUIET_SERVER, '--rate-limit': '0' } as const

export const dbPathOf = (dataDir: string) => join(dataDir, 'timbre.db')

