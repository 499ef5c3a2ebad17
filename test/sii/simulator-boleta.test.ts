// The boleta REST API (docs/sii-protocol.md §7.3) end to end against the simulator: token, envío, envío status with estadistica
// and detalle_rep_rech, the consulta of one boleta; 401 on a bad token; RPT with the first trackid on the same bytes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { testClock } from '../support/clock'
import { makeTestCaf } from '../support/pki'
import { dte, envioBoleta, envioDte, restToken, SIM_START, uploadForm } from './simulator-helpers'

const DELAY = 2000
const clock = testClock({ at: SIM_START })
let sim: RunningSimulator
let token: string
beforeAll(async () => {
  sim = await startSimulator({ clock: clock.now, processingDelayMs: DELAY })
  token = await restToken(sim.url)
})
afterAll(() => sim.stop())

const UA = 'Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)'

async function envio(envelope: Uint8Array, tokenValue: string | null = token): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': UA }
  if (tokenValue !== null) headers.Cookie = `TOKEN=${tokenValue}`
  const res = await fetch(`${sim.url}/recursos/v1/boleta.electronica.envio`, { method: 'POST', body: uploadForm(envelope), headers })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

async function estado(trackid: unknown, rut = '76543210-3'): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}/recursos/v1/boleta.electronica.envio/${rut}-${String(trackid)}`, { headers: { Cookie: `TOKEN=${token}`, Accept: 'application/json' } })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

async function consulta(folio: number, q: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
  const params = new URLSearchParams({ rut_receptor: '66666666', dv_receptor: '6', monto: '1190', fechaEmision: '02-03-2026', ...q })
  const res = await fetch(`${sim.url}/recursos/v1/boleta.electronica/76543210-3-39-${folio}/estado?${params}`, { headers: { Cookie: `TOKEN=${token}` } })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

describe('boleta envío', () => {
  let trackid: unknown
  const envelope = envioBoleta([dte({ tipo: 39, folio: 1 }), dte({ tipo: 39, folio: 2, receptor: '88888888-8' }), dte({ tipo: 39, folio: 3, receptor: '77777777-7' })])

  test('answers JSON with a 15-digit numeric trackid and estado REC', async () => {
    const { status, json } = await envio(envelope)
    expect(status).toBe(200)
    expect(json).toMatchObject({ rut_emisor: '76543210-3', rut_envia: '7880442-4', estado: 'REC', file: 'envio.xml' })
    expect(typeof json.trackid).toBe('number')
    expect(String(json.trackid)).toMatch(/^\d{15}$/)
    expect(json.fecha_recepcion).toMatch(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/)
    trackid = json.trackid
  })

  test('its status is REC with null estadistica and detalle_rep_rech until processed, then EPR with both', async () => {
    const before = await estado(trackid)
    expect(before.status).toBe(200)
    expect(before.json).toMatchObject({ estado: 'REC', estadistica: null, detalle_rep_rech: null, trackid })
    clock.advance(DELAY)
    const after = await estado(trackid)
    expect(after.json.estado).toBe('EPR')
    expect(after.json.estadistica).toEqual([{ tipo: 39, informados: 3, aceptados: 2, rechazados: 1, reparos: 1 }])
    const detalle = after.json.detalle_rep_rech as Array<Record<string, unknown>>
    expect(detalle.map((d) => [d.tipo, d.folio, d.estado])).toEqual([[39, 2, 'RCH'], [39, 3, 'RPR']])
    expect(detalle[0]?.error).toEqual([expect.objectContaining({ seccion: expect.any(String), codigo: expect.any(Number), nivel: 3, descripcion: expect.any(String) })])
  })

  test('the same bytes again: 200 with the first trackid and estado RPT', async () => {
    const { status, json } = await envio(envelope)
    expect(status).toBe(200)
    expect(json).toMatchObject({ trackid, estado: 'RPT' })
  })

  test('the consulta of one boleta: DOK, DNK on another amount, FAU for a folio never received', async () => {
    expect((await consulta(1, {})).json).toMatchObject({ codigo: 'DOK' })
    expect((await consulta(1, { monto: '1000' })).json).toMatchObject({ codigo: 'DNK' })
    expect((await consulta(2, {})).json).toMatchObject({ codigo: 'FAU' })  // rejected (88888888-8): not received
    expect((await consulta(77, {})).json).toMatchObject({ codigo: 'FAU' })
  })

  test('the consulta demands its four query parameters (400 without them)', async () => {
    const res = await fetch(`${sim.url}/recursos/v1/boleta.electronica/76543210-3-39-1/estado?rut_receptor=66666666`, { headers: { Cookie: `TOKEN=${token}` } })
    expect(res.status).toBe(400)
  })

  test('an unknown trackid, or one of another company, is 404', async () => {
    expect((await estado(123456789012345)).status).toBe(404)
    expect((await estado(trackid, '76086428-5')).status).toBe(404)
  })
})

describe('why a boleta was refused (issue 13): the SII\'s code in detalle_rep_rech and in the consulta', () => {
  test('a boleta already accepted, sent again in a new envelope: DTE-3-100 "DTE Repetido"; another boleta on its folio: DTE-3-101', async () => {
    const first = await envio(envioBoleta([dte({ tipo: 39, folio: 40 })]))
    clock.advance(DELAY)
    expect((await estado(first.json.trackid)).json.estado).toBe('EPR')
    // Re-signed (a new envelope, new bytes) with the same boleta, and with another boleta on folio 40.
    const again = await envio(envioBoleta([dte({ tipo: 39, folio: 40 })], { tmstFirmaEnv: '2026-03-02T10:11:20' }))
    const other = await envio(envioBoleta([dte({ tipo: 39, folio: 40, monto: 5000 })], { tmstFirmaEnv: '2026-03-02T10:11:21' }))
    clock.advance(DELAY)
    const errorsOf = async (trackid: unknown) => ((await estado(trackid)).json.detalle_rep_rech as Array<{ folio: number; estado: string; error: Array<Record<string, unknown>> }>)
    expect(await errorsOf(again.json.trackid)).toEqual([expect.objectContaining({ folio: 40, estado: 'RCH', error: [expect.objectContaining({ seccion: 'DTE', nivel: 3, codigo: 100, descripcion: 'DTE Repetido' })] })])
    expect(await errorsOf(other.json.trackid)).toEqual([expect.objectContaining({
      folio: 40, estado: 'RCH', error: [expect.objectContaining({ seccion: 'DTE', nivel: 3, codigo: 101, descripcion: 'Folio para este Tipo de documento ya fue recibido en el SII' })],
    })])
  })

  test('the consulta of a rejected boleta is FAU, its descripcion naming the rejection; a reparo shows on DOK', async () => {
    const { json } = await envio(envioBoleta([dte({ tipo: 39, folio: 41, receptor: '88888888-8' }), dte({ tipo: 39, folio: 42, receptor: '77777777-7' })]))
    clock.advance(DELAY)
    expect((await estado(json.trackid)).json.estado).toBe('EPR')
    const rejected = (await consulta(41, { rut_receptor: '88888888', dv_receptor: '8' })).json
    expect(rejected).toMatchObject({ codigo: 'FAU' })
    expect(rejected.descripcion).toContain('(RCV-3-1) Documento rechazado (receptor de prueba 88888888-8)')
    const repaired = (await consulta(42, { rut_receptor: '77777777', dv_receptor: '7' })).json
    expect(repaired).toMatchObject({ codigo: 'DOK' })
    expect(repaired.descripcion).toContain('(RCV-2-2) Documento aceptado con reparos')
  })
})

describe('boleta envío refusals', () => {
  test('no token or a bad one: HTTP 401 on envío, status and consulta', async () => {
    const envelope = envioBoleta([dte({ tipo: 39, folio: 10 })])
    expect((await envio(envelope, null)).status).toBe(401)
    expect((await envio(envelope, 'NOEXISTE12345')).status).toBe(401)
    expect((await fetch(`${sim.url}/recursos/v1/boleta.electronica.envio/76543210-3-1`)).status).toBe(401)
    expect((await fetch(`${sim.url}/recursos/v1/boleta.electronica/76543210-3-39-1/estado`)).status).toBe(401)
  })

  test('an EnvioDTE sent to the boleta API gets a trackid and ends RSC', async () => {
    const { json } = await envio(envioDte([dte({ folio: 11 })]))
    expect(json.estado).toBe('REC')
    clock.advance(DELAY)
    expect((await estado(json.trackid)).json.estado).toBe('RSC')
  })

  test('a folio outside its CAF ends EPR with that boleta rejected', async () => {
    const narrow = makeTestCaf({ tipoDte: 39, folioDesde: 500, folioHasta: 501 })
    const { json } = await envio(envioBoleta([dte({ tipo: 39, folio: 502, caf: narrow.caf })]))
    clock.advance(DELAY)
    const after = await estado(json.trackid)
    expect(after.json.estado).toBe('EPR')
    expect(after.json.estadistica).toEqual([{ tipo: 39, informados: 1, aceptados: 0, rechazados: 1, reparos: 0 }])
  })

  test('rutSender that is not RutEnvia: RCT with the SII\'s "RUT envia diferente al Upload" (docs/sii-protocol.md §7.3 example)', async () => {
    const form = uploadForm(envioBoleta([dte({ tipo: 39, folio: 12 })]), '11111111-1')
    const res = await fetch(`${sim.url}/recursos/v1/boleta.electronica.envio`, { method: 'POST', body: form, headers: { Cookie: `TOKEN=${token}` } })
    const json = (await res.json()) as Record<string, unknown>
    clock.advance(DELAY)
    const after = await estado(json.trackid)
    expect(after.json.estado).toBe('RCT')
    const detalle = after.json.detalle_rep_rech as Array<{ error: Array<Record<string, unknown>> }>
    expect(detalle[0]?.error[0]).toMatchObject({ seccion: 'CRT', codigo: 11, descripcion: 'RUT envia diferente al Upload' })
  })
})
