// The company: created and re-configured by the operator (CLI), its contact data edited by the integrator (PUT /empresa).
import { isoTimestamp, santiagoDate } from '../clock'
import { findEmpresaById, findEmpresaByRut, insertEmpresa, listEmpresas as listRows, updateEmpresa } from '../db/empresa-store'
import type { Store } from '../db/open'
import type { EmpresaRow } from '../db/schema'
import { checkEmpresaAlta, checkEmpresaDatos, checkResolucion, type EmpresaAlta, type EmpresaDatos } from '../domain/empresa'
import { normalizeRut } from '../domain/rut'
import { TimbreError, validationError } from '../errors'

/** Spec 2.13 plus `acteco` (DESIGN §8). */
export interface EmpresaRecord {
  readonly id: string
  readonly rut: string
  readonly razon_social: string
  readonly giro: string
  readonly acteco: number[]
  readonly direccion: string
  readonly comuna: string
  readonly ciudad: string
  readonly ambiente: 'certificacion' | 'produccion'
  readonly fecha_resolucion: string
  readonly numero_resolucion: number
  readonly inbound_email: string | null
  readonly inbound_status: string | null
  readonly is_demo: boolean
  readonly created_at: string
  readonly updated_at: string
}

export function toEmpresaRecord(row: EmpresaRow): EmpresaRecord {
  return { ...row, acteco: [...row.acteco] }
}

export function createEmpresa(store: Store, input: Partial<EmpresaAlta> & { is_demo?: boolean }, now: Date): EmpresaRecord {
  const errors = checkEmpresaAlta(input)
  if (errors.length > 0) throw validationError(errors)
  const alta = input as EmpresaAlta
  const rut = normalizeRut(alta.rut)!
  const existing = findEmpresaByRut(store.db, rut)
  if (existing) throw validationError([{ field: 'rut', code: 'INVALID_VALUE', message: `Ya existe una empresa con el RUT ${rut} (id ${existing.id}).` }])
  const at = isoTimestamp(now)
  const row = insertEmpresa(store.db, {
    id: Bun.randomUUIDv7(),
    rut,
    razon_social: alta.razon_social,
    giro: alta.giro,
    acteco: [...alta.acteco],
    direccion: alta.direccion,
    comuna: alta.comuna,
    ciudad: alta.ciudad,
    ambiente: alta.ambiente ?? 'certificacion',
    // Unknown until the SII authorises the company: the creation date stands in; `empresa update` sets the real one.
    fecha_resolucion: alta.fecha_resolucion ?? santiagoDate(now),
    numero_resolucion: alta.numero_resolucion ?? 0,
    is_demo: input.is_demo ?? false,
    created_at: at,
    updated_at: at,
  })
  return toEmpresaRecord(row)
}

export function listEmpresas(store: Store): EmpresaRecord[] {
  return listRows(store.db).map(toEmpresaRecord)
}

/** Rows that "cannot be missing" (the credential's company) going missing is a bug, not a 404 (STYLE §4). */
export function getEmpresa(store: Store, empresaId: string): EmpresaRecord {
  const row = findEmpresaById(store.db, empresaId)
  if (!row) throw new Error(`empresa ${empresaId} of a valid credential is missing`)
  return toEmpresaRecord(row)
}

/** An operator names a company by RUT (any spelling) or id. */
export function resolveEmpresa(store: Store, ref: string): EmpresaRecord {
  const rut = normalizeRut(ref)
  const row = rut ? findEmpresaByRut(store.db, rut) : findEmpresaById(store.db, ref)
  if (!row) throw new TimbreError('NOT_FOUND', { message: `No existe la empresa ${ref}.` })
  return toEmpresaRecord(row)
}

/** PUT /empresa: only the fields sent change (DESIGN §12); RUT, ambiente and resolución are the CLI's. */
export function updateEmpresaDatos(store: Store, empresaId: string, patch: Partial<EmpresaDatos>, now: Date): EmpresaRecord {
  const errors = checkEmpresaDatos(patch)
  if (errors.length > 0) throw validationError(errors)
  const row = updateEmpresa(store.db, empresaId, { ...definedOnly({ ...patch, acteco: patch.acteco ? [...patch.acteco] : undefined }), updated_at: isoTimestamp(now) })
  if (!row) throw new Error(`empresa ${empresaId} of a valid credential is missing`)
  return toEmpresaRecord(row)
}

/** `timbre empresa update`: everything but the RUT. */
export function updateEmpresaAdmin(
  store: Store,
  ref: string,
  patch: Partial<EmpresaDatos & Pick<EmpresaAlta, 'ambiente' | 'fecha_resolucion' | 'numero_resolucion'>>,
  now: Date,
): EmpresaRecord {
  const empresa = resolveEmpresa(store, ref)
  const errors = [...checkEmpresaDatos(patch), ...checkResolucion(patch)]
  if (errors.length > 0) throw validationError(errors)
  const row = updateEmpresa(store.db, empresa.id, { ...definedOnly({ ...patch, acteco: patch.acteco ? [...patch.acteco] : undefined }), updated_at: isoTimestamp(now) })
  return toEmpresaRecord(row!)
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
