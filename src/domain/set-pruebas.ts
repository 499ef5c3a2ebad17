// The SII's set of tests ("SIISetDePruebas<n>.txt") read into one request per case (DESIGN §15 "The set file",
// research/next-capabilities.md §1.3). Every reading of the SII's wording is recorded in docs/decisions/certificacion.md
// "El set de pruebas: cómo se lee". Pure: text in, sets or every unreadable line out; references between cases stay
// symbolic (`CASO n-k`) until the issuing step knows the folio and date each case got.
import { MONEDAS, type EmitirDte, type Linea, type Moneda, type TipoDte, type CodigoRef, type DescuentoGlobal, type ExportData } from './emision'
import {
  FORMAS_PAGO_EXPORTACION,
  MODALIDADES_VENTA,
  PUERTOS_CHILE,
  PUERTOS_EXTRANJEROS,
  UNIDADES_ADUANA,
  VIAS_TRANSPORTE,
  type CodigoAduana,
} from './aduana'
import { CLAUSULAS_VENTA, PAISES, TIPOS_BULTO, aduanaCode } from './tipos'

export const NOMBRES_SET = [
  'BASICO', 'FACTURA EXENTA', 'GUIA DE DESPACHO', 'FACTURA DE COMPRA', 'EXPORTACION 1', 'EXPORTACION 2',
  'LIBRO DE VENTAS', 'LIBRO DE COMPRAS', 'LIBRO DE GUIAS',
] as const
export type NombreSet = (typeof NOMBRES_SET)[number]

/** A line the parser could not read: 1-based line number, the line as written, and why (Spanish, for the person). */
export interface SetError {
  line: number
  text: string
  message: string
}

/** What a case issues: the request without what the company adds (receptor, date) and without references, which stay symbolic. */
export type DocumentoCaso = Omit<EmitirDte, 'receptor' | 'fecha_emision' | 'referencias' | 'auto_send' | 'metadata' | 'montos_brutos'>

/** "REFERENCIA … CORRESPONDIENTE A CASO n-k": resolved at issue time to the folio, tipo and date that case got. */
export interface ReferenciaCaso {
  caso: string
  codigoRef: CodigoRef
  razon: string
}

/** An export's "REFERENCIA: MIC…" line: a customs document the issuing step gives a folio and date. */
export interface ReferenciaAduana {
  tipoDocRef: string
  glosa: string
}

export interface CasoSet {
  /** `<n>-<k>`, as `RazonRef` `CASO <n>-<k>` of the SET reference names it. */
  caso: string
  tipoDte: TipoDte
  documento: DocumentoCaso
  referenciaCaso?: ReferenciaCaso
  referenciasAduana?: ReferenciaAduana[]
  /** The case's free-text instructions, as written (e.g. "LOS PRECIOS UNITARIOS … DEBEN SER LOS MISMOS DE LA FACTURA"). */
  instrucciones: string[]
  lineNumber: number
}

/** One line of the LIBRO DE COMPRAS grid. `tipo` is the SII's code of the glosa (30 and 60 are paper documents). */
export interface CompraSet {
  tipo: number
  tipoDocumento: string
  folio: number
  observacion: string
  montoExento: number
  montoAfecto: number
  lineNumber: number
}

export interface SetPruebas {
  nombre: NombreSet
  numeroAtencion: number
  casos: CasoSet[]
  compras?: CompraSet[]
  factorProporcionalidad?: number
  /** LIBRO DE GUIAS: which case (k) of the GUIA DE DESPACHO set was invoiced in the period, and which was annulled. */
  guiaFacturada?: number
  guiaAnulada?: number
  instrucciones: string[]
  lineNumber: number
}

export interface ArchivoSet {
  /** The 2026 layout's header ("INDICACIONES GENERALES" …); empty in the older layout. */
  indicaciones: string[]
  sets: SetPruebas[]
}

export type Leido<T> = { ok: true; value: T } | { ok: false; errors: SetError[] }

// ------------------------------------------------------------------------------------------------ bytes → text

/**
 * The SII writes the file in ISO-8859-1 (research §1.3). Refused: bytes that are not text (NUL and other C0 controls),
 * and a file that was re-saved as UTF-8 (its ñ reads "Ã±" in Latin-1): the parser would carry the mangled names.
 */
export function decodeSetText(bytes: Uint8Array): { ok: true; text: string } | { ok: false; error: SetError } {
  const text = new TextDecoder('latin1').decode(bytes)
  const binary = /[\u0000-\u0008\u000B\u000E-\u001F]/.exec(text)
  if (binary) return { ok: false, error: errorAt(text, binary.index, 'El archivo no es un texto: contiene bytes de control. Suba el archivo .txt que entregó el SII.') }
  const utf8 = /^\u00EF\u00BB\u00BF|[\u00C2\u00C3][\u0080-\u00BF]/.exec(text)
  if (utf8) return { ok: false, error: errorAt(text, utf8.index, 'El archivo parece guardado en UTF-8, no en ISO-8859-1 como lo entrega el SII. Suba el archivo original, sin abrirlo ni guardarlo.') }
  return { ok: true, text }
}

