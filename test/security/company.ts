// Company A with one of every resource the API can make, over HTTP as an integrator makes them, and the secrets it
// handed over on the way: the data the security checks try to reach from company B and look for in clear.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { santiagoDate } from '../../src/clock'
import { facturaSimple, issue, signer, storedXml } from '../support/issuance'
import { exportPfx, makeTestCaf, type TestCaf } from '../support/pki'
import { claimRcvPeriodo, storeRcvCopia } from '../../src/db/rcv-store'
import { KIND_PARAMS } from './route-table'
import { envioDte } from '../support/received'
import type { Tenant, TestServer } from '../support/server'
import { API } from './route-table'

/** A word in A's own texts, so an answer that carries A's data is recognised even without an id in it. */
export const MARKER = 'Reservado-de-A'

export interface CompanyA {
  /** A's resources, by the path segment that names their collection (`dte`, `webhooks`, `deliveries`, …). */
  readonly ids: Readonly<Record<string, string>>
  /** What B may send to collide with A's data (the same keys, RUTs, codes, files). */
  readonly sent: {
    readonly dteBody: unknown
    readonly idempotencyKey: string
    readonly clienteRut: string
    readonly productoCodigo: string
    readonly webhookUrl: string
    readonly caf: TestCaf
    readonly pfxBase64: string
    readonly envelopeBase64: string
    readonly inboundEmail: string
    /** The SII's set text A loaded (BASICO), base64. */
    readonly setBase64: string
  }
  readonly secrets: {
    readonly pfxPassword: string
    readonly webhookSecret: string
    readonly imapPassword: string
    readonly smtpPassword: string
  }
}

const SETS = join(import.meta.dir, '../fixtures/sii/sets')
const random = (prefix: string) => `${prefix}${randomBytes(12).toString('hex')}`

async function created(s: TestServer, what: string, p: Promise<{ status: number; json: any; text: string }>): Promise<any> {
  const res = await p
  if (res.status !== 200 && res.status !== 201 && res.status !== 202) throw new Error(`${what}: ${res.status} ${res.text}`)
  return res.json
}

/**
 * Provisions A: certificate (PFX and its password), a type 33 CAF (with its RSASK), a DTE, a cliente, a producto, a
 * webhook (with its secret) and one delivery of it, a received document (A's own factura imported as a supplier's
 * EnvioDTE), the exchange mailbox (IMAP and SMTP passwords), and certification's sets, cases, libros and envíos. The server needs --webhook-allow-http (a 127.0.0.1
 * receiver) and slow jobs (nothing changes A's records between two snapshots).
 */
