// The simulated SII's folio pages (src/sii/simulator/folios-service.ts; the contract is src/sii/folios-protocol.ts) over
// real HTTP on 127.0.0.1, after the portal's login by certificate over mutual TLS: each page, the first timbraje's
// confirmation, the grant counter, the CAF (parsed and its signature verified against the simulator's authority), its
// identical re-download, the refusals that grant nothing, the annulment, and the faults pagina_cambiada and
// corte_tras_otorgar. docs/decisions/simulator.md "Folios (timbraje)".
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { FOLIOS_ACEPTAR, FOLIOS_FIELDS as F, FOLIOS_HOSTS, FOLIOS_PATHS, FOLIOS_TEXTS } from '../../src/sii/folios-protocol'
import { startSimulator } from '../../src/sii/simulator/server'
import { SimulatorStore, type FallaPortal } from '../../src/sii/simulator/store'
import { authorityKeys } from '../../src/xml/authority-keys'
import { parseCaf, verifyCaf } from '../../src/xml/caf'
import { testClock } from '../support/clock'
import { tempDir } from '../support/server'
import { SIM_START } from './simulator-helpers'
import { holder, login } from './simulator-portal-helpers'

setDefaultTimeout(30_000)

const running: Array<{ stop(): Promise<void> }> = []
const dirs: string[] = []
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const EMPRESA = { [F.rut]: '76086428', [F.dv]: '5' }
const RUT = '76086428-5'
const REFERENCIA_FOLIOS = `${FOLIOS_HOSTS.certificacion}${FOLIOS_PATHS.solicita}`

interface Sitio {
  readonly url: string
  readonly dataDir: string
  readonly token: string
  /** The simulator's store on the same file, as the CLI opens it beside a running simulator. */
  readonly store: SimulatorStore
}

async function sitio(): Promise<Sitio> {
  const dataDir = tempDir('timbre-folios-')
  dirs.push(dataDir)
  const sim = await startSimulator({ processingDelayMs: 0, clock: testClock({ at: SIM_START }).now, dataDir })
  const store = new SimulatorStore(dataDir)
  running.push(sim, { stop: async () => store.close() })
  const answer = await login(sim.url, holder(), undefined, REFERENCIA_FOLIOS)
  expect(answer.status).toBe(302)
  expect(answer.location).toBe(`${sim.url}${FOLIOS_PATHS.solicita}`)
  if (answer.token === null) throw new Error('no TOKEN')
  return { url: sim.url, dataDir, token: answer.token, store }
}

interface Pagina {
  readonly status: number
  readonly contentType: string
  readonly bytes: Uint8Array
  /** The body read as ISO-8859-1. */
  readonly text: string
}

async function pedir(s: Sitio, path: string, fields: Readonly<Record<string, string>> | null, token: string | null = s.token): Promise<Pagina> {
  const res = await fetch(`${s.url}${path}`, {
    method: fields === null ? 'GET' : 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(token === null ? {} : { Cookie: `TOKEN=${token}; CSESSIONID=${token}` }) },
    ...(fields === null ? {} : { body: new URLSearchParams(fields).toString() }),
  })
  const bytes = new Uint8Array(await res.arrayBuffer())
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', bytes, text: Buffer.from(bytes).toString('latin1') }
}

/** The page's single form: its action and its inputs by name (hidden or text; the select's selected option as COD_DOCTO). */
function formulario(html: string): { action: string; inputs: Record<string, string> } {
  const forms = [...html.matchAll(/<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/g)]
  expect(forms.length).toBe(1)
  const inputs: Record<string, string> = {}
  for (const m of (forms[0]?.[2] ?? '').matchAll(/<input type="(?:hidden|text|submit)" name="([^"]+)" value="([^"]*)">/g)) inputs[m[1] ?? ''] = m[2] ?? ''
  return { action: forms[0]?.[1] ?? '', inputs }
}

