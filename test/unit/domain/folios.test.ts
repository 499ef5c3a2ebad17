// domain/folios.ts (DESIGN §8, §17): which folios still serve, what automatic mode weighs, and the stretches of a range.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { addDays, cafVenceEl, foliosDisponibles, foliosUtiles, quitarFolios, rangosSinUsar, tramosDeCaf, unirRangos, type Rango } from '../../../src/domain/folios'

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

/** The state of one folio, the slow way: what tramosDeCaf must agree with everywhere. */
function oracle(caf: { next_folio: number; vence_el: string | null; anulacion_estado: 'en_curso' | 'anulado' | null; folios_anulados: Rango[] }, huecos: Set<number>, folio: number): string {
  if (caf.folios_anulados.some((r) => folio >= r.desde && folio <= r.hasta)) return 'anulado'
  if (folio < caf.next_folio && !huecos.has(folio)) return 'usado'
  if (caf.anulacion_estado === 'en_curso') return 'en_anulacion'
  if (caf.anulacion_estado === 'anulado' || (caf.vence_el !== null && TODAY > caf.vence_el)) return 'por_anular'
  return 'disponible'
}

test('the stretches of a range agree folio by folio with the slow reading, whatever holes, annulled ranges and state', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 130 }), fc.integer({ min: -5, max: 5 }),
      fc.constantFrom(null, 'en_curso', 'anulado'), fc.array(fc.integer({ min: 0, max: 130 }), { maxLength: 6 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 10 })), { maxLength: 3 }),
      (desde, size, used, venceDelta, anulacion, holeOffsets, anuladoSpecs) => {
        const hasta = desde + size
        const next = Math.min(desde + used, hasta + 1)
        const huecos = [...new Set(holeOffsets.map((o) => desde + o).filter((f) => f < next))]
        const folios_anulados = unirRangos(anuladoSpecs.map(([o, len]) => ({ desde: desde + o, hasta: Math.min(desde + o + len, hasta) })).filter((r) => r.desde <= hasta))
        const caf = { folio_desde: desde, folio_hasta: hasta, next_folio: next, vence_el: addDays(TODAY, venceDelta), anulacion_estado: anulacion as 'en_curso' | 'anulado' | null, folios_anulados }
        const tramos = tramosDeCaf(caf, TODAY, huecos)
        let at = desde
        for (const [k, t] of tramos.entries()) {
          expect(t.desde).toBe(at)
          expect(t.hasta).toBeGreaterThanOrEqual(t.desde)
          if (k > 0) expect(t.estado).not.toBe(tramos[k - 1]!.estado)
          for (let f = t.desde; f <= t.hasta; f++) expect(t.estado as string).toBe(oracle(caf, new Set(huecos), f))
          at = t.hasta + 1
        }
        expect(at).toBe(hasta + 1)
        // What an annulment asks for is exactly what is neither used nor annulled.
        const sinUsar = rangosSinUsar(caf, TODAY, huecos).flatMap((r) => Array.from({ length: r.hasta - r.desde + 1 }, (_, i) => r.desde + i))
        const expected = Array.from({ length: size + 1 }, (_, i) => desde + i).filter((f) => !['usado', 'anulado'].includes(oracle(caf, new Set(huecos), f)))
        expect(sinUsar).toEqual(expected)
      },
    ),
  )
  expect(tramosDeCaf({ folio_desde: 1, folio_hasta: 10, next_folio: 4, vence_el: null, anulacion_estado: 'anulado', folios_anulados: [{ desde: 5, hasta: 10 }] }, TODAY, [2])).toEqual([
    { desde: 1, hasta: 1, estado: 'usado' }, { desde: 2, hasta: 2, estado: 'por_anular' }, { desde: 3, hasta: 3, estado: 'usado' },
    { desde: 4, hasta: 4, estado: 'por_anular' }, { desde: 5, hasta: 10, estado: 'anulado' },
  ])
})

test('quitarFolios splits ranges around the folios still being signed; unirRangos joins adjacent ones', () => {
  expect(quitarFolios([{ desde: 1, hasta: 10 }], new Set([1, 5, 6, 10, 20]))).toEqual([{ desde: 2, hasta: 4 }, { desde: 7, hasta: 9 }])
  expect(unirRangos([{ desde: 7, hasta: 9 }, { desde: 1, hasta: 3 }, { desde: 4, hasta: 5 }])).toEqual([{ desde: 1, hasta: 5 }, { desde: 7, hasta: 9 }])
})
