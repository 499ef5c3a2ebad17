// Issue 13 item 9: the document served at /docs/json is valid OpenAPI 3.0.3 (client generators read it), its media types are
// the ones each operation really answers, and every error answer, documented and real, carries `action` (DESIGN §5, §12).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { santiagoDate } from '../../src/clock'
import { facturaSimple, issue, uploadCertificate } from '../support/issuance'
import { makeTestCaf } from '../support/pki'
import { startTestServer, testRut, type Tenant, type TestResponse, type TestServer } from '../support/server'

const API = '/api/v1/billing'
let s: TestServer
let t: Tenant
let doc: OpenApi

type Operation = { operationId?: string; parameters?: Array<{ in: string; name: string }>; requestBody?: { content: Record<string, unknown> }; responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }
type OpenApi = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { required?: string[] }> } }

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  doc = (await s.request('GET', '/docs/json')).json
})
afterAll(() => s.stop())

const operations = () => Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })))

/** Every message of swagger-parser's validation (the OpenAPI 3.0 JSON schema, every $ref resolved), or [] when valid. */
async function validationErrors(document: unknown): Promise<string[]> {
  try {
    await SwaggerParser.validate(structuredClone(document) as Parameters<typeof SwaggerParser.validate>[0])
    return []
  } catch (e) {
    const err = e as Error & { details?: Array<{ instancePath?: string; message?: string }> }
    return err.details?.length ? err.details.map((d) => `${d.instancePath ?? ''} ${d.message ?? ''}`) : [err.message]
  }
}

