// Received documents (DESIGN §13) through the API of a real server: a supplier company of the same server issues to
// the receiver, its signed DTEs are wrapped in an EnvioDTE as the supplier would mail it, and the receiver imports
// the file. Import, the receipt codes, the record, its exact XML and its PDF, the list's filters and pages, tenancy.
import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { santiagoDate } from '../../src/clock'
import { API, envioDte, envioFor, facturaPara, importar, issueFrom, supplier, type IssuedToReceiver } from '../support/received'
import { useTenant, testRut, type Tenant, type TestServer } from '../support/server'

let s: TestServer
let receiver: Tenant
let prov: Tenant
let other: Tenant
let f1: IssuedToReceiver
let e1: IssuedToReceiver
let envelope: Uint8Array

useTenant(
  (server, tenant) => {
    s = server
    receiver = tenant
  },
  async () => {
    prov = await supplier(s)
    other = await s.tenant(testRut(), 'Otra Compradora SpA')
    f1 = await issueFrom(s, prov, facturaPara(receiver))
    e1 = await issueFrom(s, prov, facturaPara(receiver, { tipo_dte: 34, detalle: [{ nombre: 'Asesoría contable', cantidad: 1, precio: 350000 }] }))
    envelope = envioFor(prov, receiver, [f1.xml, e1.xml])
  },
)

const read = (t: Tenant) => ({ 'X-Api-Key': t.readKey })
const get = (t: Tenant, path: string) => s.request('GET', `${API}${path}`, { headers: read(t) })
const total = async (t: Tenant) => (await get(t, '/recibidos')).json.total_count as number
const storedEnvelopes = (t: Tenant) =>
  (s.server.deps.store.sqlite.query('SELECT count(*) AS n FROM recibidos_envios WHERE empresa_id = ?').get(t.empresa.id) as { n: number }).n
const eventsOf = (t: Tenant, type: string) =>
  (s.server.deps.store.sqlite.query('SELECT body FROM events WHERE empresa_id = ? AND type = ? ORDER BY id').all(t.empresa.id, type) as Array<{ body: string }>).map(
    (e) => JSON.parse(e.body),
  )

/** The XML declaration and the bytes after it (the whitespace between them dropped). */
function splitDeclaration(bytes: Uint8Array): [string, Uint8Array] {
  const text = Buffer.from(bytes).toString('latin1')
  const m = /^(<\?xml[^>]*\?>)\s*/.exec(text)
  return m ? [m[1]!, bytes.subarray(m[0].length)] : ['', bytes]
}

