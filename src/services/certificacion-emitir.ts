// `POST /certificacion/set/emitir` (DESIGN §15 "Issuing the set"): every case not yet issued, in the set's order,
// through the same path as `POST /dte` (rules, folio, TED, signature, group commit), each exactly once whatever is
// retried; then one EnvioDTE per documents set, addressed to the SII, uploaded and followed. The documents' states come
// from the sii-track job, as any DTE's; an envío the SII has not taken yet is retried by the sii-submit job.
import { isoTimestamp, santiagoDate, santiagoTimestamp } from '../clock'
import {
  claimCertificacionEnvio, findCasos, findCertificacionEnvio, findDteByCertificacionClave, findDtesById, findDueCertificacionEnvios, insertCertificacionEnvio, updateCaso, updateCertificacionEnvio,
} from '../db/certificacion-store'
import { foliosLeft } from '../db/caf-store'
import { updateDteIf } from '../db/dte-store'
import { findEnvio, insertEnvio, setEnvioTrackId } from '../db/envio-store'
import type { CertificacionEnvioRow, DteRow, EmpresaRow } from '../db/schema'
import { necesitaTpoCambio, solicitudDeCaso, type CasoEmitido } from '../domain/certificacion-casos'
import { afterUpload, isFinal, nextAttemptAt } from '../domain/estados'
import { SII_RUT } from '../domain/rut'
import type { EmitirDte, TipoDte } from '../domain/emision'
import type { UploadOutcome } from '../domain/sii-respuestas'
import { TimbreError } from '../errors'
import { openActiveCertificado } from './certificados'
import {
  estadoCertificacion, isSetDeDocumentos, requireCertificacion, serialized, setsGuardados, type CheckEmision, type EstadoCertificacion, type SetGuardado,
} from './certificacion'
import type { Deps } from './deps'
import { recordSiiAnswer } from './dtes'
import { emitFinalState } from './events'
import { issueDte, type IssuanceResponse } from './issue-dte'
import { LEASE_MS, patchAfterUpload, siiContextOf, uploadAnswer } from './submit-dte'

export type CertificacionDeps = Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'config' | 'tasks' | 'sii' | 'siiTiming'>

export interface EmitirSetInput {
  readonly empresaId: string
  readonly enviar: boolean
  readonly tpoCambio?: number
  readonly reemitir: boolean
  readonly check: CheckEmision
}

/** The idempotency key of a case's `intento`-th issuance: a set replaced later has a new id, so its cases start over. */
export function claveDeCaso(setId: string, caso: string, intento: number): string {
  return `certificacion:${setId}:${caso}:${intento}`
}

export function emitirSet(deps: CertificacionDeps, input: EmitirSetInput): Promise<EstadoCertificacion> {
  requireCertificacion(deps.store.db, input.empresaId)
  return serialized(input.empresaId, () => emitirSetNow(deps, input))
}

async function emitirSetNow(deps: CertificacionDeps, input: EmitirSetInput): Promise<EstadoCertificacion> {
  const { db } = deps.store
  const empresa = requireCertificacion(db, input.empresaId)
  const sets = setsGuardados(db, input.empresaId).filter((s) => isSetDeDocumentos(s.set.nombre))
  if (sets.length === 0)
    throw new TimbreError('NOT_FOUND', { message: 'No hay un set de pruebas cargado: suba primero el que entregó el SII (POST /certificacion/set).', context: { recurso: 'set' } })
  // What this run issues: the cases without a document and, with reemitir, the objected ones and those citing them.
  // Every check runs on them before anything changes: a refused request leaves the cases as they were.
  const casos = findCasos(db, input.empresaId)
  const reemitidos = input.reemitir ? casosParaReemitir(deps, input.empresaId, sets) : []
  const otraVez = new Set(reemitidos.map((r) => `${r.setId}\u0000${r.caso}`))
  const pendientes = sets.flatMap((s) =>
    s.set.casos.filter((c) => otraVez.has(`${s.row.id}\u0000${c.caso}`) || !casos.find((r) => r.set_id === s.row.id && r.caso === c.caso)?.dte_id))
  if (input.tpoCambio === undefined && pendientes.some(necesitaTpoCambio)) {
    const monedas = [...new Set(pendientes.filter(necesitaTpoCambio).map((c) => c.documento.export_data?.tpo_moneda))]
    throw new TimbreError('VALIDATION_ERROR', {
      details: [{ field: 'tpo_cambio', code: 'REQUIRED', message: `El set de exportación está en ${monedas.join(', ')}: indique el tipo de cambio (el set no lo trae).` }],
    })
  }
  checkFolios(deps, input.empresaId, pendientes.map((c) => c.tipoDte))
  marcarParaReemitir(deps, reemitidos)
  for (const set of sets) {
    const nuevos = await emitirCasos(deps, empresa, set, input)
    if (input.enviar && nuevos.length > 0) await crearEnvio(deps, empresa, { clase: 'set', nombres: [set.set.nombre], dtes: nuevos })
  }
  if (input.enviar) await enviarPendientes(deps, input.empresaId)
  return estadoCertificacion(deps, { empresaId: input.empresaId })
}

