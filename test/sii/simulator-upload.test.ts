// DTEUpload (docs/sii-protocol.md §6.4), getEstUp (§6.5) and getEstDte (§6.6) against the simulator over real HTTP: what it
// checks, the code each failure gives, the states an envelope passes through as the injected clock moves.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { fromLatin1Bytes, toLatin1Bytes } from '../../src/xml/latin1'
import { testClock } from '../support/clock'
import { makeCertificate, makeTestCaf, testCa, testCafAuthority } from '../support/pki'
import { tempDir } from '../support/server'
import {
  caf, dte, dteUpload, envioBoleta, envioDte, estUp, field, fields, SENDER, SIM_START, soap, soapToken,
} from './simulator-helpers'

const DELAY = 5000
const clock = testClock({ at: SIM_START })
let sim: RunningSimulator
let token: string
beforeAll(async () => {
  sim = await startSimulator({ clock: clock.now, processingDelayMs: DELAY })
  token = await soapToken(sim.url)
})
afterAll(() => sim.stop())

let nextFolio = 1
const folio = (): number => nextFolio++

/** Uploads, expects STATUS 0, lets processing finish, returns the getEstUp answer. */
async function uploadAndProcess(envelope: Uint8Array): Promise<{ trackId: string; estado: string | null; answer: Awaited<ReturnType<typeof estUp>> }> {
  const up = await dteUpload(sim.url, token, envelope)
  expect(up.status).toBe('0')
  const trackId = up.trackId ?? ''
  clock.advance(DELAY)
  const answer = await estUp(sim.url, token, trackId)
  return { trackId, estado: field(answer.inner, 'ESTADO'), answer }
}

function counters(answer: Awaited<ReturnType<typeof estUp>>): Record<string, string[]> {
  return Object.fromEntries(['TIPO_DOCTO', 'INFORMADOS', 'ACEPTADOS', 'RECHAZADOS', 'REPAROS'].map((n) => [n, fields(answer.inner, n)]))
}

async function estDte(o: { folio: number; receptor?: string; fecha?: string; monto?: string; consultante?: string; tokenValue?: string; tipo?: string }) {
  const [rc, dc] = (o.consultante ?? SENDER).split('-') as [string, string]
  const [rr, dr] = (o.receptor ?? '76086428-5').split('-') as [string, string]
  const answer = await soap(sim.url, 'QueryEstDte', 'getEstDte', {
    RutConsultante: rc, DvConsultante: dc, RutCompania: '76543210', DvCompania: '3', RutReceptor: rr, DvReceptor: dr,
    TipoDte: o.tipo ?? '33', FolioDte: String(o.folio), FechaEmisionDte: o.fecha ?? '02032026', MontoDte: o.monto ?? '1190', Token: o.tokenValue ?? token,
  })
  return { estado: field(answer.inner, 'ESTADO'), errCode: field(answer.inner, 'ERR_CODE'), glosaErr: field(answer.inner, 'GLOSA_ERR'), inner: answer.inner }
}

describe('authentication of uploads and queries', () => {
  test('no Cookie TOKEN, an unknown token, and an expired one: STATUS 5', async () => {
    const envelope = envioDte([dte({ folio: folio() })])
    expect((await dteUpload(sim.url, null, envelope)).status).toBe('5')
    expect((await dteUpload(sim.url, 'NOEXISTE12345', envelope)).status).toBe('5')
    const old = await soapToken(sim.url)
    clock.advance(60 * 60_000 + 1)  // the simulator's token lifetime is one hour (docs/decisions/simulator.md)
    expect((await dteUpload(sim.url, old, envelope)).status).toBe('5')
    token = await soapToken(sim.url)
  })

  test('queries with a missing, unknown or expired Token answer ESTADO 001, 003, 002', async () => {
    expect(field((await estUp(sim.url, '', '1')).inner, 'ESTADO')).toBe('001')
    expect(field((await estUp(sim.url, 'NOEXISTE12345', '1')).inner, 'ESTADO')).toBe('003')
    const old = await soapToken(sim.url)
    clock.advance(60 * 60_000 + 1)
    expect(field((await estUp(sim.url, old, '1')).inner, 'ESTADO')).toBe('002')
    expect((await estDte({ folio: 1, tokenValue: old })).estado).toBe('002')
    token = await soapToken(sim.url)
  })

  test('RECEPCIONDTE has the SII\'s plain shape (docs/sii-protocol.md §6.4)', async () => {
    const up = await dteUpload(sim.url, null, envioDte([dte({ folio: folio() })]))
    expect(up.text).toBe(
      '<?xml version="1.0"?>\n<RECEPCIONDTE>\n <RUTSENDER>7880442-4</RUTSENDER>\n <RUTCOMPANY>76543210-3</RUTCOMPANY>\n' +
      ` <FILE>envio.xml</FILE>\n <TIMESTAMP>${up.text.match(/<TIMESTAMP>(.*)<\/TIMESTAMP>/)?.[1]}</TIMESTAMP>\n <STATUS>5</STATUS>\n</RECEPCIONDTE>\n`,
    )
    expect(up.text).toMatch(/<TIMESTAMP>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}<\/TIMESTAMP>/)
  })
})