function pdfText(bytes: Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), 'timbre-recibido-pdf-'))
  writeFileSync(join(dir, 'r.pdf'), bytes)
  const run = Bun.spawnSync(['pdftotext', '-layout', join(dir, 'r.pdf'), '-'], { stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(run.stderr.toString())
  return run.stdout.toString()
}

describe('POST /recibidos/importar', () => {
  let ids: string[] = []

  test('an EnvioDTE from a supplier: 201 with the SII receipt codes, each document recibido with every check ok', async () => {
    const res = await importar(s, receiver, envelope)
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({ estado_recep_env: 0, glosa: expect.any(String) })
    expect(res.json.documentos).toEqual([
      { id: expect.any(String), tipo_dte: 33, folio: f1.folio, rut_emisor: prov.empresa.rut, estado: 'recibido', estado_recep_dte: 0 },
      { id: expect.any(String), tipo_dte: 34, folio: e1.folio, rut_emisor: prov.empresa.rut, estado: 'recibido', estado_recep_dte: 0 },
    ])
    ids = res.json.documentos.map((d: { id: string }) => d.id)
    const issued = (await s.request('GET', `${API}/dte/${f1.id}`, { headers: read(prov) })).json
    const r = (await get(receiver, `/recibidos/${ids[0]}`)).json
    expect(r).toMatchObject({
      id: ids[0], rut_emisor: prov.empresa.rut, razon_social_emisor: prov.empresa.razon_social, tipo_dte: 33, folio: f1.folio,
      fecha_emision: issued.fecha_emision, monto_neto: issued.monto_neto, monto_exento: issued.monto_exento, iva: issued.iva, monto_total: issued.monto_total,
      estado: 'recibido', estado_recep_dte: 0, plazo: null, fecha_recepcion_sii: null, acciones: [],
      envio: { origen: 'importar', estado_recep_env: 0, glosa: res.json.glosa },
    })
    expect(r.checks.length).toBeGreaterThan(3)
    expect(r.checks.filter((c: { ok: boolean }) => !c.ok)).toEqual([])
    expect(new Date(r.recibido_at).toISOString()).toBe(r.recibido_at)
  })

  test('each document announced by recibido.created with its record', () => {
    const created = eventsOf(receiver, 'recibido.created')
    expect(created.map((e) => e.data.recibido.id)).toEqual(ids)
    expect(created[0].data.recibido).toMatchObject({ tipo_dte: 33, folio: f1.folio, estado: 'recibido', envio: { origen: 'importar' } })
  })

  test('GET /recibidos/{id}/xml: the <DTE> exactly as the supplier signed it, ISO-8859-1', async () => {
    const res = await fetch(`${s.url}${API}/recibidos/${ids[0]}/xml`, { headers: read(receiver) })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-1')
    // The envelope carries the DTE without its XML declaration; the stored file puts an ISO-8859-1 one back before it.
    const [head, body] = splitDeclaration(new Uint8Array(await res.arrayBuffer()))
    expect(head).toBe('<?xml version="1.0" encoding="ISO-8859-1"?>')
    expect(Buffer.from(body).equals(Buffer.from(splitDeclaration(f1.xml)[1]))).toBe(true)
    expect(Buffer.from(body).toString('latin1')).toMatch(/^<DTE [\s\S]*<\/DTE>$/)
  })

  test('GET /recibidos/{id}/pdf: the issued DTEs renderer; the text shows the folio and the supplier', async () => {
    const res = await fetch(`${s.url}${API}/recibidos/${ids[0]}/pdf`, { headers: read(receiver) })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    const text = pdfText(new Uint8Array(await res.arrayBuffer()))
    expect(text).toContain(String(f1.folio))
    expect(text).toContain('FACTURA ELECTR')
    expect(text.toUpperCase()).toContain(prov.empresa.razon_social.toUpperCase())
    const termico = await fetch(`${s.url}${API}/recibidos/${ids[1]}/pdf?formato=termico`, { headers: read(receiver) })
    expect(pdfText(new Uint8Array(await termico.arrayBuffer()))).toContain(String(e1.folio))
    expect((await get(receiver, `/recibidos/${ids[0]}/pdf?formato=a4`)).status).toBe(400)
  })

  test('the same file again: 200 with the same documents, nothing new stored', async () => {
    const before = { total: await total(receiver), envelopes: storedEnvelopes(receiver), events: eventsOf(receiver, 'recibido.created').length }
    const res = await importar(s, receiver, envelope)
    expect(res.status).toBe(200)
    expect(res.json.documentos.map((d: { id: string }) => d.id)).toEqual(ids)
    expect({ total: await total(receiver), envelopes: storedEnvelopes(receiver), events: eventsOf(receiver, 'recibido.created').length }).toEqual(before)
  })

  const respuestaDte =
    '<?xml version="1.0" encoding="ISO-8859-1"?>\n<RespuestaDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Resultado ID="R1"><Caratula version="1.0">' +
    '<RutResponde>76086428-5</RutResponde><RutRecibe>76543210-3</RutRecibe><IdRespuesta>1</IdRespuesta><NroDetalles>1</NroDetalles>' +
    '<TmstFirmaResp>2026-01-01T10:00:00</TmstFirmaResp></Caratula></Resultado></RespuestaDTE>\n'
  test.each([
    ['not base64', () => ({ xml_base64: '%%% no es base64 %%%' }), 'INVALID_FORMAT'],
    ['empty', () => ({ xml_base64: '' }), 'REQUIRED'],
    ['missing', () => ({}), 'REQUIRED'],
    ['not XML', () => ({ xml_base64: Buffer.from('%PDF-1.4 hola').toString('base64') }), 'INVALID_FORMAT'],
    ['an EnvioDTE cut in half', () => ({ xml_base64: Buffer.from(envelope.subarray(0, 900)).toString('base64') }), 'INVALID_FORMAT'],
    ['a RespuestaDTE', () => ({ xml_base64: Buffer.from(respuestaDte, 'latin1').toString('base64') }), 'INVALID_VALUE'],
  ])('%s → 400 VALIDATION_ERROR at xml_base64 and nothing is stored', async (_name, body, code) => {
    const before = { total: await total(receiver), envelopes: storedEnvelopes(receiver) }
    const res = await s.request('POST', `${API}/recibidos/importar`, { headers: { 'X-Api-Key': receiver.writeKey }, body: body() })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'xml_base64', code }))
    expect({ total: await total(receiver), envelopes: storedEnvelopes(receiver) }).toEqual(before)
  })

  test('unknown fields are 400 NOT_ALLOWED; a read-only key is 403', async () => {
    const extra = await s.request('POST', `${API}/recibidos/importar`, { headers: { 'X-Api-Key': receiver.writeKey }, body: { xml_base64: 'AAAA', origen: 'demo' } })
    expect(extra.status).toBe(400)
    expect(extra.json.details).toContainEqual(expect.objectContaining({ field: 'origen', code: 'NOT_ALLOWED' }))
    const ro = await s.request('POST', `${API}/recibidos/importar`, { headers: read(receiver), body: { xml_base64: Buffer.from(envelope).toString('base64') } })
    expect(ro.status).toBe(403)
  })

  test('a document addressed to another company is kept rechazado_tecnico with EstadoRecepDTE 3 and its failed check', async () => {
    const ajeno = await issueFrom(s, prov, facturaPara(other))
    const res = await importar(s, receiver, envioFor(prov, receiver, [ajeno.xml]))
    expect(res.status).toBe(201)
    expect(res.json.documentos).toEqual([expect.objectContaining({ folio: ajeno.folio, estado: 'rechazado_tecnico', estado_recep_dte: 3 })])
    const r = (await get(receiver, `/recibidos/${res.json.documentos[0].id}`)).json
    expect(r.checks).toContainEqual(expect.objectContaining({ check: 'receptor', ok: false, detalle: expect.stringContaining(other.empresa.rut) }))
  })

  test('an envelope addressed to another company: EstadoRecepEnv 3, its documents rechazado_tecnico', async () => {
    const ajeno = await issueFrom(s, prov, facturaPara(other))
    const res = await importar(s, receiver, envioDte([ajeno.xml], { rutEmisor: prov.empresa.rut, rutReceptor: other.empresa.rut }))
    expect(res.status).toBe(201)
    expect(res.json.estado_recep_env).toBe(3)
    for (const d of res.json.documentos) expect(d).toMatchObject({ estado: 'rechazado_tecnico' })
  })

  test('the same document in another envelope is a duplicate: EstadoRecepDTE 4', async () => {
    const res = await importar(s, receiver, envioDte([f1.xml], { rutEmisor: prov.empresa.rut, rutReceptor: receiver.empresa.rut, at: new Date(Date.now() + 1000) }))
    expect(res.status).toBe(201)
    expect(res.json.documentos).toEqual([expect.objectContaining({ folio: f1.folio, estado: 'rechazado_tecnico', estado_recep_dte: 4 })])
  })
})

