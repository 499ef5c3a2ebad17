// The Customs tables the issue form offers by name (domain/aduana.ts): every code the domain accepts by name has a
// name to show, and no table repeats a code (a repeated code would show two names for one choice).
import { describe, expect, test } from 'bun:test'
import {
  FORMAS_PAGO_EXPORTACION,
  MODALIDADES_VENTA,
  NOMBRES_BULTOS,
  NOMBRES_CLAUSULAS,
  NOMBRES_PAISES,
  PUERTOS_CHILE,
  PUERTOS_EXTRANJEROS,
  UNIDADES_ADUANA,
  VIAS_TRANSPORTE,
} from '../../../src/domain/aduana'
import { FORMA_PAGO_EXP_SIN_PAGO } from '../../../src/domain/emision'
import { CLAUSULAS_VENTA, PAISES, TIPOS_BULTO } from '../../../src/domain/tipos'

describe('Customs tables', () => {
  test('every clause, package type and country tipos.ts codes has a name', () => {
    expect(Object.keys(NOMBRES_CLAUSULAS).sort()).toEqual(Object.keys(CLAUSULAS_VENTA).sort())
    expect(Object.keys(NOMBRES_BULTOS).sort()).toEqual(Object.keys(TIPOS_BULTO).sort())
    expect(Object.keys(NOMBRES_PAISES).map(Number).sort()).toEqual([...new Set(Object.values(PAISES))].sort())
  })

  test.each([
    ['modalidades de venta', MODALIDADES_VENTA, 99],
    ['vías de transporte', VIAS_TRANSPORTE, 99],
    ['formas de pago', FORMAS_PAGO_EXPORTACION, 99],
    ['unidades', UNIDADES_ADUANA, 99],
    ['puertos chilenos', PUERTOS_CHILE, 9999],
    ['puertos extranjeros', PUERTOS_EXTRANJEROS, 9999],
  ] as const)('%s: distinct codes within what DTE_v10.xsd allows, each with a name', (_name, table, max) => {
    const codes = table.map((c) => c.codigo)
    expect(new Set(codes).size).toBe(codes.length)
    for (const c of table) {
      expect(c.codigo).toBeGreaterThan(0)
      expect(c.codigo).toBeLessThanOrEqual(max)
      expect(c.nombre.trim()).not.toBe('')
    }
  })

  test('the codes the domain already names agree: 21 is "sin pago", Chilean ports are 9xx', () => {
    expect(FORMAS_PAGO_EXPORTACION.find((f) => f.codigo === FORMA_PAGO_EXP_SIN_PAGO)?.nombre).toContain('sin pago')
    expect(PUERTOS_CHILE.every((p) => p.codigo >= 900 && p.codigo < 1000)).toBe(true)
    expect(PUERTOS_EXTRANJEROS.every((p) => p.codigo < 900)).toBe(true)
  })
})