function sinFormularioDeOtorgar(html: string): void {
  expect(html).not.toContain(`action="${FOLIOS_PATHS.genera}"`)
  expect(html).not.toContain(`action="${FOLIOS_PATHS.archivo}"`)
}

/** Steps 2–4 for `tipo` and `cantidad`; the answer of step 4. */
async function solicitar(s: Sitio, tipo: number, cantidad: number): Promise<Pagina> {
  await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.aceptar]: FOLIOS_ACEPTAR.continuar })
  await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: String(tipo) })
  return pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: String(tipo), [F.cantidad]: String(cantidad), [F.aceptar]: FOLIOS_ACEPTAR.solicitar })
}

/** A whole grant from step 4's answer (confirming the initial folio when asked): the archivo form's inputs. */
async function otorgar(s: Sitio, tipo: number, cantidad: number): Promise<Record<string, string>> {
  let page = await solicitar(s, tipo, cantidad)
  let form = formulario(page.text)
  if (form.action === FOLIOS_PATHS.confirma) {
    page = await pedir(s, FOLIOS_PATHS.confirma, form.inputs)
    form = formulario(page.text)
  }
  expect(form.action).toBe(FOLIOS_PATHS.genera)
  const generado = await pedir(s, FOLIOS_PATHS.genera, form.inputs)
  const archivo = formulario(generado.text)
  expect(archivo.action).toBe(FOLIOS_PATHS.archivo)
  return archivo.inputs
}

function fallar(s: Sitio, tipo: FallaPortal): void {
  s.store.setFalla(tipo, 1)
}