function errorAt(text: string, index: number, message: string): SetError {
  const before = text.slice(0, index).split('\n')
  const line = before.length
  return { line, text: (text.split('\n')[line - 1] ?? '').replace(/\r$/, '').slice(0, 200), message }
}

// ------------------------------------------------------------------------------------------------ lines and cells

interface Linea_ {
  n: number
  raw: string
  /** Words separated by single spaces: the form glosas are matched in. */
  norm: string
}

/** A cell of a tab-separated line, with its columns when tabs stop every 8 (how the SII's columns line up). */
interface Cell {
  text: string
  start: number
  end: number
}

function cellsOf(raw: string): Cell[] {
  const cells: Cell[] = []
  let col = 0
  for (const part of raw.split('\t')) {
    const lead = part.length - part.trimStart().length
    const text = part.trim()
    if (text !== '') cells.push({ text, start: col + lead, end: col + lead + text.length - 1 })
    col += part.length
    col = (Math.floor(col / 8) + 1) * 8
  }
  return cells
}

const normalize = (s: string) => s.replace(/[\s\u00A0]+/g, ' ').trim().toUpperCase()
const isBlank = (l: Linea_) => l.norm === ''
const isRule = (l: Linea_, ch: '=' | '-') => new RegExp(`^\\${ch}{3,}$`).test(l.norm)

/** A number as the SII writes it: digits, a point or comma before decimals; null otherwise. */
function parseNumber(text: string): number | null {
  const t = text.trim().replace(',', '.')
  return /^\d+(\.\d+)?$/.test(t) ? Number(t) : null
}

function parsePercent(text: string): number | null {
  const m = /^(\d+(?:[.,]\d+)?)\s*%$|^%\s*(\d+(?:[.,]\d+)?)$/.exec(text.trim())
  return m ? parseNumber(m[1] ?? m[2] ?? '') : parseNumber(text)
}

// ------------------------------------------------------------------------------------------------ file → blocks

const SET_LINE = /^SET (.+?) - NUMERO DE ATENCION: ?(\d+)$/
const CASO_LINE = /^CASO (\d+)-(\d+)$/

/** Reads the whole file; every unreadable line is reported, and a file with any is refused whole (DESIGN §15). */
export function parseSetPruebas(text: string): Leido<ArchivoSet> {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/).map((raw, i): Linea_ => ({ n: i + 1, raw, norm: normalize(raw) }))
  if (lines.every(isBlank)) return { ok: false, errors: [{ line: 1, text: '', message: 'El archivo está vacío.' }] }
  const errors: SetError[] = []
  const drafts: Borrador[] = []
  const firstSet = lines.findIndex((l) => SET_LINE.test(l.norm))
  const sets: SetPruebas[] = []
  let indicaciones: string[] = []
  if (firstSet < 0) {
    const set = readOlderLayout(lines, errors, drafts)
    if (set) sets.push(set)
  } else {
    indicaciones = readHeader(lines.slice(0, firstSet), errors)
    for (const block of splitSets(lines.slice(firstSet))) {
      const set = readSet(block, errors, drafts)
      if (set) sets.push(set)
    }
  }
  resolveReferences(drafts, errors)
  if (errors.length > 0) return { ok: false, errors: errors.sort((a, b) => a.line - b.line) }
  return { ok: true, value: { indicaciones, sets } }
}

function readHeader(lines: Linea_[], errors: SetError[]): string[] {
  const caso = lines.find((l) => CASO_LINE.test(l.norm))
  if (caso) errors.push(fail(caso, 'Caso fuera de un set: falta la línea «SET <NOMBRE> - NUMERO DE ATENCION: <n>» antes de él.'))
  return lines.filter((l) => !isBlank(l) && !isRule(l, '-') && !isRule(l, '=')).map((l) => l.raw.trim())
}

function splitSets(lines: Linea_[]): Linea_[][] {
  const blocks: Linea_[][] = []
  for (const l of lines) {
    if (SET_LINE.test(l.norm)) blocks.push([l])
    else blocks[blocks.length - 1]?.push(l)
  }
  return blocks
}

function fail(l: Linea_, message: string): SetError {
  return { line: l.n, text: l.raw.replace(/\r$/, '').slice(0, 200), message }
}

function readSet(block: Linea_[], errors: SetError[], drafts: Borrador[]): SetPruebas | null {
  const head = block[0]!
  const m = SET_LINE.exec(head.norm)!
  const nombre = NOMBRES_SET.find((s) => s === m[1])
  if (nombre === undefined) {
    errors.push(fail(head, `Set desconocido «${m[1]}»: se esperaba uno de ${NOMBRES_SET.join(', ')}.`))
    return null
  }
  const set: SetPruebas = { nombre, numeroAtencion: Number(m[2]), casos: [], instrucciones: [], lineNumber: head.n }
  const body = block.slice(1)
  if (nombre === 'LIBRO DE COMPRAS') readCompras(set, body, errors)
  else if (nombre === 'LIBRO DE VENTAS' || nombre === 'LIBRO DE GUIAS') readLibroText(set, body)
  else readCasos(set, body, errors, drafts)
  if (!nombre.startsWith('LIBRO') && set.casos.length === 0) errors.push(fail(head, 'El set no tiene casos.'))
  return set
}

