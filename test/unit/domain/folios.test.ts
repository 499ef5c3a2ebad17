// domain/folios.ts (DESIGN §8, §17): which folios still serve, what automatic mode weighs, and the stretches of a range.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { addDays, cafVenceEl, foliosDisponibles, foliosUtiles, tramosDeCaf } from '../../../src/domain/folios'

const TODAY = '2026-11-28'
const caf = (o: { next: number; hasta: number; vence?: string | null; anulacion?: 'en_curso' | 'anulado' | null }) =>
  ({ next_folio: o.next, folio_hasta: o.hasta, vence_el: o.vence ?? null, anulacion_estado: o.anulacion ?? null })

test('addDays and the 180 days of the types that expire', () => {
  expect(addDays('2026-02-27', 2)).toBe('2026-03-01')
  expect(addDays('2026-12-31', 1)).toBe('2027-01-01')
  expect(cafVenceEl(33, '2026-06-01')).toBe('2026-11-28')
  expect(cafVenceEl(39, '2026-06-01')).toBeNull()
})

test('an annulled or annulling CAF has no free folios', () => {
  expect(foliosDisponibles(caf({ next: 5, hasta: 10 }))).toBe(6)
  expect(foliosDisponibles(caf({ next: 5, hasta: 10, anulacion: 'en_curso' }))).toBe(0)
  expect(foliosDisponibles(caf({ next: 5, hasta: 10, anulacion: 'anulado' }))).toBe(0)
})

test('automatic mode counts only folios that still serve past the horizon', () => {
  const lasting = caf({ next: 1, hasta: 100 })
  const soon = caf({ next: 1, hasta: 500, vence: addDays(TODAY, 10) })
  const later = caf({ next: 91, hasta: 100, vence: addDays(TODAY, 16) })
  const expired = caf({ next: 1, hasta: 50, vence: addDays(TODAY, -1) })
  expect(foliosUtiles([lasting, soon, later, expired], TODAY, 15)).toBe(110)
  // With no horizon the one expiring in 10 days counts.
  expect(foliosUtiles([soon], TODAY, 0)).toBe(500)
  expect(foliosUtiles([soon], TODAY, 10)).toBe(0)
  expect(foliosUtiles([caf({ next: 1, hasta: 100, anulacion: 'en_curso' })], TODAY, 15)).toBe(0)
})

test('the stretches of a range cover it exactly, in order, whatever its state', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 250 }), fc.integer({ min: -5, max: 5 }),
      fc.constantFrom(null, 'en_curso', 'anulado'), fc.integer({ min: 0, max: 10 }),
      (desde, size, used, venceDelta, anulacion, gap) => {
        const hasta = desde + size
        const next = Math.min(desde + used, hasta + 1)
        const anuladoDesde = Math.min(next + gap, hasta + 1)
        const row = {
          folio_desde: desde, folio_hasta: hasta, next_folio: next, vence_el: addDays(TODAY, venceDelta), anulacion_estado: anulacion as 'en_curso' | 'anulado' | null,
          anulado_desde: anulacion === 'anulado' ? anuladoDesde : null, anulado_hasta: anulacion === 'anulado' ? hasta : null,
        }
        const tramos = tramosDeCaf(row, TODAY)
        let at = desde
        for (const t of tramos) {
          expect(t.desde).toBe(at)
          expect(t.hasta).toBeGreaterThanOrEqual(t.desde)
          at = t.hasta + 1
        }
        expect(at).toBe(hasta + 1)
        const usados = tramos.filter((t) => t.estado === 'usado').reduce((n, t) => n + t.hasta - t.desde + 1, 0)
        expect(usados).toBe(next - desde)
        if (anulacion === null && venceDelta < 0) expect(tramos.some((t) => t.estado === 'disponible')).toBe(false)
        if (anulacion === null && venceDelta >= 0) expect(tramos.some((t) => t.estado === 'por_anular')).toBe(false)
      },
    ),
  )
  expect(tramosDeCaf({ folio_desde: 1, folio_hasta: 10, next_folio: 4, vence_el: null, anulacion_estado: 'anulado', anulado_desde: 5, anulado_hasta: 10 }, TODAY)).toEqual([
    { desde: 1, hasta: 3, estado: 'usado' }, { desde: 4, hasta: 4, estado: 'sin_usar' }, { desde: 5, hasta: 10, estado: 'anulado' },
  ])
})
