// A set's case as the request Timbre issues (domain/certificacion-casos.ts), the simulation's documents
// (domain/certificacion-simulacion.ts) and the stages' next steps (domain/certificacion-etapas.ts): pure, checked against
// the same rules POST /dte applies (contracts/dte.ts validateEmision), over the SII's real set texts and random plans.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { validateEmision } from '../../../src/contracts/dte'
import { isDocumentoDeSet, RECEPTOR_SET_EXTRANJERO, solicitudDeCaso, type CasoEmitido } from '../../../src/domain/certificacion-casos'
import { etapasDeCertificacion, type HechosCertificacion } from '../../../src/domain/certificacion-etapas'
import { MAX_SIMULACION, MIN_SIMULACION, planSimulacion, TIPOS_SIMULABLES } from '../../../src/domain/certificacion-simulacion'
import type { TipoDte } from '../../../src/domain/emision'
import { decodeSetText, parseSetPruebas, type SetPruebas } from '../../../src/domain/set-pruebas'

const SETS = join(import.meta.dir, '../../fixtures/sii/sets')
const TODAY = '2026-11-28'

function setsOf(file: string): SetPruebas[] {
  const decoded = decodeSetText(readFileSync(join(SETS, file)))
  if (!decoded.ok) throw new Error(decoded.error.message)
  const parsed = parseSetPruebas(decoded.text)
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors))
  return parsed.value.sets
}

/** Every case of the set, issued in order with folio 100 + its position. */
function issueAll(set: SetPruebas, tpoCambio?: number) {
  const emitidos = new Map<string, CasoEmitido>()
  return set.casos.map((caso, i) => {
    const s = solicitudDeCaso(set, caso, emitidos, { fecha: TODAY, ...(tpoCambio !== undefined ? { tpoCambio } : {}) })
    emitidos.set(caso.caso, { tipoDte: caso.tipoDte, folio: 100 + i, fechaEmision: '2026-11-2' + (i % 8) })
    return s
  })
}

describe('a case as its request', () => {
  const files = readdirSync(SETS).filter((f) => f.endsWith('.txt'))

  test.each(files)('%s: every case passes the rules of POST /dte, with SET first and its cited case second', (file) => {
    for (const set of setsOf(file)) {
      issueAll(set, 950.5).forEach((s, i) => {
        const caso = set.casos[i]!
        if (!s.ok) throw new Error(`${caso.caso}: ${s.message}`)
        const checked = validateEmision(s.request, TODAY)
        expect({ caso: caso.caso, errors: checked.ok ? [] : checked.errors }).toEqual({ caso: caso.caso, errors: [] })
        expect(s.request.referencias![0]).toEqual({ tipo_doc_ref: 'SET', folio_ref: 0, fecha_ref: TODAY, razon_ref: `CASO ${caso.caso}` })
        expect(isDocumentoDeSet(s.request.referencias!)).toBe(true)
        expect(s.request.auto_send).toBe(false)
        if (caso.referenciaCaso) {
          const cited = set.casos.findIndex((c) => c.caso === caso.referenciaCaso!.caso)
          expect(s.request.referencias![1]).toMatchObject({ tipo_doc_ref: set.casos[cited]!.tipoDte, folio_ref: 100 + cited, codigo_ref: caso.referenciaCaso.codigoRef })
        }
      })
    }
  })

  test('a case whose cited case has no folio yet waits; an export in a foreign currency needs the rate', () => {
    const [basico] = setsOf('sintetico-2026.txt')
    const nota = basico!.casos.find((c) => c.referenciaCaso)!
    const s = solicitudDeCaso(basico!, nota, new Map(), { fecha: TODAY })
    expect(s).toMatchObject({ ok: false, code: 'CASO_PENDIENTE' })
    const exportacion = setsOf('sintetico-2026.txt').find((x) => x.nombre === 'EXPORTACION 1')!
    const e = solicitudDeCaso(exportacion, exportacion.casos[0]!, new Map(), { fecha: TODAY })
    expect(e).toMatchObject({ ok: false, code: 'TPO_CAMBIO_REQUERIDO' })
    const ok = solicitudDeCaso(exportacion, exportacion.casos[0]!, new Map(), { fecha: TODAY, tpoCambio: 941.2 })
    expect(ok.ok && ok.request.export_data?.tpo_cambio).toBe(941.2)
    expect(ok.ok && ok.request.receptor).toEqual(RECEPTOR_SET_EXTRANJERO)
  })

  test('the debit note that annuls a text correction carries MontoItem 0; a traslado guía prices nothing', () => {
    const [basico, guias] = setsOf('sintetico-2026.txt')
    const results = issueAll(basico!)
    const nd = results[basico!.casos.findIndex((c) => c.caso === '5102201-7')]!
    expect(nd.ok && nd.request.detalle).toEqual([{ nombre: 'Tornillo cabeza hexagonal AFECTO', monto_item: 0 }])
    const traslado = issueAll(guias!)[0]!
    expect(traslado.ok && traslado.request.detalle.map((l) => l.monto_item)).toEqual([0, 0])
  })
})

