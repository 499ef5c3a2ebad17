// Issue 31's rule for the string DTE builder: it writes the same bytes the xmlbuilder2 DOM builder wrote (kept frozen in
// test/support/dte-xml-dom.ts) for every fixture, every case of the SII's certification sets, and random documents:
// random texts with everything XML escapes or refuses, optional fields present, absent or empty, export data with
// codes known and unknown, amounts a builder must refuse. Where the old builder threw, the new one throws the same message.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { solicitudDeCaso, type CasoEmitido } from '../../../src/domain/certificacion-casos'
import type { EmitirDte, ExportData, Linea } from '../../../src/domain/emision'
import { decodeSetText, parseSetPruebas } from '../../../src/domain/set-pruebas'
import { buildDteXml, type DteXmlInput, type EmpresaEmisora } from '../../../src/xml/dte-xml'
import { buildDteXmlDom } from '../../support/dte-xml-dom'
import { dteFixtures } from '../../support/fixtures'

const SETS = join(import.meta.dir, '../../fixtures/sii/sets')
const TED = '<TED version="1.0"><DD><RE>76543210-3</RE></DD><FRMT algoritmo="SHA1withRSA">AAAA</FRMT></TED>'
const TMST = '2026-11-28T10:15:00'

const EMPRESA: EmpresaEmisora = {
  rut: '76.543.210-3',
  razon_social: 'Ferretería & Servicios "Ñandú" <SpA>',
  giro: "Venta al por mayor de materiales de construcción y artículos de ferretería; O'Higgins",
  acteco: [466302, 475201, 1, 2, 3],
  direccion: 'Av. Libertador Bernardo O’Higgins 1449, piso 3',
  comuna: 'Santiago',
  ciudad: 'Santiago',
}

type Outcome = { readonly xml: string } | { readonly error: string }

function outcome(build: (input: DteXmlInput) => string, input: DteXmlInput): Outcome {
  try {
    return { xml: build(input) }
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) }
  }
}

/** Both builders on one input; the string builder's outcome, after checking it is the DOM builder's. */
function compare(input: DteXmlInput): Outcome {
  const fast = outcome(buildDteXml, input)
  expect(fast).toEqual(outcome(buildDteXmlDom, input))
  return fast
}

describe('the string builder writes the DOM builder\'s bytes', () => {
  test('every fixture, with an ordinary issuer and one whose texts need escaping', () => {
    const fixtures = dteFixtures()
    expect(fixtures.length).toBeGreaterThan(30)
    for (const [i, f] of fixtures.entries()) {
      for (const empresa of [{ ...EMPRESA, razon_social: 'Comercial Ñandú Limitada', acteco: [466302] }, EMPRESA]) {
        const result = compare({ empresa, folio: 1000 + i, request: f.request, today: f.today, ted: TED, tmstFirma: TMST })
        expect({ name: f.name, built: 'xml' in result }).toEqual({ name: f.name, built: true })
      }
    }
  })

  test('every case of every certification set the SII hands out (the test vectors in test/fixtures/sii/sets)', () => {
    let cases = 0
    for (const file of readdirSync(SETS).filter((name) => name.endsWith('.txt'))) {
      const decoded = decodeSetText(readFileSync(join(SETS, file)))
      if (!decoded.ok) throw new Error(decoded.error.message)
      const parsed = parseSetPruebas(decoded.text)
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors))
      for (const set of parsed.value.sets) {
        const emitidos = new Map<string, CasoEmitido>()
        set.casos.forEach((caso, i) => {
          const solicitud = solicitudDeCaso(set, caso, emitidos, { fecha: '2026-11-28', tpoCambio: 950.37 })
          emitidos.set(caso.caso, { tipoDte: caso.tipoDte, folio: 100 + i, fechaEmision: '2026-11-28' })
          if (!solicitud.ok) throw new Error(`${file} ${caso.caso}: ${solicitud.message}`)
          const result = compare({ empresa: EMPRESA, folio: 100 + i, request: solicitud.request, today: '2026-11-28', ted: TED, tmstFirma: TMST })
          expect({ caso: caso.caso, built: 'xml' in result }).toEqual({ caso: caso.caso, built: true })
          cases++
        })
      }
    }
    expect(cases).toBeGreaterThanOrEqual(40)
  })

  test('a value of the wrong type (a request the rules did not check) is refused by both, never written', () => {
    const f = dteFixtures().find((x) => x.request.referencias?.length && x.request.descuentos_globales?.length) ?? dteFixtures()[0]!
    const base = { empresa: EMPRESA, folio: 7, today: f.today, ted: TED, tmstFirma: TMST }
    const spoilt: EmitirDte[] = [
      { ...f.request, tipo_despacho: true as unknown as number },
      { ...f.request, detalle: f.request.detalle.map((l) => ({ ...l, cod_imp_adic: {} as unknown as number })) },
      { ...f.request, receptor: { ...f.request.receptor, rut: 7 as unknown as string } },
      ...(f.request.referencias ? [{ ...f.request, referencias: f.request.referencias.map((r) => ({ ...r, fecha_ref: undefined as unknown as string })) }] : []),
      ...(f.request.descuentos_globales ? [{ ...f.request, descuentos_globales: f.request.descuentos_globales.map((d) => ({ ...d, tpo_mov: null as unknown as 'D' })) }] : []),
    ]
    expect(spoilt.length).toBeGreaterThanOrEqual(4)
    for (const request of spoilt) {
      expect(() => buildDteXmlDom({ ...base, request })).toThrow()
      expect(() => buildDteXml({ ...base, request })).toThrow()
    }
  })

  test('property: random documents, valid or not, give the same bytes or the same error', () => {
    const fixtures = dteFixtures()
    let built = 0
    fc.assert(
      fc.property(fc.constantFrom(...fixtures), arbVariation, arbSpoil, fc.integer({ min: 1, max: 9_999_999 }), (f, v, spoil, folio) => {
        const input = spoiled({ empresa: v.empresa, folio, request: vary(f.request, v), today: f.today, ted: TED, tmstFirma: TMST }, spoil)
        if ('xml' in compare(input)) built++
      }),
      { numRuns: 3000 },
    )
    // Most random documents build: the property compares bytes, not only errors.
    expect(built).toBeGreaterThan(1500)
  }, 120_000)
})

