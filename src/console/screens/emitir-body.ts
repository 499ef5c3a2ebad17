// The issue form's posted fields → the JSON body POST /dte would receive (DESIGN §14). Inputs are named with the API's
// dot paths; numbers are read as people in Chile type them (domain/numero-cl.ts), and a number that does not read is
// sent as the text it is, so the API's validation refuses it at that same path, while the form shows why in words
// (`numberErrors`). Blocks a type does not use (an export's data on a 33, commissions on a 34…) are left out, so a
// block filled and then hidden by choosing another type is not sent.
import { MONEDAS, PESO_CL, TIPOS_DTE, isTipoDte, type TipoDte } from '../../domain/emision'
import { parseNumeroCL, type NumeroOptions } from '../../domain/numero-cl'
import { TIPOS } from '../../domain/tipos'
import type { FieldError } from '../../errors'
import { textField } from '../context'

/** The schema's bounds (contracts/dte.ts). */
export const MAX_ROWS = { detalle: 60, referencias: 40, comisiones: 20, impuestos_retenciones: 20, descuentos_globales: 20 } as const
export type ListName = keyof typeof MAX_ROWS

/** Parts of the form that only some types use, each with the rule of domain/tipos.ts that says which. */
export type Bloque =
  | 'descuentos_linea'
  | 'ind_exe'
  | 'cod_imp_adic'
  | 'tipo_doc_liq'
  | 'monto_item'
  | 'comisiones'
  | 'impuestos_retenciones'
  | 'descuentos_globales'
  | 'export_data'
  | 'montos_brutos'
  | 'ind_traslado'
  | 'ind_servicio'

const USES: Readonly<Record<Bloque, (t: TipoDte) => boolean>> = {
  descuentos_linea: (t) => TIPOS[t].allowsLineDiscounts,
  ind_exe: (t) => !TIPOS[t].isExemptOnly,
  cod_imp_adic: (t) => TIPOS[t].allowsImpuestos,
  tipo_doc_liq: (t) => TIPOS[t].requiresTipoDocLiq,
  // Only the Liquidacion's line amount is signed and given directly (an advance to discount, docs/sii-protocol.md §2.4).
  monto_item: (t) => TIPOS[t].container === 'Liquidacion',
  comisiones: (t) => TIPOS[t].comisiones !== 'forbidden',
  impuestos_retenciones: (t) => TIPOS[t].allowsImpuestos,
  descuentos_globales: (t) => TIPOS[t].allowsDescuentosGlobales,
  export_data: (t) => TIPOS[t].isExport,
  montos_brutos: (t) => TIPOS[t].allowsMontosBrutos,
  ind_traslado: (t) => TIPOS[t].requiresIndTraslado,
  // Boletas default to 3 by themselves; exports say which service they are (spec 2.3 ind_servicio 3–6).
  ind_servicio: (t) => TIPOS[t].isExport,
}

/** The types that use `bloque`, in the spec's order. */
export function tiposOf(bloque: Bloque): TipoDte[] {
  return TIPOS_DTE.filter((t) => USES[bloque](t))
}

export function uses(tipo: TipoDte, bloque: Bloque): boolean {
  return USES[bloque](tipo)
}

/** The type the form carries, or 33 (the form's first choice) when it carries none the API knows. */
export function tipoOf(form: FormData | null): TipoDte {
  const n = Number(form === null ? NaN : textField(form, 'tipo_dte'))
  return isTipoDte(n) ? n : 33
}

/** The form's amounts are in a foreign currency: an export whose currency is not the peso. */
export function isForeign(form: FormData | null, tipo: TipoDte): boolean {
  if (!TIPOS[tipo].isExport || form === null) return false
  const moneda = textField(form, 'export_data.tpo_moneda')
  return moneda !== null && moneda !== PESO_CL
}

/** How many rows of `list` the form carried (its highest index + 1), empty ones included, within its bound. */
export function rowsSent(form: FormData, list: ListName): number {
  const pattern = new RegExp(`^${list}\\.(\\d+)\\.`)
  let count = 0
  for (const key of form.keys()) {
    const m = pattern.exec(key)
    const index = m ? Number(m[1]) : -1
    if (index >= 0 && index < MAX_ROWS[list]) count = Math.max(count, index + 1)
  }
  return count
}

type Reader = (path: string, raw: string) => unknown

/** How each kind of input is read; numbers by numero-cl, their refusals kept for the form to show. */
interface Readers {
  readonly text: Reader
  readonly entero: Reader
  readonly decimal: Reader
  /** An amount: whole pesos, or up to 4 decimals in a foreign currency (DESIGN §12 "Exports"). */
  readonly monto: Reader
  readonly montoSigned: Reader
  /** A code chosen from a list of the form's own (a select): sent as a number when it is one. */
  readonly codigo: Reader
}

