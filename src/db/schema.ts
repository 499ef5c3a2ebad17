// The whole store in one place (drizzle-kit generates the migrations from this file: `npm run db:generate`).
// Column names are the spec's JSON names (STYLE §3). Times are RFC 3339 UTC text with milliseconds (DESIGN §12),
// so they sort as text; ids are UUIDv7, so they sort by creation.
import { sql } from 'drizzle-orm'
import { UNIDADES } from '../domain/catalogo'
import { ROLES } from '../domain/console-roles'
import { ESTADOS_DTE } from '../domain/estados'
import { ESTADOS_INTERCAMBIO, ESTADOS_RECIBIDO, type CheckResult } from '../domain/intercambio'
import type { MotivoSii } from '../domain/sii-respuestas'
import { blob, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const empresas = sqliteTable(
  'empresas',
  {
    id: text('id').primaryKey(),
    rut: text('rut').notNull(),
    razon_social: text('razon_social').notNull(),
    giro: text('giro').notNull(),
    /** JSON array of 1 to 4 economic activity codes (DESIGN §8). */
    acteco: text('acteco', { mode: 'json' }).$type<number[]>().notNull(),
    direccion: text('direccion').notNull(),
    comuna: text('comuna').notNull(),
    ciudad: text('ciudad').notNull(),
    ambiente: text('ambiente', { enum: ['certificacion', 'produccion'] }).notNull(),
    fecha_resolucion: text('fecha_resolucion').notNull(),
    numero_resolucion: integer('numero_resolucion').notNull(),
    inbound_email: text('inbound_email'),
    inbound_status: text('inbound_status'),
    /** The demo company never talks to the real SII (DESIGN §10). */
    is_demo: integer('is_demo', { mode: 'boolean' }).notNull().default(false),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('empresas_rut_unique').on(t.rut)],
)

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    nombre: text('nombre'),
    /** SHA-256 of the whole key, hex: the key itself is shown once and never stored (DESIGN §4). */
    key_hash: text('key_hash').notNull(),
    /** First 12 characters, so people can tell their keys apart in `apikey list`. */
    prefix: text('prefix').notNull(),
    write: integer('write', { mode: 'boolean' }).notNull(),
    created_at: text('created_at').notNull(),
    expires_at: text('expires_at'),
    last_used_at: text('last_used_at'),
    revoked_at: text('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_hash_unique').on(t.key_hash), index('api_keys_empresa').on(t.empresa_id, t.id)],
)

/** Signing certificates (spec 2.14). The newest upload is active; older ones are kept inactive (DESIGN §8). */
export const certificados = sqliteTable(
  'certificados',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    rut_firmante: text('rut_firmante').notNull(),
    subject_cn: text('subject_cn').notNull(),
    serial_number: text('serial_number').notNull(),
    not_before: text('not_before').notNull(),
    not_after: text('not_after').notNull(),
    /** The X.509 certificate, DER: public, it goes into every signature's KeyInfo. */
    certificate_der: blob('certificate_der', { mode: 'buffer' }).notNull(),
    /** PKCS#8 DER of the private key, sealed by the vault under `certificado:<id>`: never stored in clear. */
    private_key_sealed: blob('private_key_sealed', { mode: 'buffer' }).notNull(),
    is_active: integer('is_active', { mode: 'boolean' }).notNull(),
    uploaded_at: text('uploaded_at').notNull(),
  },
  (t) => [index('certificados_empresa').on(t.empresa_id, t.id)],
)

/** Folio authorisations (spec 2.12). Folios are handed out by bumping `next_folio` (DESIGN §8, §11). */
export const cafs = sqliteTable(
  'cafs',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    tipo_dte: integer('tipo_dte').notNull(),
    folio_desde: integer('folio_desde').notNull(),
    folio_hasta: integer('folio_hasta').notNull(),
    /** Next folio to assign; folio_hasta + 1 when the range is used up. */
    next_folio: integer('next_folio').notNull(),
    fecha_autorizacion: text('fecha_autorizacion').notNull(),
    /** Last day its folios may be used (FA + 180 days for 33, 43, 46, 56, 61), else null. */
    vence_el: text('vence_el'),
    idk: integer('idk').notNull(),
    ambiente: text('ambiente', { enum: ['certificacion', 'produccion'] }).notNull(),
    /** The flat <CAF> element, public: it is embedded in every TED. */
    caf_xml: text('caf_xml').notNull(),
    /** RSASK (PKCS#8 DER) sealed by the vault under `caf:<id>`. */
    private_key_sealed: blob('private_key_sealed', { mode: 'buffer' }).notNull(),
    created_at: text('created_at').notNull(),
    /**
     * The annulment of its unused folios at the SII (DESIGN §17): null, `en_curso` (closed to issuance while the SII is
     * asked, or after an attempt whose outcome is unknown) or `anulado`. A CAF with either hands out no folio.
     */
    anulacion_estado: text('anulacion_estado', { enum: ['en_curso', 'anulado'] }),
    /** The ranges the SII annulled, in order; folios of a closed CAF outside them and without a document remain to annul. */
    folios_anulados: text('folios_anulados', { mode: 'json' }).$type<Array<{ desde: number; hasta: number }>>(),
    anulacion_motivo: text('anulacion_motivo'),
    anulado_at: text('anulado_at'),
  },
  (t) => [index('cafs_empresa_tipo').on(t.empresa_id, t.tipo_dte, t.id), index('cafs_empresa').on(t.empresa_id, t.id)],
)

/**
 * The DTEs that wait on the SII: enviando or procesando, or firmado with auto_send (a firmado without it waits for its
 * integrator). Literal values, so the query that reads it (dte-store oldestPendingCreatedAt) can use the partial index.
 */
export const DTES_PENDING_SII = `estado IN ('enviando', 'procesando') OR (estado = 'firmado' AND auto_send = 1)`

