// POST /dte (spec 4.1, 4.8; DESIGN §6, §11, §12; issue 17). The main thread checks the request, reserves the folio
// (db/folio-reserver.ts: serial, in memory), a worker builds, stamps and signs the document on another core, and the
// signed document, its folio's use, its events and its idempotency record are committed together in a group commit
// (db/group-commit.ts). The 201 is answered only after that COMMIT returned. A failed signature or commit gives the folio
// back; a crash before the commit leaves nothing stored and nothing sent, and the restarted server reuses the folio.
import { createHash } from 'node:crypto'
import { isoTimestamp, santiagoDate, santiagoTimestamp } from '../clock'
import { advanceNextFolio, folioReserverOf, type Reservation } from '../db/folio-reserver'
import { groupCommitterOf } from '../db/group-commit'
import { findDteReferencias, insertDte } from '../db/dte-store'
import { findEmpresaById } from '../db/empresa-store'
import { deleteIdempotencyKey, findIdempotencyKey, insertIdempotencyKey } from '../db/idempotency-store'
import type { Db } from '../db/open'
import type { CafRow, IdempotencyRow } from '../db/schema'
import { canonicalJson } from '../domain/canonical-json'
import { documentReferences, resolveFechaEmision, type EmitirDte } from '../domain/emision'
import { checkEmision } from '../domain/emision-rules'
import { normalizeRut } from '../domain/rut'
import { isNotaRef, notaKey, reglaImpuesto, type DocumentoRef, type NotasEmitidas } from '../domain/tipos'
import { computeTotals, montoTotalMoneda } from '../domain/totals'
import { TimbreError, type FieldError } from '../errors'
import type { EmpresaEmisora } from '../xml/dte-xml'
import type { CafMaterial } from '../workers/signing-keys'
import { openActiveCertificado } from './certificados'
import { checkCafStock, emitDteCreated } from './events'
import type { Deps } from './deps'
import { storedInstantsOf } from './stored-instant'

/** Spec 2.2: the issuance response holds only these. */
export interface IssuanceResponse {
  readonly id: string
  readonly folio: number
  readonly tipo_dte: number
  readonly estado: 'firmado'
  readonly monto_total: number
  readonly created_at: string
}

export interface StoredAnswer {
  readonly status: number
  readonly body: unknown
  readonly location: string | null
  readonly isReplay: boolean
}

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex')
}

function replayOf(row: IdempotencyRow, hash: string): StoredAnswer {
  if (row.request_hash !== hash) throw new TimbreError('IDEMPOTENCY_BODY_MISMATCH', { context: { idempotency_key: row.key } })
  return { status: row.response_status, body: JSON.parse(row.response_body) as unknown, location: row.location, isReplay: true }
}

/** A stored answer for this key, replayed; 422 when the key came with another body; null when the key is new. */
export function findIdempotentAnswer(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; idempotencyKey: string; body: unknown }): StoredAnswer | null {
  const row = findIdempotencyKey(deps.store.db, input.empresaId, input.idempotencyKey)
  if (!row || isExpired(row, deps.clock.now())) return null
  return replayOf(row, requestHash(input.body))
}

function isExpired(row: IdempotencyRow, now: Date): boolean {
  return Date.parse(row.created_at) + IDEMPOTENCY_RETENTION_MS <= now.getTime()
}

// The CAF's folio key, opened from the vault once per CAF and kept as the DER a signing task carries to its worker.
const cafMaterials = new Map<string, CafMaterial>()

function cafMaterialOf(deps: Pick<Deps, 'vault'>, row: CafRow): CafMaterial {
  const cached = cafMaterials.get(row.id)
  if (cached) return cached
  const material: CafMaterial = { id: row.id, cafXml: row.caf_xml, pkcs8: new Uint8Array(deps.vault.open(row.private_key_sealed, `caf:${row.id}`)) }
  cafMaterials.set(row.id, material)
  return material
}

/** Requests of this process still between their idempotency check and their commit (spec 4.8 item 4: 409). */
const inFlight = new Set<string>()

// ------------------------------------------------------------------------------------------------ notes over notes

/** Notes looked up for one request at most: real chains are one to three notes long; past this the rest count as unknown. */
const MAX_NOTAS = 64

function hasRetenciones(request: EmitirDte): boolean {
  const codes = [...request.detalle.map((l) => l.cod_imp_adic), ...(request.impuestos_retenciones ?? []).map((t) => t.tipo_imp)]
  return codes.some((code) => code !== undefined && reglaImpuesto(code)?.clase === 'R')
}

/** The stored `referencias` JSON as the retention rule reads it; anything else in it is ignored. */
function asDocumentoRefs(stored: readonly unknown[]): DocumentoRef[] {
  return stored.flatMap((r) => {
    const { tipo_doc_ref: tipo, folio_ref: folio } = (r ?? {}) as Record<string, unknown>
    return (typeof tipo === 'number' || typeof tipo === 'string') && typeof folio === 'number' ? [{ tipo_doc_ref: tipo, folio_ref: folio }] : []
  })
}

