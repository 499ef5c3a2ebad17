// Empresas: the tenants. Every other table hangs from empresas.id.
import { asc, eq, sql } from 'drizzle-orm'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { empresas, type EmpresaRow } from './schema'

// Issuance and bearer tokens read the company on every request: prepared once per connection (db/prepared.ts).
const statements = preparedStatements((db) => ({
  byId: db.select().from(empresas).where(eq(empresas.id, sql.placeholder('id'))).prepare(),
}))

export type NewEmpresa = typeof empresas.$inferInsert
export type EmpresaPatch = Partial<Omit<NewEmpresa, 'id' | 'created_at'>>

export function insertEmpresa(db: Db, row: NewEmpresa): EmpresaRow {
  return db.insert(empresas).values(row).returning().get()
}

export function findEmpresaById(db: Db, id: string): EmpresaRow | undefined {
  return statements(db).byId.get({ id })
}

export function findEmpresaByRut(db: Db, rut: string): EmpresaRow | undefined {
  return db.select().from(empresas).where(eq(empresas.rut, rut)).get()
}

export function listEmpresas(db: Db): EmpresaRow[] {
  return db.select().from(empresas).orderBy(asc(empresas.id)).all()
}

export function updateEmpresa(db: Db, id: string, patch: EmpresaPatch): EmpresaRow | undefined {
  return db.update(empresas).set(patch).where(eq(empresas.id, id)).returning().get()
}

export function countEmpresas(db: Db): number {
  return db.select({ id: empresas.id }).from(empresas).all().length
}