/** Issued documents (spec 2.2). Never deleted (tax retention, DESIGN §12). */
export const dtes = sqliteTable(
  'dtes',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    tipo_dte: integer('tipo_dte').notNull(),
    folio: integer('folio').notNull(),
    caf_id: text('caf_id')
      .notNull()
      .references(() => cafs.id),
    /** DESIGN §6; typed only (SQLite keeps text): the transitions are domain/estados.ts. */
    estado: text('estado', { enum: ESTADOS_DTE }).notNull(),
    rut_receptor: text('rut_receptor').notNull(),
    razon_social_receptor: text('razon_social_receptor').notNull(),
    fecha_emision: text('fecha_emision').notNull(),
    monto_neto: integer('monto_neto'),
    monto_exento: integer('monto_exento'),
    tasa_iva: real('tasa_iva').notNull(),
    iva: integer('iva'),
    monto_total: integer('monto_total').notNull(),
    /** Exports (110–112): the currency of the document's amounts, Totales/TpoMoneda (`PESO CL` included); null otherwise. */
    moneda: text('moneda'),
    /**
     * Exports: the document's own MntTotal in `moneda`, the decimal text exactly as the signed XML writes it (up to 4
     * decimals, no exponent, no trailing zeros). Text, not a number: the SII status query must send this very value
     * (DESIGN §12 "Exports"), and neither a REAL (binary float) nor an INTEGER of 1/10 000 read back as a JavaScript
     * number keeps 14 integer digits and 4 decimals exact; the record turns it into a JSON number. Null otherwise.
     */
    monto_total_moneda: text('monto_total_moneda'),
    /** The request's detalle and referencias as received (JSON keeps the full texts, DESIGN §8). */
    detalle: text('detalle', { mode: 'json' }).$type<unknown[]>().notNull(),
    referencias: text('referencias', { mode: 'json' }).$type<unknown[]>().notNull(),
    /** The whole request, for the printed representation and audits. */
    request: text('request', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** The signed standalone <DTE>, ISO-8859-1 bytes exactly as signed. */
    xml: blob('xml', { mode: 'buffer' }).notNull(),
    auto_send: integer('auto_send', { mode: 'boolean' }).notNull(),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    // Tracking (spec 2.6), filled by the SII jobs (DESIGN §6).
    envio_id: text('envio_id'),
    track_id: text('track_id'),
    estado_envio: text('estado_envio'),
    codigo_sii: text('codigo_sii'),
    glosa_sii: text('glosa_sii'),
    informados: integer('informados').notNull().default(0),
    aceptados: integer('aceptados').notNull().default(0),
    rechazados: integer('rechazados').notNull().default(0),
    reparos: integer('reparos').notNull().default(0),
    intentos: integer('intentos').notNull().default(0),
    /** Status queries made while procesando: drives the tracking back-off (30 s doubling to 30 min). */
    consultas: integer('consultas').notNull().default(0),
    /** When the SII jobs may look at it next (back-off); null when nothing is due. */
    next_attempt_at: text('next_attempt_at'),
    sii_status: text('sii_status', { mode: 'json' }).$type<Record<string, unknown>>(),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('dtes_empresa_tipo_folio').on(t.empresa_id, t.tipo_dte, t.folio),
    // GET /dte (docs/decisions/list-counts.md): each list walks one of these newest first, by id; the filter columns
    // after the id let it test the other filters inside the index and read the table only for the rows it returns.
    // Not estado: it changes three times in a DTE's life, and each index holding it would be rewritten each time.
    index('dtes_empresa').on(t.empresa_id, t.id, t.fecha_emision),
    index('dtes_empresa_estado').on(t.empresa_id, t.estado, t.id, t.fecha_emision, t.tipo_dte, t.rut_receptor),
    index('dtes_empresa_tipo').on(t.empresa_id, t.tipo_dte, t.id, t.fecha_emision, t.rut_receptor),
    index('dtes_empresa_receptor').on(t.empresa_id, t.rut_receptor, t.id, t.fecha_emision, t.tipo_dte),
    // A short date range is read whole here and its newest ids sorted, when that costs less than a walk.
    index('dtes_empresa_fecha').on(t.empresa_id, t.fecha_emision, t.id, t.tipo_dte, t.rut_receptor),
    index('dtes_due').on(t.estado, t.next_attempt_at),
    // GET /ready's oldest pending DTE (issue 18): one seek, however many firmado DTEs wait unsent for their integrator.
    index('dtes_pending_sii').on(t.created_at).where(sql.raw(DTES_PENDING_SII)),
  ],
)

/**
 * Envelopes sent to the SII, one per DTE (DESIGN §6: individual envelopes). The signed bytes are kept so every retry
 * re-sends exactly the same file (the SII then answers "already received" instead of taking it twice).
 */
export const envios = sqliteTable(
  'envios',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    canal: text('canal', { enum: ['soap', 'boleta'] }).notNull(),
    file_name: text('file_name').notNull(),
    /** EnvioDTE / EnvioBOLETA, ISO-8859-1 bytes exactly as signed. */
    xml: blob('xml', { mode: 'buffer' }).notNull(),
    track_id: text('track_id'),
    created_at: text('created_at').notNull(),
  },
  (t) => [index('envios_empresa').on(t.empresa_id, t.id)],
)

/** Completed POST /dte answers, replayed for 24 h (spec 4.8, DESIGN §12). Only a 201 is stored. */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    key: text('key').notNull(),
    /** SHA-256 of the canonical JSON of the body (key order ignored). */
    request_hash: text('request_hash').notNull(),
    response_status: integer('response_status').notNull(),
    response_body: text('response_body').notNull(),
    location: text('location'),
    created_at: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.empresa_id, t.key] }), index('idempotency_created').on(t.created_at)],
)

export type CertificadoRow = typeof certificados.$inferSelect
export type CafRow = typeof cafs.$inferSelect
export type DteRow = typeof dtes.$inferSelect
export type IdempotencyRow = typeof idempotencyKeys.$inferSelect
export type EnvioRow = typeof envios.$inferSelect
export type EmpresaRow = typeof empresas.$inferSelect
export type ApiKeyRow = typeof apiKeys.$inferSelect


// Catalogs (spec 2.16, 2.17; issue 8). Integrators' convenience only: a DTE copies what it needs, so editing or deleting
// a cliente or producto never touches an issued document. Deletion is soft (DESIGN §12): `deleted_at` set, the row kept,
// its RUT or codigo free again. `seq` is the INTEGER PRIMARY KEY (the rowid itself, so VACUUM INTO never renumbers it);
// the FTS5 search index of drizzle/0003_catalogs.sql keys each row on empresa_key × 2^40 + seq (db/catalog-index.ts).
// `busqueda*` hold the folded text that index reads (domain/catalogo.ts foldText); they are never returned.