/**
 * Enough folios for every document about to be issued, per type, or 422 NO_FOLIOS_AVAILABLE before the first one: a
 * set or a simulation stopped half way would leave documents no envelope carries. Certification needs certification
 * CAFs (research §1.2 item 6).
 */
export function checkFolios(deps: CertificacionDeps, empresaId: string, tipos: readonly TipoDte[]): void {
  const today = santiagoDate(deps.clock.now())
  const needed = new Map<TipoDte, number>()
  for (const t of tipos) needed.set(t, (needed.get(t) ?? 0) + 1)
  for (const [tipo, n] of needed) {
    const left = foliosLeft(deps.store.db, empresaId, tipo, today)
    if (left < n) throw new TimbreError('NO_FOLIOS_AVAILABLE', { context: { tipo_dte: tipo, necesarios: n, disponibles: left }, message: `Faltan folios del tipo ${tipo}: se necesitan ${n} y quedan ${left}. Suba un CAF de certificación de ese tipo.` })
  }
}

/**
 * The cases whose document the SII rejected or put reparos on, to be issued again with a new `intento`, and so new
 * folios (research §1.2 item 5); and the cases that cite them, whose references must name the new folios.
 */
function casosParaReemitir(deps: CertificacionDeps, empresaId: string, sets: readonly SetGuardado[]): Array<{ setId: string; caso: string; intento: number }> {
  const { db } = deps.store
  const casos = findCasos(db, empresaId)
  const dtes = findDtesById(db, empresaId, casos.flatMap((c) => (c.dte_id ? [c.dte_id] : [])))
  const out: Array<{ setId: string; caso: string; intento: number }> = []
  for (const { row, set } of sets) {
    const otra = new Set<string>()
    for (const c of set.casos) {
      const stored = casos.find((r) => r.set_id === row.id && r.caso === c.caso)
      const dte = stored?.dte_id ? dtes.get(stored.dte_id) : undefined
      const objetado = dte !== undefined && (dte.estado === 'rechazado' || dte.estado === 'con_reparos')
      if (stored && (objetado || (c.referenciaCaso !== undefined && otra.has(c.referenciaCaso.caso)))) {
        otra.add(c.caso)
        if (stored.dte_id !== null) out.push({ setId: row.id, caso: c.caso, intento: stored.intento })
      }
    }
  }
  return out
}

/** Unlinks the cases to re-issue and gives each its next `intento` (a new key: new folios), in one transaction. */
function marcarParaReemitir(deps: CertificacionDeps, casos: ReadonlyArray<{ setId: string; caso: string; intento: number }>): void {
  if (casos.length === 0) return
  const at = isoTimestamp(deps.clock.now())
  deps.store.db.transaction((tx) => {
    for (const c of casos) updateCaso(tx, c.setId, c.caso, { dte_id: null, intento: c.intento + 1, updated_at: at })
  }, { behavior: 'immediate' })
}

/**
 * Issues the set's cases that have no document, in order; returns every current document of the set that no envelope
 * carries yet: those issued now, and those issued by an earlier run that stopped (or ran with `enviar: false`) before
 * its envelope was made, so none is left unsent.
 */