/** The company's notes reachable from `refs` through their own references, each looked up once by (tipo, folio). */
function resolveNotas(db: Db, empresaId: string, refs: readonly DocumentoRef[]): NotasEmitidas {
  const notas = new Map<string, DocumentoRef[]>()
  const looked = new Set<string>()
  const pending = refs.filter(isNotaRef)
  for (let r = pending.pop(); r !== undefined && looked.size < MAX_NOTAS; r = pending.pop()) {
    const key = notaKey(r.tipo_doc_ref, r.folio_ref)
    if (looked.has(key)) continue
    looked.add(key)
    const stored = findDteReferencias(db, empresaId, Number(r.tipo_doc_ref), r.folio_ref)
    if (stored === undefined) continue
    const own = asDocumentoRefs(stored)
    notas.set(key, own)
    pending.push(...own.filter(isNotaRef))
  }
  return notas
}

// A 56/61 with retention codes over another note is valid when that note leads to a 46 (domain/tipos.ts
// allowsRetenciones). The door validated the request without the store, so every referenced note counted as unknown
// and was accepted; here, the one place that owns the store, the notes are looked up and the rules run again with
// them, so a chain that ends at a 33 is refused with the same 400 at the same field paths. Chosen over a lookup
// function handed to the domain: the rule stays pure data in, errors out, and the door needs no access to the store.
function checkRetencionesSobreNotas(db: Db, empresaId: string, request: EmitirDte, today: string): void {
  if ((request.tipo_dte !== 56 && request.tipo_dte !== 61) || !hasRetenciones(request)) return
  const refs = documentReferences(request)
  if (!refs.some(isNotaRef)) return
  const notas = resolveNotas(db, empresaId, refs)
  if (notas.size === 0) return
  const errors = checkEmision(request, today, { notas })
  if (errors.length > 0) throw new TimbreError('VALIDATION_ERROR', { details: errors })
}

export interface IssueInput {
  readonly empresaId: string
  readonly idempotencyKey: string
  /** The body as received, for the idempotency hash. */
  readonly body: unknown
  /** The same body, validated (shape and rules). */
  readonly request: EmitirDte
}

export type IssueDeps = Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'config' | 'tasks'>

export async function issueDte(deps: IssueDeps, input: IssueInput): Promise<StoredAnswer> {
  const now = deps.clock.now()
  const today = santiagoDate(now)
  const hash = requestHash(input.body)
  checkRetencionesSobreNotas(deps.store.db, input.empresaId, input.request, today)
  const certificado = openActiveCertificado(deps, { empresaId: input.empresaId, now })
  const empresa = findEmpresaById(deps.store.db, input.empresaId)
  if (!empresa) throw new Error(`empresa ${input.empresaId} of a valid credential is missing`)
  const flight = `${input.empresaId}\u0000${input.idempotencyKey}`
  if (inFlight.has(flight)) throw new TimbreError('IDEMPOTENCY_IN_PROGRESS', { context: { idempotency_key: input.idempotencyKey } })
  const earlier = findIdempotencyKey(deps.store.db, input.empresaId, input.idempotencyKey)
  if (earlier && !isExpired(earlier, now)) return replayOf(earlier, hash)
  const reservation = folioReserverOf(deps.store.db).reserve(deps.store.db, input.empresaId, input.request.tipo_dte, today)
  if (!reservation) throw new TimbreError('NO_FOLIOS_AVAILABLE', { context: { tipo_dte: input.request.tipo_dte } })
  inFlight.add(flight)
  let stored = false
  try {
    const xml = await deps.tasks.run('sign-dte', {
      empresa: emisorOf(empresa),
      folio: reservation.folio,
      request: input.request,
      today,
      timestamp: santiagoTimestamp(now),
      caf: cafMaterialOf(deps, reservation.caf),
      signer: certificado.material,
    })
    const answer = await groupCommitterOf(deps.store).submit((tx) => storeIssued(deps, tx, { ...input, hash, now, reservation, xml }))
    stored = true
    // Logged once committed: a group whose COMMIT failed issued nothing.
    deps.log.info('dte.issued', { empresa_id: input.empresaId, dte_id: (answer.body as IssuanceResponse).id, tipo_dte: input.request.tipo_dte, folio: reservation.folio })
    return answer
  } finally {
    folioReserverOf(deps.store.db).settle(reservation, stored)
    inFlight.delete(flight)
  }
}

/** The issuer as the DTE writes it: only these fields cross to the worker. */
function emisorOf(empresa: EmpresaEmisora): EmpresaEmisora {
  const { rut, razon_social, giro, acteco, direccion, comuna, ciudad } = empresa
  return { rut, razon_social, giro, acteco, direccion, comuna, ciudad }
}

