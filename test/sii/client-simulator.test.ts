// The client against the REAL simulator over HTTP on 127.0.0.1 (STYLE §5 test/sii/): tokens, uploads of real signed
// envelopes, polling to a final state, document queries, token expiry, faults and timeouts. Nothing is stubbed: the
// simulator checks the seed signature, the token, the schema, both signatures, the TED against its CAF.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { EnvioOutcome, SiiChannel, UploadOutcome } from '../../src/domain/sii-respuestas'
import { createSiiClient, type SiiClient, type SiiCompany, type SiiCredentials } from '../../src/sii/client/client'
import { TOKEN_TTL_MS } from '../../src/sii/simulator/auth'
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/sii/simulator/server'
import { buildEnvioBoleta, buildEnvioDte, envelopeBytes, SII_RUT } from '../../src/xml/envelope'
import { signDte } from '../../src/xml/signature'
import { buildTed } from '../../src/xml/ted'
import { testClock, type TestClock } from '../support/clock'
import { makeCertificate, makeTestCaf, testCa, type TestCaf } from '../support/pki'

// Each upload runs the simulator's XSD validation (~140 ms warm, more on a loaded 2-core machine): room beyond bun's 5 s.
setDefaultTimeout(30_000)

const EMISOR = '76543210-3'
const FIRMANTE = '7880442-4'
const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const COMPANY: SiiCompany = { rut: EMISOR, ambiente: 'certificacion', isDemo: false }
const CREDS: SiiCredentials = { certificateId: 'cert-sim', rutFirmante: FIRMANTE, signer: identity.signer }
const CAFS: Readonly<Record<33 | 39, TestCaf>> = { 33: makeTestCaf({ tipoDte: 33 }), 39: makeTestCaf({ tipoDte: 39 }) }
const FECHA = '2026-01-10'

interface Doc { readonly tipo: 33 | 39; readonly folio: number; readonly rutRecep: string; readonly montoTotal: number; readonly xml: string }

/** A signed factura 33 with a real TED (as test/unit/xml/envelope.test.ts builds them). */
function factura(folio: number, rutRecep = '76086428-5'): Doc {
  const ted = buildTed({ rutEmisor: EMISOR, tipoDte: 33, folio, fechaEmision: FECHA, rutReceptor: rutRecep, razonSocialReceptor: 'Cliente Ñandú Ltda', montoTotal: 1190, item1: 'Café molido', timestamp: `${FECHA}T10:11:12` }, CAFS[33].caf)
  const xml = `<?xml version="1.0" encoding="ISO-8859-1"?>
<DTE version="1.0"><Documento ID="F${folio}T33"><Encabezado><IdDoc><TipoDTE>33</TipoDTE><Folio>${folio}</Folio><FchEmis>${FECHA}</FchEmis></IdDoc>` +
    `<Emisor><RUTEmisor>${EMISOR}</RUTEmisor><RznSoc>Comercializadora Ñandú Limitada</RznSoc><GiroEmis>Venta de café</GiroEmis><Acteco>620100</Acteco><DirOrigen>Av. Irarrázaval 1234</DirOrigen><CmnaOrigen>Ñuñoa</CmnaOrigen></Emisor>` +
    `<Receptor><RUTRecep>${rutRecep}</RUTRecep><RznSocRecep>Cliente Ñandú Ltda</RznSocRecep><GiroRecep>Comercio</GiroRecep><DirRecep>Calle 1</DirRecep><CmnaRecep>Santiago</CmnaRecep></Receptor>` +
    '<Totales><MntNeto>1000</MntNeto><TasaIVA>19</TasaIVA><IVA>190</IVA><MntTotal>1190</MntTotal></Totales></Encabezado>\n' +
    '<Detalle><NroLinDet>1</NroLinDet><NmbItem>Café molido</NmbItem><QtyItem>1</QtyItem><PrcItem>1000</PrcItem><MontoItem>1000</MontoItem></Detalle>\n' +
    `${ted}<TmstFirma>${FECHA}T10:11:12</TmstFirma></Documento></DTE>\n`
  return { tipo: 33, folio, rutRecep, montoTotal: 1190, xml: signDte(xml, identity.signer) }
}