describe('a valid EnvioDTE', () => {
  test('goes REC → SOK → CRT → FOK → PRD → EPR as time passes, then counts every document accepted', async () => {
    const envelope = envioDte([dte({ folio: folio() }), dte({ folio: folio(), monto: 2000 })])
    const up = await dteUpload(sim.url, token, envelope)
    expect(up.status).toBe('0')
    expect(up.trackId).toMatch(/^0\d{9}$/)
    const seen: string[] = []
    for (let i = 0; i < 6; i++) {
      const answer = await estUp(sim.url, token, up.trackId ?? '')
      seen.push(field(answer.inner, 'ESTADO') ?? '')
      expect(field(answer.inner, 'TRACKID')).toBe(up.trackId)
      expect(field(answer.inner, 'NUM_ATENCION')).toMatch(/^\d+ \( \d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}\)$/)
      // RESP_BODY only once processing is done (docs/sii-protocol.md §6.5).
      expect(answer.innerText.includes('RESP_BODY')).toBe(seen.at(-1) === 'EPR')
      clock.advance(DELAY / 5)
    }
    expect(seen).toEqual(['REC', 'SOK', 'CRT', 'FOK', 'PRD', 'EPR'])
    const final = await estUp(sim.url, token, up.trackId ?? '')
    expect(counters(final)).toEqual({ TIPO_DOCTO: ['33'], INFORMADOS: ['2'], ACEPTADOS: ['2'], RECHAZADOS: ['0'], REPAROS: ['0'] })
  })

  test('receptor 88888888-8 is rejected and 77777777-7 accepted with reparos; counters per type (DESIGN §9)', async () => {
    const envelope = envioDte([dte({ folio: folio() }), dte({ folio: folio(), receptor: '88888888-8' }), dte({ folio: folio(), receptor: '77777777-7' })])
    const { estado, answer } = await uploadAndProcess(envelope)
    expect(estado).toBe('EPR')
    expect(counters(answer)).toEqual({ TIPO_DOCTO: ['33'], INFORMADOS: ['3'], ACEPTADOS: ['2'], RECHAZADOS: ['1'], REPAROS: ['1'] })
  })

  test('the same bytes again: STATUS 99 with the original TRACKID; other bytes get a new one', async () => {
    const f = folio()
    const envelope = envioDte([dte({ folio: f })])
    const first = await dteUpload(sim.url, token, envelope)
    expect(first.status).toBe('0')
    const again = await dteUpload(sim.url, token, envelope)
    expect({ status: again.status, trackId: again.trackId }).toEqual({ status: '99', trackId: first.trackId })
    const resigned = await dteUpload(sim.url, token, envioDte([dte({ folio: folio() })], { tmstFirmaEnv: '2026-03-02T10:11:14' }))
    expect(resigned.status).toBe('0')
    expect(resigned.trackId).not.toBe(first.trackId)
  })

  test('a folio already accepted in an earlier envelope is rejected in the later one', async () => {
    const f = folio()
    expect((await uploadAndProcess(envioDte([dte({ folio: f })]))).estado).toBe('EPR')
    const { estado, answer } = await uploadAndProcess(envioDte([dte({ folio: f, monto: 5000 }), dte({ folio: folio() })]))
    expect(estado).toBe('EPR')
    expect(counters(answer)).toMatchObject({ INFORMADOS: ['2'], ACEPTADOS: ['1'], RECHAZADOS: ['1'] })
  })
})