describe('GET /recibidos', () => {
  let prov2: Tenant
  let own: string[] = []
  let list: any[] = []

  beforeAll(async () => {
    prov2 = await supplier(s, 'Distribuidora Austral Ltda.')
    const docs = [
      await issueFrom(s, prov2, facturaPara(receiver)),
      await issueFrom(s, prov2, facturaPara(receiver)),
      await issueFrom(s, prov2, facturaPara(receiver, { tipo_dte: 34, detalle: [{ nombre: 'Servicio exento', cantidad: 1, precio: 1000 }] })),
    ]
    const res = await importar(s, receiver, envioFor(prov2, receiver, docs.map((d) => d.xml)))
    own = res.json.documentos.map((d: { id: string }) => d.id)
    list = (await get(receiver, '/recibidos?limit=100')).json.items
  })

  test('newest first, total_count over every match, cursor pages without gaps or repeats', async () => {
    const all = list.map((r) => r.id)
    expect(all.slice(0, 3)).toEqual([...own].reverse())
    expect([...all].sort().reverse()).toEqual(all)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: any = (await get(receiver, `/recibidos?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json
      expect(page.total_count).toBe(all.length)
      expect(page.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.items.map((r: { id: string }) => r.id))
      cursor = page.next_cursor
    } while (cursor)
    expect(seen).toEqual(all)
  })

  test('filters: rut_emisor (with dots), tipo_dte, estado, fecha_desde / fecha_hasta', async () => {
    const dotted = prov2.empresa.rut.replace(/^(\d{1,2})(\d{3})(\d{3})-/, '$1.$2.$3-')
    const byRut = (await get(receiver, `/recibidos?rut_emisor=${dotted}`)).json
    expect(byRut.total_count).toBe(3)
    expect(byRut.items.map((r: { id: string }) => r.id)).toEqual([...own].reverse())
    const exentas = (await get(receiver, `/recibidos?rut_emisor=${prov2.empresa.rut}&tipo_dte=34`)).json
    expect(exentas.items.map((r: { tipo_dte: number; id: string }) => [r.tipo_dte, r.id])).toEqual([[34, own[2]]])
    const rechazados = (await get(receiver, '/recibidos?estado=rechazado_tecnico')).json
    expect(rechazados.total_count).toBe(list.filter((r) => r.estado === 'rechazado_tecnico').length)
    expect(rechazados.total_count).toBeGreaterThan(0)
    const today = santiagoDate(new Date())
    expect((await get(receiver, `/recibidos?fecha_desde=${today}&fecha_hasta=${today}`)).json.total_count).toBe(list.length)
    const tomorrow = santiagoDate(new Date(Date.now() + 86_400_000))
    expect((await get(receiver, `/recibidos?fecha_desde=${tomorrow}`)).json).toMatchObject({ items: [], total_count: 0, next_cursor: null })
  })

  test.each([
    ['tipo_dte=99', 'tipo_dte', 'INVALID_VALUE'],
    ['estado=pagado', 'estado', undefined],
    ['rut_emisor=11111111-2', 'rut_emisor', 'INVALID_RUT'],
    ['fecha_desde=2026-02-01&fecha_hasta=2026-01-01', 'fecha_desde', 'INCONSISTENT'],
    ['fecha_desde=ayer', 'fecha_desde', undefined],
    ['limit=0', 'limit', 'OUT_OF_RANGE'],
    ['limit=101', 'limit', 'OUT_OF_RANGE'],
    ['cursor=abc', 'cursor', 'INVALID_FORMAT'],
  ])('%s → 400 at %s', async (query, field, code) => {
    const res = await get(receiver, `/recibidos?${query}`)
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining(code ? { field, code } : { field }))
  })
})

describe('tenancy and the certificate', () => {
  test("another company's document is 404 on every route; a malformed id too", async () => {
    const id = (await get(receiver, '/recibidos?limit=1')).json.items[0].id
    for (const path of [`/recibidos/${id}`, `/recibidos/${id}/xml`, `/recibidos/${id}/pdf`]) expect((await get(other, path)).status).toBe(404)
    const accion = await s.request('POST', `${API}/recibidos/${id}/acciones`, { headers: { 'X-Api-Key': other.writeKey }, body: { accion: 'ACD' } })
    expect(accion.status).toBe(404)
    expect((await get(other, '/recibidos')).json.total_count).toBe(0)
    expect((await get(receiver, '/recibidos/no-es-uuid')).status).toBe(404)
    expect((await get(receiver, `/recibidos/${crypto.randomUUID()}`)).status).toBe(404)
  })

  test('an action without an active certificate is 422 CERTIFICATE_REQUIRED; a bad action is 400', async () => {
    const id = (await get(receiver, '/recibidos?estado=recibido&tipo_dte=33&limit=1')).json.items[0].id
    const post = (body: unknown) => s.request('POST', `${API}/recibidos/${id}/acciones`, { headers: { 'X-Api-Key': receiver.writeKey }, body })
    const res = await post({ accion: 'ACD' })
    expect(res.status).toBe(422)
    expect(res.json.code).toBe('CERTIFICATE_REQUIRED')
    expect((await post({ accion: 'XYZ' })).json.details).toContainEqual(expect.objectContaining({ field: 'accion' }))
    expect((await post({ accion: 'RCD', motivo: 'x'.repeat(257) })).json.details).toContainEqual(expect.objectContaining({ field: 'motivo', code: 'TOO_LONG' }))
    expect((await get(receiver, `/recibidos/${id}`)).json.acciones).toEqual([])
  })
})
