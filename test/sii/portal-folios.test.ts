// The folio client (src/sii/portal/folios.ts) against a real TLS fake of the SII's folio pages behind the login by
// certificate (portal-folios-server.ts): the exact requests and bodies of a request, the first timbraje, the cap at
// MAX_AUTOR, each refusal, a changed page naming its step, a cut during and after the grant (`otorgado`, and never a
// second POST to genera), the re-download, the annulment, logout always, one session per company, no secret in logs.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { openPfx } from '../../src/crypto/pfx'
import type { SiiCompany, SiiCredentials } from '../../src/sii/client/client'
import { foliosOrigin } from '../../src/sii/client/hosts'
import { FOLIOS_HOSTS, FOLIOS_PATHS } from '../../src/sii/folios-protocol'
import { PORTAL_PATHS } from '../../src/sii/portal-protocol'
import { createFoliosPortalClient, formBody, type FoliosPortalClientOptions } from '../../src/sii/portal/folios'
import { readFoliosPage } from '../../src/sii/portal/folios-pages'
import { createRcvPortalClient } from '../../src/sii/portal/rcv-client'
import { simulatedCafFile } from '../../src/sii/simulator/caf-issuer'
import portalCaPem from '../../src/sii/simulator/portal-ca.cert.pem' with { type: 'text' }
import { parseCaf } from '../../src/xml/caf'
import { exportPfx, makeCertificate } from '../support/pki'
import { foliosPortal, html, loginPage, newFoliosState, parseLatin1Form, type FoliosPortalState } from './portal-folios-server'
import { CSESSIONID, newPortalState, startFakePortal, TOKEN, type FakePortal, type RcvPortalState } from './portal-server'

const identity = makeCertificate({ rut: '11111111-1', commonName: 'Titular Empresa', keySlot: 7, serial: '5a11' })
const certificado = openPfx(exportPfx(identity, 'clave', '3des'), 'clave')
const creds: SiiCredentials = { certificateId: 'cert-1', rutFirmante: certificado.rutFirmante, signer: certificado.signer }
const company: SiiCompany = { rut: '76354771-K', ambiente: 'certificacion', isDemo: false }
const companyDer = Buffer.from(certificado.signer.certificateDerBase64, 'base64')
const NOW = new Date('2026-11-27T15:00:00Z')

let portal: FakePortal
let rcv: RcvPortalState
let state: FoliosPortalState
let logs: Array<{ event: string } & Record<string, unknown>>

beforeAll(async () => {
  portal = await startFakePortal(() => ({ status: 500 }))
})
afterAll(() => portal.stop())
beforeEach(() => {
  portal.seen.length = 0
  logs = []
  rcv = newPortalState({})
  state = newFoliosState()
  portal.handler = foliosPortal(state, rcv, companyDer)
})

function client(extra: Partial<FoliosPortalClientOptions> = {}) {
  return createFoliosPortalClient({ target: { kind: 'origin', origin: portal.httpsOrigin }, log: (event, fields) => logs.push({ event, ...fields }), now: () => NOW, ...extra })
}

/** The folio pages' requests, as `METHOD path` and the decoded form. */
const folioRequests = () => portal.seen.filter((r) => r.path.startsWith('/cvc_cgi/')).map((r) => ({ req: `${r.method} ${r.path}`, form: [...parseLatin1Form(r.body)] }))
const logouts = () => portal.seen.filter((r) => r.path === PORTAL_PATHS.logout).length
const EMPRESA: Array<[string, string]> = [['RUT_EMP', '76354771'], ['DV_EMP', 'K']]