describe('what the simulator rejects, with the SII\'s code', () => {
  test('a DTE whose signature no longer verifies: the envelope ends RFR', async () => {
    const broken = dte({ folio: folio() }).replace('<GiroRecep>Comercio</GiroRecep>', '<GiroRecep>Comerci0</GiroRecep>')
    const { estado, answer } = await uploadAndProcess(envioDte([broken]))
    expect(estado).toBe('RFR')
    expect(field(answer.inner, 'GLOSA')).toContain('Rechazado por Error en Firma')
    expect(answer.innerText.includes('RESP_BODY')).toBe(false)
  })

  test('RFR shows once processing reaches the signature step (after REC, SOK, CRT)', async () => {
    const broken = dte({ folio: folio() }).replace('<GiroRecep>Comercio</GiroRecep>', '<GiroRecep>Comerci0</GiroRecep>')
    const up = await dteUpload(sim.url, token, envioDte([broken]))
    const seen: string[] = []
    for (let i = 0; i < 5; i++) {
      seen.push(field((await estUp(sim.url, token, up.trackId ?? '')).inner, 'ESTADO') ?? '')
      clock.advance(DELAY / 5)
    }
    expect(seen).toEqual(['REC', 'SOK', 'CRT', 'RFR', 'RFR'])
  })

  test('a forged TED (FRMT not made with the CAF\'s key) rejects that document', async () => {
    const other = makeTestCaf({ tipoDte: 33 })
    const forged = dte({ folio: folio(), caf: { ...caf(33).caf, privateKey: other.caf.privateKey } })
    const { estado, answer } = await uploadAndProcess(envioDte([forged, dte({ folio: folio() })]))
    expect(estado).toBe('EPR')
    expect(counters(answer)).toMatchObject({ INFORMADOS: ['2'], ACEPTADOS: ['1'], RECHAZADOS: ['1'] })
  })

  test('a CAF not signed by an authority the SII knows (FRMA) rejects the document', async () => {
    const foreign = makeTestCaf({ tipoDte: 33, authority: { ...testCafAuthority(), idk: 300 } })
    const { answer } = await uploadAndProcess(envioDte([dte({ folio: folio(), caf: foreign.caf })]))
    expect(counters(answer)).toMatchObject({ INFORMADOS: ['1'], ACEPTADOS: ['0'], RECHAZADOS: ['1'] })
  })

  test('a folio outside its CAF is rejected, and getEstDte then says FNA', async () => {
    const { answer } = await uploadAndProcess(envioDte([dte({ folio: 150 })]))
    expect(counters(answer)).toMatchObject({ ACEPTADOS: ['0'], RECHAZADOS: ['1'] })
    expect((await estDte({ folio: 150 })).estado).toBe('FNA')
  })

  test('a schema-invalid envelope gets a track id and ends RSC with the XSD message', async () => {
    // An edit after signing also breaks the DTE's signature, but the schema step comes first (docs/sii-protocol.md §6.5 order).
    const envelope = envioDte([dte({ folio: folio() }).replace('<TasaIVA>19</TasaIVA>', '<TasaIVA>19.5.5</TasaIVA>')])
    const { estado, answer } = await uploadAndProcess(envelope)
    expect(estado).toBe('RSC')
    expect(field(answer.inner, 'GLOSA')).toContain('TasaIVA')
  })

  test('a Caratula not addressed to the SII ends RCT', async () => {
    const { estado } = await uploadAndProcess(envioDte([dte({ folio: folio() })], { rutReceptor: '76086428-5' }))
    expect(estado).toBe('RCT')
  })

  test('not XML, or an EnvioBOLETA on DTEUpload: STATUS 7 with DETAIL', async () => {
    const notXml = await dteUpload(sim.url, token, toLatin1Bytes('esto no es XML'))
    expect(notXml.status).toBe('7')
    expect(notXml.text).toContain('<DETAIL>')
    expect((await dteUpload(sim.url, token, envioBoleta([dte({ tipo: 39, folio: folio() })]))).status).toBe('7')
  })

  test('an envelope modified after signing: STATUS 8', async () => {
    const text = fromLatin1Bytes(envioDte([dte({ folio: folio() })]))
    const tampered = toLatin1Bytes(text.replace('<NroResol>0</NroResol>', '<NroResol>1</NroResol>'))
    expect((await dteUpload(sim.url, token, tampered)).status).toBe('8')
  })

  test('rutSender other than the token holder, RutEnvia or the signer: STATUS 1', async () => {
    const envelope = envioDte([dte({ folio: folio() })])
    expect((await dteUpload(sim.url, token, envelope, '11111111-1')).status).toBe('1')
    const otherSigner = makeCertificate({ rut: '11111111-1', keySlot: 7, issuer: testCa() })
    const otherToken = await soapToken(sim.url, otherSigner.signer)
    // The envelope says RutEnvia 7880442-4 and is signed by 7880442-4's certificate; the upload claims 11111111-1.
    expect((await dteUpload(sim.url, otherToken, envelope, '11111111-1')).status).toBe('1')
  })

  test('rutCompany other than the Caratula\'s RutEmisor, or not a RUT: STATUS 6', async () => {
    const envelope = envioDte([dte({ folio: folio() })])
    expect((await dteUpload(sim.url, token, envelope, SENDER, '76086428-5')).status).toBe('6')
    expect((await dteUpload(sim.url, token, envelope, SENDER, '76086428-1')).status).toBe('6')
  })

  test('an empty file is STATUS 2; a body that is not a multipart form is STATUS 3', async () => {
    expect((await dteUpload(sim.url, token, new Uint8Array())).status).toBe('2')
    const res = await fetch(`${sim.url}/cgi_dte/UPL/DTEUpload`, {
      method: 'POST', body: '--x\r\nContent-Disposition: form-data; name="archivo"', headers: { Cookie: `TOKEN=${token}`, 'content-type': 'multipart/form-data; boundary=x' },
    })
    expect(await res.text()).toContain('<STATUS>3</STATUS>')
  })

  test('a gzip-compressed archivo is inflated (LibreDTE sends application/gzip, docs/sii-protocol.md §6.4)', async () => {
    const envelope = envioDte([dte({ folio: folio() })])
    const up = await dteUpload(sim.url, token, Bun.gzipSync(new Uint8Array(envelope)))
    expect(up.status).toBe('0')
  })
})