/** A signed boleta 39 for the anonymous consumer (docs/sii-protocol.md §7.2). */
function boleta(folio: number): Doc {
  const ted = buildTed({ rutEmisor: EMISOR, tipoDte: 39, folio, fechaEmision: FECHA, rutReceptor: '66666666-6', razonSocialReceptor: 'Consumidor final', montoTotal: 1190, item1: 'Café molido', timestamp: `${FECHA}T10:11:12` }, CAFS[39].caf)
  const xml = `<?xml version="1.0" encoding="ISO-8859-1"?>
<DTE version="1.0"><Documento ID="F${folio}T39"><Encabezado><IdDoc><TipoDTE>39</TipoDTE><Folio>${folio}</Folio><FchEmis>${FECHA}</FchEmis><IndServicio>3</IndServicio></IdDoc>` +
    `<Emisor><RUTEmisor>${EMISOR}</RUTEmisor><RznSocEmisor>Comercializadora Ñandú Limitada</RznSocEmisor><GiroEmisor>Venta de café</GiroEmisor><DirOrigen>Av. Irarrázaval 1234</DirOrigen><CmnaOrigen>Ñuñoa</CmnaOrigen></Emisor>` +
    '<Receptor><RUTRecep>66666666-6</RUTRecep></Receptor><Totales><MntNeto>1000</MntNeto><IVA>190</IVA><MntTotal>1190</MntTotal></Totales></Encabezado>\n' +
    '<Detalle><NroLinDet>1</NroLinDet><NmbItem>Café molido</NmbItem><QtyItem>1</QtyItem><PrcItem>1190</PrcItem><MontoItem>1190</MontoItem></Detalle>\n' +
    `${ted}<TmstFirma>${FECHA}T10:11:12</TmstFirma></Documento></DTE>\n`
  return { tipo: 39, folio, rutRecep: '66666666-6', montoTotal: 1190, xml: signDte(xml, identity.signer) }
}

function envelope(docs: readonly Doc[], channel: SiiChannel): Uint8Array {
  const input = { dtes: docs.map((d) => d.xml), caratula: { rutEmisor: EMISOR, rutEnvia: FIRMANTE, rutReceptor: SII_RUT, fchResol: '2026-01-01', nroResol: 0, tmstFirmaEnv: `${FECHA}T10:11:13` }, signer: identity.signer }
  return envelopeBytes(channel === 'soap' ? buildEnvioDte(input) : buildEnvioBoleta(input))
}


/** A simulator on 127.0.0.1 with a clock the test moves, and the paths it was asked for. */
interface Harness {
  readonly sim: RunningSimulator
  readonly client: SiiClient
  readonly paths: string[]
  readonly clock: TestClock
  /** Resolves once the simulator has recorded `n` envelopes (its `sii_simulator.envio` log), however slow it is. */
  envios(n: number): Promise<void>
  /** Another client on the same simulator, with its own timeout and token cache. */
  clientWith(timeoutMs: number): SiiClient
}

const running: RunningSimulator[] = []
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
})

async function harness(opts: Partial<SimulatorOptions> = {}, timeoutMs = 5_000): Promise<Harness> {
  const clock = testClock({ at: new Date('2026-01-10T13:00:00Z') })
  const paths: string[] = []
  let recorded = 0
  const waiting: Array<{ n: number; resolve: () => void }> = []
  const sim = await startSimulator({
    processingDelayMs: 5_000, clock: clock.now,
    log: (event, fields) => {
      if (event === 'sii_simulator.request') paths.push((fields as { path: string }).path)
      if (event !== 'sii_simulator.envio') return
      recorded++
      for (const w of waiting.filter((w) => recorded >= w.n)) w.resolve()
    },
    ...opts,
  })
  running.push(sim)
  const clientWith = (ms: number) => createSiiClient({ target: { kind: 'origin', origin: sim.url }, timeoutMs: ms })
  return {
    sim, client: clientWith(timeoutMs), paths, clientWith, clock,
    envios: (n) => (recorded >= n ? Promise.resolve() : new Promise<void>((resolve) => { waiting.push({ n, resolve }) })),
  }
}

