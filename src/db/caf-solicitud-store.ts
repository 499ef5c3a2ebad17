// CAF requests and annulments at the SII (DESIGN §17) and each company's automatic-folio settings. Queries only:
// services/caf-solicitudes.ts decides. A request is worked under a lease (`lease_until`, `lease_owner`): every write
// of its outcome checks the lease is still this worker's, so a run that outlived its lease writes nothing.
import { and, desc, eq, inArray, isNull, lt, lte, ne, or, sql, type SQL } from 'drizzle-orm'
import type { Db } from './open'
import { cafSolicitudes, foliosAutomaticos, type CafSolicitudRow, type FoliosAutomaticosRow } from './schema'

export type NewCafSolicitud = typeof cafSolicitudes.$inferInsert
export type EstadoSolicitud = CafSolicitudRow['estado']

export function insertCafSolicitud(db: Db, row: NewCafSolicitud): CafSolicitudRow {
  return db.insert(cafSolicitudes).values(row).returning().get()
}

export function findCafSolicitud(db: Db, empresaId: string, id: string): CafSolicitudRow | undefined {
  return db.select().from(cafSolicitudes).where(and(eq(cafSolicitudes.empresa_id, empresaId), eq(cafSolicitudes.id, id))).get()
}

/** The open request of a type (`en_curso` or `otorgado`): at most one, by the partial unique index. */
export function findOpenCafSolicitud(db: Db, empresaId: string, tipoDte: number): CafSolicitudRow | undefined {
  return db
    .select()
    .from(cafSolicitudes)
    .where(and(eq(cafSolicitudes.empresa_id, empresaId), eq(cafSolicitudes.tipo_dte, tipoDte), eq(cafSolicitudes.operacion, 'solicitud'), inArray(cafSolicitudes.estado, ['en_curso', 'otorgado'])))
    .get()
}

/** The open annulment of a CAF, if any. */
export function findOpenAnulacion(db: Db, empresaId: string, cafId: string): CafSolicitudRow | undefined {
  return db
    .select()
    .from(cafSolicitudes)
    .where(and(eq(cafSolicitudes.empresa_id, empresaId), eq(cafSolicitudes.caf_id, cafId), eq(cafSolicitudes.operacion, 'anulacion'), eq(cafSolicitudes.estado, 'en_curso')))
    .get()
}

export function listCafSolicitudes(
  db: Db,
  empresaId: string,
  filter: { readonly estado?: EstadoSolicitud; readonly tipoDte?: number; readonly afterId: string | null; readonly limit: number },
): CafSolicitudRow[] {
  const conditions: SQL[] = [eq(cafSolicitudes.empresa_id, empresaId)]
  if (filter.estado !== undefined) conditions.push(eq(cafSolicitudes.estado, filter.estado))
  if (filter.tipoDte !== undefined) conditions.push(eq(cafSolicitudes.tipo_dte, filter.tipoDte))
  if (filter.afterId !== null) conditions.push(lt(cafSolicitudes.id, filter.afterId))
  return db.select().from(cafSolicitudes).where(and(...conditions)).orderBy(desc(cafSolicitudes.id)).limit(filter.limit).all()
}

/** Free for this worker: no lease, a lease run out, or one held by another process (dead: one server per data dir). */
function free(nowIso: string, owner: string): SQL {
  return or(isNull(cafSolicitudes.lease_until), lte(cafSolicitudes.lease_until, nowIso), ne(cafSolicitudes.lease_owner, owner))!
}

/** Requests and annulments due now, oldest first. */
export function dueCafSolicitudes(db: Db, nowIso: string, owner: string, limit: number): CafSolicitudRow[] {
  return db
    .select()
    .from(cafSolicitudes)
    .where(and(
      inArray(cafSolicitudes.estado, ['en_curso', 'otorgado']),
      or(isNull(cafSolicitudes.proximo_intento_at), lte(cafSolicitudes.proximo_intento_at, nowIso)),
      free(nowIso, owner),
    ))
    .orderBy(cafSolicitudes.id)
    .limit(limit)
    .all()
}

export interface SolicitudLease {
  readonly owner: string
  readonly until: string
}

/** Takes the request until `lease.until`; false when another worker holds it or it is no longer open. */
export function claimCafSolicitud(db: Db, id: string, nowIso: string, lease: SolicitudLease): CafSolicitudRow | undefined {
  return db
    .update(cafSolicitudes)
    .set({ lease_until: lease.until, lease_owner: lease.owner, updated_at: nowIso })
    .where(and(eq(cafSolicitudes.id, id), inArray(cafSolicitudes.estado, ['en_curso', 'otorgado']), free(nowIso, lease.owner)))
    .returning()
    .get()
}

/** Writes an outcome if the lease is still this worker's; false (nothing written) otherwise. */
export function updateLeasedCafSolicitud(db: Db, id: string, lease: SolicitudLease, patch: Partial<NewCafSolicitud>): boolean {
  const done = db
    .update(cafSolicitudes)
    .set(patch)
    .where(and(eq(cafSolicitudes.id, id), eq(cafSolicitudes.lease_owner, lease.owner), eq(cafSolicitudes.lease_until, lease.until)))
    .returning({ id: cafSolicitudes.id })
    .all()
  return done.length === 1
}

// ------------------------------------------------------------------------------------------------ automatic mode

export function findFoliosAutomaticos(db: Db, empresaId: string): FoliosAutomaticosRow | undefined {
  return db.select().from(foliosAutomaticos).where(eq(foliosAutomaticos.empresa_id, empresaId)).get()
}

export function upsertFoliosAutomaticos(db: Db, row: FoliosAutomaticosRow): FoliosAutomaticosRow {
  return db
    .insert(foliosAutomaticos)
    .values(row)
    .onConflictDoUpdate({
      target: foliosAutomaticos.empresa_id,
      set: { activo: row.activo, tipos: row.tipos, cantidad: row.cantidad, umbral: row.umbral, dias_antes_de_vencer: row.dias_antes_de_vencer, updated_at: row.updated_at },
    })
    .returning()
    .get()
}

/** Companies with automatic mode on. */
export function listActiveFoliosAutomaticos(db: Db): FoliosAutomaticosRow[] {
  return db.select().from(foliosAutomaticos).where(eq(foliosAutomaticos.activo, true)).all()
}