describe('solicitarCaf', () => {
  test('the happy path: login for the folio pages, the six steps with their exact bodies, the CAF of the granted range, logout', async () => {
    const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 50 })
    expect(outcome).toMatchObject({ kind: 'otorgado', tipo: 33, folioDesde: 101, folioHasta: 150, fecha: '2026-11-27', maxAutor: 100, cantidadPedida: 50, cantidadSolicitada: 50 })
    if (outcome.kind !== 'otorgado') throw new Error('unreachable')
    const caf = parseCaf(outcome.caf)
    expect([caf.rutEmisor, caf.tipoDte, caf.folioDesde, caf.folioHasta, caf.idk]).toEqual(['76354771-K', 33, 101, 150, 900])
    // Latin-1 bytes as the SII sends them: the razón social's Ñ is one byte.
    expect(caf.razonSocial).toBe('Comercial Ñandú Limitada')

    // The login's referencia is the folio pages' first form on the origin.
    const referencia = `${portal.httpsOrigin}${FOLIOS_PATHS.solicita}`
    expect(portal.seen[0]?.target).toBe(`${PORTAL_PATHS.login}?${referencia}`)
    for (const req of portal.seen) expect(req.peerCertificate?.equals(companyDer)).toBe(true)
    expect(folioRequests()).toEqual([
      { req: `GET ${FOLIOS_PATHS.solicita}`, form: [] },
      { req: `POST ${FOLIOS_PATHS.solicitaDcto}`, form: [...EMPRESA, ['ACEPTAR', 'Continuar']] },
      { req: `POST ${FOLIOS_PATHS.solicitaDcto}`, form: [...EMPRESA, ['COD_DOCTO', '33']] },
      { req: `POST ${FOLIOS_PATHS.solicitaDcto}`, form: [...EMPRESA, ['COD_DOCTO', '33'], ['CANT_DOCTOS', '50'], ['ACEPTAR', 'Solicitar Numeración']] },
      { req: `POST ${FOLIOS_PATHS.genera}`, form: [...EMPRESA, ['COD_DOCTO', '33'], ['FOLIO_INI', '101'], ['FOLIO_FIN', '150'], ['NOMUSU', 'TITULAR EMPRESA'], ['CANT_DOCTOS', '50'], ['ACEPTAR', 'Obtener Folios']] },
      { req: `POST ${FOLIOS_PATHS.archivo}`, form: [...EMPRESA, ['COD_DOCTO', '33'], ['FOLIO_INI', '101'], ['FOLIO_FIN', '150'], ['FECHA', '2026-11-27'], ['ACEPTAR', 'AQUI']] },
    ])
    // The button's ó leaves as the Latin-1 byte an ISO-8859-1 page's form sends.
    expect(portal.seen.find((r) => r.body.includes('Solicitar'))?.body).toContain('ACEPTAR=Solicitar+Numeraci%F3n')
    for (const r of portal.seen.filter((x) => x.path.startsWith('/cvc_cgi/'))) expect(r.headers.cookie).toContain(`TOKEN=${TOKEN}`)
    expect(portal.seen.at(-1)?.path).toBe(PORTAL_PATHS.logout)
    expect([state.generaPosts, state.grants.length, rcv.logins, rcv.logouts, rcv.open]).toEqual([1, 1, 1, 1, 0])
    expect(logs.find((l) => l.event === 'sii.portal.folios')).toMatchObject({ company_rut: '76354771-K', operation: 'solicitar', outcome: 'otorgado', folio_desde: 101, folio_hasta: 150 })
  })

  test('first timbraje: the initial folio is confirmed as proposed, then granted', async () => {
    state.primerTimbraje.add(61)
    state.siguiente.set(61, 1)
    const outcome = await client().solicitarCaf(company, creds, { tipo: 61, cantidad: 10 })
    expect(outcome).toMatchObject({ kind: 'otorgado', tipo: 61, folioDesde: 1, folioHasta: 10 })
    const reqs = folioRequests()
    expect(reqs.map((r) => r.req)).toEqual([
      `GET ${FOLIOS_PATHS.solicita}`, `POST ${FOLIOS_PATHS.solicitaDcto}`, `POST ${FOLIOS_PATHS.solicitaDcto}`, `POST ${FOLIOS_PATHS.solicitaDcto}`,
      `POST ${FOLIOS_PATHS.confirma}`, `POST ${FOLIOS_PATHS.genera}`, `POST ${FOLIOS_PATHS.archivo}`,
    ])
    expect(reqs[4]?.form).toEqual([...EMPRESA, ['COD_DOCTO', '61'], ['CANT_DOCTOS', '10'], ['FOLIO_INI', '1'], ['ACEPTAR', 'Confirmar Folio Inicial']])
    expect(state.generaPosts).toBe(1)
  })

  test('a request over MAX_AUTOR is capped at it, and the outcome says both figures', async () => {
    state.maxAutor = 80
    const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 500 })
    expect(outcome).toMatchObject({ kind: 'otorgado', folioDesde: 101, folioHasta: 180, maxAutor: 80, cantidadPedida: 500, cantidadSolicitada: 80 })
    expect(folioRequests()[3]?.form).toContainEqual(['CANT_DOCTOS', '80'])
  })

  test('a proposal for more than asked, or for another type, is refused before the grant; fewer is taken', async () => {
    const proposal = (tipo: number, desde: number, hasta: number) => html(`<form method=post action="${FOLIOS_PATHS.genera}"><input type=hidden name=RUT_EMP value=76354771><input type=hidden name=DV_EMP value=K><input type=hidden name=COD_DOCTO value=${tipo}><input type=hidden name=FOLIO_INI value=${desde}><input type=hidden name=FOLIO_FIN value=${hasta}><input type=hidden name=NOMUSU value=X><input type=hidden name=CANT_DOCTOS value=${hasta - desde + 1}></form>`)
    for (const [tipo, hasta] of [[33, 160], [34, 150]] as const) {
      state.spoil = (req, form) => (form.get('ACEPTAR') === 'Solicitar Numeración' ? proposal(tipo, 101, hasta) : undefined)
      const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 50 })
      expect(outcome).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida', etapa: 'numeracion' })
      expect(outcome).not.toHaveProperty('otorgado')
    }
    expect(state.generaPosts).toBe(0)
    state.spoil = (req, form) => (form.get('ACEPTAR') === 'Solicitar Numeración' ? proposal(33, 101, 130) : undefined)
    expect(await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 50 })).toMatchObject({ kind: 'otorgado', folioDesde: 101, folioHasta: 130, cantidadSolicitada: 50 })
    expect(state.generaPosts).toBe(1)
  })

  test('MAX_AUTOR 0: nothing is asked', async () => {
    state.maxAutor = 0
    const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 5 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'excede_maximo', etapa: 'documento' })
    expect(folioRequests()).toHaveLength(3)
    expect(logouts()).toBe(1)
  })

  describe('refusals: nothing granted, no otorgado, logout', () => {
    const cases: Array<[string, () => void, string, string]> = [
      ['a certificate not authorised for the company', () => (state.autorizado = false), 'no_autorizado', 'empresa'],
      ['a pending F29', () => (state.f29Pendiente = true), 'f29_pendiente', 'documento'],
      // The type's page says 100 but the SII's real limit is lower: the request answers LIBRUD-OFSF-DTE-3-1-02.
      ['over the real maximum', () => {
        state.spoil = (req, form) => req.path === FOLIOS_PATHS.solicitaDcto && form.get('ACEPTAR') === null && form.get('COD_DOCTO') !== null
          ? html('<form method="post" action="/cvc_cgi/dte/of_solicita_folios_dcto"><input type=hidden name=RUT_EMP value=76354771><input type=hidden name=DV_EMP value=K><input type=hidden name=MAX_AUTOR value=1000><input name=CANT_DOCTOS></form>')
          : undefined
        state.maxAutor = 10
      }, 'excede_maximo', 'numeracion'],
      ['a type the company is not offered', () => (state.spoil = (req, form) => form.get('ACEPTAR') === 'Continuar' ? html('<form method=post action="/cvc_cgi/dte/of_solicita_folios_dcto"><input type=hidden name=RUT_EMP value=76354771><input type=hidden name=DV_EMP value=K><select name=COD_DOCTO><option value=39>Boleta</select></form>') : undefined), 'no_autorizado', 'empresa'],
      ['a login page mid-flow (the session ended)', () => (state.spoil = (req, form) => form.get('COD_DOCTO') !== null ? loginPage : undefined), 'sesion_expirada', 'documento'],
      ['a renamed MAX_AUTOR', () => (state.spoil = (req, form) => form.get('ACEPTAR') === null && form.get('COD_DOCTO') !== null ? html('<form method=post action="/cvc_cgi/dte/of_solicita_folios_dcto"><input type=hidden name=RUT_EMP value=76354771><input type=hidden name=DV_EMP value=K><input type=hidden name=MAX_AUTORIZADO value=100><input name=CANT_DOCTOS></form>') : undefined), 'pagina_desconocida', 'documento'],
      ['a first page without its form', () => (state.spoil = (req) => req.path === FOLIOS_PATHS.solicita ? html('<p>Sitio en mantenci&oacute;n</p>') : undefined), 'pagina_desconocida', 'inicio'],
      ['a 503 at the request', () => (state.spoil = (req, form) => form.get('CANT_DOCTOS') !== null ? { status: 503, body: 'x' } : undefined), 'sin_conexion', 'numeracion'],
    ]
    for (const [name, arrange, motivo, etapa] of cases) {
      test(name, async () => {
        arrange()
        const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 50 })
        expect(outcome).toMatchObject({ kind: 'failed', motivo, etapa })
        expect(outcome).not.toHaveProperty('otorgado')
        if (outcome.kind === 'failed' && (motivo === 'pagina_desconocida' || motivo === 'sesion_expirada')) expect(outcome.mensaje).toContain(`«${etapa}»`)
        expect([state.generaPosts, state.grants.length, logouts(), rcv.open]).toEqual([0, 0, 1, 0])
        expect(logs.find((l) => l.event === 'sii.portal.folios')).toMatchObject({ outcome: 'failed', motivo, etapa, company_rut: '76354771-K', operation: 'solicitar' })
      })
    }
  })

  test('a changed page names its step and what is missing', async () => {
    state.spoil = (req, form) => form.get('ACEPTAR') === null && form.get('COD_DOCTO') !== null
      ? html('<form method=post action="/cvc_cgi/dte/of_solicita_folios_dcto"><input type=hidden name=RUT_EMP value=76354771><input type=hidden name=DV_EMP value=K><input name=CANT_DOCTOS></form>')
      : undefined
    const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 50 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'pagina_desconocida', etapa: 'documento' })
    if (outcome.kind === 'failed') expect(outcome.mensaje).toContain('le falta MAX_AUTOR')
  })

  test('no answer to the grant: otorgado carries the proposed range and today\'s date; genera was POSTed once; redescargar recovers', async () => {
    state.spoil = (req) => (req.path === FOLIOS_PATHS.genera && state.generaPosts === 1 ? { status: 200, hang: true } : undefined)
    const outcome = await client({ timeoutMs: 1500 }).solicitarCaf(company, creds, { tipo: 33, cantidad: 20 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sin_conexion', etapa: 'otorgamiento', otorgado: { tipo: 33, folioDesde: 101, folioHasta: 120, fecha: '2026-11-27' } })
    if (outcome.kind === 'failed') expect(outcome.mensaje).toContain('no los solicite de nuevo')
    expect(state.generaPosts).toBe(1)
    expect(folioRequests().filter((r) => r.req.endsWith(FOLIOS_PATHS.archivo))).toHaveLength(0)
    expect(logouts()).toBe(1)
    // The SII did grant it (the hang came after the grant was made elsewhere): the re-download gets the file.
    state.grants.push({ tipo: 33, desde: 101, hasta: 120, fecha: '2026-11-27' })
    state.spoil = undefined
    const again = await client().redescargarCaf(company, creds, outcome.kind === 'failed' && outcome.otorgado !== undefined ? outcome.otorgado : { tipo: 0, folioDesde: 0, folioHasta: 0, fecha: '' })
    expect(again).toMatchObject({ kind: 'descargado', tipo: 33, folioDesde: 101, folioHasta: 120, fecha: '2026-11-27' })
    expect(state.generaPosts).toBe(1)
  })

  test('a cut after the grant (the download fails): otorgado with the grant page\'s date, no second genera', async () => {
    state.fecha = '2026-11-26'
    state.spoil = (req) => (req.path === FOLIOS_PATHS.archivo ? { status: 502, body: 'Bad gateway' } : undefined)
    const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 20 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sin_conexion', etapa: 'descarga', otorgado: { tipo: 33, folioDesde: 101, folioHasta: 120, fecha: '2026-11-26' } })
    expect([state.generaPosts, logouts()]).toEqual([1, 1])
    expect(logs.find((l) => l.event === 'sii.portal.folios.grant')).toMatchObject({ folio_desde: 101, folio_hasta: 120 })
  })

  test('a downloaded file that is not the granted CAF is respuesta_invalida, with otorgado', async () => {
    const cases: Array<[string, FoliosPortalState['archivo'], string]> = [
      ['another company', (g) => simulatedCafFile({ rut: '11111111-1', razonSocial: 'Otra', tipoDte: g.tipo, folioDesde: g.desde, folioHasta: g.hasta, fechaAutorizacion: g.fecha }), 'es de la empresa 11111111-1'],
      ['another range', (g) => simulatedCafFile({ rut: '76354771-K', razonSocial: 'X', tipoDte: g.tipo, folioDesde: g.desde, folioHasta: g.hasta + 1, fechaAutorizacion: g.fecha }), 'autoriza los folios 101 a 121'],
      ['another type', (g) => simulatedCafFile({ rut: '76354771-K', razonSocial: 'X', tipoDte: 34, folioDesde: g.desde, folioHasta: g.hasta, fechaAutorizacion: g.fecha }), 'es del tipo 34'],
      ['a tampered signature', (g) => Buffer.from(Buffer.from(simulatedCafFile({ rut: '76354771-K', razonSocial: 'X', tipoDte: g.tipo, folioDesde: g.desde, folioHasta: g.hasta, fechaAutorizacion: g.fecha })).toString('latin1').replace('<RS>X</RS>', '<RS>Y</RS>'), 'latin1'), 'no es un CAF válido'],
      ['not XML at all', () => Buffer.from('<AUTORIZACION>roto'), 'no es un CAF válido'],
    ]
    for (const [, archivo, says] of cases) {
      state = newFoliosState()
      state.archivo = archivo
      portal.handler = foliosPortal(state, rcv, companyDer)
      const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 20 })
      expect(outcome).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida', etapa: 'descarga', otorgado: { folioDesde: 101, folioHasta: 120 } })
      if (outcome.kind === 'failed') expect(outcome.mensaje).toContain(says)
      expect(state.generaPosts).toBe(1)
    }
  })

  test('foliosOrigin: the ambiente\'s host on the SII, the origin for an origin target', () => {
    expect(foliosOrigin({ kind: 'sii' }, 'produccion')).toBe(FOLIOS_HOSTS.produccion)
    expect(foliosOrigin({ kind: 'sii' }, 'certificacion')).toBe('https://maullin.sii.cl')
    expect(foliosOrigin({ kind: 'origin', origin: 'https://127.0.0.1:9/' }, 'produccion')).toBe('https://127.0.0.1:9')
  })

  test('on the real SII target the pages go to the ambiente\'s host, and a CAF of the simulator\'s IDK 900 is refused after the grant', async () => {
    // Every *.sii.cl request is carried to the fake portal, trusting its CA as the test's own addition: the client
    // itself runs as for the real SII (its hosts, its redirect rule, the SII's CAF keys only).
    const hosts: string[] = []
    const toFake = ((input: string | URL | Request, init?: RequestInit & { tls?: Record<string, unknown> }) => {
      const url = new URL(String(input))
      hosts.push(`${url.host}${url.pathname}`)
      return fetch(`${portal.httpsOrigin}${url.pathname}${url.search}`, { ...init, tls: { ...init?.tls, ca: portalCaPem } } as RequestInit)
    }) as typeof fetch
    const outcome = await client({ target: { kind: 'sii' }, fetch: toFake }).solicitarCaf({ ...company, ambiente: 'produccion' }, creds, { tipo: 33, cantidad: 20 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida', etapa: 'descarga', otorgado: { folioDesde: 101, folioHasta: 120 } })
    if (outcome.kind === 'failed') expect(outcome.mensaje).toContain('IDK 900')
    expect(hosts.filter((h) => h.includes('/cvc_cgi/')).every((h) => h.startsWith('palena.sii.cl/'))).toBe(true)
    expect(hosts.filter((h) => h.includes('/cvc_cgi/'))).toHaveLength(6)
    expect(logouts()).toBe(1)
  })
})

