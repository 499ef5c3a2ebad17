// Productos (spec 4.6, DESIGN §8, §12): a codigo unique among the company's live productos when present, partial
// updates, soft delete (issued DTEs carry their own copy of each line, so they are never affected), search. Fields
// arrive checked by the door (contracts/productos.ts); this file owns the rules that need the store.
import { isoTimestamp } from '../clock'
import {
  findProductoByCodigo,
  findProductoById,
  insertProducto,
  listProductos as listRows,
  searchProductos as searchRows,
  softDeleteProducto,
  updateProducto as updateRow,
  type ProductoPatch,
} from '../db/producto-store'
import type { Db } from '../db/open'
import type { ProductoRow } from '../db/schema'
import { foldText, productoSearchTerms, type Unidad } from '../domain/catalogo'
import { TimbreError, validationError } from '../errors'
import type { Deps } from './deps'

/** Spec 2.17; optional fields never sent are null. */
export interface ProductoRecord {
  readonly id: string
  readonly codigo: string | null
  readonly nombre: string
  readonly descripcion: string | null
  readonly precio_unitario: number | null
  readonly unidad: Unidad
  readonly es_exento: boolean
  readonly categoria: string | null
  readonly created_at: string
  readonly updated_at: string
}

/** POST /productos: `nombre` required; `unidad` defaults to UN, `es_exento` to false, the rest to null. */
export interface ProductoAlta {
  readonly nombre: string
  readonly codigo?: string | null
  readonly descripcion?: string | null
  readonly precio_unitario?: number | null
  readonly unidad?: Unidad
  readonly es_exento?: boolean
  readonly categoria?: string | null
}

/** PUT /productos/{id}: only the fields present change; null clears codigo, descripcion, precio_unitario, categoria. */
export type ProductoCambios = Partial<ProductoAlta>

export function toProductoRecord(row: ProductoRow): ProductoRecord {
  return {
    id: row.id,
    codigo: row.codigo,
    nombre: row.nombre,
    descripcion: row.descripcion,
    precio_unitario: row.precio_unitario,
    unidad: row.unidad,
    es_exento: row.es_exento,
    categoria: row.categoria,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

function assertCodigoFree(db: Db, empresaId: string, codigo: string | null | undefined, selfId?: string): void {
  if (codigo === null || codigo === undefined) return
  const existing = findProductoByCodigo(db, empresaId, codigo)
  if (existing && existing.id !== selfId)
    throw new TimbreError('PRODUCTO_CODIGO_EXISTS', { message: `Ya existe un producto con el código ${codigo}.`, context: { producto_id: existing.id, codigo } })
}

const foldCodigo = (codigo: string | null): string | null => (codigo === null ? null : foldText(codigo))

export function createProducto(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; alta: ProductoAlta }): ProductoRecord {
  const { empresaId, alta } = input
  const at = isoTimestamp(deps.clock.now())
  const codigo = alta.codigo ?? null
  const row = deps.store.db.transaction(
    (tx) => {
      assertCodigoFree(tx, empresaId, codigo)
      return insertProducto(tx, {
        id: Bun.randomUUIDv7(),
        empresa_id: empresaId,
        codigo,
        nombre: alta.nombre,
        descripcion: alta.descripcion ?? null,
        precio_unitario: alta.precio_unitario ?? null,
        unidad: alta.unidad ?? 'UN',
        es_exento: alta.es_exento ?? false,
        categoria: alta.categoria ?? null,
        busqueda: foldText(alta.nombre),
        busqueda_codigo: foldCodigo(codigo),
        created_at: at,
        updated_at: at,
      })
    },
    { behavior: 'immediate' },
  )
  return toProductoRecord(row)
}

/** Another company's producto, a deleted one and an unknown id are all 404 (DESIGN §4, §12). */
export function getProducto(deps: Pick<Deps, 'store'>, input: { empresaId: string; id: string }): ProductoRecord {
  const row = findProductoById(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return toProductoRecord(row)
}

export function listProductos(
  deps: Pick<Deps, 'store'>,
  input: { empresaId: string; categoria?: string; afterId: string | null; limit: number },
): ProductoRecord[] {
  return listRows(deps.store.db, input.empresaId, { categoria: input.categoria, afterId: input.afterId, limit: input.limit }).map(toProductoRecord)
}

export function updateProducto(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; id: string; cambios: ProductoCambios }): ProductoRecord {
  const { empresaId, id, cambios } = input
  const now = deps.clock.now()
  const row = deps.store.db.transaction(
    (tx) => {
      const current = findProductoById(tx, empresaId, id)
      if (!current) throw new TimbreError('NOT_FOUND')
      const patch: ProductoPatch = Object.fromEntries(Object.entries(cambios).filter(([, v]) => v !== undefined))
      if (Object.keys(patch).length === 0) return current
      assertCodigoFree(tx, empresaId, patch.codigo, id)
      if (patch.nombre !== undefined) patch.busqueda = foldText(patch.nombre)
      if (patch.codigo !== undefined) patch.busqueda_codigo = foldCodigo(patch.codigo)
      return updateRow(tx, empresaId, id, { ...patch, updated_at: isoTimestamp(now) })!
    },
    { behavior: 'immediate' },
  )
  return toProductoRecord(row)
}

export function deleteProducto(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; id: string }): void {
  if (!softDeleteProducto(deps.store.db, input.empresaId, input.id, isoTimestamp(deps.clock.now()))) throw new TimbreError('NOT_FOUND')
}

/** DESIGN §8: case- and accent-insensitive substring of the name or the code; newest first. */
export function searchProductos(deps: Pick<Deps, 'store'>, input: { empresaId: string; q: string; limit: number }): ProductoRecord[] {
  const terms = productoSearchTerms(input.q)
  if (terms.length === 0) throw validationError([{ field: 'q', code: 'REQUIRED', message: 'No puede estar vacío.' }])
  return searchRows(deps.store.db, input.empresaId, terms, input.limit).map(toProductoRecord)
}