/** The older layout: one documents set, no header, no SET line; its número de atención is its cases' <n> (DESIGN §15). */
function readOlderLayout(lines: Linea_[], errors: SetError[], drafts: Borrador[]): SetPruebas | null {
  const first = lines.find((l) => !isBlank(l))!
  if (!CASO_LINE.test(first.norm)) {
    errors.push(fail(first, 'No es un set de pruebas del SII: no empieza con «SET <NOMBRE> - NUMERO DE ATENCION» ni con «CASO <n>-<k>».'))
    return null
  }
  const set: SetPruebas = { nombre: 'BASICO', numeroAtencion: Number(CASO_LINE.exec(first.norm)![1]), casos: [], instrucciones: [], lineNumber: first.n }
  readCasos(set, lines, errors, drafts)
  const nombre = inferSetName(set.casos)
  if (nombre === null) errors.push(fail(first, 'No se reconoce a qué set pertenecen estos casos por sus tipos de documento.'))
  else set.nombre = nombre
  return set
}

/** Which set an older file is, from its documents' types (research §1.3: the file itself does not say). */
function inferSetName(casos: readonly CasoSet[]): NombreSet | null {
  const tipos = new Set(casos.map((c) => c.tipoDte))
  if (tipos.has(110)) return tipos.has(111) || tipos.has(112) ? 'EXPORTACION 1' : 'EXPORTACION 2'
  if (tipos.has(46)) return 'FACTURA DE COMPRA'
  if (tipos.has(52)) return 'GUIA DE DESPACHO'
  if (tipos.has(34)) return 'FACTURA EXENTA'
  if (tipos.has(33)) return 'BASICO'
  return null
}

// ------------------------------------------------------------------------------------------------ libros

function readLibroText(set: SetPruebas, body: Linea_[]): void {
  set.instrucciones = body.filter((l) => !isBlank(l) && !isRule(l, '-')).map((l) => l.raw.trim())
  if (set.nombre !== 'LIBRO DE GUIAS') return
  for (const l of body) {
    const m = /EL CASO (\d+) CORRESPONDE A UNA GUIA (QUE SE FACTURO|ANULADA)/.exec(l.norm)
    if (m?.[2] === 'ANULADA') set.guiaAnulada = Number(m[1])
    else if (m) set.guiaFacturada = Number(m[1])
  }
}

/** The compras document glosas (research §1.3): FACTURA and NOTA DE CREDITO alone are paper (30, 60). */
const TIPOS_COMPRA: Readonly<Record<string, number>> = {
  FACTURA: 30, 'FACTURA ELECTRONICA': 33, 'FACTURA EXENTA': 32, 'FACTURA NO AFECTA O EXENTA ELECTRONICA': 34,
  'FACTURA EXENTA ELECTRONICA': 34, 'FACTURA DE COMPRA': 45, 'FACTURA DE COMPRA ELECTRONICA': 46, 'NOTA DE DEBITO': 55,
  'NOTA DE DEBITO ELECTRONICA': 56, 'NOTA DE CREDITO': 60, 'NOTA DE CREDITO ELECTRONICA': 61,
}

/** The grid: a header between two `=` rules, then 3 lines per document (tipo and folio, observación, montos), a closing rule. */
function readCompras(set: SetPruebas, body: Linea_[], errors: SetError[]): void {
  const rules = body.flatMap((l, i) => (isRule(l, '=') ? [i] : []))
  if (rules.length < 3) {
    errors.push(fail(body[0] ?? { n: set.lineNumber, raw: '', norm: '' }, 'No se encuentra la tabla de compras entre líneas de «=».'))
    return
  }
  const montosHeader = body.slice(rules[0]! + 1, rules[1]!).find((l) => l.norm.startsWith('MONTO EXENTO'))
  const columnAfecto = montosHeader ? (cellsOf(montosHeader.raw).find((c) => normalize(c.text) === 'MONTO AFECTO')?.start ?? 16) : 16
  const rows = body.slice(rules[1]! + 1, rules[rules.length - 1]!).filter((l) => !isBlank(l))
  set.compras = []
  for (let i = 0; i < rows.length; i += 3) {
    const compra = readCompra(rows.slice(i, i + 3), columnAfecto, errors)
    if (compra) set.compras.push(compra)
  }
  readObservacionesGenerales(set, body.slice(rules[rules.length - 1]! + 1), errors)
}