export async function provisionCompanyA(s: TestServer, a: Tenant, receiverUrl: string): Promise<CompanyA> {
  const auth = { 'X-Api-Key': a.writeKey }
  const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
    s.request('POST', `${API}${path}`, { headers: { ...auth, ...headers }, ...(body === undefined ? {} : { body }) })
  const secrets = { pfxPassword: random('pfx-pw-'), webhookSecret: random('whsec-test-'), imapPassword: random('imap-pw-'), smtpPassword: random('smtp-pw-') }
  const ids: Record<string, string> = {}

  const pfxBase64 = Buffer.from(exportPfx(signer(), secrets.pfxPassword, '3des')).toString('base64')
  await created(s, 'certificate', post('/empresa/certificado/pfx', { pfx_base64: pfxBase64, password: secrets.pfxPassword }))
  const caf = makeTestCaf({
    rut: a.empresa.rut, razonSocial: a.empresa.razon_social, tipoDte: 33, folioDesde: 1, folioHasta: 20,
    fechaAutorizacion: santiagoDate(new Date(Date.now() - 2 * 86_400_000)),
  })
  ids.caf = (await created(s, 'CAF', post('/caf', { tipo_dte: 33, caf_xml: caf.xml }))).id

  const dteBody = facturaSimple({ auto_send: false, metadata: { pedido: MARKER } })
  const idempotencyKey = crypto.randomUUID()
  ids.dte = (await created(s, 'DTE', issue(s, a, dteBody, idempotencyKey))).id
  const clienteRut = '76.086.428-5'
  ids.clientes = (await created(s, 'cliente', post('/clientes', { rut: clienteRut, razon_social: `Cliente ${MARKER}` }))).id
  const productoCodigo = 'COD-A-1'
  ids.productos = (await created(s, 'producto', post('/productos', { nombre: `Producto ${MARKER}`, codigo: productoCodigo }))).id
  const webhookUrl = `${receiverUrl}/${MARKER}`
  ids.webhooks = (await created(s, 'webhook', post('/webhooks', { url: webhookUrl, events: ['dte.created'], secret: secrets.webhookSecret }))).id
  await created(s, 'webhook test', post(`/webhooks/${ids.webhooks}/test`))
  ids.deliveries = (await s.request('GET', `${API}/webhooks/${ids.webhooks}/deliveries`, { headers: auth })).json.data[0].id

  // A received document: A's own factura to itself, wrapped as a supplier's EnvioDTE and imported by hand.
  const own = await created(s, 'DTE to itself', issue(s, a, facturaSimple({ auto_send: false, receptor: { ...facturaSimple().receptor, rut: a.empresa.rut } })))
  const envelope = envioDte([await storedXml(s, a, own.id)], { rutEmisor: a.empresa.rut, rutReceptor: a.empresa.rut })
  const envelopeBase64 = Buffer.from(envelope).toString('base64')
  ids.recibidos = (await created(s, 'import', post('/recibidos/importar', { xml_base64: envelopeBase64 }))).documentos[0].id

  // Certification (DESIGN §15): the SII's set texts loaded, their cases issued (not sent: no SII traffic), so the libros,
  // muestras and envíos exist; and the boleta set's EnvioBOLETA, a certification envío.
  for (const [tipo, hasta] of [[39, 5], [52, 10], [56, 10], [61, 10]] as const) {
    const extra = makeTestCaf({ rut: a.empresa.rut, razonSocial: a.empresa.razon_social, tipoDte: tipo, folioDesde: 1, folioHasta: hasta, fechaAutorizacion: santiagoDate(new Date(Date.now() - 2 * 86_400_000)) })
    await created(s, `CAF ${tipo}`, post('/caf', { tipo_dte: tipo, caf_xml: extra.xml }))
  }
  for (const file of ['001-basico.txt', '003-compras.txt', '005-guia_despacho.txt', '006-libro_guias.txt'])
    await created(s, `set ${file}`, post('/certificacion/set', { archivo_base64: readFileSync(join(SETS, file)).toString('base64') }))
  await created(s, 'set issued', post('/certificacion/set/emitir', { enviar: false }))
  const boletas = await created(s, 'certification boletas', post('/certificacion/boletas', { casos: [{ caso: '1', documento: { tipo_dte: 39, detalle: [{ nombre: `Boleta ${MARKER}`, cantidad: 1, precio: 1190 }] } }] }))
  ids.envios = boletas.envios[0].id

  // The month's close (DESIGN §16): a copy of A's RCV for this month, written as a sync would (no SII traffic), so the
  // mirror's lists and files answer A with A's rows, and B's answers can be searched for them.
  const periodo = KIND_PARAMS.periodo!()
  const nowIso = new Date().toISOString()
  const detalle = {
    tipoDoc: 33, rut: '76086428-5', razonSocial: `Proveedor ${MARKER}`, folio: 41, fechaEmision: `${periodo.slice(0, 4)}-${periodo.slice(4)}-01`,
    fechaRecepcion: `${periodo.slice(0, 4)}-${periodo.slice(4)}-01T10:00:00`, fechaAcuse: null, fechaReclamo: null, tipoTransaccion: 'Del Giro',
    montoExento: 0, montoNeto: 1000, montoIva: 190, montoIvaNoRecuperable: null, codigoIvaNoRecuperable: null, montoTotal: 1190,
    montoNetoActivoFijo: null, ivaActivoFijo: null, ivaUsoComun: null, impuestoSinDerechoCredito: null, ivaNoRetenido: null, otrosImpuestos: [],
    ivaRetenidoTotal: null, ivaRetenidoParcial: null, ivaPropio: null, ivaTerceros: null, ivaFueraPlazo: null, referencia: null,
  }
  const resumen = { tipoDoc: 33, cantidad: 1, montoExento: 0, montoNeto: 1000, montoIva: 190, montoIvaNoRecuperable: 0, ivaUsoComun: 0, montoTotal: 1190 }
  const claim = { startedIso: nowIso, leaseUntil: new Date(Date.now() + 60_000).toISOString() }
  claimRcvPeriodo(s.server.deps.store.db, a.empresa.id, periodo, claim.startedIso, claim.leaseUntil)
  storeRcvCopia(s.server.deps.store.db, a.empresa.id, periodo, {
    resumen: { compras: { registro: [], pendiente: [resumen], no_incluir: [], reclamado: [] }, ventas: [resumen] },
    detalles: [
      { registro: 'compras', seccion: 'pendiente', n: 0, tipo_doc: 33, rut: detalle.rut, folio: 41, detalle },
      { registro: 'ventas', seccion: 'ventas', n: 0, tipo_doc: 33, rut: detalle.rut, folio: 41, detalle },
    ],
    diferidas: 0,
  }, nowIso, claim)

  // Folios from the SII (DESIGN §17): a CAF of type 34 requested from the built-in simulator and followed until the folios
  // job (every 5 s) ends it, so nothing of A changes during the checks; automatic mode saved off, with A's own values.
  ids.solicitudes = (await created(s, 'CAF request', post('/caf/solicitar', { tipo_dte: 34, cantidad: 10 }))).id
  for (let i = 0; ; i++) {
    const estado = (await s.request('GET', `${API}/caf/solicitudes/${ids.solicitudes}`, { headers: auth })).json.estado
    if (estado === 'descargado') break
    if (estado === 'fallido' || i === 150) throw new Error(`CAF request: ${estado} after ${i / 10} s`)
    await Bun.sleep(100)
  }
  await created(s, 'automatic folios', s.request('PUT', `${API}/empresa/folios-automaticos`, { headers: auth, body: { activo: false, tipos: [52, 61], cantidad: 77 } }))

  // The mailbox points at a closed port: saving does not connect, and the intercambio job is not due during the test.
  const inboundEmail = 'dte-a@intercambio.example.cl'
  await created(s, 'mailbox', s.request('PUT', `${API}/empresa/intercambio`, {
    headers: auth,
    body: {
      inbound_email: inboundEmail,
      imap: { host: '127.0.0.1', port: 9, tls: false, user: 'dte-a', password: secrets.imapPassword },
      smtp: { host: '127.0.0.1', port: 9, security: 'none', user: 'dte-a', password: secrets.smtpPassword, from: inboundEmail },
    },
  }))
  return {
    ids,
    sent: { dteBody, idempotencyKey, clienteRut, productoCodigo, webhookUrl, caf, pfxBase64, envelopeBase64, inboundEmail, setBase64: readFileSync(join(SETS, '001-basico.txt')).toString('base64') },
    secrets,
  }
}

/** The flags every security test's server runs with: 127.0.0.1 receivers allowed, no job due during a test. */
export const QUIET_SERVER = {
  '--webhook-allow-http': 'true',
  '--deliver-every': '1h',
  '--submit-every': '1h',
  '--track-every': '1h',
  '--inbox-every': '1h',
} as const
