// The company: created and re-configured by the operator (CLI), its contact data edited by the integrator (PUT /empresa).
import { isoTimestamp, santiagoDate } from '../clock'
import { findEmpresaById, findEmpresaByRut, insertEmpresa, listEmpresas as listRows, updateEmpresa } from '../db/empresa-store'
import type { EmpresaRow } from '../db/schema'
import { checkEmpresaAlta, checkEmpresaDatos, checkResolucion, type EmpresaAlta, type EmpresaDatos } from '../domain/empresa'
import type { InboundStatus } from '../domain/intercambio'
import { normalizeRut } from '../domain/rut'
import { TimbreError, validationError } from '../errors'
import type { Deps } from './deps'

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
  /** The exchange address (DESIGN §13); set with the mailbox settings (services/mailbox.ts). */
  readonly inbound_email: string | null
  readonly inbound_status: InboundStatus
  readonly is_demo: boolean
  readonly created_at: string
  readonly updated_at: string
}

export function toEmpresaRecord(row: EmpresaRow): EmpresaRecord {
  // services/mailbox.ts keeps inbound_status with the mailbox row in one transaction; a company that never had one
  // stores null, which the record spells as DESIGN §13 does.
  return { ...row, acteco: [...row.acteco], inbound_status: (row.inbound_status as InboundStatus | null) ?? 'sin_configurar' }
}

export function createEmpresa(deps: Pick<Deps, 'store' | 'clock'>, input: Partial<EmpresaAlta> & { is_demo?: boolean }): EmpresaRecord {
  const now = deps.clock.now()
  const errors = checkEmpresaAlta(input)
  if (errors.length > 0) throw validationError(errors)
  const alta = input as EmpresaAlta
  const rut = normalizeRut(alta.rut)!
  const existing = findEmpresaByRut(deps.store.db, rut)
  if (existing) throw validationError([{ field: 'rut', code: 'INVALID_VALUE', message: `Ya existe una empresa con el RUT ${rut} (id ${existing.id}).` }])
  const at = isoTimestamp(now)
  const row = insertEmpresa(deps.store.db, {
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

export function listEmpresas(deps: Pick<Deps, 'store'>): EmpresaRecord[] {
  return listRows(deps.store.db).map(toEmpresaRecord)
}

/** Rows that "cannot be missing" (the credential's company) going missing is a bug, not a 404 (STYLE §4). */
export function getEmpresa(deps: Pick<Deps, 'store'>, input: { empresaId: string }): EmpresaRecord {
  const row = findEmpresaById(deps.store.db, input.empresaId)
  if (!row) throw new Error(`empresa ${input.empresaId} of a valid credential is missing`)
  return toEmpresaRecord(row)
}

/** An operator names a company by RUT (any spelling) or id. */
export function resolveEmpresa(deps: Pick<Deps, 'store'>, input: { ref: string }): EmpresaRecord {
  const rut = normalizeRut(input.ref)
  const row = rut ? findEmpresaByRut(deps.store.db, rut) : findEmpresaById(deps.store.db, input.ref)
  if (!row) throw new TimbreError('NOT_FOUND', { message: `No existe la empresa ${input.ref}.` })
  return toEmpresaRecord(row)
}

/** PUT /empresa: only the fields sent change (DESIGN §12); RUT, ambiente and resolución are the CLI's. */
export function updateEmpresaDatos(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; datos: Partial<EmpresaDatos> }): EmpresaRecord {
  const { empresaId, datos } = input
  const errors = checkEmpresaDatos(datos)
  if (errors.length > 0) throw validationError(errors)
  const row = updateEmpresa(deps.store.db, empresaId, { ...definedOnly({ ...datos, acteco: datos.acteco ? [...datos.acteco] : undefined }), updated_at: isoTimestamp(deps.clock.now()) })
  if (!row) throw new Error(`empresa ${empresaId} of a valid credential is missing`)
  return toEmpresaRecord(row)
}

/** `timbre empresa update`: everything but the RUT. */
export function updateEmpresaAdmin(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { ref: string; cambios: Partial<EmpresaDatos & Pick<EmpresaAlta, 'ambiente' | 'fecha_resolucion' | 'numero_resolucion'>> },
): EmpresaRecord {
  const { cambios } = input
  const empresa = resolveEmpresa(deps, { ref: input.ref })
  const errors = [...checkEmpresaDatos(cambios), ...checkResolucion(cambios)]
  if (errors.length > 0) throw validationError(errors)
  const row = updateEmpresa(deps.store.db, empresa.id, { ...definedOnly({ ...cambios, acteco: cambios.acteco ? [...cambios.acteco] : undefined }), updated_at: isoTimestamp(deps.clock.now()) })
  return toEmpresaRecord(row!)
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
