// Webhooks, the events outbox and deliveries (DESIGN §7). Event rows and their deliveries are written in the caller's
// transaction, the one that makes the change the event reports.
import { and, desc, eq, isNull, lt, lte, sql } from 'drizzle-orm'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { cafStockAlerts, certificadoAlerts, events, webhookDeliveries, webhooks, type DeliveryRow, type WebhookRow } from './schema'

// Every issuance writes its event, looks up the company's webhooks and checks its CAF alert: prepared once per
// connection (db/prepared.ts).
const statements = preparedStatements((db) => ({
  liveWebhooks: db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.empresa_id, sql.placeholder('empresaId')), isNull(webhooks.deleted_at)))
    .orderBy(desc(webhooks.id))
    .prepare(),
  insertEvent: db
    .insert(events)
    .values({
      id: sql.placeholder('id'),
      empresa_id: sql.placeholder('empresa_id'),
      type: sql.placeholder('type'),
      body: sql.placeholder('body'),
      created_at: sql.placeholder('created_at'),
    })
    .prepare(),
  insertDelivery: db
    .insert(webhookDeliveries)
    .values({
      id: sql.placeholder('id'),
      empresa_id: sql.placeholder('empresa_id'),
      webhook_id: sql.placeholder('webhook_id'),
      event_id: sql.placeholder('event_id'),
      event_type: sql.placeholder('event_type'),
      status: 'pending',
      next_attempt_at: sql.placeholder('at'),
      created_at: sql.placeholder('at'),
      updated_at: sql.placeholder('at'),
    })
    .prepare(),
  cafAlert: db
    .select({ is_armed: cafStockAlerts.is_armed })
    .from(cafStockAlerts)
    .where(and(eq(cafStockAlerts.empresa_id, sql.placeholder('empresaId')), eq(cafStockAlerts.tipo_dte, sql.placeholder('tipoDte'))))
    .prepare(),
}))

export function insertWebhook(db: Db, row: typeof webhooks.$inferInsert): WebhookRow {
  return db.insert(webhooks).values(row).returning().get()
}

export function countLiveWebhooks(db: Db, empresaId: string): number {
  return db
    .select({ n: sql<number>`count(*)` })
    .from(webhooks)
    .where(and(eq(webhooks.empresa_id, empresaId), isNull(webhooks.deleted_at)))
    .get()!.n
}

export function listWebhooks(db: Db, empresaId: string): WebhookRow[] {
  return statements(db).liveWebhooks.all({ empresaId })
}

export function findWebhook(db: Db, empresaId: string, id: string): WebhookRow | undefined {
  return db.select().from(webhooks).where(and(eq(webhooks.empresa_id, empresaId), eq(webhooks.id, id), isNull(webhooks.deleted_at))).get()
}

/** Soft-deletes the webhook and cancels what it had pending, in one statement pair of the caller's transaction. */
export function deleteWebhook(db: Db, empresaId: string, id: string, at: string): boolean {
  const gone = db.update(webhooks).set({ deleted_at: at }).where(and(eq(webhooks.empresa_id, empresaId), eq(webhooks.id, id), isNull(webhooks.deleted_at))).returning().get()
  if (!gone) return false
  db.update(webhookDeliveries).set({ status: 'cancelled', next_attempt_at: null, updated_at: at }).where(and(eq(webhookDeliveries.webhook_id, id), eq(webhookDeliveries.status, 'pending'))).run()
  return true
}

/** Writes the event and one pending delivery per subscribed, live webhook (or only `onlyWebhookId`, for pings). */
export function insertEventWithDeliveries(
  db: Db,
  event: { id: string; empresa_id: string; type: string; body: string; created_at: string },
  onlyWebhookId?: string,
): number {
  const { insertEvent, insertDelivery } = statements(db)
  insertEvent.run(event)
  const targets = onlyWebhookId
    ? listWebhooks(db, event.empresa_id).filter((w) => w.id === onlyWebhookId)
    : listWebhooks(db, event.empresa_id).filter((w) => w.events.includes(event.type))
  for (const w of targets)
    insertDelivery.run({ id: Bun.randomUUIDv7(), empresa_id: event.empresa_id, webhook_id: w.id, event_id: event.id, event_type: event.type, at: event.created_at })
  return targets.length
}