export const clientes = sqliteTable(
  'clientes',
  {
    seq: integer('seq').primaryKey(),
    id: text('id').notNull(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    /** Hash of empresa_id: the high bits of the row's key in the search index, so a search reads one company's range. */
    empresa_key: integer('empresa_key').notNull(),
    /** Canonical `12345678-K`; fixed after creation (spec 2.16). */
    rut: text('rut').notNull(),
    razon_social: text('razon_social').notNull(),
    giro: text('giro'),
    direccion: text('direccion'),
    comuna: text('comuna'),
    ciudad: text('ciudad'),
    email: text('email'),
    telefono: text('telefono'),
    contacto: text('contacto'),
    notas: text('notas'),
    /** foldText(razon_social): what the search index holds beside the RUT. */
    busqueda: text('busqueda').notNull(),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
    deleted_at: text('deleted_at'),
  },
  (t) => [
    uniqueIndex('clientes_id_unique').on(t.id),
    // Unique among live rows only: a deleted cliente frees its RUT (DESIGN §12).
    uniqueIndex('clientes_empresa_rut_live').on(t.empresa_id, t.rut).where(sql`deleted_at IS NULL`),
    index('clientes_empresa_live').on(t.empresa_id, t.id).where(sql`deleted_at IS NULL`),
    // Searches too short for the trigram index walk this newest first, reading the folded text from the index alone.
    index('clientes_empresa_seq_live').on(t.empresa_id, t.seq, t.busqueda, t.rut).where(sql`deleted_at IS NULL`),
  ],
)

export const productos = sqliteTable(
  'productos',
  {
    seq: integer('seq').primaryKey(),
    id: text('id').notNull(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    /** Hash of empresa_id: the high bits of the row's key in the search index, so a search reads one company's range. */
    empresa_key: integer('empresa_key').notNull(),
    codigo: text('codigo'),
    nombre: text('nombre').notNull(),
    descripcion: text('descripcion'),
    /** CLP, no decimals; null when the producto has no list price. */
    precio_unitario: integer('precio_unitario'),
    unidad: text('unidad', { enum: UNIDADES }).notNull(),
    es_exento: integer('es_exento', { mode: 'boolean' }).notNull(),
    categoria: text('categoria'),
    /** foldText(nombre) and foldText(codigo): what the search index holds. */
    busqueda: text('busqueda').notNull(),
    busqueda_codigo: text('busqueda_codigo'),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
    deleted_at: text('deleted_at'),
  },
  (t) => [
    uniqueIndex('productos_id_unique').on(t.id),
    uniqueIndex('productos_empresa_codigo_live').on(t.empresa_id, t.codigo).where(sql`deleted_at IS NULL`),
    index('productos_empresa_live').on(t.empresa_id, t.id).where(sql`deleted_at IS NULL`),
    index('productos_empresa_categoria_live').on(t.empresa_id, t.categoria, t.id).where(sql`deleted_at IS NULL`),
    index('productos_empresa_seq_live').on(t.empresa_id, t.seq, t.busqueda, t.busqueda_codigo).where(sql`deleted_at IS NULL`),
  ],
)

export type ClienteRow = typeof clientes.$inferSelect
export type ProductoRow = typeof productos.$inferSelect

// ------------------------------------------------------------------------------------------------ webhooks (DESIGN §7)

/** Subscriptions. The secret signs deliveries, so it is sealed by the vault (`webhook:<id>`), never stored in clear. */
export const webhooks = sqliteTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    url: text('url').notNull(),
    events: text('events', { mode: 'json' }).$type<string[]>().notNull(),
    secret_sealed: blob('secret_sealed', { mode: 'buffer' }).notNull(),
    /** What lists show of the secret (DESIGN §7: masked to its last 4 characters). */
    secret_last4: text('secret_last4').notNull(),
    created_at: text('created_at').notNull(),
    /** DELETE sets it; a deleted webhook is 404 everywhere and receives nothing more. */
    deleted_at: text('deleted_at'),
  },
  (t) => [index('webhooks_empresa').on(t.empresa_id, t.id)],
)

/** The outbox: every event, written in the same transaction as the change that causes it (DESIGN §7). */
export const events = sqliteTable(
  'events',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    type: text('type').notNull(),
    /** The JSON body every subscription receives, fixed when the event happens. */
    body: text('body').notNull(),
    created_at: text('created_at').notNull(),
  },
  (t) => [index('events_empresa').on(t.empresa_id, t.id)],
)

/** One event to one webhook: its attempts, outcome and next retry. */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    webhook_id: text('webhook_id')
      .notNull()
      .references(() => webhooks.id),
    event_id: text('event_id')
      .notNull()
      .references(() => events.id),
    event_type: text('event_type').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed', 'cancelled'] }).notNull(),
    attempt: integer('attempt').notNull().default(0),
    next_attempt_at: text('next_attempt_at'),
    status_code: integer('status_code'),
    duration_ms: integer('duration_ms'),
    error: text('error'),
    delivered_at: text('delivered_at'),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [
    index('deliveries_due').on(t.status, t.next_attempt_at),
    index('deliveries_webhook').on(t.webhook_id, t.id),
    // One company's due deliveries in order, a seek per company whatever the backlog (docs/decisions/webhooks.md).
    index('deliveries_due_empresa').on(t.empresa_id, t.status, t.next_attempt_at, t.id),
  ],
)

/** caf.low_stock fires once per crossing of the threshold; a new CAF of the type re-arms it (DESIGN §7). */
export const cafStockAlerts = sqliteTable(
  'caf_stock_alerts',
  {
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    tipo_dte: integer('tipo_dte').notNull(),
    is_armed: integer('is_armed', { mode: 'boolean' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.empresa_id, t.tipo_dte] })],
)