describe('the pages, one by one', () => {
  test('the login with the folios referencia comes back to of_solicita_folios; without a session every page is the login page', async () => {
    const s = await sitio()
    const first = await pedir(s, FOLIOS_PATHS.solicita, null)
    expect(first.status).toBe(200)
    expect(first.contentType).toBe('text/html; charset=ISO-8859-1')
    const form = formulario(first.text)
    expect(form.action).toBe(FOLIOS_PATHS.solicitaDcto)
    expect(Object.keys(form.inputs).sort()).toEqual([F.aceptar, F.dv, F.rut].sort())
    expect(form.inputs[F.aceptar]).toBe(FOLIOS_ACEPTAR.continuar)
    for (const [path, fields] of [[FOLIOS_PATHS.solicita, null], [FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.aceptar]: FOLIOS_ACEPTAR.continuar }]] as const) {
      expect((await pedir(s, path, fields, null)).text).toContain('IngresoCertificado')
      expect((await pedir(s, path, fields, 'F00D')).text).toContain('IngresoCertificado')
    }
  })

  test('RUT, then the type (COD_DOCTO select), then the type\'s figures: MAX_AUTOR, FOLIOS_DISP, FACTOR, CON_CREDITO, CON_AJUSTE, an empty CANT_DOCTOS; AFECTO_IVA only for boletas', async () => {
    const s = await sitio()
    const tipos = await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.aceptar]: FOLIOS_ACEPTAR.continuar })
    const form = formulario(tipos.text)
    expect(form.action).toBe(FOLIOS_PATHS.solicitaDcto)
    expect(form.inputs).toEqual({ ...EMPRESA })
    expect(tipos.text).toContain(`<select name="${F.tipo}"`)
    for (const t of [33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112]) expect(tipos.text).toContain(`<option value="${t}"`)

    const cifras = formulario((await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: '33' })).text)
    expect(cifras.action).toBe(FOLIOS_PATHS.solicitaDcto)
    expect(cifras.inputs).toMatchObject({ ...EMPRESA, [F.maxAutor]: '500', [F.foliosDisp]: '0', [F.cantidad]: '', [F.aceptar]: FOLIOS_ACEPTAR.solicitar })
    for (const name of [F.factor, F.conCredito, F.conAjuste]) expect(cifras.inputs[name]).toBeDefined()
    expect(cifras.inputs[F.afectoIva]).toBeUndefined()

    const boleta = formulario((await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: '39' })).text)
    expect(boleta.inputs[F.maxAutor]).toBe('10000')
    expect(boleta.inputs[F.afectoIva]).toBe('S')
  })

  test('the first timbraje asks to confirm the initial folio; the grant is counted, downloads as a CAF the simulator authority signed, again identically and uncounted', async () => {
    const s = await sitio()
    const pedido = await solicitar(s, 33, 100)
    expect(pedido.text).toContain(FOLIOS_TEXTS.confirmarInicial)
    const inicial = formulario(pedido.text)
    expect(inicial.action).toBe(FOLIOS_PATHS.confirma)
    expect(inicial.inputs).toMatchObject({ ...EMPRESA, [F.tipo]: '33', [F.folioIni]: '1', [F.aceptar]: FOLIOS_ACEPTAR.confirmarInicial })

    const confirma = formulario((await pedir(s, FOLIOS_PATHS.confirma, inicial.inputs)).text)
    expect(confirma.action).toBe(FOLIOS_PATHS.genera)
    expect(confirma.inputs).toMatchObject({ ...EMPRESA, [F.tipo]: '33', [F.folioIni]: '1', [F.folioFin]: '100', [F.cantidad]: '100', [F.nomUsu]: '7880442-4', [F.aceptar]: FOLIOS_ACEPTAR.obtener })
    expect(s.store.folios.cuentaOtorgamientos(RUT)).toBe(0)

    const generado = formulario((await pedir(s, FOLIOS_PATHS.genera, confirma.inputs)).text)
    expect(generado.action).toBe(FOLIOS_PATHS.archivo)
    // SIM_START is 2026-03-02T15:00Z, noon in Santiago.
    expect(generado.inputs).toEqual({ ...EMPRESA, [F.tipo]: '33', [F.folioIni]: '1', [F.folioFin]: '100', [F.fecha]: '2026-03-02', [F.aceptar]: FOLIOS_ACEPTAR.descargar })
    expect(s.store.folios.cuentaOtorgamientos(RUT)).toBe(1)

    const archivo = await pedir(s, FOLIOS_PATHS.archivo, generado.inputs)
    expect(archivo.status).toBe(200)
    expect(archivo.contentType).toBe('application/xml; charset=ISO-8859-1')
    const caf = parseCaf(archivo.bytes)
    verifyCaf(caf, authorityKeys({ allowSimulator: true }))
    expect({ rut: caf.rutEmisor, tipo: caf.tipoDte, desde: caf.folioDesde, hasta: caf.folioHasta, fa: caf.fechaAutorizacion, idk: caf.idk })
      .toEqual({ rut: RUT, tipo: 33, desde: 1, hasta: 100, fa: '2026-03-02', idk: 900 })

    const otraVez = await pedir(s, FOLIOS_PATHS.archivo, { ...generado.inputs, [F.fecha]: '2026-03-05' })
    expect(Buffer.from(otraVez.bytes).equals(Buffer.from(archivo.bytes))).toBe(true)
    expect(s.store.folios.cuentaOtorgamientos(RUT)).toBe(1)

    // The next request starts after the highest granted, without the confirmation; a repeated Obtener Folios grants nothing.
    const segundo = formulario((await solicitar(s, 33, 50)).text)
    expect(segundo.action).toBe(FOLIOS_PATHS.genera)
    expect(segundo.inputs).toMatchObject({ [F.folioIni]: '101', [F.folioFin]: '150' })
    const repetido = await pedir(s, FOLIOS_PATHS.genera, confirma.inputs)
    expect(repetido.text).toContain(FOLIOS_TEXTS.noPosible)
    sinFormularioDeOtorgar(repetido.text)
    expect(s.store.folios.cuentaOtorgamientos(RUT)).toBe(1)
    // A confirmation once the type has grants is refused.
    expect((await pedir(s, FOLIOS_PATHS.confirma, inicial.inputs)).text).toContain(FOLIOS_TEXTS.noPosible)
  })

  test('an initial folio the user changed starts the first grant; a range never granted does not download', async () => {
    const s = await sitio()
    const inicial = formulario((await solicitar(s, 61, 10)).text)
    const confirma = formulario((await pedir(s, FOLIOS_PATHS.confirma, { ...inicial.inputs, [F.folioIni]: '501' })).text)
    expect(confirma.inputs).toMatchObject({ [F.folioIni]: '501', [F.folioFin]: '510' })
    const archivo = formulario((await pedir(s, FOLIOS_PATHS.genera, confirma.inputs)).text).inputs
    expect(parseCaf((await pedir(s, FOLIOS_PATHS.archivo, archivo)).bytes).folioDesde).toBe(501)
    const ajenos: Array<Record<string, string>> = [{ [F.folioIni]: '1', [F.folioFin]: '10' }, { [F.folioIni]: '501', [F.folioFin]: '509' }, { [F.tipo]: '33' }]
    for (const rango of ajenos) {
      const page = await pedir(s, FOLIOS_PATHS.archivo, { ...archivo, ...rango })
      expect(page.contentType).toBe('text/html; charset=ISO-8859-1')
      expect(page.text).toContain(FOLIOS_TEXTS.noPosible)
      sinFormularioDeOtorgar(page.text)
    }
  })
})