describe('GET /docs/json', () => {
  test('is the document @elysiajs/swagger\'s plugin makes of the same routes, byte for byte (the server builds it from the plugin\'s utils alone)', async () => {
    const { swagger } = await import('@elysiajs/swagger')
    const { Elysia } = await import('elysia')
    const { createHttpApp } = await import('../../src/http/app')
    const { DOCS_DOCUMENTATION } = await import('../../src/http/routes/docs')
    const { toOpenApi303 } = await import('../../src/http/openapi')
    const readiness = { jobsRunning: () => true, isShuttingDown: () => false, sii: () => ({ last_ok_at: null, oldest_pending_s: null }) }
    // The plugin as the server used it before, at a path of its own, in front of the same app.
    const viaPlugin = new Elysia()
      .use(swagger({ path: '/plugin', specPath: '/plugin/json', provider: 'swagger-ui', exclude: [/^\/docs/, /^\/plugin/], excludeStaticFile: false, documentation: DOCS_DOCUMENTATION as never }))
      .use(createHttpApp(s.server.deps, readiness))
    const theirs = toOpenApi303((await (await viaPlugin.handle(new Request('http://127.0.0.1/plugin/json'))).json()) as Record<string, unknown>)
    const ours = await (await fetch(`${s.url}/docs/json`)).text()
    expect(Object.keys(doc.paths).length).toBeGreaterThan(50)
    expect(ours).toBe(JSON.stringify(theirs))
  })

  test('is valid OpenAPI 3.0.3: swagger-parser validates it with zero errors', async () => {
    expect(doc).toMatchObject({ openapi: '3.0.3' })
    expect(await validationErrors(doc)).toEqual([])
  })

  test('what the schema cannot check (swagger-parser skips it for 3.x): unique operationIds, every path {param} declared', () => {
    const ids = operations().map(({ op }) => op.operationId)
    expect(ids.filter((id, i) => id === undefined || ids.indexOf(id) !== i)).toEqual([])
    for (const { path, method, op } of operations()) {
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort()
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort()
      expect({ where: `${method} ${path}`, declared }).toEqual({ where: `${method} ${path}`, declared: templated })
    }
  })

  test('each response lists only the media types it returns; request bodies are JSON, multipart only for the PFX upload', () => {
    const binary: Record<string, string> = {
      descargarDTEXml: 'application/xml', descargarDTEPdf: 'application/pdf', descargarRecibidoXml: 'application/xml', descargarRecibidoPdf: 'application/pdf',
      responderIntercambio: 'application/zip', descargarMuestras: 'application/zip', descargarEnvioCertificacion: 'application/xml',
      descargarLibroVentas: 'application/xml', descargarLibroCompras: 'application/xml', descargarLibroGuias: 'application/xml', descargarConsumoFolios: 'application/xml',
      // The month's close (DESIGN §16): the SII's CSV and the workbooks.
      descargarComprasRcvCsv: 'text/csv', descargarVentasRcvCsv: 'text/csv',
      descargarComprasRcvXlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', descargarVentasRcvXlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    }
    for (const { path, method, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        const where = `${method.toUpperCase()} ${path} ${status}`
        const types = Object.keys(response.content ?? {})
        if (status === '204') expect({ where, types }).toEqual({ where, types: [] })
        else if (status === '200' && binary[op.operationId ?? '']) expect({ where, types }).toEqual({ where, types: [binary[op.operationId!]!] })
        else expect({ where, types }).toEqual({ where, types: ['application/json'] })
      }
      if (!op.requestBody) continue
      const types = Object.keys(op.requestBody.content).sort()
      const expected = op.operationId === 'subirCertificadoPfx' ? ['application/json', 'multipart/form-data'] : ['application/json']
      expect({ op: op.operationId, types }).toEqual({ op: op.operationId, types: expected })
    }
  })

  test('binary downloads and deletions also document their errors; 204 has no body', () => {
    for (const [path, method] of [[`${API}/dte/{id}/xml`, 'get'], [`${API}/dte/{id}/pdf`, 'get'], [`${API}/recibidos/{id}/xml`, 'get'], [`${API}/recibidos/{id}/pdf`, 'get'], [`${API}/clientes/{id}`, 'delete'], [`${API}/productos/{id}`, 'delete']] as const) {
      const statuses = Object.keys(doc.paths[path]![method]!.responses).sort()
      expect({ path, method, statuses }).toEqual({ path, method, statuses: expect.arrayContaining(['400', '401', '403', '404', '429', '500']) })
    }
    expect(doc.paths[`${API}/clientes/{id}`]!.delete!.responses['204']).toBeDefined()
  })

  test('every error response is the ErrorResponse schema, which requires action', () => {
    expect(doc.components.schemas.ErrorResponse?.required).toEqual(expect.arrayContaining(['code', 'message', 'error', 'details', 'action', 'severity', 'context']))
    for (const { path, method, op } of operations())
      for (const [status, response] of Object.entries(op.responses))
        if (Number(status) >= 400 && !(path === '/ready' && status === '503'))
          expect({ where: `${method} ${path} ${status}`, ref: response.content?.['application/json']?.schema?.$ref }).toEqual({
            where: `${method} ${path} ${status}`,
            ref: '#/components/schemas/ErrorResponse',
          })
  })
})

describe('every error answer carries action (README, DESIGN §5)', () => {
  const h = (key: string, extra: Record<string, string> = {}) => ({ 'X-Api-Key': key, ...extra })
  const expectEnvelope = (res: TestResponse, status: number, code: string) => {
    expect({ status: res.status, code: res.json?.code }).toEqual({ status, code })
    expect(Object.keys(res.json).sort()).toEqual(['action', 'code', 'context', 'details', 'error', 'message', 'severity'])
    expect(typeof res.json.action).toBe('string')
    expect(res.json.action.length).toBeGreaterThan(10)
  }

  const cases: Array<[number, string, () => Promise<TestResponse>]> = [
    [400, 'VALIDATION_ERROR', () => s.request('PUT', `${API}/empresa`, { headers: h(t.writeKey), body: { razon_social: 12 } })],
    [400, 'INVALID_CERTIFICATE', () => s.request('POST', `${API}/empresa/certificado/pfx`, { headers: h(t.writeKey), body: { pfx_base64: 'AAAA', password: 'x' } })],
    [400, 'INVALID_CAF', () => s.request('POST', `${API}/caf`, { headers: h(t.writeKey), body: { tipo_dte: 33, caf_xml: '<AUTORIZACION/>' } })],
    [401, 'UNAUTHORIZED', () => s.request('GET', `${API}/empresa`)],
    [403, 'API_KEY_READ_ONLY', () => s.request('PUT', `${API}/empresa`, { headers: h(t.readKey), body: { giro: 'Comercio' } })],
    [404, 'NOT_FOUND', () => s.request('GET', `${API}/clientes/${crypto.randomUUID()}`, { headers: h(t.readKey) })],
    [404, 'NOT_FOUND', () => s.request('GET', '/no-existe')],
    [404, 'CERTIFICATE_NOT_FOUND', () => s.request('GET', `${API}/empresa/certificado`, { headers: h(t.readKey) })],
    [405, 'METHOD_NOT_ALLOWED', () => s.request('DELETE', `${API}/empresa`, { headers: h(t.writeKey) })],
    [413, 'PAYLOAD_TOO_LARGE', () => s.request('PUT', `${API}/empresa`, { headers: h(t.writeKey, { 'content-type': 'application/json' }), rawBody: JSON.stringify({ giro: 'x'.repeat(6 * 1024 * 1024) }) })],
    [415, 'UNSUPPORTED_MEDIA_TYPE', () => s.request('PUT', `${API}/empresa`, { headers: h(t.writeKey, { 'content-type': 'text/plain' }), rawBody: 'giro=x' })],
    [422, 'CERTIFICATE_REQUIRED', () => issue(s, t, facturaSimple())],
  ]
  test.each(cases)('%d %s', async (status, code, send) => expectEnvelope(await send(), status, code))

  test('409 CLIENTE_RUT_EXISTS and PRODUCTO_CODIGO_EXISTS', async () => {
    const cliente = { rut: testRut(), razon_social: 'Cliente Repetido SpA' }
    expect((await s.request('POST', `${API}/clientes`, { headers: h(t.writeKey), body: cliente })).status).toBe(201)
    expectEnvelope(await s.request('POST', `${API}/clientes`, { headers: h(t.writeKey), body: cliente }), 409, 'CLIENTE_RUT_EXISTS')
    const producto = { nombre: 'Tornillo', codigo: 'SKU-ACTION' }
    expect((await s.request('POST', `${API}/productos`, { headers: h(t.writeKey), body: producto })).status).toBe(201)
    expectEnvelope(await s.request('POST', `${API}/productos`, { headers: h(t.writeKey), body: producto }), 409, 'PRODUCTO_CODIGO_EXISTS')
  })

  test('422 NO_FOLIOS_AVAILABLE, 409 CAF_RANGE_EXISTS, 422 IDEMPOTENCY_BODY_MISMATCH and 409 DTE_NOT_SENDABLE', async () => {
    const issuer = await s.tenant(testRut())
    await uploadCertificate(s, issuer)
    expectEnvelope(await issue(s, issuer, facturaSimple()), 422, 'NO_FOLIOS_AVAILABLE')
    const caf = makeTestCaf({ rut: issuer.empresa.rut, razonSocial: issuer.empresa.razon_social, tipoDte: 33, folioDesde: 1, folioHasta: 10, fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)) })
    const subir = () => s.request('POST', `${API}/caf`, { headers: h(issuer.writeKey), body: { tipo_dte: 33, caf_xml: caf.xml } })
    expect((await subir()).status).toBe(201)
    expectEnvelope(await subir(), 409, 'CAF_RANGE_EXISTS')
    const key = crypto.randomUUID()
    const first = await issue(s, issuer, facturaSimple(), key)
    expect(first.status).toBe(201)
    expectEnvelope(await issue(s, issuer, facturaSimple({ metadata: { otro: true } }), key), 422, 'IDEMPOTENCY_BODY_MISMATCH')
    const enviar = () => s.request('POST', `${API}/dte/${first.json.id}/enviar`, { headers: h(issuer.writeKey) })
    expect((await enviar()).status).toBe(202)
    expectEnvelope(await enviar(), 409, 'DTE_NOT_SENDABLE')
  })

  test('429 RATE_LIMITED with a low --rate-limit', async () => {
    const limited = await startTestServer({ flags: { '--rate-limit': '1' } })
    try {
      const tenant = await limited.tenant(testRut())
      let refused: TestResponse | null = null
      for (let i = 0; i < 10 && !refused; i++) {
        const res = await limited.request('GET', `${API}/empresa`, { headers: h(tenant.readKey) })
        if (res.status === 429) refused = res
      }
      expect(refused).not.toBeNull()
      expectEnvelope(refused!, 429, 'RATE_LIMITED')
    } finally {
      await limited.stop()
    }
  })

  test('500 INTERNAL_ERROR', async () => {
    const victim = await s.tenant(testRut())
    const raw = new Database(join(s.dataDir, 'timbre.db'))
    raw.run('PRAGMA foreign_keys = OFF')
    raw.run('DELETE FROM empresas WHERE id = ?', [victim.empresa.id])
    raw.close()
    expectEnvelope(await s.request('GET', `${API}/empresa`, { headers: h(victim.readKey) }), 500, 'INTERNAL_ERROR')
  })
})
