// Productos (spec 2.17). Live rows have `deleted_at` null; every query is scoped to the company, and only live rows are
// ever returned (DESIGN §12). DTEs copy their lines, so nothing here ever touches an issued document.
import { and, desc, eq, isNull, lt, or, sql, type SQL } from 'drizzle-orm'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { contains, empresaKey, ftsMatchExpression, inEmpresaRange, isTrigramSearchable, seqOf } from './catalog-index'
import type { Db } from './open'
import { productos, type ProductoRow } from './schema'

export type NewProducto = Omit<typeof productos.$inferInsert, 'seq' | 'empresa_key'>
export type ProductoPatch = Partial<Omit<NewProducto, 'id' | 'empresa_id' | 'created_at' | 'deleted_at'>>

/** The FTS5 index of drizzle/0003_catalogs.sql, declared for queries only: drizzle-kit reads schema.ts alone. */
const productosFts = sqliteTable('productos_fts', { rowid: integer('rowid').notNull(), nombre: text('nombre'), codigo: text('codigo') })

const live = (empresaId: string): SQL => and(eq(productos.empresa_id, empresaId), isNull(productos.deleted_at))!

export function insertProducto(db: Db, row: NewProducto): ProductoRow {
  return db.insert(productos).values({ ...row, empresa_key: empresaKey(row.empresa_id) }).returning().get()
}

export function findProductoById(db: Db, empresaId: string, id: string): ProductoRow | undefined {
  return db.select().from(productos).where(and(live(empresaId), eq(productos.id, id))).get()
}

export function findProductoByCodigo(db: Db, empresaId: string, codigo: string): ProductoRow | undefined {
  return db.select().from(productos).where(and(live(empresaId), eq(productos.codigo, codigo))).get()
}

/** Newest first (UUIDv7 order), optionally one `categoria` (exact), `limit` rows after the cursor's id. */
export function listProductos(db: Db, empresaId: string, filter: { categoria?: string; afterId: string | null; limit: number }): ProductoRow[] {
  const conditions = [live(empresaId)]
  if (filter.categoria !== undefined) conditions.push(eq(productos.categoria, filter.categoria))
  if (filter.afterId !== null) conditions.push(lt(productos.id, filter.afterId))
  return db.select().from(productos).where(and(...conditions)).orderBy(desc(productos.id)).limit(filter.limit).all()
}

export function updateProducto(db: Db, empresaId: string, id: string, patch: ProductoPatch): ProductoRow | undefined {
  return db.update(productos).set(patch).where(and(live(empresaId), eq(productos.id, id))).returning().get()
}

/** Soft delete: false when there was no live producto with that id in the company. */
export function softDeleteProducto(db: Db, empresaId: string, id: string, at: string): boolean {
  const row = db
    .update(productos)
    .set({ deleted_at: at, updated_at: at })
    .where(and(live(empresaId), eq(productos.id, id)))
    .returning({ id: productos.id })
    .get()
  return row !== undefined
}

/** Live productos whose folded name or code contains any of `terms`, newest first (see searchClientes). */
export function searchProductos(db: Db, empresaId: string, terms: readonly string[], limit: number): ProductoRow[] {
  if (terms.length === 0) return []
  if (terms.every(isTrigramSearchable))
    return db
      .select({ producto: productos })
      .from(productosFts)
      .innerJoin(productos, eq(productos.seq, seqOf(productosFts.rowid)))
      .where(and(sql`${productosFts} MATCH ${ftsMatchExpression(terms)}`, inEmpresaRange(productosFts.rowid, empresaId), live(empresaId)))
      .orderBy(desc(productosFts.rowid))
      .limit(limit)
      .all()
      .map((r) => r.producto)
  const anyTerm = or(...terms.flatMap((t) => [contains(productos.busqueda, t), contains(productos.busqueda_codigo, t)]))
  return db.select().from(productos).where(and(live(empresaId), anyTerm)).orderBy(desc(productos.seq)).limit(limit).all()
}
