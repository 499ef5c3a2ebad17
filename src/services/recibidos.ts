// Received documents (DESIGN §13 "Received documents" and "Acting on a received DTE"): the reception of an EnvioDTE
// (from the mailbox or imported by hand), the received record and its queries, and the receiver's actions, registered
// at the SII and answered to the issuer by mail. The follow-up with the SII (reception date, queued actions, the
// 8 days) is services/recibidos-sii.ts, which uses the action steps exported here.
import { createHash } from 'node:crypto'
import { isoTimestamp, santiagoTimestamp } from '../clock'
import { findContribuyente } from '../db/contribuyente-store'
import { findEmpresaById } from '../db/empresa-store'
import { recordInboxAttachment } from '../db/inbox-store'
import { enqueueMail, type QueuedMail } from '../db/mail-outbox-store'
import type { Db } from '../db/open'
import {
  countMailsOfKinds,
  countRecibidoEnvios,
  countRecibidos,
  findRecibido,
  findRecibidoEnvio,
  findRecibidoEnvioBySha,
  findRecibidoEnviosByIds,
  hasRecibido,
  insertRecibido,
  insertRecibidoEnvio,
  listRecibidos as listRows,
  listRecibidosOfEnvio,
  recibidoEnvioNumber,
  updateRecibido,
  type RecibidoFilter,
  type RecibidoListRow,
  type RecibidoPatch,
} from '../db/recibido-store'
import type { EmpresaRow, RecibidoEnvioRow, RecibidoRow } from '../db/schema'
import { isTipoDte } from '../domain/emision'
import { siiTimingFor } from '../domain/estados'
import {
  checkAccion,
  ESTADO_RECEP_DTE,
  ESTADO_RECEP_ENV,
  ESTADO_RESULTADO_DTE,
  ESTADOS_RECIBIDO,
  estadoAfterAccion,
  isEstadoRecibido,
  PLAZO_AVISO_DIAS,
  TIPOS_CON_ACCION,
  type Accion,
  type CheckResult,
  type EstadoRecibido,
  type EstadoResultadoDte,
} from '../domain/intercambio'
import { normalizeRut } from '../domain/rut'
import type { RegistroOutcome } from '../domain/sii-respuestas'
import { TimbreError, validationError, type FieldError } from '../errors'
import type { SiiCompany, SiiCredentials } from '../sii/client/client'
import { authorityKeys } from '../xml/authority-keys'
import { exchangeKindOf } from '../xml/exchange-kind'
import type { ReceivedEnvio } from '../xml/received-envio'
import type { Deps } from './deps'
import { emitEvent } from './events'
import { LEASE_MS, siiCredentials } from './submit-dte'

// ------------------------------------------------------------------------------------------------------ the record

/** One action asked for a received document, as stored in `recibidos.acciones` (the record drops `retry_at`). */
export interface AccionEntry {
  readonly accion: Accion
  readonly motivo: string | null
  readonly estado: 'registrada' | 'pendiente' | 'rechazada'
  readonly cod_resp: number | null
  readonly desc_resp: string | null
  readonly solicitada_at: string
  readonly registrada_at: string | null
  /** While pendiente: when it may be sent to the SII again (the asking request's lease, then the back-off). */
  readonly retry_at?: string | null
}

export type AccionRecord = Omit<AccionEntry, 'retry_at'>

/** The received record (DESIGN §13): the spec's DTE conventions, for a document a supplier issued to the company. */
export interface RecibidoRecord {
  readonly id: string
  readonly rut_emisor: string
  readonly razon_social_emisor: string
  readonly tipo_dte: number
  readonly folio: number
  readonly fecha_emision: string
  readonly monto_neto: number | null
  readonly monto_exento: number | null
  readonly iva: number | null
  readonly monto_total: number
  readonly estado: EstadoRecibido
  readonly estado_recep_dte: number
  readonly plazo: string | null
  readonly fecha_recepcion_sii: string | null
  readonly checks: CheckResult[]
  readonly acciones: AccionRecord[]
  readonly recibido_at: string
  readonly envio: { readonly id: string; readonly origen: RecibidoEnvioRow['origen']; readonly estado_recep_env: number; readonly glosa: string }
}

type EnvioSummary = Pick<RecibidoEnvioRow, 'id' | 'origen' | 'estado_recep_env' | 'glosa'>

export function accionesOf(row: Pick<RecibidoRow, 'acciones'>): AccionEntry[] {
  return row.acciones as unknown as AccionEntry[]
}

export function storedAcciones(acciones: readonly AccionEntry[]): RecibidoRow['acciones'] {
  return acciones as unknown as RecibidoRow['acciones']
}

