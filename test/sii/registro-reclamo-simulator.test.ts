// RegistroReclamoDTE end to end (docs/sii-protocol.md §6.7): the client against the REAL simulator over HTTP on
// 127.0.0.1. The issuer uploads a real signed factura; the receiver then registers its actions, lists the events and
// asks for the reception date, each answer in the SII's codes. Time is moved, never waited for (STYLE §5).
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Accion } from '../../src/domain/intercambio'
import type { RegistroDoc } from '../../src/domain/sii-respuestas'
import { createSiiClient, type SiiClient, type SiiCompany, type SiiCredentials } from '../../src/sii/client/client'
import { TOKEN_TTL_MS } from '../../src/sii/simulator/auth'
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/sii/simulator/server'
import { testClock, type TestClock } from '../support/clock'
import { dte, EMISOR, envioDte, identity, SENDER, SIM_START } from './simulator-helpers'

// Each upload runs the simulator's XSD validation (~150 ms, more on a loaded machine).
setDefaultTimeout(30_000)

const DAY_MS = 24 * 60 * 60_000
/** The receptor of `dte()`'s facturas; it acts on them with the test identity's certificate. */
const RECEPTOR: SiiCompany = { rut: '76086428-5', ambiente: 'certificacion', isDemo: false }
const ISSUER: SiiCompany = { rut: EMISOR, ambiente: 'certificacion', isDemo: false }
const CREDS: SiiCredentials = { certificateId: 'cert-registro', rutFirmante: SENDER, signer: identity().signer }
const doc = (folio: number): RegistroDoc => ({ rutEmisor: EMISOR, tipoDte: 33, folio })

interface Harness {
  readonly url: string
  readonly client: SiiClient
  readonly clock: TestClock
  readonly paths: string[]
  /** Uploads one factura per folio (receptor as given) in one envelope; the simulator holds them once processed. */
  upload(folios: readonly number[], receptor?: string): Promise<void>
  clientWith(timeoutMs: number): SiiClient
}

const running: RunningSimulator[] = []
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
})

async function harness(opts: Partial<SimulatorOptions> = {}): Promise<Harness> {
  const clock = testClock({ at: SIM_START })
  const paths: string[] = []
  const sim = await startSimulator({
    processingDelayMs: 0, clock: clock.now,
    log: (event, fields) => {
      if (event === 'sii_simulator.request') paths.push((fields as { path: string }).path)
    },
    ...opts,
  })
  running.push(sim)
  const clientWith = (timeoutMs: number) => createSiiClient({ target: { kind: 'origin', origin: sim.url }, timeoutMs })
  const client = clientWith(5_000)
  return {
    url: sim.url, client, clock, paths, clientWith,
    async upload(folios, receptor) {
      const out = await client.upload(ISSUER, CREDS, 'soap', envioDte(folios.map((folio) => dte({ folio, ...(receptor === undefined ? {} : { receptor }) }))), 'envio.xml')
      expect(out.kind).toBe('received')
    },
  }
}

const registrar = (h: Harness, folio: number, accion: Accion) => h.client.registrarAccion(RECEPTOR, CREDS, doc(folio), accion)
const codes = async (h: Harness, folio: number, acciones: readonly Accion[]): Promise<Array<number | string>> => {
  const out: Array<number | string> = []
  for (const accion of acciones) {
    const r = await registrar(h, folio, accion)
    out.push(r.kind === 'retry' ? r.reason : r.codResp)
  }
  return out
}

