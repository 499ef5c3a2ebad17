// DESIGN §12 "Health and docs": unauthenticated, no tenant data, docs served with no internet.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, testRut, type TestServer } from '../support/server'
import { VERSION } from '../../src/version'

let s: TestServer

beforeAll(async () => {
  s = await startTestServer()
  await s.tenant(testRut(), 'Secreta Comercial SpA')
})
afterAll(() => s.stop())

describe('health and readiness', () => {
  test('GET /health → 200 {status, version} without credentials', async () => {
    const res = await s.request('GET', '/health')
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ status: 'ok', version: VERSION })
  })

  test('GET /ready → 200 with database, migrations and jobs checks and the SII summary, no tenant data', async () => {
    const res = await s.request('GET', '/ready')
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      status: 'ready',
      // Issue 26: no backup target configured here, so the backup report is off and empty (never a reason for 503).
      checks: { database: 'ok', migrations: 'ok', jobs: 'ok', backup: 'off' },
      backup: { targets: [] },
      sii: { last_ok_at: null, oldest_pending_s: null },
    })
    expect(res.text).not.toContain('Secreta')
  })
})

describe('docs', () => {
  test('GET /docs is an HTML page whose assets are all served by the binary', async () => {
    const res = await s.request('GET', '/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const refs = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThanOrEqual(2)
    let served = res.text
    const sizes: number[] = []
    for (const ref of refs) {
      expect(ref.startsWith('/')).toBe(true) // no CDN: works with no internet
      const asset = await fetch(s.url + ref)
      expect(asset.status).toBe(200)
      const text = await asset.text()
      sizes.push(text.length)
      served += text
    }
    // Swagger UI's bundle and CSS are the real files; the page's start script (no inline script: test/security) is small.
    expect(sizes.filter((n) => n > 10_000).length).toBeGreaterThanOrEqual(2)
    expect(served).toContain("url: '/docs/json'")
  })

  test('GET /docs/json is OpenAPI 3 with version 0.2.0, both security schemes and the operations built so far', async () => {
    const res = await s.request('GET', '/docs/json')
    expect(res.status).toBe(200)
    expect(res.json.openapi).toMatch(/^3\./)
    expect(res.json.info.version).toBe('0.2.0')
    expect(Object.keys(res.json.components.securitySchemes).sort()).toEqual(['ApiKeyAuth', 'BearerAuth'])
    expect(res.json.paths['/api/v1/billing/empresa'].get.operationId).toBe('obtenerEmpresa')
    expect(res.json.paths['/api/v1/billing/empresa'].put.operationId).toBe('actualizarEmpresa')
    const putBody = res.json.paths['/api/v1/billing/empresa'].put.requestBody.content['application/json'].schema
    expect(putBody.properties.razon_social.maxLength).toBe(100)
    expect(res.json.paths['/health']).toBeDefined()
    const operations = Object.values(res.json.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((ops) => Object.values(ops).map((o) => o.operationId))
    for (const id of ['listarDTEs', 'emitirDTE', 'obtenerDTE', 'descargarDTEXml', 'listarCafs', 'subirCaf', 'obtenerCaf', 'obtenerEmpresa', 'actualizarEmpresa', 'estadoCertificado', 'subirCertificadoPfx'])
      expect(operations).toContain(id)
    expect(res.json.paths['/api/v1/billing/dte/{id}/enviar'].post['x-timbre-extension']).toBe(true)
    for (const id of ['listarWebhooks', 'registrarWebhook', 'eliminarWebhook', 'descargarDTEPdf', 'listClientes', 'searchProductos']) expect(operations).toContain(id)
    expect(res.json.paths['/api/v1/billing/webhooks/{id}/deliveries'].get['x-timbre-extension']).toBe(true)
    expect(res.json.paths['/api/v1/billing/webhooks/{id}/deliveries/{deliveryId}/redeliver'].post['x-timbre-extension']).toBe(true)
    expect(res.json.paths['/api/v1/billing/webhooks/{id}/test'].post['x-timbre-extension']).toBe(true)
    expect(res.json.paths['/api/v1/billing/dte'].post.requestBody.content['application/json'].schema.required).toEqual(['tipo_dte', 'receptor', 'detalle'])
    expect(Object.keys(res.json.paths['/api/v1/billing/empresa/certificado/pfx'].post.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data'])
    expect(Object.keys(res.json.paths).some((p) => p.startsWith('/docs'))).toBe(false)
  })

  test('GET /docs/json says 3.0.3 and is the same document every time; errors share ErrorResponse, which requires action', async () => {
    const first = await s.request('GET', '/docs/json')
    expect(first.json.openapi).toBe('3.0.3')
    expect((await s.request('GET', '/docs/json')).text).toBe(first.text)
    expect(first.json.components.schemas.ErrorResponse.required).toContain('action')
    expect(Object.keys(first.json.paths['/ready'].get.responses).sort()).toEqual(['200', '503'])
    expect(first.text).not.toContain('"const"')
    expect(first.text).not.toContain('text/plain')
  })
})