export interface DueDelivery {
  readonly delivery: DeliveryRow
  readonly url: string
  readonly secretSealed: Uint8Array
  readonly body: string
}

// The delivery pass's reads: the companies with a live webhook, then each one's oldest due deliveries through the index
// deliveries_due_empresa, so a read costs a seek per company however many deliveries are due (a receiver down for a
// day under steady issuance leaves 100 000s). Prepared once per connection: the pass runs every period.
function dueOfEmpresaQuery(db: Db) {
  return db
    .select({ delivery: webhookDeliveries, url: webhooks.url, secretSealed: webhooks.secret_sealed, body: events.body })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhook_id))
    .innerJoin(events, eq(events.id, webhookDeliveries.event_id))
    .where(
      and(
        eq(webhookDeliveries.empresa_id, sql.placeholder('empresaId')),
        eq(webhookDeliveries.status, 'pending'),
        lte(webhookDeliveries.next_attempt_at, sql.placeholder('now')),
        isNull(webhooks.deleted_at),
      ),
    )
    .orderBy(webhookDeliveries.next_attempt_at, webhookDeliveries.id)
    .limit(sql.placeholder('limit'))
}

/** The SQL of one company's due window, for the test that reads its query plan. */
export function dueOfEmpresaSql(db: Db): string {
  return dueOfEmpresaQuery(db).toSQL().sql
}

const dueStatements = preparedStatements((db) => ({
  empresasWithWebhooks: db.selectDistinct({ empresa_id: webhooks.empresa_id }).from(webhooks).where(isNull(webhooks.deleted_at)).prepare(),
  dueOfEmpresa: dueOfEmpresaQuery(db).prepare(),
}))

/** One company's oldest due deliveries of live webhooks, at most `limit`: its next window, a seek (deliveries_due_empresa). */
export function findDueDeliveriesOf(db: Db, empresaId: string, nowIso: string, limit: number): DueDelivery[] {
  return dueStatements(db).dueOfEmpresa.all({ empresaId, now: nowIso, limit }) as DueDelivery[]
}

/**
 * Due deliveries of live webhooks, at most `perEmpresa` of each company (its oldest first), companies in the order of
 * their oldest due delivery, and `limit` in all: a company with thousands due cannot fill a pass and leave another's
 * out of it (DESIGN §7, served in turn).
 */
export function findDueDeliveries(db: Db, nowIso: string, perEmpresa: number, limit: number): DueDelivery[] {
  const q = dueStatements(db)
  const lanes = q.empresasWithWebhooks
    .all()
    .map(({ empresa_id }) => findDueDeliveriesOf(db, empresa_id, nowIso, perEmpresa))
    .filter((lane) => lane.length > 0)
  // By each lane's oldest (next_attempt_at, id), as one query over every company would order them.
  const key = (lane: DueDelivery[]) => [lane[0]!.delivery.next_attempt_at ?? '', lane[0]!.delivery.id] as const
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)
  lanes.sort((a, b) => cmp(key(a)[0], key(b)[0]) || cmp(key(a)[1], key(b)[1]))
  return lanes.flat().slice(0, limit)
}

/** Pushes next_attempt_at to a lease so another pass does not send it too; undefined if it is no longer due. */
export function claimDelivery(db: Db, id: string, nowIso: string, leaseUntilIso: string): DeliveryRow | undefined {
  return db
    .update(webhookDeliveries)
    .set({ next_attempt_at: leaseUntilIso })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.next_attempt_at, nowIso)))
    .returning()
    .get()
}

/** Records an attempt unless the delivery was cancelled meanwhile (a DELETE wins over an attempt in flight). */
export function recordAttempt(db: Db, id: string, patch: Partial<typeof webhookDeliveries.$inferInsert>): void {
  db.update(webhookDeliveries).set(patch).where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending'))).run()
}

export function listDeliveries(db: Db, webhookId: string, afterId: string | null, limit: number, onlyFailed = false): DeliveryRow[] {
  const c = [eq(webhookDeliveries.webhook_id, webhookId)]
  if (afterId) c.push(lt(webhookDeliveries.id, afterId))
  if (onlyFailed) c.push(eq(webhookDeliveries.status, 'failed'))
  return db.select().from(webhookDeliveries).where(and(...c)).orderBy(desc(webhookDeliveries.id)).limit(limit).all()
}