describe('redescargarCaf and anularFolios', () => {
  test('re-download: a granted range again (nothing consumed), a range never granted refused', async () => {
    state.grants.push({ tipo: 33, desde: 1, hasta: 5, fecha: '2026-10-01' })
    const ok = await client().redescargarCaf(company, creds, { tipo: 33, folioDesde: 1, folioHasta: 5, fecha: '2026-10-01' })
    expect(ok).toMatchObject({ kind: 'descargado', tipo: 33, folioDesde: 1, folioHasta: 5, fecha: '2026-10-01' })
    expect(folioRequests()).toEqual([{ req: `POST ${FOLIOS_PATHS.archivo}`, form: [...EMPRESA, ['COD_DOCTO', '33'], ['FOLIO_INI', '1'], ['FOLIO_FIN', '5'], ['FECHA', '2026-10-01'], ['ACEPTAR', 'AQUI']] }])
    const refused = await client().redescargarCaf(company, creds, { tipo: 33, folioDesde: 6, folioHasta: 9, fecha: '2026-10-01' })
    expect(refused).toMatchObject({ kind: 'failed', motivo: 'sii_rechazo', etapa: 'descarga' })
    expect(refused).not.toHaveProperty('otorgado')
    expect([state.generaPosts, logouts()]).toEqual([0, 2])
  })

  test('annul: the exact body, then "Folios anulados" with the range; a range outside the grants refused', async () => {
    state.grants.push({ tipo: 33, desde: 1, hasta: 50, fecha: '2026-10-01' })
    const ok = await client().anularFolios(company, creds, { tipo: 33, folioDesde: 40, folioHasta: 50, motivo: 'Folios no utilizados' })
    expect(ok).toEqual({ kind: 'anulado', tipo: 33, folioDesde: 40, folioHasta: 50 })
    expect(folioRequests()).toEqual([{ req: `POST ${FOLIOS_PATHS.anula}`, form: [...EMPRESA, ['COD_DOCTO', '33'], ['FOLIO_INI', '40'], ['FOLIO_FIN', '50'], ['MOTIVO', 'Folios no utilizados'], ['ACEPTAR', 'Anular']] }])
    const refused = await client().anularFolios(company, creds, { tipo: 33, folioDesde: 45, folioHasta: 60, motivo: 'x' })
    expect(refused).toMatchObject({ kind: 'failed', motivo: 'sii_rechazo', etapa: 'anulacion' })
    expect(logouts()).toBe(2)
  })
})

