// Received envelopes and documents (DESIGN §13). Lists are newest first by UUIDv7, each filter backed by an
// (empresa_id, column, id) index of schema.ts; the XML blobs are left out of every list.
import { and, asc, count, desc, eq, getTableColumns, gte, inArray, isNotNull, lt, lte, ne, type SQL } from 'drizzle-orm'
import type { EstadoRecibido } from '../domain/intercambio'
import type { Db } from './open'
import { mailOutbox, recibidos, recibidosEnvios, type MailOutboxRow, type RecibidoEnvioRow, type RecibidoRow } from './schema'

export type NewRecibidoEnvio = typeof recibidosEnvios.$inferInsert
export type NewRecibido = typeof recibidos.$inferInsert

export interface RecibidoFilter {
  readonly rutEmisor?: string
  readonly tipoDte?: number
  readonly estado?: EstadoRecibido
  readonly fechaDesde?: string
  readonly fechaHasta?: string
}

export function insertRecibidoEnvio(db: Db, row: NewRecibidoEnvio): RecibidoEnvioRow {
  return db.insert(recibidosEnvios).values(row).returning().get()
}

export function insertRecibido(db: Db, row: NewRecibido): RecibidoRow {
  return db.insert(recibidos).values(row).returning().get()
}

/** The company's envelope with these bytes (the unique (empresa_id, sha256) index): an envelope is processed once. */
export function findRecibidoEnvioBySha(db: Db, empresaId: string, sha256: string): RecibidoEnvioRow | undefined {
  return db.select().from(recibidosEnvios).where(and(eq(recibidosEnvios.empresa_id, empresaId), eq(recibidosEnvios.sha256, sha256))).get()
}

export function findRecibidoEnvio(db: Db, empresaId: string, id: string): RecibidoEnvioRow | undefined {
  return db.select().from(recibidosEnvios).where(and(eq(recibidosEnvios.empresa_id, empresaId), eq(recibidosEnvios.id, id))).get()
}

/** How many envelopes the company has received: the next CodEnvio of its receipts is this + 1. */
export function countRecibidoEnvios(db: Db, empresaId: string): number {
  return db.select({ n: count() }).from(recibidosEnvios).where(eq(recibidosEnvios.empresa_id, empresaId)).get()?.n ?? 0
}

/** The documents of one envelope, in the envelope's order (their ids are UUIDv7, inserted in that order). */
export function listRecibidosOfEnvio(db: Db, empresaId: string, envioId: string): RecibidoRow[] {
  return db.select().from(recibidos).where(and(eq(recibidos.empresa_id, empresaId), eq(recibidos.envio_id, envioId))).orderBy(asc(recibidos.id)).all()
}

export function findRecibido(db: Db, empresaId: string, id: string): RecibidoRow | undefined {
  return db.select().from(recibidos).where(and(eq(recibidos.empresa_id, empresaId), eq(recibidos.id, id))).get()
}

/**
 * Whether the company already holds this document (same issuer, type and folio) as a good reception. A document kept
 * as `rechazado_tecnico` does not count: the issuer may send it again, fixed, and that one is not a duplicate.
 */
export function hasRecibido(db: Db, empresaId: string, rutEmisor: string, tipoDte: number, folio: number): boolean {
  return (
    db
      .select({ id: recibidos.id })
      .from(recibidos)
      .where(
        and(
          eq(recibidos.empresa_id, empresaId),
          eq(recibidos.rut_emisor, rutEmisor),
          eq(recibidos.tipo_dte, tipoDte),
          eq(recibidos.folio, folio),
          ne(recibidos.estado, 'rechazado_tecnico'),
        ),
      )
      .get() !== undefined
  )
}

function conditions(empresaId: string, f: RecibidoFilter): SQL[] {
  const c: SQL[] = [eq(recibidos.empresa_id, empresaId)]
  if (f.rutEmisor !== undefined) c.push(eq(recibidos.rut_emisor, f.rutEmisor))
  if (f.tipoDte !== undefined) c.push(eq(recibidos.tipo_dte, f.tipoDte))
  if (f.estado !== undefined) c.push(eq(recibidos.estado, f.estado))
  if (f.fechaDesde !== undefined) c.push(gte(recibidos.fecha_emision, f.fechaDesde))
  if (f.fechaHasta !== undefined) c.push(lte(recibidos.fecha_emision, f.fechaHasta))
  return c
}