/** Polls once a simulated second until the envelope leaves `pending`; the estados seen on the way. */
async function untilSettled(h: Harness, channel: SiiChannel, trackId: string): Promise<{ final: EnvioOutcome; seen: string[] }> {
  const seen: string[] = []
  for (let i = 0; i < 20; i++) {
    const out = await h.client.queryEnvio(COMPANY, CREDS, channel, trackId)
    seen.push(out.kind === 'retry' ? `retry: ${out.reason}` : out.estado)
    if (out.kind !== 'pending') return { final: out, seen }
    h.clock.advance(1_000)
  }
  throw new Error(`envelope ${trackId} still pending: ${seen.join(', ')}`)
}

/** The track id of a `received` upload; fails the test otherwise. */
function trackIdOf(out: UploadOutcome): string {
  if (out.kind !== 'received') throw new Error(`expected received, got ${JSON.stringify(out)}`)
  return out.trackId
}

const count = (paths: readonly string[], suffix: string) => paths.filter((p) => p.endsWith(suffix)).length

describe('SOAP channel against the simulator', () => {
  test('token fetched once and reused; EnvioDTE received, polled through REC…PRD to EPR; getEstDte DOK', async () => {
    const h = await harness()
    const docs = [factura(1), factura(2)]
    const up = await h.client.upload(COMPANY, CREDS, 'soap', envelope(docs, 'soap'), 'envio-1.xml')
    expect(trackIdOf(up)).toMatch(/^\d{10}$/)
    const { final, seen } = await untilSettled(h, 'soap', trackIdOf(up))
    expect(seen[0]).toBe('REC')
    expect(seen).toContain('SOK')
    expect(final).toMatchObject({ kind: 'processed', estado: 'EPR', informados: 2, aceptados: 2, rechazados: 0, reparos: 0, estadistica: [{ tipo: 33, informados: 2, aceptados: 2 }] })
    const status = await h.client.queryDte(COMPANY, CREDS, 'soap', { tipoDte: 33, folio: 1, rutReceptor: docs[0]!.rutRecep, fechaEmision: FECHA, montoTotal: 1190 })
    expect(status).toMatchObject({ kind: 'status', estado: 'DOK' })
    expect(count(h.paths, '/CrSeed.jws')).toBe(1)
    expect(count(h.paths, '/GetTokenFromSeed.jws')).toBe(1)
  })

  test('the same envelope again → already_received with the first track id (STATUS 99)', async () => {
    const h = await harness()
    const bytes = envelope([factura(3)], 'soap')
    const first = await h.client.upload(COMPANY, CREDS, 'soap', bytes, 'envio.xml')
    const again = await h.client.upload(COMPANY, CREDS, 'soap', bytes, 'envio.xml')
    expect(first.kind).toBe('received')
    expect(again).toEqual({ kind: 'already_received', trackId: trackIdOf(first), raw: expect.any(String) })
  })

  test('receptor 88888888-8 → processed with one rejected; 77777777-7 → with reparos', async () => {
    const h = await harness()
    const up = await h.client.upload(COMPANY, CREDS, 'soap', envelope([factura(4, '88888888-8'), factura(5, '77777777-7'), factura(6)], 'soap'), 'e.xml')
    const { final } = await untilSettled(h, 'soap', trackIdOf(up))
    expect(final).toMatchObject({ kind: 'processed', informados: 3, aceptados: 2, rechazados: 1, reparos: 1 })
  })

  test('an envelope whose own signature fails → refused at upload (STATUS 8, the file is refused for its content)', async () => {
    const h = await harness()
    const good = Buffer.from(envelope([factura(7)], 'soap')).toString('latin1')
    const tampered = Uint8Array.from(Buffer.from(good.replace('<TmstFirmaEnv>2026-01-10T10:11:13', '<TmstFirmaEnv>2026-01-10T10:11:14'), 'latin1'))
    const up = await h.client.upload(COMPANY, CREDS, 'soap', tampered, 'e.xml')
    expect(up).toMatchObject({ kind: 'refused', status: '8' })
    expect((up as { glosa: string }).glosa).toContain('Firma del documento')
  })

  test('a DTE whose signature fails inside a well-signed envelope → received, then rejected (RFR) after the earlier states', async () => {
    const h = await harness()
    const forged = { ...factura(10), xml: factura(10).xml.replace('<NmbItem>Café molido</NmbItem>', '<NmbItem>Café molido fino</NmbItem>') }
    const up = await h.client.upload(COMPANY, CREDS, 'soap', envelope([forged], 'soap'), 'e.xml')
    expect(up.kind).toBe('received')
    const { final, seen } = await untilSettled(h, 'soap', trackIdOf(up))
    expect(seen.slice(0, 3)).toEqual(['REC', 'SOK', 'CRT'])
    expect(final).toMatchObject({ kind: 'rejected', estado: 'RFR' })
  })

  test('an expired token: STATUS 5 on upload and ESTADO 002 on a query each bring exactly one new token', async () => {
    const h = await harness()
    const up = await h.client.upload(COMPANY, CREDS, 'soap', envelope([factura(8)], 'soap'), 'e.xml')
    expect(up.kind).toBe('received')
    h.clock.advance(TOKEN_TTL_MS + 60_000)  // past the simulator's token lifetime: the SII will say the token is invalid
    expect(await h.client.upload(COMPANY, CREDS, 'soap', envelope([factura(9)], 'soap'), 'e.xml')).toMatchObject({ kind: 'received' })
    expect(count(h.paths, '/CrSeed.jws')).toBe(2)
    expect(count(h.paths, '/DTEUpload')).toBe(3)
    h.clock.advance(TOKEN_TTL_MS + 60_000)
    expect(await h.client.queryEnvio(COMPANY, CREDS, 'soap', trackIdOf(up))).toMatchObject({ kind: 'processed' })
    expect(count(h.paths, '/CrSeed.jws')).toBe(3)
    expect(count(h.paths, '/QueryEstUp.jws')).toBe(2)
  })
})