async function emitirCasos(deps: CertificacionDeps, empresa: EmpresaRow, { row, set }: SetGuardado, input: Pick<EmitirSetInput, 'tpoCambio' | 'check'>): Promise<DteRow[]> {
  const { tpoCambio } = input
  const { db } = deps.store
  const casos = findCasos(db, empresa.id).filter((c) => c.set_id === row.id)
  const dtes = findDtesById(db, empresa.id, casos.flatMap((c) => (c.dte_id ? [c.dte_id] : [])))
  const emitidos = new Map<string, CasoEmitido>()
  const nuevos: DteRow[] = []
  for (const caso of set.casos) {
    const stored = casos.find((c) => c.caso === caso.caso)
    if (!stored) continue
    const actual = stored.dte_id ? dtes.get(stored.dte_id) : undefined
    if (actual) {
      emitidos.set(caso.caso, { tipoDte: actual.tipo_dte as TipoDte, folio: actual.folio, fechaEmision: actual.fecha_emision })
      if (actual.envio_id === null && actual.estado === 'firmado') nuevos.push(actual)
      continue
    }
    const today = santiagoDate(deps.clock.now())
    const solicitud = solicitudDeCaso(set, caso, emitidos, { fecha: today, ...(tpoCambio !== undefined ? { tpoCambio } : {}) })
    // Cases are issued in the set's order and cite only earlier ones (the parser checked); the rate was checked above.
    if (!solicitud.ok) throw new Error(`case ${caso.caso} of a stored set cannot be issued: ${solicitud.message}`)
    const clave = claveDeCaso(row.id, caso.caso, stored.intento)
    const request: EmitirDte = { ...solicitud.request, metadata: { certificacion: { caso: caso.caso, set: set.nombre, clave } } }
    const dte = findDteByCertificacionClave(db, empresa.id, clave) ?? (await emitirCaso(deps, { empresaId: empresa.id, clave, request, caso: caso.caso, today, check: input.check }))
    updateCaso(db, row.id, caso.caso, { dte_id: dte.id, updated_at: isoTimestamp(deps.clock.now()) })
    emitidos.set(caso.caso, { tipoDte: dte.tipo_dte as TipoDte, folio: dte.folio, fechaEmision: dte.fecha_emision })
    // A document found again by its key may already travel in an envelope; it is never put in a second one.
    if (dte.envio_id === null && dte.estado === 'firmado') nuevos.push(dte)
  }
  return nuevos
}

export async function emitirCaso(
  deps: CertificacionDeps,
  { empresaId, clave, request, caso, today, check }: { empresaId: string; clave: string; request: EmitirDte; caso: string; today: string; check: CheckEmision },
): Promise<DteRow> {
  const checked = check(request, today)
  if (!checked.ok)
    throw new TimbreError('VALIDATION_ERROR', { details: checked.errors.map((e) => ({ ...e, message: `Caso ${caso}: ${e.field}: ${e.message}` })) })
  const answer = await issueDte(deps, { empresaId, idempotencyKey: clave, body: request, request: checked.value })
  const id = (answer.body as IssuanceResponse).id
  const dte = findDtesById(deps.store.db, empresaId, [id]).get(id)
  if (!dte) throw new Error(`DTE ${id} of case ${caso} was answered but is not stored`)
  deps.log.info('certificacion.caso_emitido', { empresa_id: empresaId, caso, dte_id: id, tipo_dte: dte.tipo_dte, folio: dte.folio })
  return dte
}

// ------------------------------------------------------------------------------------------------ the envelope

