// Signing certificates of each company; the newest upload is the active one.
import { and, desc, eq, sql } from 'drizzle-orm'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { certificados, type CertificadoRow } from './schema'

// Every issuance reads the active certificate: prepared once per connection (db/prepared.ts).
const statements = preparedStatements((db) => ({
  active: db
    .select()
    .from(certificados)
    .where(and(eq(certificados.empresa_id, sql.placeholder('empresaId')), eq(certificados.is_active, true)))
    .orderBy(desc(certificados.id))
    .limit(1)
    .prepare(),
}))

export type NewCertificado = typeof certificados.$inferInsert

/** The new certificate becomes the active one; the previous ones stay, inactive (DESIGN §8). Call inside a transaction. */
export function insertActiveCertificado(db: Db, row: NewCertificado): CertificadoRow {
  db.update(certificados).set({ is_active: false }).where(and(eq(certificados.empresa_id, row.empresa_id), eq(certificados.is_active, true))).run()
  return db.insert(certificados).values({ ...row, is_active: true }).returning().get()
}

export function findLatestCertificado(db: Db, empresaId: string): CertificadoRow | undefined {
  return db.select().from(certificados).where(eq(certificados.empresa_id, empresaId)).orderBy(desc(certificados.id)).limit(1).get()
}

export function findActiveCertificado(db: Db, empresaId: string): CertificadoRow | undefined {
  return statements(db).active.get({ empresaId })
}

export function deactivateCertificado(db: Db, id: string): void {
  db.update(certificados).set({ is_active: false }).where(eq(certificados.id, id)).run()
}

/** Every company's active certificate, for the daily expiry check. */
export function listActiveCertificados(db: Db): CertificadoRow[] {
  return db.select().from(certificados).where(eq(certificados.is_active, true)).all()
}