/** certificado.expiring fires once per threshold (30, 15, 7, 3, 1 days) and certificate. */
export const certificadoAlerts = sqliteTable(
  'certificado_alerts',
  {
    certificado_id: text('certificado_id')
      .notNull()
      .references(() => certificados.id),
    dias: integer('dias').notNull(),
    created_at: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.certificado_id, t.dias] })],
)

export type WebhookRow = typeof webhooks.$inferSelect
export type EventRow = typeof events.$inferSelect
export type DeliveryRow = typeof webhookDeliveries.$inferSelect

/**
 * `total_count` of GET /dte without scanning the filter's rows (docs/decisions/list-counts.md): DTEs counted per
 * bucket by triggers of drizzle/0010_dte_list_counts.sql, in the writer's transaction, so every count is exact. A bucket
 * holds `n` > 0 DTEs (an emptied bucket is deleted) and bounds of their ids, `min_id` ≤ every id ≤ `max_id` (a DTE
 * that leaves the bucket may leave them wider than needed, never narrower): the list walks only between them.
 * drizzle-kit cannot declare WITHOUT ROWID: the migration's CREATE TABLE adds it (one b-tree per bucket table).
 */
const bucket = {
  empresa_id: text('empresa_id')
    .notNull()
    .references(() => empresas.id),
  tipo_dte: integer('tipo_dte').notNull(),
  estado: text('estado', { enum: ESTADOS_DTE }).notNull(),
  n: integer('n').notNull(),
  min_id: text('min_id').notNull(),
  max_id: text('max_id').notNull(),
}

/** Per company, tipo and estado: no filter, estado, tipo_dte (at most 12 × 8 rows per company). */
export const dteCounts = sqliteTable('dte_counts', { ...bucket }, (t) => [primaryKey({ columns: [t.empresa_id, t.tipo_dte, t.estado] })])

/**
 * The key columns first, in the key's order (drizzle/0013): SQLite before 3.42 (Debian 12's sqlite3 and Python's
 * module, 3.40) reports a WITHOUT ROWID table whose key columns are not declared first as corrupt ("NULL value in
 * dte_counts_receptor.n") in `PRAGMA integrity_check`, on a healthy database: an operator checking a backup with the
 * system's tools must not be told it is damaged (issue 27).
 */
const { empresa_id: bucketEmpresa, tipo_dte: bucketTipo, estado: bucketEstado, ...bucketValues } = bucket

/** Per company and day of fecha_emision: any filter with a date range and without rut_receptor. */
export const dteCountsDia = sqliteTable(
  'dte_counts_dia',
  { empresa_id: bucketEmpresa, fecha_emision: text('fecha_emision').notNull(), tipo_dte: bucketTipo, estado: bucketEstado, ...bucketValues },
  (t) => [primaryKey({ columns: [t.empresa_id, t.fecha_emision, t.tipo_dte, t.estado] })],
)

/** Per company, receptor and day: any filter with rut_receptor (a receptor has at most one row per day, tipo and estado). */
export const dteCountsReceptor = sqliteTable(
  'dte_counts_receptor',
  {
    empresa_id: bucketEmpresa,
    rut_receptor: text('rut_receptor').notNull(),
    fecha_emision: text('fecha_emision').notNull(),
    tipo_dte: bucketTipo,
    estado: bucketEstado,
    ...bucketValues,
  },
  (t) => [primaryKey({ columns: [t.empresa_id, t.rut_receptor, t.fecha_emision, t.tipo_dte, t.estado] })],
)

/**
 * Why the SII said what it said (issue 13): every SII answer that changed or informed a DTE, in the order it came —
 * each upload answer, each new envelope status, each new document status — with its raw codes, glosas and reasons.
 * Written in the transaction of the DTE change it goes with; never deleted (DTEs are kept, DESIGN §12). `seq` is the
 * INTEGER PRIMARY KEY: insertion order is the order of the answers. GET /dte/{id} returns it as `historial_sii`.
 */
export const dteTrackingEvents = sqliteTable(
  'dte_tracking_events',
  {
    seq: integer('seq').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    dte_id: text('dte_id')
      .notNull()
      .references(() => dtes.id),
    /** When the answer came (Timbre's clock), RFC 3339 UTC with milliseconds. */
    at: text('at').notNull(),
    canal: text('canal', { enum: ['soap', 'boleta'] }).notNull(),
    operacion: text('operacion', { enum: ['upload', 'estado_envio', 'estado_dte'] }).notNull(),
    track_id: text('track_id'),
    /** The answer's own code: upload STATUS (REST `estado`), envelope ESTADO, document ESTADO (REST `codigo`). */
    estado: text('estado'),
    glosa: text('glosa'),
    err_code: text('err_code'),
    glosa_err: text('glosa_err'),
    num_atencion: text('num_atencion'),
    /** Counters per type of a processed envelope (getEstUp RESP_BODY, REST `estadistica`). */
    estadistica: text('estadistica', { mode: 'json' }).$type<Array<Record<string, number>>>(),
    motivos: text('motivos', { mode: 'json' }).$type<MotivoSii[]>().notNull(),
  },
  (t) => [index('dte_tracking_events_dte').on(t.empresa_id, t.dte_id, t.seq)],
)

export type DteTrackingEventRow = typeof dteTrackingEvents.$inferSelect

// ------------------------------------------------------------------------------------ intercambio (DESIGN §13)

/**
 * A company's exchange mailbox: IMAP to read what suppliers and receivers send, SMTP to answer and to mail its own
 * DTEs. Passwords sealed by the vault (`mailbox-imap:<empresa_id>`, `mailbox-smtp:<empresa_id>`), never in clear.
 * `inbound_email` and `inbound_status` stay on `empresas` (the spec's company record); the poll's outcome lives here.
 */