// ------------------------------------------------------------------------------------------------ random variations

// Every Latin-1 character and then some: what XML escapes (& < >), what it leaves (quotes, TAB, LF), what cleanText
// replaces (controls, CR) or transliterates (“ ” — … ’), and entity look-alikes.
const char = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'Z', ' ', 'ñ', 'Ñ', 'á', '°', '½', '0', '9', '-', '.') },
  { weight: 3, arbitrary: fc.constantFrom('&', '<', '>', '"', "'", '\t', '\n', '\r', ';', '#', ']') },
  { weight: 2, arbitrary: fc.constantFrom('&amp;', '&#209;', '&A;', ']]>', '\r\n', '<?', '-->', '“', '”', '—', '…', '’') },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)) },
)
const text = (maxLength: number) => fc.string({ unit: char, maxLength })
/** An optional text: absent, empty, blank or random. */
const optText = (maxLength: number) =>
  fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, fc.constantFrom('', ' '), { weight: 4, arbitrary: text(maxLength) })
const optNumber = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 9999 }) },
  { weight: 1, arbitrary: fc.double({ min: 0.001, max: 1e6, noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom(0, 0.5, 123456.789, -1) },
)
const optCode = (known: readonly string[]) => fc.oneof(fc.constant(undefined), fc.constantFrom(...known), text(12))

interface Variation {
  readonly empresa: EmpresaEmisora
  readonly receptor: { razon_social: string; giro?: string; email?: string; direccion?: string; comuna?: string; ciudad?: string }
  readonly lineas: ReadonlyArray<{ nombre: string; dsc_item?: string; unidad?: string; tipo_doc_liq?: string; cantidad?: number }>
  readonly razonRef: string
  readonly glosaDr?: string
  readonly glosaComision: string
  readonly exportData: Partial<ExportData>
}

const arbVariation: fc.Arbitrary<Variation> = fc.record({
  empresa: fc.record({
    rut: fc.constantFrom('76543210-3', '76.543.210-3', '076543210-3'),
    razon_social: text(120),
    giro: text(90),
    acteco: fc.array(fc.integer({ min: 1, max: 999_999 }), { minLength: 1, maxLength: 6 }),
    direccion: text(80),
    comuna: text(25),
    ciudad: text(25),
  }),
  receptor: fc.record(
    {
      razon_social: text(120),
      giro: optText(50),
      email: fc.oneof(fc.constant(undefined), fc.constantFrom('', ' ', 'a@b.cl', `${'x'.repeat(75)}@b.cl`, `${'x'.repeat(76)}@b.cl`), text(90)),
      direccion: optText(80),
      comuna: optText(25),
      ciudad: optText(25),
    },
    { requiredKeys: ['razon_social'] },
  ),
  lineas: fc.array(
    fc.record(
      { nombre: text(90), dsc_item: optText(1100), unidad: optText(6), tipo_doc_liq: optText(4), cantidad: optNumber },
      { requiredKeys: ['nombre'] },
    ),
    { minLength: 1, maxLength: 4 },
  ),
  razonRef: text(100),
  glosaDr: optText(50),
  glosaComision: text(70),
  exportData: fc.record(
    {
      num_id: optText(25),
      nacionalidad: optCode(['US', 'AR', 'ESTADOS UNIDOS', '331', '999']),
      clausula_venta: optCode(['FOB', 'CIF', 'EXW', 'XXX']),
      total_clausula: optNumber,
      via_transporte: optNumber,
      puerto_embarque: optCode(['901', '0', '12345', 'SAN ANTONIO', ' 14 ']),
      puerto_desembarque: optCode(['262', 'MIAMI']),
      tara: optNumber,
      peso_bruto: optNumber,
      peso_neto: optNumber,
      tipo_bulto: optCode(['CONTENEDOR', 'CAJA', '75', 'ZZZ']),
      total_bultos: optNumber,
      marcas: optText(300),
      mnt_flete: optNumber,
      mnt_seguro: optNumber,
      pais_recep: optCode(['US', 'CHILE']),
      pais_dest: optCode(['AR']),
    },
    { requiredKeys: [] },
  ),
})

/** One thing the builder must refuse, or nothing (most runs): the old and the new builder must refuse it alike. */
type Spoil =
  | { readonly kind: 'none' }
  | { readonly kind: 'character'; readonly where: 'razon_social' | 'nombre' | 'giro_emisor'; readonly char: string }
  | { readonly kind: 'amount'; readonly value: number }
  | { readonly kind: 'rut'; readonly value: string }
  | { readonly kind: 'ted'; readonly value: string }
  | { readonly kind: 'tmst'; readonly value: string }

const arbSpoil: fc.Arbitrary<Spoil> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.record({ kind: fc.constant('character' as const), where: fc.constantFrom('razon_social' as const, 'nombre' as const, 'giro_emisor' as const), char: fc.constantFrom('€', '\u2028', '😀', 'Ā', '\uFFFE') }),
  fc.record({ kind: fc.constant('amount' as const), value: fc.constantFrom(1e21, 2 ** 53 + 2, 1e-7, Number.NaN, Number.POSITIVE_INFINITY) }),
  fc.record({ kind: fc.constant('rut' as const), value: fc.constantFrom('76543210-4', '', 'x') }),
  fc.record({ kind: fc.constant('ted' as const), value: fc.constantFrom('<Other/>', '<TED>x</TED>', '', 'TED') }),
  fc.record({ kind: fc.constant('tmst' as const), value: fc.constantFrom('2026-11-28 10:15', '2026-11-28T10:15:00Z', '') }),
)