/** One EnvioDTE for these documents, addressed to the SII, signed once and kept: every retry sends the same bytes. */
export async function crearEnvio(
  deps: CertificacionDeps,
  empresa: EmpresaRow,
  input: { clase: 'set' | 'simulacion' | 'boletas'; nombres: readonly string[]; dtes: readonly DteRow[] },
): Promise<CertificacionEnvioRow> {
  // Boletas travel in an EnvioBOLETA through the boleta API (docs/sii-protocol.md §7.3); everything else in an EnvioDTE.
  const canal = input.clase === 'boletas' ? 'boleta' : 'soap'
  const now = deps.clock.now()
  const certificado = openActiveCertificado(deps, { empresaId: empresa.id, now })
  const xml = await deps.tasks.run('build-envelope', {
    kind: canal === 'boleta' ? 'EnvioBOLETA' : 'EnvioDTE',
    dtes: input.dtes.map((d) => Buffer.from(d.xml).toString('latin1')),
    caratula: {
      rutEmisor: empresa.rut,
      rutEnvia: certificado.rutFirmante,
      rutReceptor: SII_RUT,
      // Certification: NroResol 0 and FchResol the day the SII enabled the company (research §1.2 item 2).
      fchResol: empresa.fecha_resolucion,
      nroResol: 0,
      tmstFirmaEnv: santiagoTimestamp(now),
    },
    signer: certificado.material,
  })
  const at = isoTimestamp(now)
  const etiqueta = input.nombres.join('_').replace(/[^A-Z0-9]+/gi, '_')
  return deps.store.db.transaction(
    (tx) => {
      const envio = insertEnvio(tx, { id: Bun.randomUUIDv7(), empresa_id: empresa.id, canal, file_name: `${empresa.rut.replace('-', '')}_${etiqueta}.xml`, xml: Buffer.from(xml), created_at: at })
      for (const d of input.dtes) updateDteIf(tx, d.id, ['firmado'], { envio_id: envio.id, updated_at: at })
      return insertCertificacionEnvio(tx, {
        id: Bun.randomUUIDv7(), empresa_id: empresa.id, clase: input.clase, nombres: [...input.nombres], envio_id: envio.id, dte_ids: input.dtes.map((d) => d.id),
        estado: 'por_enviar', track_id: null, glosa_sii: null, intentos: 0, next_attempt_at: at, enviado_at: null, created_at: at, updated_at: at,
      })
    },
    { behavior: 'immediate' },
  )
}

/** The envío claimed for one upload by this caller (past the upload's timeout), or null when it is not due or held. */
export function tomarParaSubir(deps: Pick<CertificacionDeps, 'store'>, envio: CertificacionEnvioRow, now: Date): CertificacionEnvioRow | null {
  return claimCertificacionEnvio(deps.store.db, envio.id, isoTimestamp(now), isoTimestamp(new Date(now.getTime() + LEASE_MS))) ?? null
}

/** `GET /certificacion/envios/{id}/xml`: an envío's signed bytes, as uploaded. */
export function envioXml(deps: Pick<CertificacionDeps, 'store'>, input: { empresaId: string; id: string }): { bytes: Uint8Array; fileName: string } {
  requireCertificacion(deps.store.db, input.empresaId)
  const envio = findCertificacionEnvio(deps.store.db, input.empresaId, input.id)
  const stored = envio ? findEnvio(deps.store.db, input.empresaId, envio.envio_id) : undefined
  if (!stored) throw new TimbreError('NOT_FOUND')
  return { bytes: new Uint8Array(stored.xml), fileName: stored.file_name }
}

const SOBRES: readonly CertificacionEnvioRow['clase'][] = ['set', 'simulacion', 'boletas']
/** Envíos the SII has not taken yet, or whose upload's holder stopped (its lease ended). */
export const POR_SUBIR = ['por_enviar', 'subiendo'] as const

/** Uploads the company's envíos the SII has not taken yet, now (the request that made them waits for the answer). */
async function enviarPendientes(deps: CertificacionDeps, empresaId: string): Promise<void> {
  const due = findDueCertificacionEnvios(deps.store.db, { nowIso: isoTimestamp(deps.clock.now()), estados: POR_SUBIR, clases: SOBRES, empresaId }, 100)
  for (const envio of due) await subirEnvio(deps, envio)
}

/** The sii-submit job's share: every company's certification envíos due for another upload. */
export async function submitCertificacionDue(deps: CertificacionDeps): Promise<number> {
  const due = findDueCertificacionEnvios(deps.store.db, { nowIso: isoTimestamp(deps.clock.now()), estados: POR_SUBIR, clases: SOBRES }, 20)
  for (const envio of due) {
    try {
      await subirEnvio(deps, envio)
    } catch (err) {
      deps.log.error('job.item_failed', { job: 'sii-submit', certificacion_envio_id: envio.id, error: String(err) })
    }
  }
  return due.length
}