export const mailboxes = sqliteTable('mailboxes', {
  empresa_id: text('empresa_id')
    .primaryKey()
    .references(() => empresas.id),
  imap_host: text('imap_host').notNull(),
  imap_port: integer('imap_port').notNull(),
  /** Implicit TLS (993); false = plain or STARTTLS when the server offers it. */
  imap_tls: integer('imap_tls', { mode: 'boolean' }).notNull(),
  imap_user: text('imap_user').notNull(),
  imap_password_sealed: blob('imap_password_sealed', { mode: 'buffer' }).notNull(),
  imap_folder: text('imap_folder').notNull(),
  smtp_host: text('smtp_host').notNull(),
  smtp_port: integer('smtp_port').notNull(),
  smtp_security: text('smtp_security', { enum: ['starttls', 'tls', 'none'] }).notNull(),
  smtp_user: text('smtp_user'),
  smtp_password_sealed: blob('smtp_password_sealed', { mode: 'buffer' }),
  smtp_from: text('smtp_from').notNull(),
  last_poll_at: text('last_poll_at'),
  last_error: text('last_error'),
  created_at: text('created_at').notNull(),
  updated_at: text('updated_at').notNull(),
})

/**
 * Every mail Timbre sends (DESIGN §13), queued in the transaction of the change that calls for it and sent by the
 * `intercambio` job on the webhook retry schedule: an issued DTE to its receiver (`envio_dte`), the envelope receipt
 * (`recepcion_envio`), the commercial result (`resultado_dte`) and the receipt of goods (`envio_recibos`).
 * The XML attachment is built when the mail is queued (signed once, the same bytes at every retry), except
 * `envio_dte`, whose envelope and PDF are built when it is sent, so issuance never waits for them.
 */
export const mailOutbox = sqliteTable(
  'mail_outbox',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    kind: text('kind', { enum: ['envio_dte', 'recepcion_envio', 'resultado_dte', 'envio_recibos'] }).notNull(),
    /** The issued DTE (envio_dte) or the received envelope / document the answer is about. */
    dte_id: text('dte_id'),
    recibido_id: text('recibido_id'),
    recibido_envio_id: text('recibido_envio_id'),
    /** Null while no address is known (then `sin_destinatario`, and nothing is sent). */
    to_address: text('to_address'),
    subject: text('subject').notNull(),
    /** ISO-8859-1 bytes of the signed XML attachment; null for envio_dte until it is built at send time. */
    attachment: blob('attachment', { mode: 'buffer' }),
    attachment_name: text('attachment_name'),
    status: text('status', { enum: ['pending', 'sent', 'failed', 'sin_destinatario'] }).notNull(),
    attempt: integer('attempt').notNull().default(0),
    next_attempt_at: text('next_attempt_at'),
    last_error: text('last_error'),
    message_id: text('message_id'),
    sent_at: text('sent_at'),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [index('mail_outbox_due').on(t.status, t.next_attempt_at), index('mail_outbox_dte').on(t.dte_id)],
)

/** Each XML attachment read from a mailbox or imported, once (DESIGN §13: the same attachment twice is processed once). */
export const inboxAttachments = sqliteTable(
  'inbox_attachments',
  {
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    sha256: text('sha256').notNull(),
    /** envio_dte | respuesta_dte | envio_recibos | resp_sii | desconocido */
    kind: text('kind').notNull(),
    /** What it led to, for the log and for support: `recibidos_envios.id`, a DTE id, or why it was ignored. */
    outcome: text('outcome').notNull(),
    from_address: text('from_address'),
    file_name: text('file_name'),
    created_at: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.empresa_id, t.sha256] })],
)

/** Received EnvioDTE envelopes (DESIGN §13), exact bytes and the envelope-level outcome of the checks. */
export const recibidosEnvios = sqliteTable(
  'recibidos_envios',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    sha256: text('sha256').notNull(),
    origen: text('origen', { enum: ['correo', 'importar', 'demo'] }).notNull(),
    from_address: text('from_address'),
    file_name: text('file_name'),
    /** SetDTE/@ID: the EnvioDTEID of the receipt. */
    envio_dte_id: text('envio_dte_id'),
    rut_emisor: text('rut_emisor'),
    rut_envia: text('rut_envia'),
    estado_recep_env: integer('estado_recep_env').notNull(),
    glosa: text('glosa').notNull(),
    checks: text('checks', { mode: 'json' }).$type<CheckResult[]>().notNull(),
    xml: blob('xml', { mode: 'buffer' }).notNull(),
    created_at: text('created_at').notNull(),
  },
  (t) => [uniqueIndex('recibidos_envios_sha').on(t.empresa_id, t.sha256)],
)

/** Received documents (DESIGN §13): one per DTE of a received envelope, kept whatever its checks said. */
export const recibidos = sqliteTable(
  'recibidos',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    envio_id: text('envio_id')
      .notNull()
      .references(() => recibidosEnvios.id),
    rut_emisor: text('rut_emisor').notNull(),
    razon_social_emisor: text('razon_social_emisor').notNull(),
    tipo_dte: integer('tipo_dte').notNull(),
    folio: integer('folio').notNull(),
    fecha_emision: text('fecha_emision').notNull(),
    rut_receptor: text('rut_receptor').notNull(),
    monto_neto: integer('monto_neto'),
    monto_exento: integer('monto_exento'),
    iva: integer('iva'),
    monto_total: integer('monto_total').notNull(),
    estado: text('estado', { enum: ESTADOS_RECIBIDO }).notNull(),
    estado_recep_dte: integer('estado_recep_dte').notNull(),
    checks: text('checks', { mode: 'json' }).$type<CheckResult[]>().notNull(),
    /** Every action asked for, in order, with its outcome at the SII (registrada, pendiente, rechazada). */
    acciones: text('acciones', { mode: 'json' }).$type<Array<Record<string, unknown>>>().notNull(),
    /** The SII's reception instant (consultarFechaRecepcionSii), RFC 3339; null until the SII has said it. */
    fecha_recepcion_sii: text('fecha_recepcion_sii'),
    /** fecha_recepcion_sii + 8 days; null until known. */
    plazo: text('plazo'),
    plazo_avisado: integer('plazo_avisado', { mode: 'boolean' }).notNull().default(false),
    /** When the intercambio job next asks the SII (reception date, queued actions); null when nothing is due. */
    next_sii_at: text('next_sii_at'),
    /** The standalone signed <DTE> as received (ISO-8859-1 bytes cut from the envelope). */
    xml: blob('xml', { mode: 'buffer' }).notNull(),
    recibido_at: text('recibido_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [
    index('recibidos_empresa').on(t.empresa_id, t.id),
    index('recibidos_empresa_emisor').on(t.empresa_id, t.rut_emisor, t.tipo_dte, t.folio),
    index('recibidos_empresa_estado').on(t.empresa_id, t.estado, t.id),
    index('recibidos_empresa_fecha').on(t.empresa_id, t.fecha_emision, t.id),
    index('recibidos_sii_due').on(t.next_sii_at),
  ],
)