const { xml: _xml, ...LIST_COLUMNS } = getTableColumns(recibidos)
export type RecibidoListRow = Omit<RecibidoRow, 'xml'>

export function listRecibidos(db: Db, empresaId: string, filter: RecibidoFilter, afterId: string | null, limit: number): RecibidoListRow[] {
  const c = conditions(empresaId, filter)
  if (afterId !== null) c.push(lt(recibidos.id, afterId))
  return db.select(LIST_COLUMNS).from(recibidos).where(and(...c)).orderBy(desc(recibidos.id)).limit(limit).all()
}

export function countRecibidos(db: Db, empresaId: string, filter: RecibidoFilter): number {
  return db.select({ n: count() }).from(recibidos).where(and(...conditions(empresaId, filter))).get()?.n ?? 0
}

const { xml: _envioXml, ...ENVIO_COLUMNS } = getTableColumns(recibidosEnvios)

/** The envelopes of a page of documents, by id: one query for the `envio` of every record. */
export function findRecibidoEnviosByIds(db: Db, empresaId: string, ids: readonly string[]): Map<string, Omit<RecibidoEnvioRow, 'xml'>> {
  if (ids.length === 0) return new Map()
  const rows = db.select(ENVIO_COLUMNS).from(recibidosEnvios).where(and(eq(recibidosEnvios.empresa_id, empresaId), inArray(recibidosEnvios.id, [...new Set(ids)]))).all()
  return new Map(rows.map((r) => [r.id, r]))
}

/** Documents the follow-up must look at now (SII reception date, queued actions, the plazo), oldest due first. */
export function findDueRecibidos(db: Db, nowIso: string, limit: number): RecibidoRow[] {
  return db
    .select()
    .from(recibidos)
    .where(and(isNotNull(recibidos.next_sii_at), lte(recibidos.next_sii_at, nowIso)))
    .orderBy(asc(recibidos.next_sii_at))
    .limit(limit)
    .all()
}

/**
 * How many answers of these kinds the company has queued: the next IdRespuesta is this + 1, one sequence for every
 * RespuestaDTE the company signs (acuses and results alike), so no two of its answers share one.
 */
export function countMailsOfKinds(db: Db, empresaId: string, kinds: ReadonlyArray<MailOutboxRow['kind']>): number {
  return db.select({ n: count() }).from(mailOutbox).where(and(eq(mailOutbox.empresa_id, empresaId), inArray(mailOutbox.kind, [...kinds]))).get()?.n ?? 0
}

/** The envelope's place among the company's, 1 for the first: its CodEnvio, the number the acuse gave it. */
export function recibidoEnvioNumber(db: Db, empresaId: string, envioId: string): number {
  return db.select({ n: count() }).from(recibidosEnvios).where(and(eq(recibidosEnvios.empresa_id, empresaId), lte(recibidosEnvios.id, envioId))).get()?.n ?? 0
}

export type RecibidoPatch = Partial<Omit<NewRecibido, 'id' | 'empresa_id'>>

export function updateRecibido(db: Db, empresaId: string, id: string, patch: RecibidoPatch): RecibidoRow | undefined {
  return db.update(recibidos).set(patch).where(and(eq(recibidos.empresa_id, empresaId), eq(recibidos.id, id))).returning().get()
}

/**
 * Claims a due document for one follow-up pass: its next_sii_at is pushed to a lease, so no other pass (this process or
 * another) takes it meanwhile; if the pass dies, the lease runs out and the document is due again.
 */
export function claimDueRecibido(db: Db, empresaId: string, id: string, nowIso: string, leaseUntilIso: string): RecibidoRow | undefined {
  return db
    .update(recibidos)
    .set({ next_sii_at: leaseUntilIso })
    .where(and(eq(recibidos.empresa_id, empresaId), eq(recibidos.id, id), isNotNull(recibidos.next_sii_at), lte(recibidos.next_sii_at, nowIso)))
    .returning()
    .get()
}