describe('getEstDte (docs/sii-protocol.md §6.6)', () => {
  const f = 900
  beforeAll(async () => {
    await uploadAndProcess(envioDte([dte({ folio: f, tipo: 33, caf: makeTestCaf({ tipoDte: 33, folioDesde: 900, folioHasta: 910 }).caf })]))
  })

  test('DOK when receptor, date and amount match what was received', async () => {
    expect(await estDte({ folio: f })).toMatchObject({ estado: 'DOK', errCode: '0' })
  })

  test('the date also in DD-MM-AAAA (DSPY)', async () => {
    expect((await estDte({ folio: f, fecha: '02-03-2026' })).estado).toBe('DOK')
  })

  test.each([
    ['receptor', { receptor: '11111111-1' }],
    ['date', { fecha: '03032026' }],
    ['amount', { monto: '1191' }],
  ])('DNK when the %s differs', async (_what, change) => {
    const answer = await estDte({ folio: f, ...change })
    expect(answer).toMatchObject({ estado: 'DNK', errCode: '1' })
    expect(answer.glosaErr).toContain('No coincide')
  })

  test('FAU for a folio never received, and for one still in process', async () => {
    expect((await estDte({ folio: 899 })).estado).toBe('FAU')
    const g = folio()
    await dteUpload(sim.url, token, envioDte([dte({ folio: g })]))
    expect((await estDte({ folio: g })).estado).toBe('FAU')
    clock.advance(DELAY)
    expect((await estDte({ folio: g })).estado).toBe('DOK')
  })

  test('RutConsultante must be the authenticated user (-6)', async () => {
    expect((await estDte({ folio: f, consultante: '11111111-1' })).estado).toBe('-6')
  })

  test('getEstUp of a track id of another company, or unknown: -11 with ERR_CODE 1', async () => {
    const answer = await estUp(sim.url, token, '0999999999')
    expect(field(answer.inner, 'ESTADO')).toBe('-11')
    expect(field(answer.inner, 'ERR_CODE')).toBe('1')
  })
})