/**
 * The exchange side of an issued DTE (DESIGN §13 `intercambio`), created when a DTE other than 39/41 reaches
 * aceptado or con_reparos. The receiver's answers (acuse, resultado) and the SII's registry of its actions
 * (eventos_receptor, read by sii-track until `eventos_hasta`) are kept here.
 */
export const dteIntercambio = sqliteTable(
  'dte_intercambio',
  {
    dte_id: text('dte_id')
      .primaryKey()
      .references(() => dtes.id),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    estado: text('estado', { enum: ESTADOS_INTERCAMBIO }).notNull(),
    email: text('email'),
    enviado_at: text('enviado_at'),
    /** The receiver's RecepcionEnvio for this DTE: {estado_recep_env, estado_recep_dte, glosa, fecha}. */
    acuse: text('acuse', { mode: 'json' }).$type<Record<string, unknown>>(),
    /** The receiver's ResultadoDTE or Recibo: {estado_dte, glosa, fecha} or {recibo: true, fecha}. */
    resultado: text('resultado', { mode: 'json' }).$type<Record<string, unknown>>(),
    /** [{accion, fecha}] as listarEventosHistDoc lists them. */
    eventos_receptor: text('eventos_receptor', { mode: 'json' }).$type<Array<{ accion: string; fecha: string }>>().notNull(),
    /** sii-track reads the receiver's events until then (acceptance + 8 days); null for types without actions. */
    eventos_hasta: text('eventos_hasta'),
    next_eventos_at: text('next_eventos_at'),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [index('dte_intercambio_eventos_due').on(t.next_eventos_at)],
)

/** The SII's list of electronic issuers and their exchange addresses (`timbre contribuyentes import FILE`). */
export const contribuyentes = sqliteTable('contribuyentes', {
  rut: text('rut').primaryKey(),
  razon_social: text('razon_social').notNull(),
  numero_resolucion: integer('numero_resolucion'),
  fecha_resolucion: text('fecha_resolucion'),
  email_intercambio: text('email_intercambio'),
  updated_at: text('updated_at').notNull(),
})

export type MailboxRow = typeof mailboxes.$inferSelect
export type MailOutboxRow = typeof mailOutbox.$inferSelect
export type RecibidoEnvioRow = typeof recibidosEnvios.$inferSelect
export type RecibidoRow = typeof recibidos.$inferSelect
export type DteIntercambioRow = typeof dteIntercambio.$inferSelect
export type ContribuyenteRow = typeof contribuyentes.$inferSelect

/**
 * Console sessions (DESIGN §14): the cookie holds a random token, the table only its SHA-256. An administrator's
 * session has no API key and may switch `empresa_id`; a company's session is bound to the API key it logged in with,
 * so revoking the key ends the session on its next request.
 */
export const consoleSessions = sqliteTable(
  'console_sessions',
  {
    id: text('id').primaryKey(),
    token_hash: text('token_hash').notNull(),
    kind: text('kind', { enum: ['admin', 'empresa', 'cuenta'] }).notNull(),
    empresa_id: text('empresa_id').references(() => empresas.id),
    api_key_id: text('api_key_id').references(() => apiKeys.id),
    /** A person's session (kind 'cuenta'): its role is read from console_memberships on every request. */
    account_id: text('account_id').references(() => consoleAccounts.id),
    can_write: integer('can_write', { mode: 'boolean' }).notNull(),
    /** The synchronizer token every form and htmx request carries back (DESIGN §14). */
    csrf_token: text('csrf_token').notNull(),
    created_at: text('created_at').notNull(),
    last_seen_at: text('last_seen_at').notNull(),
    /** Absolute end; idleness ends a session earlier (services/console-sessions.ts). */
    expires_at: text('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('console_sessions_token').on(t.token_hash),
    index('console_sessions_expires').on(t.expires_at),
    index('console_sessions_account').on(t.account_id),
  ],
)

/** One-time administrator links printed by `timbre console link`: SHA-256 of the token, used once, short-lived. */
export const consoleLinks = sqliteTable(
  'console_links',
  {
    id: text('id').primaryKey(),
    token_hash: text('token_hash').notNull(),
    created_at: text('created_at').notNull(),
    expires_at: text('expires_at').notNull(),
    used_at: text('used_at'),
  },
  (t) => [uniqueIndex('console_links_token').on(t.token_hash)],
)

/**
 * People who log in to the console as themselves (DESIGN §14 "People, not keys", issue 27). The email is stored
 * lower-cased, so uniqueness is case-insensitive; the password only as an argon2id hash (Bun.password); the TOTP
 * secret sealed with the vault (`console-totp:<id>`), and while being enrolled, before its first code confirms it,
 * in `totp_pending_sealed`.
 */
export const consoleAccounts = sqliteTable(
  'console_accounts',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    nombre: text('nombre'),
    password_hash: text('password_hash').notNull(),
    totp_sealed: blob('totp_sealed', { mode: 'buffer' }),
    totp_pending_sealed: blob('totp_pending_sealed', { mode: 'buffer' }),
    /** The 30-second step of the last code accepted: a code is good once, even within its window. */
    totp_last_step: integer('totp_last_step'),
    /** Consecutive failed logins; the tenth locks password login until `locked_until` (kept across restarts). */
    failed_logins: integer('failed_logins').notNull().default(0),
    locked_until: text('locked_until'),
    /** Set by the instance administrator: the account cannot log in and its sessions end on their next request. */
    disabled_at: text('disabled_at'),
    last_login_at: text('last_login_at'),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('console_accounts_email').on(t.email)],
)

/** An account's role in one company; an accountant's staff belongs to several. */
export const consoleMemberships = sqliteTable(
  'console_memberships',
  {
    account_id: text('account_id')
      .notNull()
      .references(() => consoleAccounts.id),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    role: text('role', { enum: ROLES }).notNull(),
    created_at: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.account_id, t.empresa_id] }), index('console_memberships_empresa').on(t.empresa_id)],
)