describe('the simulation', () => {
  const producto = fc.record({
    nombre: fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s.trim() !== ''),
    precio: fc.integer({ min: 1, max: 5_000_000 }),
    unidad: fc.option(fc.constantFrom('UN', 'KG', 'HR', 'LT', 'MT'), { nil: undefined }),
    exento: fc.boolean(),
  })

  test('any plan: 20 to 100 documents of the covered types, each valid, notes citing earlier documents', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: MIN_SIMULACION, max: MAX_SIMULACION }),
        fc.subarray([...TIPOS_SIMULABLES] as TipoDte[], { minLength: 1 }),
        fc.array(producto, { maxLength: 8 }),
        fc.nat(),
        (cantidad, tipos, productos, seed) => {
          const receptor = { rut: '76086428-5', razon_social: 'Ferretería Ñuble', giro: 'Comercio', direccion: 'Collao 1202', comuna: 'Concepción', ciudad: 'Concepción' }
          const plan = planSimulacion({ cantidad, tipos, receptores: [receptor], productos, seed })
          expect(plan).toHaveLength(cantidad)
          const emitidos = new Map<string, CasoEmitido>()
          const casos = { casos: plan.map((d) => d.caso) }
          plan.forEach((d, i) => {
            expect(tipos.includes(d.caso.tipoDte) || d.caso.tipoDte === 33).toBe(true)
            const s = solicitudDeCaso(casos, d.caso, emitidos, { fecha: TODAY, receptor: d.receptor, referenciaSet: false })
            if (!s.ok) throw new Error(s.message)
            emitidos.set(d.caso.caso, { tipoDte: d.caso.tipoDte, folio: i + 1, fechaEmision: TODAY })
            const checked = validateEmision(s.request, TODAY)
            if (!checked.ok) throw new Error(`${d.caso.caso} (${d.caso.tipoDte}): ${JSON.stringify(checked.errors)}`)
            expect(isDocumentoDeSet(s.request.referencias ?? [])).toBe(false)
          })
        },
      ),
      { numRuns: 60 },
    )
  })

  test('the same seed gives the same documents', () => {
    const args = { cantidad: 30, tipos: [33, 56, 61] as TipoDte[], receptores: [{ rut: '1-9', razon_social: 'X' }], productos: [], seed: 42 }
    expect(planSimulacion(args)).toEqual(planSimulacion(args))
    expect(planSimulacion({ ...args, seed: 43 })).not.toEqual(planSimulacion(args))
  })
})

describe('the stages', () => {
  const base: HechosCertificacion = { setsDocumentos: [], librosPedidos: [], envios: [], registradas: new Map() }

  test('from nothing to the declaration of each envío, with its track id and date', () => {
    expect(etapasDeCertificacion(base).map((e) => e.estado)).toEqual(['pendiente', 'pendiente', 'pendiente', 'pendiente', 'pendiente'])
    const cargado = { ...base, setsDocumentos: [{ nombre: 'BASICO', casos: 7, emitidos: 0 }] }
    expect(etapasDeCertificacion(cargado)[0]).toMatchObject({ estado: 'en_curso' })
    const envio = { clase: 'set' as const, nombres: ['BASICO'], estado: 'aceptado' as const, trackId: '0000012345', glosa: null, fechaEnvio: '2026-11-28' }
    const enviado = { ...cargado, setsDocumentos: [{ nombre: 'BASICO', casos: 7, emitidos: 7 }], envios: [envio] }
    const [set] = etapasDeCertificacion(enviado)
    expect(set).toMatchObject({ estado: 'enviado' })
    expect(set!.siguiente_paso).toContain('track id 0000012345 del 2026-11-28')
    expect(set!.siguiente_paso).toContain('Declarar avance')
    // The libros the set asks for are part of the stage.
    expect(etapasDeCertificacion({ ...enviado, librosPedidos: ['ventas'] })[0]).toMatchObject({ estado: 'en_curso' })
    const reparo = { ...enviado, envios: [{ ...envio, estado: 'con_reparos' as const, glosa: 'RUT receptor' }] }
    expect(etapasDeCertificacion(reparo)[0]).toMatchObject({ estado: 'con_errores' })
    expect(etapasDeCertificacion(reparo)[0]!.siguiente_paso).toContain('Reemitir rechazados')
    const aprobado = { ...reparo, registradas: new Map([['set_pruebas', { estado: 'aprobado', nota: null }]] as const) }
    expect(etapasDeCertificacion(aprobado)[0]).toMatchObject({ estado: 'aprobado' })
  })
})
