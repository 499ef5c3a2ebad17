// Exports in a foreign currency end to end (issue 13 items 1 and 2; DESIGN §12 "Exports"): the status query of a 110
// or 112 sends the document's own MntTotal, in its currency, so the SII's getEstDte answers DOK ("Datos Coinciden"),
// not DNK with the peso total. Issued over HTTP, submitted and tracked by the real jobs through the in-process
// simulator; time is an injected clock.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { EmitirDte } from '../../src/domain/emision'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { sameAmount } from '../../src/sii/simulator/queries'
import { testClock } from '../support/clock'
import { issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const FINAL = ['aceptado', 'rechazado', 'con_reparos']
const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)

const RECEPTOR = { rut: '55555555-5', razon_social: 'Andes Importers LLC', direccion: '1200 Brickell Ave, Suite 300', ciudad: 'Miami' }

const ADUANA = {
  tpo_moneda: 'DOLAR USA', tpo_cambio: 950.2504, nacionalidad: '225', forma_pago_exp: 2, modalidad_venta: 1, clausula_venta: 'FOB',
  total_clausula: 1687.5, via_transporte: 1, puerto_embarque: '906', puerto_desembarque: 'Port Everglades', total_bultos: 4, pais_recep: '225',
  pais_dest: '225',
} as const satisfies EmitirDte['export_data']

function factura(overrides: Partial<EmitirDte> = {}): EmitirDte {
  return {
    tipo_dte: 110,
    receptor: RECEPTOR,
    detalle: [
      { nombre: 'Vino Carménère reserva 750 ml (caja 12)', cantidad: 100, precio: 12, unidad: 'CJ' },
      { nombre: 'Aceite de oliva extra virgen 500 ml', cantidad: 37.5, precio: 13, unidad: 'LT' },
    ],
    export_data: ADUANA,
    ...overrides,
  }
}

describe('foreign-currency exports through the in-process simulator', () => {
  const clock = testClock()
  let s: TestServer
  let tenant: Tenant

  beforeAll(async () => {
    s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h' } })
    tenant = await s.tenant(testRut())
    await provisionIssuer(s, tenant, { folios: 20, tipos: [110, 111, 112] })
  })
  afterAll(() => s.stop())

  async function drive(ids: readonly string[], rounds = 60): Promise<Map<string, any>> {
    const records = new Map<string, any>()
    for (let i = 0; i < rounds; i++) {
      await submit.runOnce(s.server.deps)
      await track.runOnce(s.server.deps)
      for (const id of ids) records.set(id, (await s.request('GET', `/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json)
      if ([...records.values()].every((r) => FINAL.includes(r.estado))) return records
      clock.advance(20_000)
    }
    return records
  }

  test('a 110 and a 112 in DOLAR USA reach aceptado and getEstDte answers DOK for their own MntTotal', async () => {
    const f = await issue(s, tenant, factura())
    expect(f.status).toBe(201)
    const today = (await s.request('GET', `/api/v1/billing/dte/${f.json.id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json
    const nc = await issue(s, tenant, factura({
      tipo_dte: 112,
      detalle: [{ nombre: 'Vino Carménère reserva 750 ml (caja 12)', cantidad: 10, precio: 12, unidad: 'CJ' }],
      referencias: [{ tipo_doc_ref: 110, folio_ref: f.json.folio, fecha_ref: today.fecha_emision, codigo_ref: 3, razon_ref: 'Cajas devueltas' }],
    }))
    expect(nc.status).toBe(201)
    const records = await drive([f.json.id, nc.json.id])
    const factura110 = records.get(f.json.id)
    const nota112 = records.get(nc.json.id)
    for (const [r, moneda] of [[factura110, 1687.5], [nota112, 120]] as const) {
      expect({ tipo: r.tipo_dte, estado: r.estado }).toEqual({ tipo: r.tipo_dte, estado: 'aceptado' })
      expect(r.moneda).toBe('DOLAR USA')
      expect(r.monto_total_moneda).toBe(moneda)
      // DOK: "Datos Coinciden con los Registrados", the amount being the document's own MntTotal (docs/sii-protocol.md §6.6).
      expect(r.sii_status).toMatchObject({ source: 'documento', estado_sii: 'DOK', err_code: '0' })
      expect(r.sii_status.glosa_estado).not.toContain('No Coinciden')
      const query = r.historial_sii.find((h: any) => h.operacion === 'estado_dte')
      expect(query).toMatchObject({ estado: 'DOK' })
    }
    expect(factura110.monto_total).toBe(Math.round(1687.5 * 950.2504))
  }, 120_000)

  test('a 110 in EURO with a 4-decimal price: the query sends MntTotal as the XML writes it', async () => {
    const res = await issue(s, tenant, factura({
      detalle: [{ nombre: 'Licencia anual de software', cantidad: 3, precio: 1234.5678 }],
      export_data: { ...ADUANA, tpo_moneda: 'EURO', tpo_cambio: 1021.17, total_clausula: 3703.7 },
    }))
    expect(res.status).toBe(201)
    const r = (await drive([res.json.id])).get(res.json.id)
    expect(r).toMatchObject({ estado: 'aceptado', moneda: 'EURO', monto_total_moneda: 3703.7034 })
    expect(r.sii_status).toMatchObject({ estado_sii: 'DOK' })
  }, 120_000)

  test('a 110 in PESO CL: moneda PESO CL, its own total is the peso total, DOK', async () => {
    const res = await issue(s, tenant, factura({ export_data: { ...ADUANA, tpo_moneda: 'PESO CL', tpo_cambio: undefined, total_clausula: 1687 } }))
    expect(res.status).toBe(201)
    const r = (await drive([res.json.id])).get(res.json.id)
    expect(r).toMatchObject({ estado: 'aceptado', moneda: 'PESO CL', monto_total: 1688, monto_total_moneda: 1688 })
    expect(r.sii_status).toMatchObject({ estado_sii: 'DOK' })
  }, 120_000)
})

describe("the simulator's getEstDte compares MontoDte with the MntTotal it received, as exact decimals", () => {
  test.each([
    ['1687.5', '1687.5', true],
    ['1687.50', '1687.5', true],
    ['01250', '1250', true],
    ['0.0', '0', true],
    ['1250', '125', false],
    ['1187813', '1250', false],
    ['12345678901234.5678', '12345678901234.5679', false],
  ])('%s vs %s → %p', (query, registered, same) => expect(sameAmount(query, registered)).toBe(same))
})
