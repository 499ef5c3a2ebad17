// Clientes (spec 4.5, DESIGN §8, §12): a RUT unique among the company's live clientes, partial updates that never
// touch the RUT, soft delete, search. Fields arrive checked by the door (contracts/clientes.ts); this file owns the
// rules that need the store and the transaction.
import { isoTimestamp } from '../clock'
import {
  findClienteById,
  findClienteByRut,
  insertCliente,
  listClientes as listRows,
  searchClientes as searchRows,
  softDeleteCliente,
  updateCliente as updateRow,
  type ClientePatch,
} from '../db/cliente-store'
import type { ClienteRow } from '../db/schema'
import { checkRutUnchanged, clienteSearchTerms, foldText } from '../domain/catalogo'
import { normalizeRut } from '../domain/rut'
import { TimbreError, validationError } from '../errors'
import type { Deps } from './deps'

/** Spec 2.16; optional texts never sent are null. */
export interface ClienteRecord {
  readonly id: string
  readonly rut: string
  readonly razon_social: string
  readonly giro: string | null
  readonly direccion: string | null
  readonly comuna: string | null
  readonly ciudad: string | null
  readonly email: string | null
  readonly telefono: string | null
  readonly contacto: string | null
  readonly notas: string | null
  readonly created_at: string
  readonly updated_at: string
}

type Optional = 'giro' | 'direccion' | 'comuna' | 'ciudad' | 'email' | 'telefono' | 'contacto' | 'notas'

/** POST /clientes: `rut` in any spelling; null and absent optional fields alike store nothing. */
export type ClienteAlta = { readonly rut: string; readonly razon_social: string } & { readonly [K in Optional]?: string | null }

/** PUT /clientes/{id}: only the fields present change, null clears; `rut` only if it repeats the stored one. */
export type ClienteCambios = { readonly rut?: string; readonly razon_social?: string } & { readonly [K in Optional]?: string | null }

export function toClienteRecord(row: ClienteRow): ClienteRecord {
  return {
    id: row.id,
    rut: row.rut,
    razon_social: row.razon_social,
    giro: row.giro,
    direccion: row.direccion,
    comuna: row.comuna,
    ciudad: row.ciudad,
    email: row.email,
    telefono: row.telefono,
    contacto: row.contacto,
    notas: row.notas,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

export function createCliente(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; alta: ClienteAlta }): ClienteRecord {
  const { empresaId, alta } = input
  const rut = normalizeRut(alta.rut)
  if (rut === null) throw validationError([{ field: 'rut', code: 'INVALID_RUT', message: 'RUT inválido.' }])
  const at = isoTimestamp(deps.clock.now())
  // Check and insert under the write lock: two creates of one RUT cannot both pass (the partial unique index agrees).
  const row = deps.store.db.transaction(
    (tx) => {
      const existing = findClienteByRut(tx, empresaId, rut)
      if (existing)
        throw new TimbreError('CLIENTE_RUT_EXISTS', { message: `Ya existe un cliente con el RUT ${rut}.`, context: { cliente_id: existing.id, rut } })
      return insertCliente(tx, {
        id: Bun.randomUUIDv7(),
        empresa_id: empresaId,
        rut,
        razon_social: alta.razon_social,
        giro: alta.giro ?? null,
        direccion: alta.direccion ?? null,
        comuna: alta.comuna ?? null,
        ciudad: alta.ciudad ?? null,
        email: alta.email ?? null,
        telefono: alta.telefono ?? null,
        contacto: alta.contacto ?? null,
        notas: alta.notas ?? null,
        busqueda: foldText(alta.razon_social),
        created_at: at,
        updated_at: at,
      })
    },
    { behavior: 'immediate' },
  )
  return toClienteRecord(row)
}

/** Another company's cliente, a deleted one and an unknown id are all 404 (DESIGN §4, §12). */
export function getCliente(deps: Pick<Deps, 'store'>, input: { empresaId: string; id: string }): ClienteRecord {
  const row = findClienteById(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return toClienteRecord(row)
}

export function listClientes(deps: Pick<Deps, 'store'>, input: { empresaId: string; afterId: string | null; limit: number }): ClienteRecord[] {
  return listRows(deps.store.db, input.empresaId, { afterId: input.afterId, limit: input.limit }).map(toClienteRecord)
}

export function updateCliente(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; id: string; cambios: ClienteCambios }): ClienteRecord {
  const { empresaId, id, cambios } = input
  const now = deps.clock.now()
  const row = deps.store.db.transaction(
    (tx) => {
      const current = findClienteById(tx, empresaId, id)
      if (!current) throw new TimbreError('NOT_FOUND')
      const errors = checkRutUnchanged(cambios.rut, current.rut)
      if (errors.length > 0) throw validationError(errors)
      const { rut: _unchanged, ...fields } = cambios
      const patch: ClientePatch = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined))
      if (Object.keys(patch).length === 0) return current
      if (patch.razon_social !== undefined) patch.busqueda = foldText(patch.razon_social)
      return updateRow(tx, empresaId, id, { ...patch, updated_at: isoTimestamp(now) })!
    },
    { behavior: 'immediate' },
  )
  return toClienteRecord(row)
}

export function deleteCliente(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; id: string }): void {
  if (!softDeleteCliente(deps.store.db, input.empresaId, input.id, isoTimestamp(deps.clock.now()))) throw new TimbreError('NOT_FOUND')
}

/** DESIGN §8: case- and accent-insensitive substring of the razón social, or of the RUT in any spelling; newest first. */
export function searchClientes(deps: Pick<Deps, 'store'>, input: { empresaId: string; q: string; limit: number }): ClienteRecord[] {
  const terms = clienteSearchTerms(input.q)
  if (terms.length === 0) throw validationError([{ field: 'q', code: 'REQUIRED', message: 'No puede estar vacío.' }])
  return searchRows(deps.store.db, input.empresaId, terms, input.limit).map(toClienteRecord)
}