function readCompra(rows: Linea_[], columnAfecto: number, errors: SetError[]): CompraSet | null {
  const [doc, obs, montos] = rows
  if (!doc || !obs || !montos) {
    errors.push(fail(rows[0]!, 'Compra incompleta: se esperan 3 líneas (tipo y folio, observación, montos).'))
    return null
  }
  const m = /^(.+?) (\d+)$/.exec(doc.norm)
  const tipo = m ? TIPOS_COMPRA[m[1]!] : undefined
  if (!m || tipo === undefined) {
    errors.push(fail(doc, 'Se esperaba el tipo de documento y su folio (p. ej. «FACTURA ELECTRONICA 32»).'))
    return null
  }
  let montoExento = 0
  let montoAfecto = 0
  for (const c of cellsOf(montos.raw)) {
    const value = parseNumber(c.text)
    if (value === null) {
      errors.push(fail(montos, 'Se esperaban el monto exento y el monto afecto.'))
      return null
    }
    // A lone amount is exento or afecto by the column it sits under (the SII leaves the other one blank).
    if (c.end >= columnAfecto) montoAfecto = value
    else montoExento = value
  }
  return { tipo, tipoDocumento: m[1]!, folio: Number(m[2]), observacion: obs.raw.trim(), montoExento, montoAfecto, lineNumber: doc.n }
}

function readObservacionesGenerales(set: SetPruebas, tail: Linea_[], errors: SetError[]): void {
  const text = tail.filter((l) => !isBlank(l) && !isRule(l, '-'))
  set.instrucciones = text.map((l) => l.raw.trim())
  const joined = text.map((l) => l.norm).join(' ')
  const m = /FACTOR DE PROPORCIONALIDAD DEL IVA ES DE (\d+(?:[.,]\d+)?)/.exec(joined)
  if (m) set.factorProporcionalidad = parseNumber(m[1]!)!
  else if (set.compras?.some((c) => /IVA USO COMUN/.test(normalize(c.observacion)))) {
    errors.push(fail(tail.find((l) => !isBlank(l)) ?? { n: set.lineNumber, raw: '', norm: '' }, 'Hay compras con IVA de uso común pero el set no da el factor de proporcionalidad.'))
  }
}

// ------------------------------------------------------------------------------------------------ cases

/** DOCUMENTO glosas → TipoDTE (research §1.5). */
const TIPOS_DOCUMENTO: Readonly<Record<string, TipoDte>> = {
  'FACTURA ELECTRONICA': 33,
  'FACTURA NO AFECTA O EXENTA ELECTRONICA': 34,
  'FACTURA EXENTA ELECTRONICA': 34,
  'FACTURA DE COMPRA ELECTRONICA': 46,
  'GUIA DE DESPACHO': 52,
  'GUIA DE DESPACHO ELECTRONICA': 52,
  'NOTA DE DEBITO ELECTRONICA': 56,
  'NOTA DE CREDITO ELECTRONICA': 61,
  'FACTURA DE EXPORTACION ELECTRONICA': 110,
  'NOTA DE DEBITO DE EXPORTACION ELECTRONICA': 111,
  'NOTA DE CREDITO DE EXPORTACION ELECTRONICA': 112,
}

const NOTAS: readonly TipoDte[] = [56, 61, 111, 112]
const EXPORTS: readonly TipoDte[] = [110, 111, 112]

/** What a case's lines said, before references are resolved. */
interface Borrador {
  caso: CasoSet
  head: Linea_
  rows: { linea: Linea; line: Linea_ }[]
  ref?: { caso: string; razon?: string; line: Linea_ }
  /** "%10 RECARGO EN LA LINEA DE ITEM": applies to the case's only line. */
  recargoLinea?: { pct: number; line: Linea_ }
  descuentosLinea: { nro: number; pct: number; line: Linea_ }[]
  motivo?: Linea_
  traslado?: Linea_
}

function readCasos(set: SetPruebas, body: Linea_[], errors: SetError[], drafts: Borrador[]): void {
  let current: Borrador | null = null
  let table: Columna[] | null = null
  for (const l of body) {
    const caso = CASO_LINE.exec(l.norm)
    if (caso) {
      current = newDraft(set, caso, l, errors)
      drafts.push(current)
      table = null
    } else if (current === null) {
      if (!isBlank(l) && !isRule(l, '-')) set.instrucciones.push(l.raw.trim())
    } else if (isBlank(l)) table = null
    else if (table !== null) readRow(current, table, l, errors)
    else table = readCaseLine(current, l, errors)
  }
}

function newDraft(set: SetPruebas, caso: RegExpExecArray, l: Linea_, errors: SetError[]): Borrador {
  if (Number(caso[1]) !== set.numeroAtencion) {
    errors.push(fail(l, `El caso no pertenece al set ${set.nombre}: su número de atención es ${set.numeroAtencion}.`))
  }
  const c: CasoSet = { caso: `${caso[1]}-${caso[2]}`, tipoDte: 33, documento: { tipo_dte: 33, detalle: [] }, instrucciones: [], lineNumber: l.n }
  set.casos.push(c)
  return { caso: c, head: l, rows: [], descuentosLinea: [] }
}

type CampoLinea = 'cantidad' | 'precio' | 'valor_linea' | 'unidad' | 'descuento_pct' | 'recargo_pct'
interface Columna {
  campo: CampoLinea
  start: number
}

const COLUMNAS: Readonly<Record<string, CampoLinea>> = {
  CANTIDAD: 'cantidad',
  'PRECIO UNITARIO': 'precio',
  'VALOR UNITARIO': 'precio',
  'VALOR LINEA': 'valor_linea',
  'UNIDAD MEDIDA': 'unidad',
  'UNIDAD DE MEDIDA': 'unidad',
  'DESCUENTO ITEM': 'descuento_pct',
  'RECARGO ITEM': 'recargo_pct',
}