export function toRecibidoRecord(row: RecibidoListRow, envio: EnvioSummary): RecibidoRecord {
  return {
    id: row.id,
    rut_emisor: row.rut_emisor,
    razon_social_emisor: row.razon_social_emisor,
    tipo_dte: row.tipo_dte,
    folio: row.folio,
    fecha_emision: row.fecha_emision,
    monto_neto: row.monto_neto,
    monto_exento: row.monto_exento,
    iva: row.iva,
    monto_total: row.monto_total,
    estado: row.estado,
    estado_recep_dte: row.estado_recep_dte,
    plazo: row.plazo,
    fecha_recepcion_sii: row.fecha_recepcion_sii,
    checks: row.checks,
    acciones: accionesOf(row).map(({ retry_at: _r, ...a }) => a),
    recibido_at: row.recibido_at,
    envio: { id: envio.id, origen: envio.origen, estado_recep_env: envio.estado_recep_env, glosa: envio.glosa },
  }
}

/** The record of a row just read or written, its envelope read in the same `db` (a transaction's, in an event). */
export function recordOf(db: Db, row: RecibidoRow): RecibidoRecord {
  const envio = findRecibidoEnvio(db, row.empresa_id, row.envio_id)
  if (!envio) throw new Error(`recibido ${row.id}: its envelope ${row.envio_id} is missing`)
  return toRecibidoRecord(row, envio)
}

