// Envelopes as sent to the SII (one per DTE).
import { and, eq } from 'drizzle-orm'
import type { Db } from './open'
import { envios, type EnvioRow } from './schema'

export function insertEnvio(db: Db, row: typeof envios.$inferInsert): EnvioRow {
  return db.insert(envios).values(row).returning().get()
}

export function findEnvio(db: Db, empresaId: string, id: string): EnvioRow | undefined {
  return db.select().from(envios).where(and(eq(envios.empresa_id, empresaId), eq(envios.id, id))).get()
}

export function setEnvioTrackId(db: Db, id: string, trackId: string): void {
  db.update(envios).set({ track_id: trackId }).where(eq(envios.id, id)).run()
}