describe('boleta channel against the simulator', () => {
  test('REST token once; EnvioBOLETA received with a numeric track id, polled to EPR; consulta DOK', async () => {
    const h = await harness()
    const up = await h.client.upload(COMPANY, CREDS, 'boleta', envelope([boleta(1), boleta(2)], 'boleta'), 'boletas.xml')
    expect(trackIdOf(up)).toMatch(/^\d+$/)
    const { final, seen } = await untilSettled(h, 'boleta', trackIdOf(up))
    expect(seen[0]).toBe('REC')
    expect(final).toMatchObject({ kind: 'processed', estado: 'EPR', informados: 2, aceptados: 2, detalle: [] })
    const status = await h.client.queryDte(COMPANY, CREDS, 'boleta', { tipoDte: 39, folio: 2, rutReceptor: '66666666-6', fechaEmision: FECHA, montoTotal: 1190 })
    expect(status).toMatchObject({ kind: 'status', estado: 'DOK' })
    expect(count(h.paths, 'boleta.electronica.semilla')).toBe(1)
    expect(count(h.paths, 'boleta.electronica.token')).toBe(1)
    expect(count(h.paths, '/CrSeed.jws')).toBe(0)
  })

  test('the same EnvioBOLETA again → already_received (estado RPT) with the first track id', async () => {
    const h = await harness()
    const bytes = envelope([boleta(3)], 'boleta')
    const first = await h.client.upload(COMPANY, CREDS, 'boleta', bytes, 'b.xml')
    expect(await h.client.upload(COMPANY, CREDS, 'boleta', bytes, 'b.xml')).toMatchObject({ kind: 'already_received', trackId: trackIdOf(first) })
  })

  test('an expired REST token (HTTP 401) brings exactly one new token', async () => {
    const h = await harness()
    const up = await h.client.upload(COMPANY, CREDS, 'boleta', envelope([boleta(4)], 'boleta'), 'b.xml')
    h.clock.advance(TOKEN_TTL_MS + 60_000)
    expect(await h.client.queryEnvio(COMPANY, CREDS, 'boleta', trackIdOf(up))).toMatchObject({ kind: 'processed' })
    expect(count(h.paths, 'boleta.electronica.token')).toBe(2)
  })
})

