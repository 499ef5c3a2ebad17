// Messages in words (issue 27): every field path the issuance contract can produce (contracts/dte.ts and
// domain/emision-rules.ts, through validateEmision) gets a human label, with no dot, bracket or snake_case name left;
// the messages themselves name fields by their labels and point at no document of Timbre's.
import { describe, expect, test } from 'bun:test'
import type { TSchema } from '@sinclair/typebox'
import { EmitirDteBody, validateEmision } from '../../../src/contracts/dte'
import { FIELD_LABELS, fieldLabel, messageInWords } from '../../../src/console/field-labels'
import type { FieldError } from '../../../src/errors'
import { dteFixtures } from '../../support/fixtures'

const TODAY = '2025-06-30'

type Path = Array<string | number>

/** Every property path of the schema (arrays at index 0), so no field the contract knows is left out. */
function schemaPaths(schema: TSchema, prefix: Path = []): Path[] {
  const s = schema as { type?: string; properties?: Record<string, TSchema>; items?: TSchema; anyOf?: TSchema[] }
  if (s.type === 'object' && s.properties)
    return Object.entries(s.properties).flatMap(([name, child]) => [[...prefix, name], ...schemaPaths(child, [...prefix, name])])
  if (s.type === 'array' && s.items) return schemaPaths(s.items, [...prefix, 0])
  return []
}

function setAt(target: Record<string, unknown>, path: Path, value: unknown): void {
  let node: Record<string | number, unknown> = target
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) node[key] = value
    else {
      if (typeof node[key] !== 'object' || node[key] === null) node[key] = typeof path[i + 1] === 'number' ? [] : {}
      node = node[key] as Record<string | number, unknown>
    }
  }
}

/** A battery of bad bodies: each fixture with each schema field spoilt, plus rule violations across fields and types. */
function badBodies(): unknown[] {
  const bodies: unknown[] = []
  const fixtures = dteFixtures()
  for (const f of fixtures.filter((_, i) => i % 4 === 0)) {
    for (const path of schemaPaths(EmitirDteBody)) {
      for (const wrong of [{ x: 1 }, 'x', -1, 1.23456789, 'ñ'.repeat(1001), '😀']) {
        const body = structuredClone(f.request) as unknown as Record<string, unknown>
        setAt(body, path, wrong)
        bodies.push(body)
      }
    }
  }
  for (const f of fixtures) {
    const r = structuredClone(f.request) as unknown as Record<string, unknown>
    // Blocks on the wrong type, values the rules refuse, and unknown properties.
    bodies.push({ ...r, tipo_dte: r.tipo_dte === 33 ? 110 : 33 })
    bodies.push({ ...r, tipo_dte: 43 }, { ...r, tipo_dte: 46 }, { ...r, tipo_dte: 61 }, { ...r, tipo_dte: 52 }, { ...r, tipo_dte: 39 })
    bodies.push({ ...r, montos_brutos: true, impuestos_retenciones: [{ tipo_imp: 28 }, { tipo_imp: 28 }, { tipo_imp: 999 }] })
    bodies.push({ ...r, comisiones: [{ tipo_movim: 'C', glosa: 'x', val_com_neto: -5, val_com_exe: 0, tasa_comision: 1.234 }] })
    bodies.push({ ...r, descuentos_globales: [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 150 }, { tpo_mov: 'D', tpo_valor: '$', valor_dr: 1.5, ind_exe_dr: 2 }] })
    bodies.push({ ...r, referencias: [{ tipo_doc_ref: 33, folio_ref: 0, fecha_ref: '2024-02-30', razon_ref: 'x', codigo_ref: 1 }, { tipo_doc_ref: 'SET', folio_ref: 3, fecha_ref: '2024-01-01', razon_ref: 'x', codigo_ref: 2 }] })
    bodies.push({ ...r, export_data: { tpo_moneda: 'DOLAR USA', tipo_doc_id: 1, clausula_venta: 'ZZZ', pais_dest: 'Narnia', tpo_cambio: 1.123456 } })
    bodies.push({ ...r, receptor: { rut: '11111111-2', razon_social: '', email: 'no' }, fecha_emision: '2099-01-01', metadata: { x: 'y'.repeat(20000) } })
    bodies.push({ ...r, detalle: (r.detalle as Array<Record<string, unknown>>).map((l) => ({ ...l, precio: 12.5, cantidad: undefined, cod_imp_adic: 15, tipo_doc_liq: '33', descuento_pct: 1.234 })) })
    bodies.push({ ...r, detalle: [{ nombre: 'x', cantidad: 1e11, precio: 999999999999 }] })
    bodies.push({ ...r, foo: 1, receptor: { ...(r.receptor as object), bar: 2 } })
  }
  bodies.push({}, null, [], 'x', { tipo_dte: 99, receptor: 'x', detalle: 'x' }, { tipo_dte: 33, receptor: {}, detalle: Array.from({ length: 61 }, () => ({})) })
  return bodies
}