describe('refusals grant nothing', () => {
  test('over MAX_AUTOR: LIBRUD-OFSF-DTE-3-1-02 and "excede", at the request and at a forged Obtener Folios; a lowered MAX_AUTOR applies at once', async () => {
    const s = await sitio()
    const page = await solicitar(s, 33, 501)
    expect(page.text).toContain(FOLIOS_TEXTS.noPosible)
    expect(page.text).toContain(FOLIOS_TEXTS.codigoExcede)
    expect(page.text).toContain(FOLIOS_TEXTS.excede)
    sinFormularioDeOtorgar(page.text)
    s.store.folios.confirmarInicial(RUT, 33, 1)
    const forjado = await pedir(s, FOLIOS_PATHS.genera, { ...EMPRESA, [F.tipo]: '33', [F.folioIni]: '1', [F.folioFin]: '600', [F.cantidad]: '600', [F.aceptar]: FOLIOS_ACEPTAR.obtener })
    expect(forjado.text).toContain(FOLIOS_TEXTS.codigoExcede)
    s.store.folios.setAjustes(RUT, { ...s.store.folios.ajustes(RUT), maxAutor: { 33: 20 } })
    expect(formulario((await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: '33' })).text).inputs[F.maxAutor]).toBe('20')
    expect((await solicitar(s, 33, 21)).text).toContain(FOLIOS_TEXTS.codigoExcede)
    expect(s.store.folios.cuentaOtorgamientos(RUT)).toBe(0)
  })

  test('a user not authorised for the company is refused at the RUT; a pending F29 at the type and at the grant', async () => {
    const s = await sitio()
    const base = s.store.folios.ajustes(RUT)
    s.store.folios.setAjustes(RUT, { ...base, noAutorizado: true })
    const noAut = await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.aceptar]: FOLIOS_ACEPTAR.continuar })
    expect(noAut.text).toContain(FOLIOS_TEXTS.noPosible)
    expect(noAut.text).toContain(FOLIOS_TEXTS.noAutorizado)
    expect(noAut.text).not.toContain('<form')

    s.store.folios.setAjustes(RUT, { ...base, f29Pendiente: true })
    const f29 = await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: '33' })
    expect(f29.text).toContain(FOLIOS_TEXTS.noPuede)
    expect(f29.text).toContain('F29')
    expect(f29.text).not.toContain('<form')
    s.store.folios.confirmarInicial(RUT, 33, 1)
    const genera = await pedir(s, FOLIOS_PATHS.genera, { ...EMPRESA, [F.tipo]: '33', [F.folioIni]: '1', [F.folioFin]: '5', [F.cantidad]: '5', [F.aceptar]: FOLIOS_ACEPTAR.obtener })
    expect(genera.text).toContain(FOLIOS_TEXTS.noPuede)
    expect(s.store.folios.cuentaOtorgamientos(RUT)).toBe(0)
  })
})