function spoiled(input: DteXmlInput, spoil: Spoil): DteXmlInput {
  const { request } = input
  switch (spoil.kind) {
    case 'none':
      return input
    case 'character':
      if (spoil.where === 'giro_emisor') return { ...input, empresa: { ...input.empresa, giro: `${input.empresa.giro}${spoil.char}` } }
      if (spoil.where === 'razon_social') return { ...input, request: { ...request, receptor: { ...request.receptor, razon_social: `${spoil.char}${request.receptor.razon_social}` } } }
      return { ...input, request: { ...request, detalle: request.detalle.map((l, i) => (i === request.detalle.length - 1 ? { ...l, nombre: `${l.nombre}${spoil.char}` } : l)) } }
    case 'amount':
      return { ...input, request: { ...request, detalle: request.detalle.map((l) => ({ ...l, precio: spoil.value })) } }
    case 'rut':
      return { ...input, request: { ...request, receptor: { ...request.receptor, rut: spoil.value } } }
    case 'ted':
      return { ...input, ted: spoil.value }
    case 'tmst':
      return { ...input, tmstFirma: spoil.value }
  }
}

/** The fixture's request with the variation's texts and optional fields: structure and amounts otherwise kept. */
function vary(request: EmitirDte, v: Variation): EmitirDte {
  const lineas: Linea[] = request.detalle.map((linea, i) => {
    const l = v.lineas[i % v.lineas.length]!
    return defined({ ...linea, nombre: l.nombre, dsc_item: l.dsc_item, unidad: l.unidad, tipo_doc_liq: l.tipo_doc_liq ?? linea.tipo_doc_liq, cantidad: l.cantidad ?? linea.cantidad })
  })
  return {
    ...request,
    receptor: defined({ ...request.receptor, ...v.receptor }),
    detalle: lineas,
    ...(request.referencias ? { referencias: request.referencias.map((r) => ({ ...r, razon_ref: v.razonRef })) } : {}),
    ...(request.descuentos_globales ? { descuentos_globales: request.descuentos_globales.map((d) => defined({ ...d, glosa_dr: v.glosaDr })) } : {}),
    ...(request.comisiones ? { comisiones: request.comisiones.map((c) => ({ ...c, glosa: v.glosaComision })) } : {}),
    ...(request.export_data ? { export_data: defined({ ...request.export_data, ...v.exportData }) } : {}),
  }
}

/** Drops the keys whose value is undefined, as a parsed JSON request would not have them. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}
