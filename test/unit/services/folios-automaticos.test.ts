// Automatic mode's brakes (services/caf-solicitudes.ts enPausa, DESIGN §17): what it does after its latest requests.
import { expect, test } from 'bun:test'
import type { CafSolicitudRow } from '../../../src/db/schema'
import { enPausa } from '../../../src/services/caf-solicitudes'

const NOW = new Date('2026-11-28T12:00:00.000Z')
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString()
const MIN = 60_000
const HOUR = 60 * MIN
const setting = { updated_at: ago(30 * 24 * HOUR) }

function req(estado: CafSolicitudRow['estado'], updatedAgo: number, extra: Partial<CafSolicitudRow> = {}): CafSolicitudRow {
  return {
    id: crypto.randomUUID(), empresa_id: 'e', operacion: 'solicitud', origen: 'automatica', tipo_dte: 33, estado, cantidad_pedida: 100, cantidad_solicitada: null,
    max_autor: null, folio_desde: null, folio_hasta: null, fecha_otorgamiento: null, otorgando_at: null, caf_id: null, motivo_anulacion: null, reabrible: false,
    falla_motivo: null, falla_mensaje: null, falla_etapa: null, intentos: 0, proximo_intento_at: null, lease_until: null, lease_owner: null,
    created_at: ago(updatedAgo), updated_at: ago(updatedAgo), ...extra,
  }
}

test('nothing before it, or a CAF obtained over a minute ago: it may ask', () => {
  expect(enPausa([], setting, NOW)).toBe(false)
  expect(enPausa([req('descargado', 2 * MIN)], setting, NOW)).toBe(false)
})

test('one automatic CAF a minute at most, whatever the stock (a maximum below the threshold would ask every pass)', () => {
  expect(enPausa([req('descargado', 30_000)], setting, NOW)).toBe(true)
  // A person's request does not hold it back.
  expect(enPausa([req('descargado', 30_000, { origen: 'api' })], setting, NOW)).toBe(false)
})

test('failures in a row wait 1 h, 2 h, 4 h … up to a day after the last; saving the setting again ends the wait', () => {
  const fails = (n: number, lastAgo: number) => Array.from({ length: n }, (_, i) => req('fallido', lastAgo + i * HOUR))
  expect(enPausa(fails(1, 59 * MIN), setting, NOW)).toBe(true)
  expect(enPausa(fails(1, 61 * MIN), setting, NOW)).toBe(false)
  expect(enPausa(fails(3, 3 * HOUR), setting, NOW)).toBe(true)
  expect(enPausa(fails(3, 4 * HOUR + MIN), setting, NOW)).toBe(false)
  expect(enPausa(fails(12, 23 * HOUR), setting, NOW)).toBe(true)
  expect(enPausa(fails(12, 24 * HOUR + MIN), setting, NOW)).toBe(false)
  // A success between them resets the count.
  expect(enPausa([req('fallido', 61 * MIN), req('descargado', 2 * HOUR), ...fails(5, 3 * HOUR)], setting, NOW)).toBe(false)
  expect(enPausa(fails(3, 30 * MIN), { updated_at: ago(10 * MIN) }, NOW)).toBe(false)
})

test('a range granted and never downloaded holds it until a person acts: another grant would leave another range to annul', () => {
  const stuck = req('fallido', 5 * 24 * HOUR, { folio_desde: 1, folio_hasta: 100 })
  expect(enPausa([stuck], setting, NOW)).toBe(true)
  expect(enPausa([stuck], { updated_at: ago(HOUR) }, NOW)).toBe(false)
  expect(enPausa([req('descargado', 2 * MIN, { origen: 'api' }), stuck], setting, NOW)).toBe(false)
})
