// The certification flow's rows (DESIGN §15, issue 28): the loaded sets and their cases, what was sent to the SII, and
// what the person recorded of each stage. Queries only; services/certificacion*.ts decide.
import { and, asc, eq, inArray, isNotNull, isNull, lte, sql } from 'drizzle-orm'
import type { Db } from './open'
import {
  certificacionCasos, certificacionEnvios, certificacionEtapas, certificacionSets, dtes,
  type CertificacionCasoRow, type CertificacionEnvioRow, type CertificacionEtapaRow, type CertificacionSetRow, type DteRow,
} from './schema'

export function findCertificacionSets(db: Db, empresaId: string): CertificacionSetRow[] {
  return db.select().from(certificacionSets).where(eq(certificacionSets.empresa_id, empresaId)).orderBy(asc(certificacionSets.created_at), asc(certificacionSets.id)).all()
}

export function findCasos(db: Db, empresaId: string): CertificacionCasoRow[] {
  return db.select().from(certificacionCasos).where(eq(certificacionCasos.empresa_id, empresaId)).orderBy(asc(certificacionCasos.set_id), asc(certificacionCasos.posicion)).all()
}

/** Removes the stored sets of these names with their cases (their issued DTEs stay: documents are never deleted). */
export function deleteSetsByNombre(db: Db, empresaId: string, nombres: readonly string[]): void {
  if (nombres.length === 0) return
  const ids = db.select({ id: certificacionSets.id }).from(certificacionSets)
    .where(and(eq(certificacionSets.empresa_id, empresaId), inArray(certificacionSets.nombre, [...nombres]))).all().map((r) => r.id)
  if (ids.length === 0) return
  db.delete(certificacionCasos).where(inArray(certificacionCasos.set_id, ids)).run()
  db.delete(certificacionSets).where(inArray(certificacionSets.id, ids)).run()
}

export function insertSet(db: Db, row: typeof certificacionSets.$inferInsert, casos: ReadonlyArray<typeof certificacionCasos.$inferInsert>): void {
  db.insert(certificacionSets).values(row).run()
  if (casos.length > 0) db.insert(certificacionCasos).values([...casos]).run()
}

export function updateCaso(db: Db, setId: string, caso: string, patch: Partial<Pick<CertificacionCasoRow, 'dte_id' | 'intento' | 'updated_at'>>): void {
  db.update(certificacionCasos).set(patch).where(and(eq(certificacionCasos.set_id, setId), eq(certificacionCasos.caso, caso))).run()
}

/** The DTEs of these ids of the company, by id. */
export function findDtesById(db: Db, empresaId: string, ids: readonly string[]): Map<string, DteRow> {
  if (ids.length === 0) return new Map()
  const rows = db.select().from(dtes).where(and(eq(dtes.empresa_id, empresaId), inArray(dtes.id, [...ids]))).all()
  return new Map(rows.map((r) => [r.id, r]))
}

/**
 * The DTE issued under this certification key, if any: the key is in its metadata, so an issuance whose case was not
 * yet linked when the process stopped is found again, even after its idempotency record (24 h) is gone.
 */
export function findDteByCertificacionClave(db: Db, empresaId: string, clave: string): DteRow | undefined {
  return db.select().from(dtes)
    .where(and(eq(dtes.empresa_id, empresaId), sql`json_extract(${dtes.metadata}, '$.certificacion.clave') = ${clave}`))
    .get()
}

export function insertCertificacionEnvio(db: Db, row: typeof certificacionEnvios.$inferInsert): CertificacionEnvioRow {
  return db.insert(certificacionEnvios).values(row).returning().get()
}

export function updateCertificacionEnvio(db: Db, id: string, patch: Partial<typeof certificacionEnvios.$inferInsert>): void {
  db.update(certificacionEnvios).set(patch).where(eq(certificacionEnvios.id, id)).run()
}

export function findCertificacionEnvios(db: Db, empresaId: string): CertificacionEnvioRow[] {
  return db.select().from(certificacionEnvios).where(eq(certificacionEnvios.empresa_id, empresaId)).orderBy(asc(certificacionEnvios.created_at), asc(certificacionEnvios.id)).all()
}

export function findCertificacionEnvio(db: Db, empresaId: string, id: string): CertificacionEnvioRow | undefined {
  return db.select().from(certificacionEnvios).where(and(eq(certificacionEnvios.empresa_id, empresaId), eq(certificacionEnvios.id, id))).get()
}

/** Envíos of these kinds in these states whose next attempt is due: what the SII jobs take (sii-submit, sii-track). */
export function findDueCertificacionEnvios(
  db: Db,
  filter: { nowIso: string; estados: readonly string[]; clases: readonly CertificacionEnvioRow['clase'][]; empresaId?: string },
  limit: number,
): CertificacionEnvioRow[] {
  const conditions = [
    inArray(certificacionEnvios.estado, [...filter.estados]),
    inArray(certificacionEnvios.clase, [...filter.clases]),
    isNotNull(certificacionEnvios.next_attempt_at),
    lte(certificacionEnvios.next_attempt_at, filter.nowIso),
  ]
  if (filter.empresaId !== undefined) conditions.push(eq(certificacionEnvios.empresa_id, filter.empresaId))
  return db.select().from(certificacionEnvios).where(and(...conditions)).orderBy(asc(certificacionEnvios.next_attempt_at)).limit(limit).all()
}

/**
 * Takes an envío for one upload: `subiendo` until `leaseIso`, so neither the job nor another request uploads it
 * meanwhile (the SII would give a second track id); a holder that dies leaves it to be taken again when the lease ends.
 * Undefined when it is not due or someone else holds it.
 */
export function claimCertificacionEnvio(db: Db, id: string, nowIso: string, leaseIso: string): CertificacionEnvioRow | undefined {
  return db.update(certificacionEnvios)
    .set({ estado: 'subiendo', next_attempt_at: leaseIso, updated_at: nowIso })
    .where(and(eq(certificacionEnvios.id, id), inArray(certificacionEnvios.estado, ['por_enviar', 'subiendo']), isNotNull(certificacionEnvios.next_attempt_at), lte(certificacionEnvios.next_attempt_at, nowIso)))
    .returning().get()
}

export function findEtapas(db: Db, empresaId: string): CertificacionEtapaRow[] {
  return db.select().from(certificacionEtapas).where(eq(certificacionEtapas.empresa_id, empresaId)).all()
}

export function upsertEtapa(db: Db, row: CertificacionEtapaRow): void {
  db.insert(certificacionEtapas).values(row)
    .onConflictDoUpdate({ target: [certificacionEtapas.empresa_id, certificacionEtapas.etapa], set: { estado: row.estado, nota: row.nota, updated_at: row.updated_at } })
    .run()
}

/** The company's documents of a simulation that no envelope carries: one that stopped half way, to be finished. */
export function findSimulacionSinEnvio(db: Db, empresaId: string): DteRow | undefined {
  return db.select().from(dtes)
    .where(and(eq(dtes.empresa_id, empresaId), isNull(dtes.envio_id), eq(dtes.estado, 'firmado'), sql`json_extract(${dtes.metadata}, '$.certificacion.simulacion') IS NOT NULL`))
    .orderBy(asc(dtes.id)).limit(1).get()
}