describe('sessions and logs', () => {
  test('a refused certificate: login_rechazado at ingreso, and logout still happens', async () => {
    const other = makeCertificate({ rut: '22222222-2', keySlot: 8, serial: '5a12' })
    const outcome = await client().solicitarCaf(company, { ...creds, signer: other.signer }, { tipo: 33, cantidad: 5 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'login_rechazado', etapa: 'ingreso' })
    expect(folioRequests()).toHaveLength(0)
    expect(logouts()).toBe(1)
  })

  test('one session per company at a time across folios and RCV', async () => {
    state.grants.push({ tipo: 33, desde: 1, hasta: 5, fecha: '2026-10-01' })
    const rcvClient = createRcvPortalClient({ target: { kind: 'origin', origin: portal.httpsOrigin } })
    const outcomes = await Promise.all([
      client().solicitarCaf(company, creds, { tipo: 33, cantidad: 5 }),
      client().redescargarCaf(company, creds, { tipo: 33, folioDesde: 1, folioHasta: 5, fecha: '2026-10-01' }),
      rcvClient.leerRcv(company, creds, '202610'),
    ])
    expect(outcomes.map((o) => o.kind)).toEqual(['otorgado', 'descargado', 'ok'])
    expect([rcv.logins, rcv.maxOpen, rcv.open]).toEqual([3, 1, 0])
  })

  test('no cookie, token or key in any log line or failure message, even when a page echoes the session', async () => {
    state.spoil = (req) => (req.path === FOLIOS_PATHS.archivo ? html(`<p>No ha sido posible completar su solicitud. Sesion ${TOKEN} ${CSESSIONID}</p>`) : undefined)
    const outcome = await client().solicitarCaf(company, creds, { tipo: 33, cantidad: 5 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sii_rechazo', etapa: 'descarga' })
    const everything = JSON.stringify([logs, outcome])
    expect(everything).toContain('[sesión]')
    for (const secret of [TOKEN, CSESSIONID, 'PRIVATE KEY', certificado.signer.certificateDerBase64.slice(0, 40)]) expect(everything).not.toContain(secret)
  })
})

describe('pages and bodies', () => {
  test('the page reader: forms by action, entities decoded, options, buttons; inputs outside forms ignored', async () => {
    const page = await readFoliosPage('<p>Solicitud de <b>folios</b></p><FORM METHOD=post ACTION="https://x.sii.cl/cvc_cgi/dte/of_genera_folio?a=1"><input type=hidden name="NOMUSU" value="JOS&Eacute; &amp; CIA"><select name=COD_DOCTO><option value=33>F<option value="61" selected>N</select><input type=submit name=ACEPTAR value="Obtener Folios"></form><input name=SUELTO value=1>')
    expect(page.forms).toHaveLength(1)
    expect(page.forms[0]?.action).toBe(FOLIOS_PATHS.genera)
    expect([...(page.forms[0]?.inputs ?? [])]).toEqual([['NOMUSU', 'JOSÉ & CIA']])
    expect(page.forms[0]?.selects.get('COD_DOCTO')).toEqual(['33', '61'])
    expect(page.forms[0]?.buttons).toEqual(['Obtener Folios'])
    expect(page.text).toContain('Solicitud de folios')
  })

  test('a form body as an ISO-8859-1 page sends it', () => {
    expect(formBody([['ACEPTAR', 'Solicitar Numeración'], ['MOTIVO', 'a&b=c ñ€']])).toBe('ACEPTAR=Solicitar+Numeraci%F3n&MOTIVO=a%26b%3Dc+%F1%26%238364%3B')
  })
})