/**
 * One upload of a set's envelope. Taken: each document goes to `procesando` with the envelope's track id, and the
 * sii-track job follows it like any DTE. Refused: every document is rejected with the SII's reason (a re-issue takes
 * new folios). Anything else: the envío waits for its next attempt, the SII's words kept.
 */
export async function subirEnvio(configured: CertificacionDeps, due: CertificacionEnvioRow): Promise<UploadOutcome | null> {
  const now = configured.clock.now()
  const at = isoTimestamp(now)
  const envio = tomarParaSubir(configured, due, now)
  if (!envio) return null
  const { deps, empresa, company, creds } = siiContextOf(configured, { id: envio.id, empresa_id: envio.empresa_id }, now)
  const stored = findEnvio(deps.store.db, envio.empresa_id, envio.envio_id)
  if (!stored) throw new Error(`envelope ${envio.envio_id} of certification envío ${envio.id} is missing`)
  const attempt = envio.intentos + 1
  const later = (glosa: string) =>
    updateCertificacionEnvio(deps.store.db, envio.id, { estado: 'por_enviar', glosa_sii: glosa, next_attempt_at: isoTimestamp(new Date(now.getTime() + deps.siiTiming.submit.capMs)), updated_at: at })
  if (empresa.ambiente !== 'certificacion') {
    // A company that reached producción no longer sends its certification files: they would go to palena.
    updateCertificacionEnvio(deps.store.db, envio.id, { estado: 'por_enviar', glosa_sii: 'La empresa pasó a producción: este envío de certificación ya no se envía.', next_attempt_at: null, updated_at: at })
    return null
  }
  if (!creds) return (later('Sin certificado activo para firmar el envío'), null)
  const outcome = await deps.sii.upload(company, creds, stored.canal, stored.xml, stored.file_name)
  const trackId = outcome.kind === 'received' ? outcome.trackId : outcome.kind === 'already_received' ? outcome.trackId : null
  const answer = uploadAnswer(outcome, stored.canal)
  deps.store.db.transaction((tx) => {
    const dtes = findDtesById(tx, envio.empresa_id, envio.dte_ids)
    if (trackId !== null || outcome.kind === 'refused') {
      if (trackId !== null) setEnvioTrackId(tx, stored.id, trackId)
      updateCertificacionEnvio(tx, envio.id, {
        estado: outcome.kind === 'refused' ? 'rechazado' : 'enviado', track_id: trackId, intentos: attempt, next_attempt_at: null,
        glosa_sii: outcome.kind === 'refused' ? outcome.glosa : null, enviado_at: at, updated_at: at,
      })
      for (const dte of dtes.values()) {
        const patch = { ...patchAfterUpload(outcome, dte.intentos + 1, dte.track_id, now, deps.siiTiming), envio_id: stored.id }
        const updated = updateDteIf(tx, dte.id, ['firmado', 'enviando'], patch)
        if (updated && answer) recordSiiAnswer(tx, updated, answer, at)
        if (updated && isFinal(updated.estado)) emitFinalState(tx, updated, now)
      }
      return
    }
    const next = nextAttemptAt(afterUpload(outcome), now, attempt, deps.siiTiming)
    const glosa = outcome.kind === 'retry' ? outcome.reason : 'glosa' in outcome ? outcome.glosa : 'El SII no dio un track id'
    updateCertificacionEnvio(tx, envio.id, { estado: 'por_enviar', intentos: attempt, glosa_sii: glosa, next_attempt_at: isoTimestamp(next ?? new Date(now.getTime() + deps.siiTiming.submit.capMs)), updated_at: at })
  }, { behavior: 'immediate' })
  deps.log.info('certificacion.upload', { empresa_id: envio.empresa_id, certificacion_envio_id: envio.id, outcome: outcome.kind, track_id: trackId, documentos: envio.dte_ids.length })
  return outcome
}