/**
 * One-time invitation links (7 days): only the SHA-256 of the token is stored, as for console_links. Accepting one
 * creates the account or, for an existing one, adds the membership; `resets_password` says whether it may also set a
 * new password (decided when it is issued: see services/console-accounts.ts).
 */
export const consoleInvitations = sqliteTable(
  'console_invitations',
  {
    id: text('id').primaryKey(),
    token_hash: text('token_hash').notNull(),
    email: text('email').notNull(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    role: text('role', { enum: ROLES }).notNull(),
    resets_password: integer('resets_password', { mode: 'boolean' }).notNull(),
    /** The administrator's account; null when the instance administrator invited. */
    invited_by: text('invited_by').references(() => consoleAccounts.id),
    created_at: text('created_at').notNull(),
    expires_at: text('expires_at').notNull(),
    used_at: text('used_at'),
    revoked_at: text('revoked_at'),
  },
  (t) => [uniqueIndex('console_invitations_token').on(t.token_hash), index('console_invitations_empresa').on(t.empresa_id, t.email)],
)

/**
 * Failed logins of one account from one client address (issue 27, review): ten in a row lock that address out of
 * that account's password login for 15 minutes, kept across restarts. Per address, so whoever knows an email cannot
 * lock its owner out from everywhere by failing on purpose; the address window (20 a minute) bounds guessing across
 * accounts. Failures inside a session (the current password, a code to turn TOTP off) count on the account itself.
 */
export const consoleLoginFailures = sqliteTable(
  'console_login_failures',
  {
    account_id: text('account_id')
      .notNull()
      .references(() => consoleAccounts.id),
    address: text('address').notNull(),
    failures: integer('failures').notNull(),
    locked_until: text('locked_until'),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.account_id, t.address] }), index('console_login_failures_updated').on(t.updated_at)],
)

export type ConsoleSessionRow = typeof consoleSessions.$inferSelect
export type ConsoleLinkRow = typeof consoleLinks.$inferSelect
export type ConsoleAccountRow = typeof consoleAccounts.$inferSelect
export type ConsoleMembershipRow = typeof consoleMemberships.$inferSelect
export type ConsoleInvitationRow = typeof consoleInvitations.$inferSelect
export type ConsoleLoginFailureRow = typeof consoleLoginFailures.$inferSelect

// ------------------------------------------------------------------------------------------------ certificación (DESIGN §15)

/**
 * The sets of the SII's set of tests a company in certificación loaded (issue 28), one row per set name: a new file's
 * BASICO replaces the stored BASICO. `set` is the parser's output (domain/set-pruebas.ts SetPruebas) as JSON, so the
 * cases issue exactly what the upload showed; `archivo_sha256` names the file it came from.
 */
export const certificacionSets = sqliteTable(
  'certificacion_sets',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    nombre: text('nombre').notNull(),
    numero_atencion: integer('numero_atencion').notNull(),
    set: text('set', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** The 2026 layout's general instructions of the file this set came from, as written. */
    indicaciones: text('indicaciones', { mode: 'json' }).$type<string[]>().notNull(),
    archivo_sha256: text('archivo_sha256').notNull(),
    created_at: text('created_at').notNull(),
  },
  (t) => [uniqueIndex('certificacion_sets_nombre').on(t.empresa_id, t.nombre)],
)

/**
 * Each case's current document. `intento` counts issuances: a re-issue after a rejection or reparos takes new folios
 * under a new idempotency key (`certificacion:<set id>:<caso>:<intento>`), so a retried request never issues twice.
 */
export const certificacionCasos = sqliteTable(
  'certificacion_casos',
  {
    set_id: text('set_id')
      .notNull()
      .references(() => certificacionSets.id, { onDelete: 'cascade' }),
    caso: text('caso').notNull(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    posicion: integer('posicion').notNull(),
    tipo_dte: integer('tipo_dte').notNull(),
    intento: integer('intento').notNull().default(0),
    dte_id: text('dte_id').references(() => dtes.id),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.set_id, t.caso] }), index('certificacion_casos_empresa').on(t.empresa_id)],
)

/**
 * What certification sent to the SII: one EnvioDTE per documents set (or the simulation's), and each libro. The bytes
 * are in `envios` (signed once, re-sent as they are); the documents' own states come from their tracking, the libros'
 * from theirs (`estado`, `glosa_sii`).
 */
export const certificacionEnvios = sqliteTable(
  'certificacion_envios',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    clase: text('clase', { enum: ['set', 'simulacion', 'libro', 'boletas'] }).notNull(),
    /** Set names (clase set), 'SIMULACION', or the libro: ventas, compras, guias. */
    nombres: text('nombres', { mode: 'json' }).$type<string[]>().notNull(),
    envio_id: text('envio_id')
      .notNull()
      .references(() => envios.id),
    dte_ids: text('dte_ids', { mode: 'json' }).$type<string[]>().notNull(),
    /** A libro's sources (its documents and set), as services/certificacion-libros.ts fingerprints them: it is current while they are. */
    fuente: text('fuente'),
    /** por_enviar until the SII takes the file (subiendo while an upload holds it); then enviado (DTEs: their states say the rest), or the libro's final state. */
    estado: text('estado').notNull(),
    track_id: text('track_id'),
    glosa_sii: text('glosa_sii'),
    intentos: integer('intentos').notNull().default(0),
    next_attempt_at: text('next_attempt_at'),
    enviado_at: text('enviado_at'),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [index('certificacion_envios_empresa').on(t.empresa_id, t.created_at)],
)

/** What the person recorded of a stage at the SII's site (DESIGN §15 `POST /certificacion/etapas/{etapa}`). */
export const certificacionEtapas = sqliteTable(
  'certificacion_etapas',
  {
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    etapa: text('etapa').notNull(),
    estado: text('estado').notNull(),
    nota: text('nota'),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.empresa_id, t.etapa] })],
)

export type CertificacionSetRow = typeof certificacionSets.$inferSelect
export type CertificacionCasoRow = typeof certificacionCasos.$inferSelect
export type CertificacionEnvioRow = typeof certificacionEnvios.$inferSelect
export type CertificacionEtapaRow = typeof certificacionEtapas.$inferSelect