const INSTRUCCIONES_INFORMATIVAS = [/PRECIOS? UNITARIOS? .*(MISMOS?|IGUAL)/]

/** A line of a case outside its item table; returns the table's columns when the line is the table's header. */
function readCaseLine(d: Borrador, l: Linea_, errors: SetError[]): Columna[] | null {
  const n = l.norm
  let m: RegExpExecArray | null
  if (isRule(l, '=') || isRule(l, '-')) return null
  if ((m = /^DOCUMENTO (.+)$/.exec(n))) setTipo(d, m[1]!, l, errors)
  else if ((m = /^REFERENCIA (.+) CORRESPONDIENTE A CASO (\d+-\d+)$/.exec(n))) d.ref = { caso: m[2]!, line: l }
  else if ((m = /^RAZON REFERENCIA (.+)$/.exec(n))) {
    if (d.ref) d.ref.razon = l.raw.replace(/^\s*RAZON REFERENCIA\s*/i, '').trim()
    else errors.push(fail(l, 'RAZON REFERENCIA sin una línea REFERENCIA antes.'))
  } else if ((m = /^REFERENCIA: ?(.+)$/.exec(n))) readReferenciaAduana(d, m[1]!, l, errors)
  else if (/^MOTIVO:/.test(n)) d.motivo = l
  else if (/^TRASLADO POR:/.test(n)) d.traslado = l
  else if ((m = /^DESCUENTO GLOBAL ITEMES AFECTOS (\d+(?:[.,]\d+)?) ?%$/.exec(n))) addGlobal(d, 'D', m[1]!, n.replace(/ \d.*$/, ''))
  else if ((m = /^COMISIONES EN EL EXTRANJERO \(RECARGOS GLOBALES\): (\d+(?:[.,]\d+)?) ?% DEL TOTAL DE LA CLAUSULA$/.exec(n))) {
    addGlobal(d, 'R', m[1]!, 'COMISIONES EN EL EXTRANJERO')
    d.caso.instrucciones.push(l.raw.trim())
  }
  else if ((m = /^%(\d+(?:[.,]\d+)?) RECARGO EN LA LINEA DE ITEM\b/.exec(n)) || (m = /^(\d+(?:[.,]\d+)?) ?% RECARGO EN LA LINEA DE ITEM\b/.exec(n))) {
    d.recargoLinea = { pct: parseNumber(m[1]!)!, line: l }
    d.caso.instrucciones.push(l.raw.trim())
  } else if ((m = /^DESCUENTO LINEA # ?(\d+): (\d+(?:[.,]\d+)?) ?%$/.exec(n))) {
    d.descuentosLinea.push({ nro: Number(m[1]), pct: parseNumber(m[2]!)!, line: l })
    d.caso.instrucciones.push(l.raw.trim())
  }
  else if (/^ITEM\b/.test(n) && normalize(cellsOf(l.raw)[0]?.text ?? '') === 'ITEM') return readHeaderRow(l, errors)
  else if (readAduana(d, l, errors)) return null
  else if (INSTRUCCIONES_INFORMATIVAS.some((r) => r.test(n))) d.caso.instrucciones.push(l.raw.trim())
  else errors.push(fail(l, 'Línea no reconocida en el caso.'))
  return null
}

function setTipo(d: Borrador, glosa: string, l: Linea_, errors: SetError[]): void {
  const tipo = TIPOS_DOCUMENTO[glosa]
  if (tipo === undefined) {
    errors.push(fail(l, `Tipo de documento desconocido «${glosa}».`))
    return
  }
  d.caso.tipoDte = tipo
  d.caso.documento.tipo_dte = tipo
}

function addGlobal(d: Borrador, tpo_mov: 'D' | 'R', valor: string, glosa: string): void {
  const dr: DescuentoGlobal = { tpo_mov, tpo_valor: '%', valor_dr: parseNumber(valor)!, glosa_dr: glosa.slice(0, 45) }
  d.caso.documento.descuentos_globales = [...(d.caso.documento.descuentos_globales ?? []), dr]
}

function readHeaderRow(l: Linea_, errors: SetError[]): Columna[] | null {
  const columns: Columna[] = []
  for (const c of cellsOf(l.raw).slice(1)) {
    const campo = COLUMNAS[normalize(c.text)]
    if (campo === undefined) {
      errors.push(fail(l, `Columna desconocida «${c.text}» en la tabla de ítems.`))
      return null
    }
    columns.push({ campo, start: c.start })
  }
  return columns
}

/** One item row: the name is the first cell; values go to columns in order, or by where they sit when some are blank. */
function readRow(d: Borrador, columns: readonly Columna[], l: Linea_, errors: SetError[]): void {
  const [name, ...values] = cellsOf(l.raw)
  const byColumn = values.length === columns.length ? values.map((v, i) => [columns[i]!, v] as const) : placeByPosition(columns, values)
  if (!name || byColumn === null) {
    errors.push(fail(l, 'No se puede leer la línea de ítem: sus valores no calzan con las columnas de la tabla.'))
    return
  }
  const linea: Linea = { nombre: name.text }
  for (const [col, cell] of byColumn) {
    if (!setCampo(linea, col.campo, cell.text)) {
      errors.push(fail(l, `Valor «${cell.text}» no válido en la columna ${col.campo}.`))
      return
    }
  }
  if (/\bEXENTO\b/i.test(linea.nombre)) linea.ind_exe = 1
  d.rows.push({ linea, line: l })
}

function placeByPosition(columns: readonly Columna[], values: readonly Cell[]): (readonly [Columna, Cell])[] | null {
  const used = new Set<Columna>()
  const placed: (readonly [Columna, Cell])[] = []
  for (const v of values) {
    const col = [...columns].reverse().find((c) => c.start <= v.end)
    if (col === undefined || used.has(col)) return null
    used.add(col)
    placed.push([col, v])
  }
  return placed
}

function setCampo(linea: Linea, campo: CampoLinea, text: string): boolean {
  if (campo === 'unidad') {
    linea.unidad = text
    return true
  }
  const value = campo === 'descuento_pct' || campo === 'recargo_pct' ? parsePercent(text) : parseNumber(text)
  if (value === null) return false
  if (campo === 'valor_linea') {
    // "VALOR LINEA" (a service priced per line): one unit at that value, so line discounts and surcharges apply to it.
    linea.cantidad = 1
    linea.precio = value
  } else linea[campo] = value
  return true
}

// ------------------------------------------------------------------------------------------------ exports

/** REFERENCIA: glosas of an export's customs documents → TpoDocRef (research §1.5). */
const REFERENCIAS_ADUANA: readonly [RegExp, string][] = [
  [/^DUS\b/, '807'],
  [/^AWB\b/, '809'],
  [/^MIC\b/, '810'],
  [/^RESOLUCION SNA\b/, '812'],
]

function readReferenciaAduana(d: Borrador, glosa: string, l: Linea_, errors: SetError[]): void {
  const tipo = REFERENCIAS_ADUANA.find(([r]) => r.test(glosa))?.[1]
  if (tipo === undefined) errors.push(fail(l, `Documento de referencia de exportación desconocido «${glosa}».`))
  else d.caso.referenciasAduana = [...(d.caso.referenciasAduana ?? []), { tipoDocRef: tipo, glosa }]
}

/** The SII's wording where it differs from the name in domain/aduana.ts. */
const ALIAS_ADUANA: Readonly<Record<string, string>> = { 'CARRETERO/TERRESTRE': 'CARRETERA O TERRESTRE' }

/** Key forms of a Customs entry: its name, the part before "(", and the part inside it ('S/PAGO (sin pago)'). */
function keysOf(nombre: string): string[] {
  const key = (s: string) => normalize(s.normalize('NFD').replace(/[\u0300-\u036f]/g, ''))
  const m = /^(.*?) ?\((.*)\)$/.exec(nombre)
  return m ? [key(nombre), key(m[1]!), key(m[2]!)] : [key(nombre)]
}

function codigoAduana(table: readonly CodigoAduana[], glosa: string): number | null {
  const g = ALIAS_ADUANA[glosa] ?? glosa
  return table.find((c) => keysOf(c.nombre).includes(g))?.codigo ?? null
}

type CampoAduana = (data: ExportData, glosa: string) => boolean
const code = (field: 'forma_pago_exp' | 'modalidad_venta' | 'via_transporte' | 'unidad_tara' | 'unidad_peso_bruto' | 'unidad_peso_neto', table: readonly CodigoAduana[]): CampoAduana =>
  (data, glosa) => {
    const c = codigoAduana(table, glosa)
    if (c !== null) data[field] = c
    return c !== null
  }
const named = (field: 'clausula_venta' | 'tipo_bulto' | 'pais_recep' | 'nacionalidad', table: Readonly<Record<string, number>>): CampoAduana =>
  (data, glosa) => {
    const c = aduanaCode(glosa, table, 3)
    if (c !== null) data[field] = field === 'clausula_venta' ? glosa : String(c)
    return c !== null
  }
const puerto = (field: 'puerto_embarque' | 'puerto_desembarque', table: readonly CodigoAduana[]): CampoAduana =>
  (data, glosa) => {
    const c = codigoAduana(table, glosa)
    if (c !== null) data[field] = String(c)
    return c !== null
  }
const amount = (field: 'total_clausula' | 'mnt_flete' | 'mnt_seguro' | 'total_bultos' | 'tara' | 'peso_bruto' | 'peso_neto'): CampoAduana =>
  (data, glosa) => {
    const v = parseNumber(glosa)
    if (v !== null) data[field] = v
    return v !== null
  }

/** The customs block's labels → export_data fields (spec 2.11), each name looked up in the Customs tables. */
const CAMPOS_ADUANA: Readonly<Record<string, CampoAduana>> = {
  'MONEDA DE LA OPERACION': (data, glosa) => {
    const moneda = MONEDAS.find((m) => m === glosa)
    if (moneda !== undefined) data.tpo_moneda = moneda
    return moneda !== undefined
  },
  'FORMA DE PAGO EXPORTACION': code('forma_pago_exp', FORMAS_PAGO_EXPORTACION),
  'MODALIDAD DE VENTA': code('modalidad_venta', MODALIDADES_VENTA),
  'CLAUSULA DE VENTA DE EXPORTACION': named('clausula_venta', CLAUSULAS_VENTA),
  'TOTAL CLAUSULA DE VENTA': amount('total_clausula'),
  'VIA DE TRANSPORTE': code('via_transporte', VIAS_TRANSPORTE),
  'PUERTO DE EMBARQUE': puerto('puerto_embarque', PUERTOS_CHILE),
  'PUERTO DE DESEMBARQUE': puerto('puerto_desembarque', PUERTOS_EXTRANJEROS),
  'UNIDAD DE MEDIDA DE TARA': code('unidad_tara', UNIDADES_ADUANA),
  'UNIDAD PESO BRUTO': code('unidad_peso_bruto', UNIDADES_ADUANA),
  'UNIDAD PESO NETO': code('unidad_peso_neto', UNIDADES_ADUANA),
  TARA: amount('tara'),
  'PESO BRUTO': amount('peso_bruto'),
  'PESO NETO': amount('peso_neto'),
  'TIPO DE BULTO': named('tipo_bulto', TIPOS_BULTO),
  'TOTAL BULTOS': amount('total_bultos'),
  'FLETE (**)': amount('mnt_flete'),
  'SEGURO (**)': amount('mnt_seguro'),
  FLETE: amount('mnt_flete'),
  SEGURO: amount('mnt_seguro'),
  'PAIS RECEPTOR Y PAIS DESTINO': (data, glosa) => {
    const ok = named('pais_recep', PAISES)(data, glosa)
    if (ok) data.pais_dest = data.pais_recep
    return ok
  },
  NACIONALIDAD: named('nacionalidad', PAISES),
}

/** A "LABEL: value" line of the customs block; false when the label is not one. */
function readAduana(d: Borrador, l: Linea_, errors: SetError[]): boolean {
  const m = /^(.+?): ?(.+)$/.exec(l.norm)
  const campo = m ? CAMPOS_ADUANA[m[1]!] : undefined
  if (!m || campo === undefined) return false
  const data = d.caso.documento.export_data ?? ({ tpo_moneda: '' as Moneda } satisfies ExportData)
  if (!campo(data, m[2]!)) errors.push(fail(l, `«${m[2]}» no está en la tabla de Aduana para ${m[1]}.`))
  d.caso.documento.export_data = data
  return true
}

// ------------------------------------------------------------------------------------------------ guías

/** MOTIVO glosas → IndTraslado (Formato DTE: 1 venta, 5 traslado interno…). */
const MOTIVOS: readonly [RegExp, number][] = [
  [/^VENTA$/, 1],
  [/^VENTAS? POR EFECTUAR$/, 2],
  [/CONSIGNACION/, 3],
  [/ENTREGA GRATUITA/, 4],
  [/ENTRE BODEGAS|TRASLADOS? INTERNOS?/, 5],
  [/^OTROS TRASLADOS/, 6],
  [/DEVOLUCION/, 7],
  [/^TRASLADO PARA EXPORTACION$/, 8],
  [/^VENTA PARA EXPORTACION$/, 9],
]

/** TRASLADO POR glosas → TipoDespacho (1 por cuenta del receptor, 2 del emisor a instalaciones del cliente, 3 a otras). */
const TRASLADOS: readonly [RegExp, number][] = [
  [/^CLIENTE$/, 1],
  [/^EMISOR .*(LOCAL|INSTALACIONES) DEL CLIENTE$/, 2],
  [/^EMISOR .*OTRAS INSTALACIONES$/, 3],
]

function readGuia(d: Borrador, errors: SetError[]): void {
  const pick = (l: Linea_ | undefined, table: readonly [RegExp, number][], what: string): number | undefined => {
    if (l === undefined) return undefined
    const glosa = l.norm.replace(/^[^:]*: ?/, '')
    const code = table.find(([r]) => r.test(glosa))?.[1]
    if (code === undefined) errors.push(fail(l, `${what} desconocido «${glosa}».`))
    return code
  }
  const ind = pick(d.motivo, MOTIVOS, 'Motivo de traslado')
  const despacho = pick(d.traslado, TRASLADOS, 'Tipo de despacho')
  if (ind !== undefined) d.caso.documento.ind_traslado = ind
  if (despacho !== undefined) d.caso.documento.tipo_despacho = despacho
  if (d.caso.tipoDte === 52 && d.motivo === undefined) errors.push(fail(d.head, 'La guía de despacho no dice su MOTIVO.'))
}

// ------------------------------------------------------------------------------------------------ resolution

/** ANULA annuls (1), CORRIGE corrects text (2), MODIFICA and DEVOLUCION correct amounts (3) (DESIGN §15). */
function codigoRefOf(razon: string): CodigoRef | null {
  const r = normalize(razon)
  if (r.startsWith('ANULA')) return 1
  if (r.startsWith('CORRIGE')) return 2
  if (r.startsWith('MODIFICA') || r.startsWith('DEVOLUCION')) return 3
  return null
}

/** Resolves each case's lines in file order: a note takes from the case it cites, which must come before it. */
function resolveReferences(drafts: readonly Borrador[], errors: SetError[]): void {
  const done = new Map<string, CasoSet>()
  for (const d of drafts) {
    resolveCase(d, done, errors)
    readGuia(d, errors)
    applyLineInstructions(d, errors)
    inferExport(d, errors)
    if (done.has(d.caso.caso)) errors.push(fail(d.head, `El caso ${d.caso.caso} está repetido.`))
    done.set(d.caso.caso, d.caso)
  }
}

function resolveCase(d: Borrador, done: ReadonlyMap<string, CasoSet>, errors: SetError[]): void {
  const doc = d.caso.documento
  const own = d.rows.map((r) => r.linea)
  if (d.caso.tipoDte === 46) own.forEach((l) => (l.cod_imp_adic = 15)) // retención total del IVA (research §1.5)
  if (d.ref === undefined) {
    if (NOTAS.includes(d.caso.tipoDte)) errors.push(fail(d.head, 'La nota no dice a qué caso se refiere (línea REFERENCIA).'))
    else if (own.length === 0) errors.push(fail(d.head, 'El caso no tiene ítems.'))
    doc.detalle = own
    return
  }
  const citado = done.get(d.ref.caso)
  const codigo = d.ref.razon === undefined ? null : codigoRefOf(d.ref.razon)
  if (citado === undefined) errors.push(fail(d.ref.line, `El caso ${d.ref.caso} que se cita no está antes en el archivo.`))
  if (d.ref.razon === undefined) errors.push(fail(d.ref.line, 'Falta la línea RAZON REFERENCIA.'))
  else if (codigo === null) errors.push(fail(d.ref.line, `Razón de referencia no reconocida «${d.ref.razon}»: se espera ANULA, CORRIGE, MODIFICA o DEVOLUCION.`))
  if (citado === undefined || codigo === null || d.ref.razon === undefined) return
  d.caso.referenciaCaso = { caso: citado.caso, codigoRef: codigo, razon: d.ref.razon }
  doc.detalle = linesFromCited(own, citado, codigo)
  if (doc.detalle.length === 0) errors.push(fail(d.head, 'El caso no tiene ítems y su razón no permite copiarlos del caso citado.'))
  if (codigo === 1 && citado.documento.descuentos_globales && !doc.descuentos_globales) doc.descuentos_globales = structuredClone(citado.documento.descuentos_globales)
  if (EXPORTS.includes(d.caso.tipoDte) && !doc.export_data && citado.documento.export_data) doc.export_data = structuredClone(citado.documento.export_data)
}

/**
 * A note's lines: its own, each completed from the cited case's line of the same name (the SII gives only what
 * changes: "LOS PRECIOS UNITARIOS … DEBEN SER LOS MISMOS DE LA FACTURA"); with none, ANULA copies every line and
 * CORRIGE names the first item, with no amounts (a text correction).
 */
function linesFromCited(own: readonly Linea[], citado: CasoSet, codigo: CodigoRef): Linea[] {
  const cited = citado.documento.detalle
  if (own.length > 0) return own.map((l) => ({ ...(cited.find((c) => c.nombre.trim() === l.nombre.trim()) ?? {}), ...l }))
  if (codigo === 1) return structuredClone(cited)
  if (codigo === 2 && cited[0]) return [{ nombre: cited[0].nombre }]
  return []
}

function applyLineInstructions(d: Borrador, errors: SetError[]): void {
  const detalle = d.caso.documento.detalle
  if (d.recargoLinea) {
    if (detalle.length === 1) detalle[0]!.recargo_pct = d.recargoLinea.pct
    else errors.push(fail(d.recargoLinea.line, 'El recargo «en la línea de ítem» no dice a cuál de las líneas del caso se aplica.'))
  }
  for (const x of d.descuentosLinea) {
    const linea = detalle[x.nro - 1]
    if (linea) linea.descuento_pct = x.pct
    else errors.push(fail(x.line, `El caso no tiene línea ${x.nro}.`))
  }
}

/** Exports: a currency is required, and the service indicator follows the items (research §1.5). */
function inferExport(d: Borrador, errors: SetError[]): void {
  const doc = d.caso.documento
  if (!EXPORTS.includes(d.caso.tipoDte)) {
    if (doc.export_data) errors.push(fail(d.head, 'Datos de Aduana en un documento que no es de exportación.'))
    return
  }
  if (!doc.export_data || doc.export_data.tpo_moneda === ('' as Moneda)) {
    errors.push(fail(d.head, 'El documento de exportación no dice la MONEDA DE LA OPERACION.'))
    return
  }
  if (d.caso.tipoDte !== 110) return
  const names = doc.detalle.map((l) => normalize(l.nombre)).join(' ')
  if (/ALOJAMIENTO|HOTEL/.test(names)) doc.ind_servicio = 4
  else if (/ASESORIA|SERVICIO|CONSULTORIA|PROYECTOS? PROFESIONAL/.test(names)) doc.ind_servicio = 3
}
