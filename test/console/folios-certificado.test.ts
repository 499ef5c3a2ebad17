// Console folios and certificate (DESIGN §8, §14) against a real server and a real SQLite file: what the console
// uploads is what the API then answers (GET /caf, GET /empresa/certificado), every refusal is shown beside its field
// and changes nothing, and a read-only key sees the pages without their forms.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { santiagoDate } from '../../src/clock'
import { formatFecha, formatRut } from '../../src/console/forms'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { signer, SIGNER_RUT } from '../support/issuance'
import { exportPfx, makeCertificate, makeTestCaf } from '../support/pki'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const API = '/api/v1/billing'
const DAY = 86_400_000
let s: TestServer
let t: Tenant
let w: ConsoleClient
let ro: ConsoleClient

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  w = await consoleLogin(s, t.writeKey)
  ro = await consoleLogin(s, t.readKey)
})
afterAll(() => s.stop())

const api = (path: string) => s.request('GET', `${API}${path}`, { headers: { 'X-Api-Key': t.readKey } })

/** The text of the element with this id (its first closing tag), for an error shown beside a field. */
function textOfId(html: string, id: string): string | null {
  const m = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)
  return m ? m[1]! : null
}

function pfxForm(pfx: Uint8Array, password: string): FormData {
  const form = new FormData()
  form.set('pfx', new File([new Uint8Array(pfx)], 'firma.pfx', { type: 'application/x-pkcs12' }))
  form.set('password', password)
  return form
}

function cafForm(tipo: string, bytes: Uint8Array): FormData {
  const form = new FormData()
  form.set('tipo_dte', tipo)
  form.set('caf', new File([new Uint8Array(bytes)], `caf-${tipo}.xml`, { type: 'text/xml' }))
  return form
}

/** A CAF for the tenant's RUT, as uploadCaf makes it; the razón social carries Ñ, so its ISO-8859-1 bytes matter. */
const tenantCaf = (tipoDte: number, folioDesde: number, folioHasta: number) =>
  makeTestCaf({ rut: t.empresa.rut, razonSocial: 'Ñandúes y Compañía Ltda.', tipoDte, folioDesde, folioHasta, fechaAutorizacion: santiagoDate(new Date(Date.now() - 2 * DAY)) })

describe('certificado', () => {
  test('no certificate yet: the page is a 200 empty state with the upload form, not an error page', async () => {
    const page = await w.get('/console/certificado')
    expect(page.status).toBe(200)
    expect(page.html).toContain('Sin certificado')
    expect(page.html).toContain('id="subir-certificado"')
    expect(page.html).toContain('id="f-pfx"')
    expect((await api('/empresa/certificado')).status).toBe(404)
  })

  test('a wrong password: 400, the error beside the password field, the password not echoed, nothing stored', async () => {
    const password = 'clave-equivocada-9931'
    const page = await w.post('/console/certificado', pfxForm(exportPfx(signer(), 'test', '3des'), password))
    expect(page.status).toBe(400)
    expect(textOfId(page.html, 'f-password-error')).toContain('contraseña')
    expect(page.html).toContain('aria-invalid="true"')
    expect(page.html).not.toContain(password)
    expect((await api('/empresa/certificado')).status).toBe(404)
  })

  test('no file: 400 beside the file field', async () => {
    const form = new FormData()
    form.set('password', 'test')
    const page = await w.post('/console/certificado', form)
    expect(page.status).toBe(400)
    expect(textOfId(page.html, 'f-pfx-error')).toContain('PFX')
    expect((await api('/empresa/certificado')).status).toBe(404)
  })

  test('a certificate close to expiry: uploaded, the API shows it, the page warns with its days left', async () => {
    const identity = makeCertificate({ rut: '11111111-1', commonName: 'ANA ROJAS', notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 10 * DAY + 3_600_000), keySlot: 8 })
    const posted = await w.post('/console/certificado', pfxForm(exportPfx(identity, 'secreta', '3des'), 'secreta'))
    expect(posted.status).toBe(303)
    expect(posted.location).toBe('/console/certificado?aviso=cargado')
    expect((await api('/empresa/certificado')).json).toMatchObject({ has_certificado: true, rut_firmante: '11111111-1', dias_para_vencimiento: 10, is_active: true })
    const page = await w.get(posted.location!)
    expect(page.html).toContain('Certificado cargado')
    // The holder, its RUT with dots, the authority (self-signed here: the holder) and both ends of the validity.
    expect(page.html).toContain('<dt>Titular</dt><dd>ANA ROJAS</dd>')
    expect(page.html).toContain('<dd>11.111.111-1</dd>')
    expect(page.html).toContain('<dt>Emitido por</dt><dd>ANA ROJAS</dd>')
    expect(page.html).toContain(`<dt>Vigente desde</dt><dd>${formatFecha(santiagoDate(new Date(Date.now() - DAY)))}</dd>`)
    expect(page.html).toContain('<span class="badge badge-warn">10 días</span>')
  })

  test('uploading through the console as multipart replaces the active certificate: the API shows the new one', async () => {
    const posted = await w.post('/console/certificado', pfxForm(exportPfx(signer(), 'test', '3des'), 'test'))
    expect(posted.status).toBe(303)
    const status = (await api('/empresa/certificado')).json
    expect(status).toMatchObject({ has_certificado: true, rut_firmante: SIGNER_RUT, is_active: true })
    const page = await w.get('/console/certificado')
    expect(page.html).toContain(formatRut(SIGNER_RUT))
    expect(page.html).toContain(`<span class="badge badge-ok">${status.dias_para_vencimiento} días</span>`)
    expect(page.html).toContain('Reemplazar el certificado')
  })
})