export function getRecibido(deps: Pick<Deps, 'store'>, input: { empresaId: string; id: string }): RecibidoRecord {
  const row = findRecibido(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return recordOf(deps.store.db, row)
}

/** The standalone signed `<DTE>` exactly as it came in the envelope (ISO-8859-1 bytes). */
export function getRecibidoXml(deps: Pick<Deps, 'store'>, input: { empresaId: string; id: string }): { bytes: Uint8Array; tipoDte: number; folio: number; rutEmisor: string } {
  const row = findRecibido(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return { bytes: row.xml, tipoDte: row.tipo_dte, folio: row.folio, rutEmisor: row.rut_emisor }
}

/** The filters of `GET /recibidos` as they come in the query; their shape is checked by the route's schema. */
export interface RecibidoListQuery {
  readonly rut_emisor?: string
  readonly tipo_dte?: string
  readonly estado?: string
  readonly fecha_desde?: string
  readonly fecha_hasta?: string
}

/** The list's filters, checked: 400 naming each bad one (the pending board applies the same). */
export function recibidoFilterOf(q: RecibidoListQuery): RecibidoFilter {
  const errors: FieldError[] = []
  const tipo = q.tipo_dte === undefined ? undefined : Number(q.tipo_dte)
  if (tipo !== undefined && !isTipoDte(tipo)) errors.push({ field: 'tipo_dte', code: 'INVALID_VALUE', message: 'Tipo de DTE desconocido.' })
  if (q.estado !== undefined && !isEstadoRecibido(q.estado))
    errors.push({ field: 'estado', code: 'INVALID_VALUE', message: `Estado desconocido; valores aceptados: ${ESTADOS_RECIBIDO.join(', ')}.` })
  const rut = q.rut_emisor === undefined ? undefined : normalizeRut(q.rut_emisor)
  if (rut === null) errors.push({ field: 'rut_emisor', code: 'INVALID_RUT', message: 'RUT inválido.' })
  if (q.fecha_desde !== undefined && q.fecha_hasta !== undefined && q.fecha_desde > q.fecha_hasta)
    errors.push({ field: 'fecha_desde', code: 'INCONSISTENT', message: 'fecha_desde es posterior a fecha_hasta.' })
  if (errors.length > 0) throw validationError(errors)
  const estado = q.estado !== undefined && isEstadoRecibido(q.estado) ? q.estado : undefined
  return { tipoDte: tipo, estado, fechaDesde: q.fecha_desde, fechaHasta: q.fecha_hasta, rutEmisor: rut ?? undefined }
}

/** `GET /recibidos`: newest first, `total_count` over every match of the filters (the DTE list's conventions, DESIGN §8). */
export function listRecibidos(
  deps: Pick<Deps, 'store'>,
  input: { empresaId: string; query: RecibidoListQuery; afterId: string | null; limit: number },
): { rows: RecibidoRecord[]; total: number } {
  const filter = recibidoFilterOf(input.query)
  const db = deps.store.db
  const rows = listRows(db, input.empresaId, filter, input.afterId, input.limit)
  const envios = findRecibidoEnviosByIds(db, input.empresaId, rows.map((r) => r.envio_id))
  return {
    rows: rows.map((r) => {
      const envio = envios.get(r.envio_id)
      if (!envio) throw new Error(`recibido ${r.id}: its envelope ${r.envio_id} is missing`)
      return toRecibidoRecord(r, envio)
    }),
    total: countRecibidos(db, input.empresaId, filter),
  }
}

// ------------------------------------------------------------------------------------------------------ reception

export type ReceiveDeps = Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'config'>

export interface ReceiveInput {
  readonly empresaId: string
  readonly bytes: Uint8Array
  readonly origen: 'correo' | 'importar' | 'demo'
  readonly fromAddress: string | null
  readonly fileName: string | null
}

export interface ReceiveResult {
  readonly envio: RecibidoEnvioRow
  readonly documentos: RecibidoRow[]
  readonly created: boolean
}

/**
 * The exchange's XML (the checks of a received envelope and its signatures, the signed RespuestaDTE and EnvioRecibos)
 * loads with the first reception or action, not at start: a server that receives nothing keeps xml-crypto and
 * xmlbuilder2 out of its main thread's memory (issue 17).
 */
async function exchangeXml() {
  const [received, respuesta, recibos] = await Promise.all([import('../xml/received-envio'), import('../xml/respuesta-dte'), import('../xml/envio-recibos')])
  return {
    checkReceivedEnvio: received.checkReceivedEnvio,
    buildRecepcionEnvio: respuesta.buildRecepcionEnvio,
    buildResultadoDte: respuesta.buildResultadoDte,
    buildEnvioRecibos: recibos.buildEnvioRecibos,
  }
}

type ExchangeXml = Awaited<ReturnType<typeof exchangeXml>>

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** IDK 900 (the simulator's CAFs) exactly where issuance accepts it: off the real SII, or for the demo company (DESIGN §8). */
export function acceptsSimulatedCafs(deps: Pick<Deps, 'config'>, empresa: EmpresaRow): boolean {
  return deps.config.sii.kind !== 'sii' || empresa.is_demo
}

/**
 * Receives an EnvioDTE: an envelope already stored for the company (same SHA-256) is returned as it is, unchanged.
 * Otherwise every check runs (xml/received-envio.ts), then one transaction stores the envelope — kept even when it
 * cannot be read (91), so the same bytes are not processed twice —, one document per DTE it holds, the attachment's
 * inbox row, a `recibido.created` per document and, for mail with an active certificate, the signed acuse de recibo
 * (RespuestaDTE RecepcionEnvio) queued to the sender. Signing happens before the transaction, never inside it.
 */
export async function receiveEnvio(deps: ReceiveDeps, input: ReceiveInput): Promise<ReceiveResult> {
  return receive(deps, input, null)
}

/** `refuseUnreadable`: the import's field; an unreadable envelope (91) is then a 400 there and nothing is stored. */
async function receive(deps: ReceiveDeps, input: ReceiveInput, refuseUnreadable: string | null): Promise<ReceiveResult> {
  const { empresaId, bytes } = input
  const db = deps.store.db
  const sha256 = sha256Hex(bytes)
  const kept = storedReception(db, empresaId, sha256)
  if (kept) {
    if (refuseUnreadable !== null && kept.envio.estado_recep_env === ESTADO_RECEP_ENV.archivoIlegible) throw unreadable(refuseUnreadable, kept.envio.glosa)
    return kept
  }
  const empresa = findEmpresaById(db, empresaId)
  if (!empresa) throw new Error(`empresa ${empresaId} is missing`)
  const exchange = await exchangeXml()
  const checked = await exchange.checkReceivedEnvio(bytes, {
    rutEmpresa: empresa.rut,
    authorityKeys: authorityKeys({ allowSimulator: acceptsSimulatedCafs(deps, empresa) }),
    isDuplicate: (rutEmisor, tipoDte, folio) => hasRecibido(db, empresaId, rutEmisor, tipoDte, folio),
  })
  if (refuseUnreadable !== null && checked.estadoRecepEnv === ESTADO_RECEP_ENV.archivoIlegible) throw unreadable(refuseUnreadable, checked.glosa)
  const now = deps.clock.now()
  const at = isoTimestamp(now)
  const envioId = Bun.randomUUIDv7()
  const acuse = input.origen === 'correo' ? prepareAcuse(deps, exchange, { empresa, checked, envioId, fileName: input.fileName, fromAddress: input.fromAddress, now }) : null
  const result = db.transaction(
    (tx) => {
      // Another process may have taken the same bytes while this one checked them (unique (empresa_id, sha256)).
      const raced = storedReception(tx, empresaId, sha256)
      if (raced) return raced
      const envio = insertRecibidoEnvio(tx, {
        id: envioId, empresa_id: empresaId, sha256, origen: input.origen, from_address: input.fromAddress, file_name: input.fileName,
        envio_dte_id: checked.envioDteId, rut_emisor: checked.rutEmisor, rut_envia: checked.rutEnvia,
        estado_recep_env: checked.estadoRecepEnv, glosa: checked.glosa, checks: [...checked.checks], xml: Buffer.from(bytes), created_at: at,
      })
      const documentos = checked.documentos.map((d) => {
        const good = checked.estadoRecepEnv === ESTADO_RECEP_ENV.conforme && d.estadoRecepDte === ESTADO_RECEP_DTE.ok
        const row = insertRecibido(tx, {
          id: Bun.randomUUIDv7(), empresa_id: empresaId, envio_id: envio.id, rut_emisor: d.rutEmisor, razon_social_emisor: d.razonSocialEmisor,
          tipo_dte: d.tipoDte, folio: d.folio, fecha_emision: d.fechaEmision, rut_receptor: d.rutReceptor, monto_neto: d.montoNeto,
          monto_exento: d.montoExento, iva: d.iva, monto_total: d.montoTotal, estado: good ? 'recibido' : 'rechazado_tecnico',
          // The document's checks begin with the envelope's three as they apply to it (xml/received-envio.ts).
          estado_recep_dte: d.estadoRecepDte, checks: [...d.checks], acciones: [],
          // Types with actions ask the SII for its reception date at once: the 8 days run from it (recibidos-sii.ts).
          next_sii_at: good && hasAcciones(d.tipoDte) ? at : null,
          xml: Buffer.from(d.xml), recibido_at: at, updated_at: at,
        })
        emitEvent(tx, { empresaId, type: 'recibido.created', data: { recibido: toRecibidoRecord(row, envio) }, now })
        return row
      })
      recordInboxAttachment(tx, {
        empresa_id: empresaId, sha256, kind: 'envio_dte', outcome: envio.id, from_address: input.fromAddress, file_name: input.fileName, created_at: at,
      })
      if (acuse) enqueueMail(tx, { ...acuse, recibidoEnvioId: envio.id, at })
      return { envio, documentos, created: true }
    },
    { behavior: 'immediate' },
  )
  if (result.created)
    deps.log.info('recibidos.received', {
      empresa_id: empresaId, envio_id: result.envio.id, origen: input.origen, estado_recep_env: result.envio.estado_recep_env,
      documentos: result.documentos.length, acuse: acuse === null ? 'no' : acuse.to === null ? 'sin_destinatario' : 'queued',
    })
  return result
}

function storedReception(db: Db, empresaId: string, sha256: string): ReceiveResult | null {
  const envio = findRecibidoEnvioBySha(db, empresaId, sha256)
  return envio ? { envio, documentos: listRecibidosOfEnvio(db, empresaId, envio.id), created: false } : null
}

function unreadable(field: string, glosa: string): TimbreError {
  return validationError([{ field, code: 'INVALID_FORMAT', message: `El archivo no es un EnvioDTE legible: ${glosa}.` }])
}

export function hasAcciones(tipoDte: number): boolean {
  return (TIPOS_CON_ACCION as readonly number[]).includes(tipoDte)
}

/**
 * The acuse de recibo of a mailed envelope (DESIGN §13): the RespuestaDTE with its RecepcionEnvio, signed with the
 * company's active certificate; null without one (the reception is kept; nothing can be signed).
 */
function prepareAcuse(
  deps: ReceiveDeps,
  exchange: ExchangeXml,
  input: { empresa: EmpresaRow; checked: ReceivedEnvio; envioId: string; fileName: string | null; fromAddress: string | null; now: Date },
): Omit<QueuedMail, 'at'> | null {
  const { empresa, checked, now } = input
  const db = deps.store.db
  const creds = siiCredentials(deps, { empresaId: empresa.id, now })
  if (!creds) return null
  // CodEnvio: the envelope's number among the company's (recibidoEnvioNumber reads it back for the ResultadoDTE).
  const codEnvio = countRecibidoEnvios(db, empresa.id) + 1
  const idRespuesta = countMailsOfKinds(db, empresa.id, RESPUESTAS) + 1
  const xml = exchange.buildRecepcionEnvio(
    {
      rutResponde: empresa.rut,
      // RutRecibe is required: an envelope too broken to name its issuer (91) is answered to whoever signed it, else
      // to the company itself (the mail still goes to the sender's address).
      rutRecibe: normalizeRut(checked.rutEmisor ?? '') ?? normalizeRut(checked.rutEnvia ?? '') ?? empresa.rut,
      idRespuesta,
      tmst: now,
      envio: {
        nmbEnvio: input.fileName ?? `EnvioDTE_${checked.envioDteId ?? input.envioId}.xml`,
        fchRecep: now,
        codEnvio,
        envioDteId: checked.envioDteId ?? '',
        digest: checked.digest,
        rutEmisor: checked.rutEmisor,
        rutReceptor: checked.rutReceptor,
        estadoRecepEnv: checked.estadoRecepEnv,
        glosa: checked.glosa,
        documentos: checked.documentos.map((d) => ({
          tipoDte: d.tipoDte, folio: d.folio, fechaEmision: d.fechaEmision, rutEmisor: d.rutEmisor, rutReceptor: d.rutReceptor,
          montoTotal: d.montoTotal, estadoRecepDte: d.estadoRecepDte, glosa: d.glosa,
        })),
      },
    },
    creds.signer,
  )
  return {
    empresaId: empresa.id,
    kind: 'recepcion_envio',
    to: input.fromAddress,
    subject: `Acuse de recibo EnvioDTE ${checked.envioDteId ?? input.envioId}`,
    attachment: xml,
    attachmentName: `RespuestaDTE_${empresa.rut.replace('-', '')}_${idRespuesta}.xml`,
  }
}

/** The mail kinds that carry a RespuestaDTE: one IdRespuesta sequence for both. */
const RESPUESTAS = ['recepcion_envio', 'resultado_dte'] as const

// ------------------------------------------------------------------------------------------------------ import

export interface ImportAnswer {
  readonly status: 200 | 201
  readonly body: {
    readonly estado_recep_env: number
    readonly glosa: string
    readonly documentos: Array<{ id: string; tipo_dte: number; folio: number; rut_emisor: string; estado: EstadoRecibido; estado_recep_dte: number }>
  }
}


/**
 * `POST /recibidos/importar` (DESIGN §13): an EnvioDTE uploaded by hand, for companies without IMAP. The same checks
 * as a mailed one, no mail. A file that is not XML, not an EnvioDTE or cannot be read (91) is 400 at `field` and
 * nothing is stored; the same file again answers 200 with the documents it made the first time.
 */
export async function importRecibidos(deps: ReceiveDeps, input: { empresaId: string; bytes: Uint8Array; fileName: string | null; field: string }): Promise<ImportAnswer> {
  const { field, bytes } = input
  if (bytes.length === 0) throw validationError([{ field, code: 'REQUIRED', message: 'El archivo está vacío.' }])
  const kind = exchangeKindOf(bytes)
  if (kind !== 'EnvioDTE')
    throw validationError([
      { field, code: kind === null ? 'INVALID_FORMAT' : 'INVALID_VALUE', message: kind === null ? 'El archivo no es XML legible.' : `El archivo es un ${kind}, no un EnvioDTE.` },
    ])
  const r = await receive(deps, { empresaId: input.empresaId, bytes, origen: 'importar', fromAddress: null, fileName: input.fileName }, field)
  return {
    status: r.created ? 201 : 200,
    body: {
      estado_recep_env: r.envio.estado_recep_env,
      glosa: r.envio.glosa,
      documentos: r.documentos.map((d) => ({ id: d.id, tipo_dte: d.tipo_dte, folio: d.folio, rut_emisor: d.rut_emisor, estado: d.estado, estado_recep_dte: d.estado_recep_dte })),
    },
  }
}

// ------------------------------------------------------------------------------------------------------ actions

export type AccionDeps = Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'sii' | 'siiTiming'>

/** Who acts at the SII and signs the answer: the receiving company and its own active certificate. */
export interface AccionContext {
  readonly empresa: EmpresaRow
  readonly company: SiiCompany
  readonly creds: SiiCredentials
  /** The back-off of an unanswered call (DESIGN §6's tracking policy; the demo keeps the simulator's pace). */
  readonly retry: { readonly firstMs: number; readonly capMs: number }
}

/** The company's SII identity; null while it has no active certificate. */
export function accionContextOf(deps: AccionDeps, empresaId: string, now: Date): AccionContext | null {
  const empresa = findEmpresaById(deps.store.db, empresaId)
  if (!empresa) throw new Error(`empresa ${empresaId} is missing`)
  const creds = siiCredentials(deps, { empresaId, now })
  if (!creds) return null
  return {
    empresa,
    company: { rut: empresa.rut, ambiente: empresa.ambiente, isDemo: empresa.is_demo },
    creds,
    retry: siiTimingFor(empresa.is_demo, deps.siiTiming).track,
  }
}

/**
 * Wait before asking the SII again about something unanswered since `since`: as long as it has already waited, from the
 * policy's first step to its cap. No attempt counter is stored, and the waits still double (30 s, 1 min, 2 min … 30 min).
 */
export function retryAt(policy: { readonly firstMs: number; readonly capMs: number }, since: string, now: Date): string {
  const waited = now.getTime() - new Date(since).getTime()
  return isoTimestamp(new Date(now.getTime() + Math.min(policy.capMs, Math.max(policy.firstMs, waited))))
}

const DAY_MS = 24 * 60 * 60_000

/**
 * When the follow-up (recibidos-sii.ts) must next look at a document: the earliest of asking the SII's reception date
 * (`fechaAt`, while unknown and the document still waits for an action), each queued action's retry, the plazo's
 * warning (2 days before, once) and the plazo itself (tacit acceptance); null when nothing is due.
 */
export function nextSiiAt(row: Pick<RecibidoRow, 'estado' | 'tipo_dte' | 'fecha_recepcion_sii' | 'plazo' | 'plazo_avisado'>, acciones: readonly AccionEntry[], fechaAt: Date | null): string | null {
  const due: number[] = []
  const waiting = row.estado === 'recibido' && hasAcciones(row.tipo_dte)
  if (waiting && row.fecha_recepcion_sii === null && fechaAt !== null) due.push(fechaAt.getTime())
  for (const a of acciones) if (a.estado === 'pendiente' && a.retry_at) due.push(new Date(a.retry_at).getTime())
  if (waiting && row.plazo !== null) {
    const plazo = new Date(row.plazo).getTime()
    if (!row.plazo_avisado) due.push(plazo - PLAZO_AVISO_DIAS * DAY_MS)
    // Tacit acceptance once the plazo has passed (checkAccion refuses after it, not at it).
    due.push(plazo + 1)
  }
  return due.length === 0 ? null : isoTimestamp(new Date(Math.min(...due)))
}

/** The reception-date step's own schedule, for writers that do not own it: keep what the row had, or now. */
export function fechaAtOf(row: Pick<RecibidoRow, 'next_sii_at'>, now: Date): Date {
  return row.next_sii_at === null ? now : new Date(row.next_sii_at)
}

export interface AccionAnswer {
  /** 200: registered at the SII; 202: the SII could not be reached, queued (its outcome comes as `recibido.accion`). */
  readonly status: 200 | 202
  readonly record: RecibidoRecord
}

/**
 * `POST /recibidos/{id}/acciones` (DESIGN §13). The order and the 8 days are checked (checkAccion), and the action is
 * marked pendiente in the same transaction, so of two requests at once on one document only the first passes: a
 * document with an action still pending takes no other until the SII has answered it. Then the SII is asked
 * (ingresarAceptacionReclamoDoc, with the company's own certificate) and its answer applied (registerAccion).
 */
export async function solicitarAccion(deps: AccionDeps, input: { empresaId: string; id: string; accion: Accion; motivo: string | null }): Promise<AccionAnswer> {
  const { empresaId, id } = input
  const now = deps.clock.now()
  const at = isoTimestamp(now)
  const found = findRecibido(deps.store.db, empresaId, id)
  if (!found) throw new TimbreError('NOT_FOUND')
  const ctx = accionContextOf(deps, empresaId, now)
  if (!ctx) throw new TimbreError('CERTIFICATE_REQUIRED', { message: 'Se requiere un certificado digital activo y vigente para registrar la acción en el SII.' })
  const marked = deps.store.db.transaction(
    (tx) => {
      const row = findRecibido(tx, empresaId, id)
      if (!row) throw new TimbreError('NOT_FOUND')
      const acciones = accionesOf(row)
      if (acciones.some((a) => a.estado === 'pendiente'))
        throw new TimbreError('ACCION_NO_PERMITIDA', { context: { motivo: 'hay una acción pendiente de registro en el SII para este documento; espere su resultado (webhook recibido.accion)' } })
      const verdict = checkAccion({
        tipoDte: row.tipo_dte, estado: row.estado, plazo: row.plazo === null ? null : new Date(row.plazo), now,
        previas: acciones.filter((a) => a.estado === 'registrada'), accion: input.accion,
      })
      if (!verdict.ok) throw new TimbreError(verdict.code, { context: { motivo: verdict.reason } })
      // Held by this request while it asks the SII: the follow-up leaves an entry alone until its retry_at.
      const entry: AccionEntry = {
        accion: input.accion, motivo: input.motivo, estado: 'pendiente', cod_resp: null, desc_resp: null, solicitada_at: at, registrada_at: null,
        retry_at: isoTimestamp(new Date(now.getTime() + LEASE_MS)),
      }
      const next = [...acciones, entry]
      const updated = updateRecibidoRow(tx, row, { acciones: storedAcciones(next), next_sii_at: nextSiiAt(row, next, fechaAtOf(row, now)), updated_at: at })
      return { row: updated, index: next.length - 1 }
    },
    { behavior: 'immediate' },
  )
  const done = await registerAccion(deps, ctx, marked.row, marked.index, { emit: false })
  const entry = accionesOf(done)[marked.index]!
  if (entry.estado === 'rechazada')
    throw new TimbreError(entry.cod_resp === COD_RESP_PLAZO_VENCIDO ? 'PLAZO_VENCIDO' : 'ACCION_NO_PERMITIDA', {
      message: `El SII rechazó la acción ${entry.accion}: ${entry.desc_resp ?? ''}`.trim(),
      context: { cod_resp: entry.cod_resp, desc_resp: entry.desc_resp },
    })
  return { status: entry.estado === 'registrada' ? 200 : 202, record: recordOf(deps.store.db, done) }
}

/** codResp of ingresarAceptacionReclamoDoc (docs/sii-protocol.md §6.7): 7 the event was already registered; 8 past the 8 days. */
const COD_RESP_YA_REGISTRADO = 7
const COD_RESP_PLAZO_VENCIDO = 8

export function updateRecibidoRow(db: Db, row: Pick<RecibidoRow, 'empresa_id' | 'id'>, patch: RecibidoPatch): RecibidoRow {
  const updated = updateRecibido(db, row.empresa_id, row.id, patch)
  if (!updated) throw new Error(`recibido ${row.id} vanished`)
  return updated
}

/**
 * Asks the SII to register the pending action at `index` and applies its answer in one transaction:
 * - registered (or codResp 7, already registered: an earlier attempt whose answer was lost) → the action `registrada`,
 *   the document `aceptado` or `reclamado`, and the answer to the issuer queued (ResultadoDTE, or EnvioRecibos for ERM);
 * - refused (codResp ≠ 0) → the action `rechazada` with the SII's code and text; the document as it was;
 * - unanswered → still `pendiente`, retried by the follow-up after a back-off.
 * `emit`: the follow-up announces the outcome as `recibido.accion`; a request answers it in its response instead.
 */
export async function registerAccion(deps: AccionDeps, ctx: AccionContext, row: RecibidoRow, index: number, opts: { emit: boolean }): Promise<RecibidoRow> {
  const entry = accionesOf(row)[index]
  if (!entry || entry.estado !== 'pendiente') return row
  const exchange = await exchangeXml()
  const asked = await deps.sii.registrarAccion(ctx.company, ctx.creds, { rutEmisor: row.rut_emisor, tipoDte: row.tipo_dte, folio: row.folio }, entry.accion)
  const outcome: RegistroOutcome =
    asked.kind === 'rechazada' && asked.codResp === COD_RESP_YA_REGISTRADO ? { kind: 'registrada', codResp: 0, descResp: asked.descResp } : asked
  const now = deps.clock.now()
  const at = isoTimestamp(now)
  const mail = outcome.kind === 'registrada' ? prepareAnswer(deps, exchange, ctx, row, entry, now) : null
  const applied = deps.store.db.transaction(
    (tx) => {
      const cur = findRecibido(tx, row.empresa_id, row.id)
      if (!cur) throw new Error(`recibido ${row.id} vanished`)
      const acciones = accionesOf(cur)
      const pending = acciones[index]
      if (!pending || pending.estado !== 'pendiente' || pending.solicitada_at !== entry.solicitada_at) return cur
      const resolved: AccionEntry =
        outcome.kind === 'retry'
          ? { ...pending, retry_at: retryAt(ctx.retry, pending.solicitada_at, now) }
          : { ...pending, estado: outcome.kind, cod_resp: outcome.codResp, desc_resp: outcome.descResp, registrada_at: outcome.kind === 'registrada' ? at : null, retry_at: null }
      const next = acciones.map((a, i) => (i === index ? resolved : a))
      const estado = outcome.kind === 'registrada' ? estadoAfterAccion(entry.accion) : cur.estado
      const moved = { ...cur, estado }
      const updated = updateRecibidoRow(tx, cur, { acciones: storedAcciones(next), estado, next_sii_at: nextSiiAt(moved, next, fechaAtOf(cur, now)), updated_at: at })
      if (mail) enqueueMail(tx, { ...mail, recibidoId: cur.id, recibidoEnvioId: cur.envio_id, at })
      if (opts.emit && outcome.kind !== 'retry') emitEvent(tx, { empresaId: cur.empresa_id, type: 'recibido.accion', data: { recibido: recordOf(tx, updated) }, now })
      return updated
    },
    { behavior: 'immediate' },
  )
  deps.log.info('recibidos.accion', {
    empresa_id: row.empresa_id, recibido_id: row.id, tipo_dte: row.tipo_dte, folio: row.folio, accion: entry.accion, outcome: outcome.kind,
    cod_resp: outcome.kind === 'retry' ? undefined : outcome.codResp, reason: outcome.kind === 'retry' ? outcome.reason : undefined,
  })
  return applied
}

/** EstadoDTE of the ResultadoDTE each action sends the issuer: ACD accepts; RFP accepts with discrepancies (part of the goods are missing); RCD and RFT reject. */
const RESULTADO_DE: Readonly<Record<Exclude<Accion, 'ERM'>, EstadoResultadoDte>> = {
  ACD: ESTADO_RESULTADO_DTE.aceptado,
  RFP: ESTADO_RESULTADO_DTE.aceptadoConDiscrepancias,
  RCD: ESTADO_RESULTADO_DTE.rechazado,
  RFT: ESTADO_RESULTADO_DTE.rechazado,
}

/**
 * The answer mailed to the issuer once the SII registered the action (DESIGN §13), signed with the receiver's
 * certificate before the transaction that queues it: a ResultadoDTE (ACD, RCD, RFP, RFT) or, for ERM, the EnvioRecibos
 * of Ley 19.983. The address: the one the envelope came from, else the SII's list of issuers, else none
 * (`sin_destinatario`: queued, never sent).
 */
function prepareAnswer(deps: AccionDeps, exchange: ExchangeXml, ctx: AccionContext, row: RecibidoRow, entry: AccionEntry, now: Date): Omit<QueuedMail, 'at'> {
  const db = deps.store.db
  const envio = findRecibidoEnvio(db, row.empresa_id, row.envio_id)
  const to = envio?.from_address ?? findContribuyente(db, row.rut_emisor)?.email_intercambio ?? null
  const rut = ctx.empresa.rut.replace('-', '')
  const doc = `${row.tipo_dte} folio ${row.folio}`
  const documento = { folio: row.folio, fechaEmision: row.fecha_emision, rutEmisor: row.rut_emisor, montoTotal: row.monto_total }
  if (entry.accion === 'ERM') {
    const n = countMailsOfKinds(db, row.empresa_id, ['envio_recibos']) + 1
    const xml = exchange.buildEnvioRecibos(
      {
        rutResponde: ctx.empresa.rut,
        rutRecibe: row.rut_emisor,
        tmst: now,
        recibos: [{ ...documento, tipoDoc: row.tipo_dte, rutRecep: row.rut_receptor, recinto: recintoOf(ctx.empresa), rutFirma: ctx.creds.rutFirmante, tmst: now }],
      },
      ctx.creds.signer,
    )
    return { empresaId: row.empresa_id, kind: 'envio_recibos', to, subject: `Recibo de mercaderías DTE ${doc}`, attachment: xml, attachmentName: `EnvioRecibos_${rut}_${n}.xml` }
  }
  const idRespuesta = countMailsOfKinds(db, row.empresa_id, RESPUESTAS) + 1
  const xml = exchange.buildResultadoDte(
    {
      rutResponde: ctx.empresa.rut,
      rutRecibe: row.rut_emisor,
      idRespuesta,
      tmst: now,
      resultados: [
        {
          ...documento, tipoDte: row.tipo_dte, rutReceptor: row.rut_receptor, codEnvio: recibidoEnvioNumber(db, row.empresa_id, row.envio_id),
          estadoDte: RESULTADO_DE[entry.accion], glosa: entry.motivo ?? GLOSA_ACCION[entry.accion],
        },
      ],
    },
    ctx.creds.signer,
  )
  return {
    empresaId: row.empresa_id, kind: 'resultado_dte', to, subject: `Resultado de la revisión DTE ${doc}`,
    attachment: xml, attachmentName: `RespuestaDTE_${rut}_${idRespuesta}.xml`,
  }
}

/** The ResultadoDTE's EstadoDTEGlosa when the request gave no motivo. */
const GLOSA_ACCION: Readonly<Record<Exclude<Accion, 'ERM'>, string>> = {
  ACD: 'Aceptación del contenido del documento',
  RCD: 'Reclamo al contenido del documento',
  RFP: 'Reclamo por falta parcial de mercaderías',
  RFT: 'Reclamo por falta total de mercaderías',
}

/** Where the goods or services were received (Recibo/Recinto, up to 80 characters): the company's address. */
function recintoOf(empresa: EmpresaRow): string {
  return `${empresa.direccion}, ${empresa.comuna}`.slice(0, 80)
}
