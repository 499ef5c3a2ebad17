// DESIGN §4: a resource of another company is 404, never 403, and nothing of it changes. Generated from the route
// table (the served /docs/json): every operation whose path names an id is tried with company B's write key on company
// A's ids. A new route with an id fails here until it is given a resource of A to try.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { facturaSimple, issue, provisionIssuer, storedXml } from '../support/issuance'
import { envioDte } from '../support/received'
import { startReceiver, type Receiver } from '../support/receiver'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const API = '/api/v1/billing'
let s: TestServer
let a: Tenant
let b: Tenant
let rx: Receiver
/** A's resources, by the path segment that names their collection. */
const ids: Record<string, string> = {}

beforeAll(async () => {
  s = await startTestServer({ flags: { '--webhook-allow-http': 'true', '--deliver-every': '1h', '--submit-every': '1h', '--track-every': '1h', '--folios-every': '1h' } })
  a = await s.tenant(testRut())
  b = await s.tenant(testRut())
  rx = startReceiver()
  await provisionIssuer(s, a, { folios: 10, tipos: [33, 39] })
  const auth = { 'X-Api-Key': a.writeKey }
  ids.dte = (await issue(s, a, facturaSimple({ auto_send: false }))).json.id
  ids.caf = (await s.request('GET', `${API}/caf`, { headers: auth })).json.data[0].id
  ids.clientes = (await s.request('POST', `${API}/clientes`, { headers: auth, body: { rut: '76.086.428-5', razon_social: 'Cliente de A' } })).json.id
  ids.productos = (await s.request('POST', `${API}/productos`, { headers: auth, body: { nombre: 'Producto de A', codigo: 'A-1' } })).json.id
  ids.webhooks = (await s.request('POST', `${API}/webhooks`, { headers: auth, body: { url: rx.url, events: ['dte.created'] } })).json.id
  expect((await s.request('POST', `${API}/webhooks/${ids.webhooks}/test`, { headers: auth })).status).toBe(202)
  ids.deliveries = (await s.request('GET', `${API}/webhooks/${ids.webhooks}/deliveries`, { headers: auth })).json.data[0].id
  // A received document of A: A's own factura to itself, imported as a supplier's EnvioDTE.
  const own = await issue(s, a, facturaSimple({ auto_send: false, receptor: { ...facturaSimple().receptor, rut: a.empresa.rut } }))
  const envio = envioDte([await storedXml(s, a, own.json.id)], { rutEmisor: a.empresa.rut, rutReceptor: a.empresa.rut })
  ids.recibidos = (await s.request('POST', `${API}/recibidos/importar`, { headers: auth, body: { xml_base64: Buffer.from(envio).toString('base64') } })).json.documentos[0].id
  // A certification envío of A (its boletas' EnvioBOLETA).
  const boletas = await s.request('POST', `${API}/certificacion/boletas`, { headers: auth, body: { casos: [{ caso: '1', documento: { tipo_dte: 39, detalle: [{ nombre: 'Café', cantidad: 1, precio: 1500 }] } }] } })
  ids.envios = boletas.json.envios[0].id
  // A CAF request of A (DESIGN §17), left en_curso: the folios job runs hourly here.
  ids.solicitudes = (await s.request('POST', `${API}/caf/solicitar`, { headers: auth, body: { tipo_dte: 34, cantidad: 5 } })).json.id
  for (const [name, id] of Object.entries(ids)) expect({ name, id }).toEqual({ name, id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
})
afterAll(async () => {
  await rx.stop()
  await s.stop()
})

/** A's records as A reads them, to prove B's attempts changed nothing. */
async function snapshotOfA(): Promise<unknown[]> {
  const auth = { 'X-Api-Key': a.readKey }
  return Promise.all(
    [`${API}/dte/${ids.dte}`, `${API}/caf/${ids.caf}`, `${API}/caf/solicitudes/${ids.solicitudes}`, `${API}/clientes/${ids.clientes}`, `${API}/productos/${ids.productos}`, `${API}/webhooks`, `${API}/webhooks/${ids.webhooks}/deliveries`, `${API}/recibidos/${ids.recibidos}`].map(
      async (path) => (await s.request('GET', path, { headers: auth })).json,
    ),
  )
}

/** The id a path parameter stands for: the collection named just before it (`/webhooks/{id}/deliveries/{deliveryId}`). */
function fill(path: string): string {
  const parts = path.split('/')
  return parts
    .map((part, i) => {
      if (!part.startsWith('{')) return part
      const id = ids[parts[i - 1]!]
      if (id === undefined) throw new Error(`no resource of company A to try ${path} with: add one to this test`)
      return id
    })
    .join('/')
}

/** A body that would be valid for B's own resource, so only ownership can refuse it. */
const BODIES: Record<string, unknown> = {
  [`PUT ${API}/clientes/{id}`]: { razon_social: 'Cambiado por B' },
  [`PUT ${API}/productos/{id}`]: { nombre: 'Cambiado por B' },
  [`POST ${API}/recibidos/{id}/acciones`]: { accion: 'ACD' },
  [`POST ${API}/caf/{id}/anular`]: { motivo: 'Anulado por B' },
}

describe("another company's ids (DESIGN §4)", () => {
  test('every operation of the route table with an id answers 404 NOT_FOUND to company B, and A keeps everything', async () => {
    const doc = (await s.request('GET', '/docs/json')).json as { paths: Record<string, Record<string, unknown>> }
    const operations = Object.entries(doc.paths)
      // {tipo} and {etapa} name a kind (a libro, a certification stage) and {periodo} a month, not a resource of a company.
      .filter(([path]) => path.startsWith(API) && path.includes('{') && !/\{(tipo|etapa|periodo)\}/.test(path))
      .flatMap(([path, methods]) => Object.keys(methods).filter((m) => ['get', 'post', 'put', 'delete'].includes(m)).map((m) => [m.toUpperCase(), path] as const))
    expect(operations.length).toBeGreaterThanOrEqual(12)
    const before = await snapshotOfA()
    for (const [method, path] of operations) {
      const body = BODIES[`${method} ${path}`]
      const res = await s.request(method, fill(path), { headers: { 'X-Api-Key': b.writeKey }, ...(body === undefined ? {} : { body }) })
      expect({ operation: `${method} ${path}`, status: res.status, code: res.json?.code }).toEqual({ operation: `${method} ${path}`, status: 404, code: 'NOT_FOUND' })
    }
    expect(await snapshotOfA()).toEqual(before)
    // And A still reaches every one of them (the ids were real).
    expect((await s.request('GET', `${API}/dte/${ids.dte}/xml`, { headers: { 'X-Api-Key': a.readKey } })).status).toBe(200)
  })
})