describe('a received factura', () => {
  test('its reception date, no events yet, then ERM and ACD registered and listed with who and when', async () => {
    const h = await harness()
    await h.upload([1])
    expect(await h.client.fechaRecepcion(RECEPTOR, CREDS, doc(1))).toEqual({ kind: 'fecha', fecha: SIM_START.toISOString() })
    expect(await h.client.listarEventos(RECEPTOR, CREDS, doc(1))).toEqual({ kind: 'eventos', eventos: [] })

    h.clock.advance(2 * DAY_MS)
    expect(await registrar(h, 1, 'ERM')).toEqual({ kind: 'registrada', codResp: 0, descResp: 'Acción Completada OK' })
    h.clock.advance(60_000)
    expect(await registrar(h, 1, 'ACD')).toEqual({ kind: 'registrada', codResp: 0, descResp: 'Acción Completada OK' })

    // The issuer reads the same events (listarEventosHistDoc is open to issuer and receiver alike).
    expect(await h.client.listarEventos(ISSUER, CREDS, doc(1))).toEqual({
      kind: 'eventos',
      eventos: [
        { accion: 'ERM', descripcion: 'Otorga Recibo de Mercaderías o Servicios', fecha: new Date(SIM_START.getTime() + 2 * DAY_MS).toISOString(), rutResponsable: SENDER },
        { accion: 'ACD', descripcion: 'Acepta Contenido del Documento', fecha: new Date(SIM_START.getTime() + 2 * DAY_MS + 60_000).toISOString(), rutResponsable: SENDER },
      ],
    })
  })

  test('the manual\'s order: after ACD, ERM is registered, a claim is 11, ACD again 7; after ERM alone, a claim is 13', async () => {
    const h = await harness()
    await h.upload([1, 2])
    expect(await codes(h, 1, ['ACD', 'ACD', 'RCD', 'RFT', 'ERM', 'ERM'])).toEqual([0, 7, 11, 11, 0, 7])
    expect(await codes(h, 2, ['ERM', 'RFP', 'ACD', 'ERM'])).toEqual([0, 13, 0, 7])
    expect(await registrar(h, 1, 'RCD')).toEqual({ kind: 'rechazada', codResp: 11, descResp: 'No se puede reclamar DTE previamente aceptado' })
  })

  test('after a claim: ERM is 6 and ACD 12 naming the claim, the same claim 7, another claim is registered', async () => {
    const h = await harness()
    await h.upload([3])
    expect(await codes(h, 3, ['RCD', 'RCD', 'RFT'])).toEqual([0, 7, 0])
    expect(await registrar(h, 3, 'ERM')).toEqual({ kind: 'rechazada', codResp: 6, descResp: 'No se puede acusar recibo de mercadería de DTE previamente reclamado por RFT' })
    expect(await registrar(h, 3, 'ACD')).toEqual({ kind: 'rechazada', codResp: 12, descResp: 'No se puede dar por aceptado DTE previamente rechazado por RFT' })
    const eventos = await h.client.listarEventos(RECEPTOR, CREDS, doc(3))
    expect(eventos.kind === 'eventos' ? eventos.eventos.map((e) => e.accion) : eventos).toEqual(['RCD', 'RFT'])
  })

  test('8 days from the SII\'s reception: an action at 8 days exactly is registered, one second later is 8', async () => {
    const h = await harness()
    await h.upload([4, 5])
    h.clock.advance(8 * DAY_MS)  // the token (1 h) expires on the way: renewed once, unseen by the caller
    expect(await registrar(h, 4, 'ACD')).toMatchObject({ kind: 'registrada' })
    h.clock.advance(1_000)
    expect(await registrar(h, 5, 'RCD')).toEqual({
      kind: 'rechazada', codResp: 8, descResp: 'Pasados 8 días después de la recepción no es posible registrar reclamos o eventos',
    })
    // The events and the date stay readable after the 8 days.
    expect(await h.client.listarEventos(RECEPTOR, CREDS, doc(4))).toMatchObject({ kind: 'eventos', eventos: [{ accion: 'ACD' }] })
    expect(await h.client.fechaRecepcion(RECEPTOR, CREDS, doc(5))).toEqual({ kind: 'fecha', fecha: SIM_START.toISOString() })
  })
})