describe('annulment and FOLIOS_DISP', () => {
  test('unused folios of a grant are annulled; a range outside the grants, or with a folio received in a DTE, is refused; FOLIOS_DISP counts both', async () => {
    const s = await sitio()
    await otorgar(s, 33, 100)
    s.store.insertEnvio(
      { track_id: '0100000001', channel: 'soap', sha256: 'x', rut_emisor: RUT, rut_envia: '7880442-4', file_name: 'e.xml', received_at: SIM_START.getTime(), delay_ms: 0, rejection: null },
      [{ track_id: '0100000001', position: 0, rut_emisor: RUT, tipo: 33, folio: 5, rut_receptor: '96790240-3', fecha_emision: '2026-03-02', monto: '1190', estado: 'DOK', errors: [] }],
    )
    const anular = (desde: number, hasta: number) =>
      pedir(s, FOLIOS_PATHS.anula, { ...EMPRESA, [F.tipo]: '33', [F.folioIni]: String(desde), [F.folioFin]: String(hasta), [F.motivo]: 'Folios vencidos', [F.aceptar]: FOLIOS_ACEPTAR.anular })
    for (const [desde, hasta] of [[95, 101], [1, 10]] as const) {
      const page = await anular(desde, hasta)
      expect(page.text).toContain(FOLIOS_TEXTS.noPosible)
      expect(page.text).not.toContain('Folios anulados')
    }
    const ok = await anular(91, 100)
    expect(ok.text).toContain('Folios anulados')
    expect(ok.text).toContain('91')
    expect(ok.text).toContain('100')
    expect((await anular(95, 96)).text).toContain(FOLIOS_TEXTS.noPosible)
    const cifras = formulario((await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: '33' })).text)
    expect(cifras.inputs[F.foliosDisp]).toBe(String(100 - 1 - 10))
  })
})

describe('faults', () => {
  test('pagina_cambiada: the next form page has renamed inputs (MAXIMO for MAX_AUTOR); the one after is whole again', async () => {
    const s = await sitio()
    fallar(s, 'pagina_cambiada')
    const cambiada = formulario((await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: '33' })).text)
    expect(cambiada.inputs.MAXIMO).toBe('500')
    expect(cambiada.inputs[F.maxAutor]).toBeUndefined()
    expect(cambiada.inputs[F.cantidad]).toBeUndefined()
    expect(formulario((await pedir(s, FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: '33' })).text).inputs[F.maxAutor]).toBe('500')
  })

  test('corte_tras_otorgar: Obtener Folios answers 503 with no page, yet the range is granted and downloads', async () => {
    const s = await sitio()
    const inicial = formulario((await solicitar(s, 52, 30)).text)
    const confirma = formulario((await pedir(s, FOLIOS_PATHS.confirma, inicial.inputs)).text)
    fallar(s, 'corte_tras_otorgar')
    const cortada = await pedir(s, FOLIOS_PATHS.genera, confirma.inputs)
    expect(cortada.status).toBe(503)
    expect(cortada.bytes.length).toBe(0)
    expect(s.store.folios.otorgados(RUT).map((g) => [g.tipo, g.folio_desde, g.folio_hasta, g.fecha])).toEqual([[52, 1, 30, '2026-03-02']])
    const archivo = await pedir(s, FOLIOS_PATHS.archivo, { ...EMPRESA, [F.tipo]: '52', [F.folioIni]: '1', [F.folioFin]: '30', [F.fecha]: '2026-03-02', [F.aceptar]: FOLIOS_ACEPTAR.descargar })
    expect(parseCaf(archivo.bytes).folioHasta).toBe(30)
    expect(s.store.folios.cuentaOtorgamientos(RUT)).toBe(1)
  })
})