describe('why the SII said no (issue 13): each rejection and reparo carries its code where the SII puts it', () => {
  test('getEstDte of a rejected folio is FAU with the rejection in GLOSA_ERR; of one with reparos, DOK with the reparo', async () => {
    const [no, rep] = [folio(), folio()]
    await uploadAndProcess(envioDte([dte({ folio: no, receptor: '88888888-8' }), dte({ folio: rep, receptor: '77777777-7' })]))
    const rejected = await estDte({ folio: no, receptor: '88888888-8' })
    expect(rejected).toMatchObject({ estado: 'FAU', errCode: '3' })
    expect(rejected.glosaErr).toBe(`(RCV-3-1) Documento rechazado (receptor de prueba 88888888-8) — DTE F${no}T33`)
    const repaired = await estDte({ folio: rep, receptor: '77777777-7' })
    expect(repaired).toMatchObject({ estado: 'DOK', errCode: '0' })
    expect(repaired.glosaErr).toStartWith('(RCV-2-2) Documento aceptado con reparos (receptor de prueba 77777777-7)')
  })

  test('a forged TED: FAU naming the TED check; a folio outside its CAF: FNA naming the CAF range', async () => {
    const forgedFolio = folio()
    const other = makeTestCaf({ tipoDte: 33 })
    await uploadAndProcess(envioDte([dte({ folio: forgedFolio, caf: { ...caf(33).caf, privateKey: other.caf.privateKey } })]))
    expect((await estDte({ folio: forgedFolio })).glosaErr).toStartWith('(TED-3-1) Firma del TED (FRMT) no corresponde al CAF')
    await uploadAndProcess(envioDte([dte({ folio: 160 })]))
    expect(await estDte({ folio: 160 })).toMatchObject({ estado: 'FNA', errCode: '4', glosaErr: expect.stringContaining('(CAF-3-1) Folio fuera del rango autorizado') })
  })

  test('an envelope refused for a DTE signature: its GLOSA names the stage and the first reason with its code', async () => {
    const broken = dte({ folio: folio() }).replace('<GiroRecep>Comercio</GiroRecep>', '<GiroRecep>Comerci0</GiroRecep>')
    const { estado, answer } = await uploadAndProcess(envioDte([broken]))
    expect(estado).toBe('RFR')
    expect(field(answer.inner, 'GLOSA')).toStartWith('Rechazado por Error en Firma: (FRM-3-2) Firma del DTE inválida — DTE ')
  })
})

describe('state survives a restart when a data dir is given', () => {
  test('tokens, track ids and received folios persist in <dataDir>/sii-simulator.db', async () => {
    const dir = tempDir()
    try {
      const c = testClock({ at: SIM_START })
      const first = await startSimulator({ dataDir: dir, clock: c.now, processingDelayMs: 1000 })
      const t = await soapToken(first.url)
      const up = await dteUpload(first.url, t, envioDte([dte({ folio: 950, caf: makeTestCaf({ tipoDte: 33, folioDesde: 950, folioHasta: 960 }).caf })]))
      expect(up.status).toBe('0')
      await first.stop()
      c.advance(1000)
      const second = await startSimulator({ dataDir: dir, clock: c.now })
      try {
        const answer = await estUp(second.url, t, up.trackId ?? '')
        expect(field(answer.inner, 'ESTADO')).toBe('EPR')
        const next = await dteUpload(second.url, t, envioDte([dte({ folio: 951, caf: makeTestCaf({ tipoDte: 33, folioDesde: 950, folioHasta: 960 }).caf })]))
        expect(Number(next.trackId)).toBe(Number(up.trackId) + 1)
      } finally {
        await second.stop()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