function readersFor(foreign: boolean, errors: FieldError[]): Readers {
  const numero = (options: NumeroOptions): Reader => (path, raw) => {
    const read = parseNumeroCL(raw, options)
    if (read.ok) return read.value
    errors.push({ field: path, code: 'INVALID_FORMAT', message: read.message })
    return raw
  }
  return {
    text: (_path, raw) => raw,
    entero: numero({ decimales: false, mensajeEntero: 'Es un número entero, sin decimales.' }),
    decimal: numero({ decimales: true }),
    monto: numero({ decimales: foreign }),
    montoSigned: numero({ decimales: foreign, negativos: true }),
    codigo: (_path, raw) => (/^\d+$/.test(raw) ? Number(raw) : raw),
  }
}

/** `tipo_doc_ref` is a TipoDTE (a number) or a free code (a string, such as "801"): only a TipoDTE becomes a number. */
const tipoDocRef: Reader = (_path, raw) => (/^\d+$/.test(raw) && isTipoDte(Number(raw)) ? Number(raw) : raw)

/** The fields of each list, how each is read, and the block that must apply for it to be sent. */
function listFields(r: Readers): Readonly<Record<ListName, ReadonlyArray<readonly [field: string, read: Reader, bloque?: Bloque]>>> {
  return {
    detalle: [
      ['nombre', r.text],
      ['dsc_item', r.text],
      ['tipo_doc_liq', r.text, 'tipo_doc_liq'],
      ['cantidad', r.decimal],
      ['unidad', r.text],
      ['precio', r.monto],
      ['monto_item', r.montoSigned, 'monto_item'],
      ['descuento_pct', r.decimal, 'descuentos_linea'],
      ['recargo_pct', r.decimal, 'descuentos_linea'],
      ['ind_exe', r.codigo, 'ind_exe'],
      ['cod_imp_adic', r.codigo, 'cod_imp_adic'],
    ],
    referencias: [
      ['tipo_doc_ref', tipoDocRef],
      ['folio_ref', r.entero],
      ['fecha_ref', r.text],
      ['codigo_ref', r.codigo],
      ['razon_ref', r.text],
    ],
    // The Liquidacion's commission values are signed (ValorType); the rules refuse a negative one elsewhere.
    comisiones: [
      ['tipo_movim', r.text],
      ['glosa', r.text],
      ['tasa_comision', r.decimal],
      ['val_com_neto', r.montoSigned],
      ['val_com_exe', r.montoSigned],
      ['val_com_iva', r.montoSigned],
    ],
    impuestos_retenciones: [
      ['tipo_imp', r.codigo],
      ['tasa_imp', r.decimal],
      ['monto_imp', r.montoSigned],
    ],
    descuentos_globales: [
      ['tpo_mov', r.text],
      ['tpo_valor', r.text],
      ['valor_dr', r.decimal],
      ['glosa_dr', r.text],
      ['ind_exe_dr', r.codigo],
    ],
  }
}

/** The fields of each list, for the form's inputs and its error paths. */
export const LIST_FIELDS: Readonly<Record<ListName, readonly string[]>> = (() => {
  const all = listFields(readersFor(false, []))
  const names = (list: ListName) => all[list].map(([f]) => f)
  return {
    detalle: names('detalle'),
    referencias: names('referencias'),
    comisiones: names('comisiones'),
    impuestos_retenciones: names('impuestos_retenciones'),
    descuentos_globales: names('descuentos_globales'),
  }
})()

const EXPORT_FIELDS = (r: Readers): ReadonlyArray<readonly [string, Reader]> => [
  ['tpo_moneda', r.text],
  ['tpo_cambio', r.decimal],
  ['forma_pago_exp', r.codigo],
  ['modalidad_venta', r.codigo],
  ['clausula_venta', r.text],
  ['total_clausula', r.decimal],
  ['via_transporte', r.codigo],
  ['puerto_embarque', r.text],
  ['puerto_desembarque', r.text],
  ['pais_recep', r.text],
  ['pais_dest', r.text],
  ['nacionalidad', r.text],
  ['num_id', r.text],
  ['tipo_bulto', r.text],
  ['total_bultos', r.entero],
  ['marcas', r.text],
  ['tara', r.entero],
  ['unidad_tara', r.codigo],
  ['peso_bruto', r.decimal],
  ['unidad_peso_bruto', r.codigo],
  ['peso_neto', r.decimal],
  ['unidad_peso_neto', r.codigo],
  ['mnt_flete', r.decimal],
  ['mnt_seguro', r.decimal],
]

export const EXPORT_DATA_FIELDS: readonly string[] = EXPORT_FIELDS(readersFor(false, [])).map(([f]) => f)

export const RECEPTOR_FIELDS = ['rut', 'razon_social', 'giro', 'direccion', 'comuna', 'ciudad', 'email'] as const

/**
 * The value each list's selects start at (a commission, a discount in %): a row holding only these was never touched,
 * and is as empty as a row with nothing typed.
 */