/**
 * The SII's Registro de Compras y Ventas as last read, one row per company and tax period (DESIGN §16, issue 29). The
 * sync state lives beside the copy: a failed sync records why (`falla_*`) and leaves the last good copy (`resumen`,
 * `sincronizado_at` and the rows of rcv_detalles) untouched. `solicitado_at` is an on-demand request the rcv job has not
 * started; `lease_until` keeps two passes (or two processes) off one period.
 */
export const rcvPeriodos = sqliteTable(
  'rcv_periodos',
  {
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    periodo: text('periodo').notNull(),
    /** The last good copy's per-type summaries: `{ compras: { registro: [...], … }, ventas: [...] }` (domain/rcv.ts ResumenTipoRcv). */
    resumen: text('resumen', { mode: 'json' }).$type<Record<string, unknown>>(),
    sincronizado_at: text('sincronizado_at'),
    /** How many (section, type) details of the last good copy came through the SII's deferred download. */
    diferidas: integer('diferidas').notNull().default(0),
    solicitado_at: text('solicitado_at'),
    intento_at: text('intento_at'),
    lease_until: text('lease_until'),
    falla_motivo: text('falla_motivo'),
    falla_mensaje: text('falla_mensaje'),
    falla_at: text('falla_at'),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.empresa_id, t.periodo] })],
)

/**
 * The details of the last good copy, in the SII's order (`n`) within each register section: `registro` is `compras` or
 * `ventas`, `seccion` the purchases' section (registro, pendiente, no_incluir, reclamado) or `ventas`. `detalle` is the
 * whole domain/rcv.ts DetalleRcv; the key columns beside it serve the lists and the reconciliation.
 */
export const rcvDetalles = sqliteTable(
  'rcv_detalles',
  {
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    periodo: text('periodo').notNull(),
    registro: text('registro', { enum: ['compras', 'ventas'] }).notNull(),
    seccion: text('seccion').notNull(),
    n: integer('n').notNull(),
    tipo_doc: integer('tipo_doc').notNull(),
    rut: text('rut').notNull(),
    folio: integer('folio').notNull(),
    detalle: text('detalle', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.empresa_id, t.periodo, t.registro, t.seccion, t.n] })],
)

export type RcvPeriodoRow = typeof rcvPeriodos.$inferSelect
export type RcvDetalleRow = typeof rcvDetalles.$inferSelect

/**
 * CAF requests and annulments at the SII's folio pages (DESIGN §17, docs/decisions/folios.md). A request is
 * `en_curso` until the SII grants a range (`otorgado`: the range is the company's, recovered by re-download only) and
 * its CAF is stored (`descargado`), or it fails (`fallido`); an annulment is `en_curso` until `anulado` or `fallido`.
 * `otorgando_at` is written just before the grant is POSTed, with the proposed range: a process that dies there
 * re-downloads, never asks again.
 */
export const cafSolicitudes = sqliteTable(
  'caf_solicitudes',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    operacion: text('operacion', { enum: ['solicitud', 'anulacion'] }).notNull(),
    origen: text('origen', { enum: ['api', 'automatica'] }).notNull(),
    tipo_dte: integer('tipo_dte').notNull(),
    estado: text('estado', { enum: ['en_curso', 'otorgado', 'descargado', 'anulado', 'fallido'] }).notNull(),
    /** What was asked; null asks for the SII's maximum. */
    cantidad_pedida: integer('cantidad_pedida'),
    cantidad_solicitada: integer('cantidad_solicitada'),
    max_autor: integer('max_autor'),
    folio_desde: integer('folio_desde'),
    folio_hasta: integer('folio_hasta'),
    fecha_otorgamiento: text('fecha_otorgamiento'),
    otorgando_at: text('otorgando_at'),
    /** The CAF stored from the grant, or the CAF being annulled. */
    caf_id: text('caf_id'),
    motivo_anulacion: text('motivo_anulacion'),
    /**
     * An annulment asked of an open CAF, before any attempt: a clean refusal opens the CAF again. False once an attempt
     * may have reached the SII, or when the CAF was already closed by an earlier annulment (DESIGN §17).
     */
    reabrible: integer('reabrible', { mode: 'boolean' }).notNull().default(false),
    falla_motivo: text('falla_motivo'),
    falla_mensaje: text('falla_mensaje'),
    falla_etapa: text('falla_etapa'),
    intentos: integer('intentos').notNull().default(0),
    proximo_intento_at: text('proximo_intento_at'),
    lease_until: text('lease_until'),
    /** Which process holds the lease: one server per data dir, so another owner's lease died with its process. */
    lease_owner: text('lease_owner'),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [
    index('caf_solicitudes_empresa').on(t.empresa_id, t.id),
    index('caf_solicitudes_estado').on(t.estado, t.proximo_intento_at),
    // One open request per company and type: automatic mode and a person never ask twice at once.
    uniqueIndex('caf_solicitudes_abierta')
      .on(t.empresa_id, t.tipo_dte)
      .where(sql`operacion = 'solicitud' and estado in ('en_curso', 'otorgado')`),
  ],
)

export type CafSolicitudRow = typeof cafSolicitudes.$inferSelect

/** Automatic folios per company (DESIGN §17): off until the company turns it on. */
export const foliosAutomaticos = sqliteTable('folios_automaticos', {
  empresa_id: text('empresa_id')
    .primaryKey()
    .references(() => empresas.id),
  activo: integer('activo', { mode: 'boolean' }).notNull(),
  tipos: text('tipos', { mode: 'json' }).$type<number[]>().notNull(),
  cantidad: integer('cantidad').notNull(),
  /** Free folios at or below which a CAF is asked for; null follows the instance's TIMBRE_CAF_LOW_STOCK. */
  umbral: integer('umbral'),
  /** Folios that stop serving within this many days do not count as free. */
  dias_antes_de_vencer: integer('dias_antes_de_vencer').notNull(),
  updated_at: text('updated_at').notNull(),
})

export type FoliosAutomaticosRow = typeof foliosAutomaticos.$inferSelect
