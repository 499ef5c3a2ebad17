// Clientes (spec 2.16). Live rows have `deleted_at` null; every query is scoped to the company, and only live rows are
// ever returned (DESIGN §12: a soft-deleted cliente is 404 everywhere and absent from lists and search).
import { and, desc, eq, isNull, lt, or, sql, type SQL } from 'drizzle-orm'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { contains, empresaKey, ftsMatchExpression, inEmpresaRange, isTrigramSearchable, seqOf } from './catalog-index'
import type { Db } from './open'
import { clientes, type ClienteRow } from './schema'

export type NewCliente = Omit<typeof clientes.$inferInsert, 'seq' | 'empresa_key'>
export type ClientePatch = Partial<Omit<NewCliente, 'id' | 'empresa_id' | 'rut' | 'created_at' | 'deleted_at'>>

/** The FTS5 index of drizzle/0003_catalogs.sql, declared for queries only: drizzle-kit reads schema.ts alone. */
const clientesFts = sqliteTable('clientes_fts', { rowid: integer('rowid').notNull(), nombre: text('nombre'), rut: text('rut') })

const live = (empresaId: string): SQL => and(eq(clientes.empresa_id, empresaId), isNull(clientes.deleted_at))!

export function insertCliente(db: Db, row: NewCliente): ClienteRow {
  return db.insert(clientes).values({ ...row, empresa_key: empresaKey(row.empresa_id) }).returning().get()
}

export function findClienteById(db: Db, empresaId: string, id: string): ClienteRow | undefined {
  return db.select().from(clientes).where(and(live(empresaId), eq(clientes.id, id))).get()
}

export function findClienteByRut(db: Db, empresaId: string, rut: string): ClienteRow | undefined {
  return db.select().from(clientes).where(and(live(empresaId), eq(clientes.rut, rut))).get()
}

/** Newest first (UUIDv7 order), `limit` rows after the cursor's id. */
export function listClientes(db: Db, empresaId: string, page: { afterId: string | null; limit: number }): ClienteRow[] {
  const conditions = [live(empresaId)]
  if (page.afterId !== null) conditions.push(lt(clientes.id, page.afterId))
  return db.select().from(clientes).where(and(...conditions)).orderBy(desc(clientes.id)).limit(page.limit).all()
}

export function updateCliente(db: Db, empresaId: string, id: string, patch: ClientePatch): ClienteRow | undefined {
  return db.update(clientes).set(patch).where(and(live(empresaId), eq(clientes.id, id))).returning().get()
}

/** Soft delete: false when there was no live cliente with that id in the company. */
export function softDeleteCliente(db: Db, empresaId: string, id: string, at: string): boolean {
  const row = db.update(clientes).set({ deleted_at: at, updated_at: at }).where(and(live(empresaId), eq(clientes.id, id))).returning({ id: clientes.id }).get()
  return row !== undefined
}

/**
 * Live clientes whose folded razón social or compact RUT contains any of `terms` (domain/catalogo.ts), newest first.
 * Terms of 3+ characters go through the trigram index, which walks its matches newest first and stops at `limit`;
 * shorter ones cannot be indexed by trigrams and walk the company's live rows newest first instead.
 */
export function searchClientes(db: Db, empresaId: string, terms: readonly string[], limit: number): ClienteRow[] {
  if (terms.length === 0) return []
  if (terms.every(isTrigramSearchable))
    return db
      .select({ cliente: clientes })
      .from(clientesFts)
      .innerJoin(clientes, eq(clientes.seq, seqOf(clientesFts.rowid)))
      .where(and(sql`${clientesFts} MATCH ${ftsMatchExpression(terms)}`, inEmpresaRange(clientesFts.rowid, empresaId), live(empresaId)))
      .orderBy(desc(clientesFts.rowid))
      .limit(limit)
      .all()
      .map((r) => r.cliente)
  // A RUT is digits and K: other terms need not look at it (the walk's cost is per row and per test).
  const rut = sql`replace(${clientes.rut}, '-', '')`
  const anyTerm = or(...terms.flatMap((t) => (/^[0-9k]+$/.test(t) ? [contains(clientes.busqueda, t), contains(rut, t.toUpperCase())] : [contains(clientes.busqueda, t)])))
  return db.select().from(clientes).where(and(live(empresaId), anyTerm)).orderBy(desc(clientes.seq)).limit(limit).all()
}
