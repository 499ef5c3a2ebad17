// The issuing company's own fields: what the SII schema lets us print without cutting (DESIGN §12 "Text").
import type { FieldError } from '../errors'
import { normalizeRut } from './rut'

export type Ambiente = 'certificacion' | 'produccion'
export const AMBIENTES: readonly Ambiente[] = ['certificacion', 'produccion']

/** SiiTypes_v10.xsd / DTE_v10.xsd maxima of the Emisor elements: RznSoc 100, GiroEmis 80, DirOrigen 70, CmnaOrigen and CiudadOrigen 20. */
export const EMPRESA_MAX_LENGTH = { razon_social: 100, giro: 80, direccion: 70, comuna: 20, ciudad: 20 } as const
export type EmpresaTextField = keyof typeof EMPRESA_MAX_LENGTH
export const EMPRESA_TEXT_FIELDS = Object.keys(EMPRESA_MAX_LENGTH) as EmpresaTextField[]

/** Acteco: 1 to 4 codes of the SII's economic activity table (DTE_v10.xsd: maxOccurs 4, 6 digits). */
export const ACTECO_MAX = 4

export interface EmpresaDatos {
  readonly razon_social: string
  readonly giro: string
  readonly direccion: string
  readonly comuna: string
  readonly ciudad: string
  readonly acteco: readonly number[]
}

export interface EmpresaAlta extends EmpresaDatos {
  readonly rut: string
  readonly ambiente: Ambiente
  readonly fecha_resolucion: string
  readonly numero_resolucion: number
}

const LATIN1 = /^[\t\n\r\u0020-\u007e\u00a0-\u00ff]*$/

export function checkEmpresaText(field: EmpresaTextField, value: string): FieldError | null {
  if (value.trim() === '') return { field, code: 'REQUIRED', message: 'No puede estar vacío.' }
  if ([...value].length > EMPRESA_MAX_LENGTH[field])
    return { field, code: 'TOO_LONG', message: `Excede el largo máximo de ${EMPRESA_MAX_LENGTH[field]} caracteres (esquema del SII).` }
  if (!LATIN1.test(value)) return { field, code: 'INVALID_VALUE', message: 'Contiene caracteres que el SII no admite (fuera de ISO-8859-1).' }
  return null
}

export function checkActeco(acteco: readonly number[]): FieldError | null {
  if (acteco.length === 0) return { field: 'acteco', code: 'TOO_FEW', message: 'Indique al menos un código de actividad económica.' }
  if (acteco.length > ACTECO_MAX) return { field: 'acteco', code: 'TOO_MANY', message: `Admite como máximo ${ACTECO_MAX} códigos.` }
  const bad = acteco.findIndex((c) => !Number.isInteger(c) || c < 1 || c > 999999)
  if (bad >= 0) return { field: `acteco.${bad}`, code: 'OUT_OF_RANGE', message: 'Código de actividad de 1 a 6 dígitos.' }
  return null
}

/**
 * Fields of a partial update (PUT /empresa, `empresa update`): only those present are checked. A value of another type
 * is the shape check's to report (PUT /empresa runs both on the body as sent, DESIGN §5).
 */
export function checkEmpresaDatos(input: { readonly [K in keyof EmpresaDatos]?: unknown }): FieldError[] {
  const errors: FieldError[] = []
  for (const field of EMPRESA_TEXT_FIELDS) {
    const value = input[field]
    if (typeof value !== 'string') continue
    const e = checkEmpresaText(field, value)
    if (e) errors.push(e)
  }
  if (Array.isArray(input.acteco)) {
    const e = checkActeco(input.acteco)
    if (e) errors.push(e)
  }
  return errors
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

export function isValidDate(s: string): boolean {
  const m = DATE.exec(s)
  if (!m) return false
  const d = new Date(`${s}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s
}

export function checkEmpresaAlta(input: Partial<EmpresaAlta>): FieldError[] {
  const errors: FieldError[] = []
  if (input.rut === undefined) errors.push({ field: 'rut', code: 'REQUIRED', message: 'Campo requerido.' })
  else if (normalizeRut(input.rut) === null) errors.push({ field: 'rut', code: 'INVALID_RUT', message: 'RUT inválido.' })
  for (const field of EMPRESA_TEXT_FIELDS)
    if (input[field] === undefined) errors.push({ field, code: 'REQUIRED', message: 'Campo requerido.' })
  if (input.acteco === undefined) errors.push({ field: 'acteco', code: 'REQUIRED', message: 'Campo requerido.' })
  errors.push(...checkEmpresaDatos(input))
  errors.push(...checkResolucion(input))
  return errors
}

export function checkResolucion(input: Partial<Pick<EmpresaAlta, 'ambiente' | 'fecha_resolucion' | 'numero_resolucion'>>): FieldError[] {
  const errors: FieldError[] = []
  if (input.ambiente !== undefined && !AMBIENTES.includes(input.ambiente))
    errors.push({ field: 'ambiente', code: 'INVALID_VALUE', message: 'Valores aceptados: certificacion, produccion.' })
  if (input.fecha_resolucion !== undefined && !isValidDate(input.fecha_resolucion))
    errors.push({ field: 'fecha_resolucion', code: 'INVALID_FORMAT', message: 'Fecha inválida; se espera YYYY-MM-DD.' })
  if (input.numero_resolucion !== undefined && (!Number.isInteger(input.numero_resolucion) || input.numero_resolucion < 0))
    errors.push({ field: 'numero_resolucion', code: 'OUT_OF_RANGE', message: 'Entero mayor o igual a 0.' })
  return errors
}