describe('folios', () => {
  let cafBytes: Uint8Array

  test('no CAF yet: 200 with the empty state and the upload form', async () => {
    const page = await w.get('/console/folios')
    expect(page.status).toBe(200)
    expect(page.html).toContain('Aún no hay CAF cargados')
    expect(page.html).toContain('id="f-caf"')
    expect(page.html).toContain('id="f-tipo_dte"')
  })

  test('a CAF uploaded through the console: 303 ?aviso=cargado naming its range; GET /caf lists it; the page shows its folios left', async () => {
    cafBytes = tenantCaf(33, 1, 50).bytes
    const posted = await w.post('/console/folios', cafForm('33', cafBytes))
    expect(posted.status).toBe(303)
    expect(posted.location).toMatch(/^\/console\/folios\?aviso=cargado&caf=[0-9a-f-]{36}$/)
    const listed = (await api('/caf')).json.data
    expect(listed).toEqual([expect.objectContaining({ tipo_dte: 33, folio_desde: 1, folio_hasta: 50, folios_disponibles: 50, is_active: true })])
    const page = await w.get(posted.location!)
    expect(page.html).toContain('CAF cargado: tipo 33, folios 1 a 50 (50 disponibles).')
    expect(page.html).toContain('50 folios disponibles en CAF vigentes')
    expect(page.html).toContain(`id="caf-${listed[0].id}"`)
    expect(page.html).toContain('<span class="badge badge-ok">Vigente</span>')
    // A factura's folios serve 180 days from their authorization, two days ago: 178 left, no warning.
    expect(page.html).not.toContain('badge-warn')
  })

  test('the same CAF again: 409 with CAF_RANGE_EXISTS beside the file field, still one CAF', async () => {
    const page = await w.post('/console/folios', cafForm('33', cafBytes))
    expect(page.status).toBe(409)
    expect(textOfId(page.html, 'f-caf-error')).toContain('se superpone con un CAF ya registrado')
    expect(textOfId(page.html, 'f-caf-error')).toContain('1 – 50')
    expect((await api('/caf')).json.data).toHaveLength(1)
  })

  test("another company's CAF: 400 INVALID_CAF beside the file field; a type that is not the CAF's too", async () => {
    const foreign = makeTestCaf({ tipoDte: 33, folioDesde: 500, folioHasta: 510, fechaAutorizacion: santiagoDate(new Date()) })
    const page = await w.post('/console/folios', cafForm('33', foreign.bytes))
    expect(page.status).toBe(400)
    expect(textOfId(page.html, 'f-caf-error')).toContain(`la empresa es ${t.empresa.rut}`)
    const wrongType = await w.post('/console/folios', cafForm('34', tenantCaf(33, 100, 110).bytes))
    expect(wrongType.status).toBe(400)
    expect(textOfId(wrongType.html, 'f-caf-error')).toContain('no de tipo 34')
    // The type picked is kept in the form.
    expect(wrongType.html).toContain('<option value="34" selected>')
    expect((await api('/caf')).json.data).toHaveLength(1)
  })

  test('no type and no file: 400 with both errors beside their fields', async () => {
    const page = await w.post('/console/folios', new FormData())
    expect(page.status).toBe(400)
    expect(textOfId(page.html, 'f-tipo_dte-error')).toBe('Campo requerido.')
    expect(textOfId(page.html, 'f-caf-error')).toContain('Adjunte')
  })

  test('a second type shows as its own group; a guía (52) does not expire', async () => {
    const posted = await w.post('/console/folios', cafForm('52', tenantCaf(52, 1, 20).bytes))
    expect(posted.status).toBe(303)
    const page = await w.get('/console/folios')
    expect(page.html).toContain('id="tipo-33"')
    expect(page.html).toContain('id="tipo-52"')
    expect(page.html).toContain('No vence')
  })
})

describe('read-only key', () => {
  test('sees both pages with their data but no upload forms', async () => {
    const folios = await ro.get('/console/folios')
    expect(folios.status).toBe(200)
    expect(folios.html).toContain('50 folios disponibles en CAF vigentes')
    expect(folios.html).not.toContain('id="subir-caf"')
    expect(folios.html).not.toContain('type="file"')
    const cert = await ro.get('/console/certificado')
    expect(cert.status).toBe(200)
    expect(cert.html).toContain(formatRut(SIGNER_RUT))
    expect(cert.html).not.toContain('id="subir-certificado"')
    expect(cert.html).not.toContain('type="file"')
  })

  test('a POST is refused 403 and changes nothing', async () => {
    const caf = await ro.post('/console/folios', cafForm('33', tenantCaf(33, 200, 210).bytes))
    expect(caf.status).toBe(403)
    expect((await api('/caf')).json.data).toHaveLength(2)
    const before = (await api('/empresa/certificado')).json
    const identity = makeCertificate({ rut: '11111111-1', keySlot: 8, notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 100 * DAY) })
    const cert = await ro.post('/console/certificado', pfxForm(exportPfx(identity, 'x', '3des'), 'x'))
    expect(cert.status).toBe(403)
    expect((await api('/empresa/certificado')).json).toEqual(before)
  })
})