describe('simulator faults → retry outcomes with reasons, never a throw', () => {
  /** Fault draws scripted per request: < 0.1 → 503, < 0.2 → hang, < 0.3 → HTML page, else served. */
  function scripted(draws: number[]): Partial<SimulatorOptions> {
    return { faults: { errorRate: 0.1, hangRate: 0.1, htmlRate: 0.1, hangMs: 10_000 }, random: () => draws.shift() ?? 0.99 }
  }

  test('503 on getSeed, an HTML page on the upload: each a retry; the next call succeeds', async () => {
    const draws = [0.05]
    const h = await harness(scripted(draws))
    expect(await h.client.upload(COMPANY, CREDS, 'soap', envelope([factura(20)], 'soap'), 'e.xml')).toMatchObject({ kind: 'retry', reason: expect.stringContaining('HTTP 503') })
    draws.push(0.99, 0.99, 0.25)  // seed and token served, the upload answered by a maintenance page
    expect(await h.client.upload(COMPANY, CREDS, 'soap', envelope([factura(20)], 'soap'), 'e.xml')).toMatchObject({ kind: 'retry', reason: expect.stringContaining('HTML page') })
    expect(await h.client.upload(COMPANY, CREDS, 'soap', envelope([factura(20)], 'soap'), 'e.xml')).toMatchObject({ kind: 'received' })
  })

  test('a hanging upload → retry "timeout after 500 ms" within the timeout; the re-upload finds it (STATUS 99)', async () => {
    const draws: number[] = []
    const h = await harness(scripted(draws))
    const fast = h.clientWith(500)
    draws.push(0.99, 0.99, 0.15)  // seed and token served; the upload is processed, its answer held for 10 s
    const bytes = envelope([factura(21)], 'soap')
    const started = performance.now()
    expect(await fast.upload(COMPANY, CREDS, 'soap', bytes, 'e.xml')).toEqual({ kind: 'retry', reason: 'timeout after 500 ms' })
    expect(performance.now() - started).toBeLessThan(2_500)
    await h.envios(1)  // the SII kept the envelope although its answer never arrived
    const again = await h.client.upload(COMPANY, CREDS, 'soap', bytes, 'e.xml')
    expect(again.kind).toBe('already_received')
    expect((again as { trackId: string | null }).trackId).toMatch(/^\d{10}$/)
  })

  test('faults on the boleta channel and on queries are retries too', async () => {
    const draws = [0.99, 0.99, 0.99]  // semilla, token, envío served
    const h = await harness(scripted(draws))
    const trackId = trackIdOf(await h.client.upload(COMPANY, CREDS, 'boleta', envelope([boleta(20)], 'boleta'), 'b.xml'))
    draws.push(0.05, 0.25)
    expect(await h.client.queryEnvio(COMPANY, CREDS, 'boleta', trackId)).toMatchObject({ kind: 'retry', reason: expect.stringContaining('HTTP 503') })
    expect(await h.client.queryEnvio(COMPANY, CREDS, 'boleta', trackId)).toMatchObject({ kind: 'retry', reason: expect.stringContaining('HTML page') })
    draws.push(0.99, 0.99, 0.15)  // a client with a short timeout: its semilla and token served, the consulta hangs
    expect(await h.clientWith(500).queryDte(COMPANY, CREDS, 'boleta', { tipoDte: 39, folio: 20, rutReceptor: '66666666-6', fechaEmision: FECHA, montoTotal: 1190 }))
      .toEqual({ kind: 'retry', reason: 'timeout after 500 ms' })
  })
})