/** One issuance's writes, inside its group's transaction (its own savepoint): everything a 201 promises is stored. */
function storeIssued(
  deps: Pick<Deps, 'config' | 'clock' | 'store'>,
  tx: Db,
  input: IssueInput & { hash: string; now: Date; reservation: Reservation; xml: Uint8Array },
): StoredAnswer {
  const { now, reservation } = input
  // The row's id and created_at from one instant taken here, in commit order (services/stored-instant.ts); `now`, when
  // the request began, still dates the document itself (fecha_emision, the signature's timestamp), and the wall clock
  // dates the idempotency record, whose 24 h are wall-clock hours.
  const storedAt = deps.clock.now()
  const stored = storedInstantsOf(deps.store).next(storedAt.getTime())
  const at = isoTimestamp(stored.at)
  // A key whose 24 h passed is free again even if housekeeping has not pruned it yet.
  const earlier = findIdempotencyKey(tx, input.empresaId, input.idempotencyKey)
  if (earlier && isExpired(earlier, now)) deleteIdempotencyKey(tx, input.empresaId, input.idempotencyKey)
  const totales = computeTotals(input.request)
  // An export's currency and its MntTotal as the XML writes it: the record shows them and the status query sends them.
  const enMoneda = montoTotalMoneda(input.request, totales)
  advanceNextFolio(tx, reservation.caf.id, reservation.folio)
  const dte = insertDte(tx, {
    id: stored.id,
    empresa_id: input.empresaId,
    tipo_dte: input.request.tipo_dte,
    folio: reservation.folio,
    caf_id: reservation.caf.id,
    estado: 'firmado',
    rut_receptor: normalizeRut(input.request.receptor.rut) ?? input.request.receptor.rut,
    razon_social_receptor: input.request.receptor.razon_social,
    fecha_emision: resolveFechaEmision(input.request, santiagoDate(now)),
    monto_neto: totales.monto_neto,
    monto_exento: totales.monto_exento,
    tasa_iva: totales.tasa_iva,
    iva: totales.iva,
    monto_total: totales.monto_total,
    moneda: enMoneda?.moneda ?? null,
    monto_total_moneda: enMoneda?.monto ?? null,
    detalle: [...input.request.detalle],
    referencias: [...(input.request.referencias ?? [])],
    request: input.request as unknown as Record<string, unknown>,
    xml: Buffer.from(input.xml),
    auto_send: input.request.auto_send ?? true,
    metadata: (input.request.metadata ?? {}) as Record<string, unknown>,
    next_attempt_at: (input.request.auto_send ?? true) ? at : null,
    created_at: at,
    updated_at: at,
  })
  emitDteCreated(tx, dte, now)
  checkCafStock(tx, { empresaId: input.empresaId, tipoDte: dte.tipo_dte, threshold: deps.config.cafLowStock, cafId: reservation.caf.id, now })
  const body: IssuanceResponse = { id: dte.id, folio: dte.folio, tipo_dte: dte.tipo_dte, estado: 'firmado', monto_total: dte.monto_total, created_at: dte.created_at }
  const location = `/api/v1/billing/dte/${dte.id}`
  insertIdempotencyKey(tx, {
    empresa_id: input.empresaId,
    key: input.idempotencyKey,
    request_hash: input.hash,
    response_status: 201,
    response_body: JSON.stringify(body),
    location,
    created_at: isoTimestamp(storedAt),
  })
  return { status: 201, body, location, isReplay: false }
}

/** A request body checked for shape and rules: the typed request, or every failing field (DESIGN §5). */
export type CheckedEmision = { readonly ok: true; readonly value: EmitirDte } | { readonly ok: false; readonly errors: FieldError[] }

export interface EmitInput {
  readonly empresaId: string
  readonly idempotencyKey: string
  /** The body as received. */
  readonly body: unknown
  /** The door's check of the body's shape and rules (contracts/dte.ts validateEmision); `today` is Santiago's date. */
  readonly check: (body: unknown, today: string) => CheckedEmision
}

/**
 * `POST /dte` as a whole (spec 4.1, 4.8): a stored answer for this key is replayed first (a replay answers even where the
 * body would no longer pass: the certificate expired, say), then the body is checked, then issued.
 */
export async function emitDte(deps: IssueDeps, input: EmitInput): Promise<StoredAnswer> {
  const replay = findIdempotentAnswer(deps, input)
  if (replay !== null) return replay
  const checked = input.check(input.body, santiagoDate(deps.clock.now()))
  if (!checked.ok) throw new TimbreError('VALIDATION_ERROR', { details: checked.errors })
  return issueDte(deps, { empresaId: input.empresaId, idempotencyKey: input.idempotencyKey, body: input.body, request: checked.value })
}