function errorsOf(bodies: unknown[]): FieldError[] {
  return bodies.flatMap((b) => {
    const r = validateEmision(b, TODAY)
    return r.ok ? [] : r.errors
  })
}

describe('field labels', () => {
  const errors = errorsOf(badBodies())
  const fields = [...new Set(errors.map((e) => e.field))].sort()

  test('the battery reaches the whole contract', () => {
    // The schema's own fields, the rules' cross-field paths and a row of each list.
    expect(fields.length).toBeGreaterThan(80)
    for (const path of ['detalle.0.nombre', 'receptor.rut', 'export_data.clausula_venta', 'comisiones.0.val_com_neto', 'descuentos_globales.0.valor_dr', 'impuestos_retenciones.0.tipo_imp', 'referencias.1.folio_ref'])
      expect(fields).toContain(path)
  })

  test('every field path validateEmision produces reads as words: no dots, brackets nor underscores', () => {
    const bad = fields.filter((f) => /[.[\]_]/.test(fieldLabel(f)) || fieldLabel(f) === f)
    expect(bad.map((f) => `${f} → ${fieldLabel(f)}`)).toEqual([])
  })

  test('every field the contract names has its own label (no fallback)', () => {
    const names = new Set(schemaPaths(EmitirDteBody).map((p) => p[p.length - 1]).filter((n): n is string => typeof n === 'string'))
    expect([...names].filter((n) => FIELD_LABELS[n] === undefined)).toEqual([])
  })

  test('rows are numbered as the form numbers them, from 1', () => {
    expect(fieldLabel('detalle.0.nombre')).toBe('Línea 1, Nombre')
    expect(fieldLabel('detalle.2')).toBe('Línea 3')
    expect(fieldLabel('detalle')).toBe('Detalle')
    expect(fieldLabel('receptor.giro')).toBe('Receptor, Giro')
    expect(fieldLabel('export_data.tpo_cambio')).toBe('Exportación, Tipo de cambio')
    expect(fieldLabel('comisiones.1.val_com_iva')).toBe('Comisión 2, IVA de la comisión')
    expect(fieldLabel('motivo')).toBe('Motivo')
    expect(fieldLabel('context.motivo')).toBe('Motivo')
    expect(fieldLabel('imap.port')).toBe('Recepción (IMAP), Puerto')
  })

  test('messages name fields by their labels and point at no document of Timbre\'s', () => {
    const shown = [...new Set(errors.map((e) => messageInWords(e.message)))]
    expect(shown.filter((m) => /\b[a-z]+_[a-z_]+\b/.test(m))).toEqual([])
    expect(shown.filter((m) => /docs\/|\.md\b|\.xsd\b/.test(m))).toEqual([])
    expect(shown.filter((m) => /\b(?:receptor|detalle|referencias|comisiones|export_data|context)\.[a-z0-9_]/.test(m))).toEqual([])
    expect(messageInWords('Requerida cuando se indica smtp.user.')).toBe('Requerida cuando se indica «Envío (SMTP), Usuario».')
    expect(messageInWords('Supera el total del documento (MntTotal, TasaIVA).')).toBe('Supera el total del documento.')
    expect(messageInWords('Indique codigo_ref: 1 anula, 2 corrige texto, 3 corrige montos.')).toBe('Indique «Código de referencia»: 1 anula, 2 corrige texto, 3 corrige montos.')
    expect(messageInWords('La liquidación-factura (43) requiere sus comisiones (docs/sii-protocol.md §2.2).')).toBe('La liquidación-factura (43) requiere sus comisiones.')
    // The API's limits, written as JavaScript writes numbers, are shown as the form shows them; Chilean ones stay.
    expect(messageInWords('Debe estar entre 0 y 999999999999.9999.')).toBe('Debe estar entre 0 y 999.999.999.999,9999.')
    expect(messageInWords('Debe ser como mínimo 0.000001.')).toBe('Debe ser como mínimo 0,000001.')
    expect(messageInWords('Sin decimales (los miles se separan con punto: 12.500), tipo 110, 2000-01-01, U+1F600, v2.2.')).toBe(
      'Sin decimales (los miles se separan con punto: 12.500), tipo 110, 2000-01-01, U+1F600, v2.2.',
    )
  })
})