describe('documents the SII does not hold, and types it does not take', () => {
  test('an unknown folio, a rejected one (receptor 88888888-8) and one still in process: 18 "Documento no ha sido recibido"', async () => {
    const h = await harness({ processingDelayMs: 5_000 })
    await h.upload([6], '88888888-8')
    await h.upload([7])
    const noRecibido = { kind: 'rechazada', codResp: 18, descResp: 'Documento no ha sido recibido' } as const
    for (const folio of [99, 6, 7]) {
      expect(await registrar(h, folio, 'ACD')).toEqual(noRecibido)
      expect(await h.client.listarEventos(RECEPTOR, CREDS, doc(folio))).toEqual(noRecibido)
      expect(await h.client.fechaRecepcion(RECEPTOR, CREDS, doc(folio))).toEqual(noRecibido)
    }
    h.clock.advance(5_000)  // the envelope of folio 7 is processed: EPR
    expect(await h.client.fechaRecepcion(RECEPTOR, CREDS, doc(7))).toEqual({ kind: 'fecha', fecha: SIM_START.toISOString() })
    expect(await h.client.fechaRecepcion(RECEPTOR, CREDS, doc(6))).toEqual(noRecibido)
  })

  test('a type other than 33, 34, 43 is 3; another issuer\'s RUT with that folio is not received', async () => {
    const h = await harness()
    await h.upload([8])
    expect(await h.client.registrarAccion(RECEPTOR, CREDS, { rutEmisor: EMISOR, tipoDte: 39, folio: 8 }, 'ACD'))
      .toEqual({ kind: 'rechazada', codResp: 3, descResp: 'Tipo de documento no corresponde' })
    expect(await h.client.listarEventos(RECEPTOR, CREDS, { rutEmisor: EMISOR, tipoDte: 61, folio: 8 })).toMatchObject({ kind: 'rechazada', codResp: 3 })
    expect(await h.client.registrarAccion(RECEPTOR, CREDS, { rutEmisor: '76086428-5', tipoDte: 33, folio: 8 }, 'ACD')).toMatchObject({ kind: 'rechazada', codResp: 18 })
  })
})

describe('tokens, paths and faults', () => {
  test('one DTEWS token for the upload and every registro call; an expired one is renewed once', async () => {
    const h = await harness()
    await h.upload([1])
    await h.client.fechaRecepcion(RECEPTOR, CREDS, doc(1))
    await registrar(h, 1, 'ERM')
    expect(h.paths.filter((p) => p.endsWith('/GetTokenFromSeed.jws'))).toHaveLength(1)
    h.clock.advance(TOKEN_TTL_MS + 1_000)
    expect(await registrar(h, 1, 'ACD')).toMatchObject({ kind: 'registrada' })
    expect(h.paths.filter((p) => p.endsWith('/GetTokenFromSeed.jws'))).toHaveLength(2)
    expect(h.paths.filter((p) => p === '/WSREGISTRORECLAMODTECERT/registroreclamodteservice')).toHaveLength(4)  // one refused, three answered
  })

  test('a producción company calls the producción path; the simulator serves both and its WSDL', async () => {
    const h = await harness()
    await h.upload([1])
    expect(await h.client.registrarAccion({ ...RECEPTOR, ambiente: 'produccion' }, CREDS, doc(1), 'ERM')).toMatchObject({ kind: 'registrada' })
    expect(h.paths.at(-1)).toBe('/WSREGISTRORECLAMODTE/registroreclamodteservice')
    const wsdl = await (await fetch(`${h.url}/WSREGISTRORECLAMODTECERT/registroreclamodteservice?wsdl`)).text()
    expect(wsdl).toContain('targetNamespace="http://ws.registroreclamodte.diii.sdi.sii.cl"')
    expect(wsdl).toContain('<soap:binding transport="http://schemas.xmlsoap.org/soap/http" style="rpc"/>')
    expect(wsdl).toContain('parameterOrder="rutEmisor dvEmisor tipoDoc folio accionDoc"')
  })

  test('503, an HTML page and a lost answer are retries; the action retried after a lost answer meets 7', async () => {
    const draws: number[] = []
    const h = await harness({ faults: { errorRate: 0.2, hangRate: 0.2, htmlRate: 0.2, hangMs: 1_500 }, random: () => draws.shift() ?? 0.99 })
    await h.upload([1])
    draws.push(0.1)  // 503
    expect(await registrar(h, 1, 'ACD')).toEqual({ kind: 'retry', reason: 'HTML page instead of an answer (HTTP 503)' })
    draws.push(0.5)  // the maintenance page, HTTP 200
    expect(await h.client.listarEventos(RECEPTOR, CREDS, doc(1))).toEqual({ kind: 'retry', reason: 'HTML page instead of an answer (HTTP 200)' })
    draws.push(0.99, 0.99, 0.3)  // a new client's seed and token, then the call: processed, answered after 1.5 s, lost to a client that waits 300 ms
    expect(await h.clientWith(300).registrarAccion(RECEPTOR, CREDS, doc(1), 'ACD')).toEqual({ kind: 'retry', reason: 'timeout after 300 ms' })
    expect(await registrar(h, 1, 'ACD')).toEqual({ kind: 'rechazada', codResp: 7, descResp: 'Evento registrado previamente' })
  })
})