export function listDeliveriesOfEmpresa(db: Db, empresaId: string, onlyFailed: boolean, limit: number): DeliveryRow[] {
  const c = [eq(webhookDeliveries.empresa_id, empresaId)]
  if (onlyFailed) c.push(eq(webhookDeliveries.status, 'failed'))
  return db.select().from(webhookDeliveries).where(and(...c)).orderBy(desc(webhookDeliveries.id)).limit(limit).all()
}

export function findDelivery(db: Db, webhookId: string, id: string): DeliveryRow | undefined {
  return db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.webhook_id, webhookId), eq(webhookDeliveries.id, id))).get()
}

/** Queues a delivery again now, whatever its outcome was (redeliver). */
export function requeueDelivery(db: Db, id: string, at: string): DeliveryRow | undefined {
  return db.update(webhookDeliveries).set({ status: 'pending', next_attempt_at: at, updated_at: at }).where(eq(webhookDeliveries.id, id)).returning().get()
}

/** Queues again every delivery of an event (CLI `webhook redeliver --event`). */
/**
 * Every delivery of the event to a webhook that still exists goes back to pending. Deliveries of deleted webhooks are
 * left as they are: the delivery job never takes them (findDueDeliveries), so requeued they would stay pending forever.
 */
export function requeueEvent(db: Db, eventId: string, at: string): { requeued: number; ofDeletedWebhooks: number } {
  const live = sql`${webhookDeliveries.webhook_id} IN (SELECT ${webhooks.id} FROM ${webhooks} WHERE ${webhooks.deleted_at} IS NULL)`
  const requeued = db
    .update(webhookDeliveries)
    .set({ status: 'pending', next_attempt_at: at, updated_at: at })
    .where(and(eq(webhookDeliveries.event_id, eventId), sql`${webhookDeliveries.status} <> 'cancelled'`, live))
    .returning({ id: webhookDeliveries.id })
    .all().length
  const ofDeletedWebhooks = db
    .select({ n: sql<number>`count(*)` })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.event_id, eventId), sql`NOT (${live})`))
    .get()!.n
  return { requeued, ofDeletedWebhooks }
}

export function isCafAlertArmed(db: Db, empresaId: string, tipoDte: number): boolean {
  return statements(db).cafAlert.get({ empresaId, tipoDte })?.is_armed ?? true
}

export function setCafAlertArmed(db: Db, empresaId: string, tipoDte: number, isArmed: boolean): void {
  db.insert(cafStockAlerts).values({ empresa_id: empresaId, tipo_dte: tipoDte, is_armed: isArmed }).onConflictDoUpdate({ target: [cafStockAlerts.empresa_id, cafStockAlerts.tipo_dte], set: { is_armed: isArmed } }).run()
}

export function announcedExpiryDays(db: Db, certificadoId: string): number[] {
  return db.select({ dias: certificadoAlerts.dias }).from(certificadoAlerts).where(eq(certificadoAlerts.certificado_id, certificadoId)).all().map((r) => r.dias)
}

export function markExpiryAnnounced(db: Db, certificadoId: string, dias: readonly number[], at: string): void {
  for (const d of dias) db.insert(certificadoAlerts).values({ certificado_id: certificadoId, dias: d, created_at: at }).onConflictDoNothing().run()
}

/** Pending deliveries of deleted webhooks, which no job takes (left by an older `redeliver --event`), become cancelled. */
export function cancelDeliveriesOfDeletedWebhooks(db: Db, at: string): number {
  return db
    .update(webhookDeliveries)
    .set({ status: 'cancelled', next_attempt_at: null, updated_at: at })
    .where(and(eq(webhookDeliveries.status, 'pending'), sql`${webhookDeliveries.webhook_id} IN (SELECT ${webhooks.id} FROM ${webhooks} WHERE ${webhooks.deleted_at} IS NOT NULL)`))
    .returning({ id: webhookDeliveries.id })
    .all().length
}