const SELECT_DEFAULTS: Readonly<Partial<Record<ListName, Readonly<Record<string, string>>>>> = {
  comisiones: { tipo_movim: 'C' },
  descuentos_globales: { tpo_mov: 'D', tpo_valor: '%' },
}

function isUntouched(list: ListName, row: Readonly<Record<string, unknown>>): boolean {
  const defaults = SELECT_DEFAULTS[list] ?? {}
  return Object.entries(row).every(([field, value]) => defaults[field] === value)
}

/**
 * The rows of `list` as the API's objects. Only trailing untouched rows are dropped: one in the middle stays (and is
 * reported), so every row keeps its index and each error of `detalle.N.*` lands on the input the person typed in.
 */
function rowsOf(form: FormData, list: ListName, tipo: TipoDte, fields: ReadonlyArray<readonly [string, Reader, Bloque?]>) {
  const rows: Array<Record<string, unknown>> = []
  for (let i = 0; i < rowsSent(form, list); i++) {
    const row: Record<string, unknown> = {}
    for (const [field, read, bloque] of fields) {
      if (bloque !== undefined && !uses(tipo, bloque)) continue
      const path = `${list}.${i}.${field}`
      const raw = textField(form, path)
      if (raw !== null) row[field] = read(path, raw)
    }
    rows.push(row)
  }
  while (rows.length > 0 && isUntouched(list, rows[rows.length - 1]!)) rows.pop()
  return rows
}

export interface FormBody {
  readonly body: Record<string, unknown>
  /** Numbers that did not read, in words, at the path the API will refuse them at too. */
  readonly numberErrors: readonly FieldError[]
}

/** The JSON body POST /dte would receive for this form: empty inputs omitted, numbers sent as numbers. */
export function bodyFrom(form: FormData): FormBody {
  const tipo = tipoOf(form)
  const numberErrors: FieldError[] = []
  const r = readersFor(isForeign(form, tipo), numberErrors)
  const fields = listFields(r)
  const body: Record<string, unknown> = {}
  const tipoRaw = textField(form, 'tipo_dte')
  if (tipoRaw !== null) body.tipo_dte = r.codigo('tipo_dte', tipoRaw)
  const fecha = textField(form, 'fecha_emision')
  if (fecha !== null) body.fecha_emision = fecha
  // Always an object, so a missing RUT or razón social is reported at receptor.rut, beside its input.
  const receptor: Record<string, string> = {}
  for (const field of RECEPTOR_FIELDS) {
    const value = textField(form, `receptor.${field}`)
    if (value !== null) receptor[field] = value
  }
  body.receptor = receptor
  const detalle = rowsOf(form, 'detalle', tipo, fields.detalle)
  // An empty form still sends its first line, so its errors point at detalle.0.nombre rather than at the list.
  body.detalle = detalle.length > 0 ? detalle : [{}]
  for (const list of ['referencias', 'comisiones', 'impuestos_retenciones', 'descuentos_globales'] as const) {
    if (list !== 'referencias' && !uses(tipo, list)) continue
    const rows = rowsOf(form, list, tipo, fields[list])
    if (rows.length > 0) body[list] = rows
  }
  for (const [field, bloque] of [['ind_traslado', 'ind_traslado'], ['ind_servicio', 'ind_servicio']] as const) {
    const raw = textField(form, field)
    if (raw !== null && uses(tipo, bloque)) body[field] = r.codigo(field, raw)
  }
  if (uses(tipo, 'montos_brutos') && textField(form, 'montos_brutos') !== null) body.montos_brutos = true
  if (uses(tipo, 'export_data')) body.export_data = exportDataOf(form, r)
  return { body, numberErrors }
}

function exportDataOf(form: FormData, r: Readers): Record<string, unknown> {
  const data: Record<string, unknown> = {}
  for (const [field, read] of EXPORT_FIELDS(r)) {
    const path = `export_data.${field}`
    const raw = textField(form, path)
    if (raw !== null) data[field] = read(path, raw)
  }
  return data
}

/** The currencies an export may be in (SiiTypes_v10.xsd TipMonType), the peso and the dollar first. */
export const MONEDAS_FORMULARIO: readonly string[] = [PESO_CL, 'DOLAR USA', 'EURO', ...MONEDAS.filter((m) => m !== PESO_CL && m !== 'DOLAR USA' && m !== 'EURO')]

/**
 * The API's refusal merged with the form's own reading of numbers: where a number did not read, the form's words
 * replace what the schema said of the text it received ("Expected number").
 */
export function withNumberErrors(apiErrors: readonly FieldError[], numberErrors: readonly FieldError[]): FieldError[] {
  const ours = new Set(numberErrors.map((e) => e.field))
  return [...numberErrors, ...apiErrors.filter((e) => !ours.has(e.field))]
}
