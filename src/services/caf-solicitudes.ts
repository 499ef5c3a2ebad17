// Folios from the SII (DESIGN §17, issue 30): CAF requests and annulments asked for by the API, the CLI, the console or
// automatic mode, recorded first and worked by the `folios` job through the SII's folio pages (sii/portal/folios.ts).
// The rule that matters: once the SII may have granted a range, Timbre never asks for it again; it re-downloads it.
import { isoTimestamp, santiagoDate } from '../clock'
import { addFoliosAnulados, findCafById, findOverlappingCaf, huecosDeCaf, lastFolioHasta, listActiveCafsOfTipo, markCafAnulando, reopenCaf } from '../db/caf-store'
import {
  claimCafSolicitud, dueCafSolicitudes, findCafSolicitud, findFoliosAutomaticos, findOpenAnulacion, findOpenCafSolicitud, insertCafSolicitud,
  listActiveFoliosAutomaticos, listCafSolicitudes, updateLeasedCafSolicitud, upsertFoliosAutomaticos, type EstadoSolicitud, type NewCafSolicitud, type SolicitudLease,
} from '../db/caf-solicitud-store'
import { findActiveCertificado } from '../db/certificado-store'
import { findEmpresaById } from '../db/empresa-store'
import { folioReserverOf } from '../db/folio-reserver'
import type { Db } from '../db/open'
import type { CafRow, CafSolicitudRow, EmpresaRow, FoliosAutomaticosRow } from '../db/schema'
import { isTipoDte } from '../domain/emision'
import { foliosUtiles, quitarFolios, rangosSinUsar, type Rango } from '../domain/folios'
import { TimbreError, validationError } from '../errors'
import type { SiiCompany } from '../sii/client/client'
import type { FoliosFalla, FoliosPortalClient, RangoOtorgado } from '../sii/portal/folios'
import { checkCaf, storeCheckedCaf, toCafRecord } from './cafs'
import type { Deps } from './deps'
import { emitEvent } from './events'
import { siiCredentials } from './submit-dte'

export type FoliosDeps = Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'config' | 'tasks' | 'foliosPortal'>

/**
 * A request holds one portal session of up to nine pages, each within the SII's timeout, after waiting for the
 * company's lock (an RCV read may hold it): the lease outlasts both. A dead process's lease is taken at once by the
 * next one (its owner differs), so this only bounds a run that hangs in this process.
 */
const LEASE_MS = 45 * 60_000
/** Requests worked per pass, each in its own session (different companies in parallel, one company's in turn). */
const PER_PASS = 4
/**
 * Re-downloads of a granted range after a failure: the next pass, then 30 s, 2 min, 10 min, 1 h and 1 h. Past them the
 * request is `fallido` with its range, and the company downloads the CAF at the SII ("Reobtención") and uploads it.
 */
const REDESCARGA_ESPERAS_MS = [0, 30_000, 120_000, 600_000, 3_600_000, 3_600_000]
/** After a failed automatic request, an hour before the next; doubled per failure in a row, up to a day (enPausa). */
const AUTOMATICA_ESPERA_MS = 60 * 60_000
const AUTOMATICA_ESPERA_MAX_MS = 24 * 60 * 60_000
/** At most one automatic CAF a minute per type (enPausa). */
const AUTOMATICA_MINIMO_MS = 60_000
/** No quantity asks for the SII's maximum: the client caps any quantity at MAX_AUTOR. */
const HASTA_EL_MAXIMO = 1_000_000_000
export const CANTIDAD_MAXIMA = 100_000
export const DIAS_ANTES_DE_VENCER = 15

/** This process: a lease another owner holds died with its process (one server per data dir, DESIGN §3). */
const LEASE_OWNER = Bun.randomUUIDv7()

// ------------------------------------------------------------------------------------------------------ records

export interface CafSolicitudRecord {
  readonly id: string
  readonly operacion: 'solicitud' | 'anulacion'
  readonly origen: 'api' | 'automatica'
  readonly tipo_dte: number
  readonly estado: EstadoSolicitud
  readonly cantidad_pedida: number | null
  readonly cantidad_solicitada: number | null
  readonly max_autor: number | null
  readonly folio_desde: number | null
  readonly folio_hasta: number | null
  readonly fecha_otorgamiento: string | null
  readonly caf_id: string | null
  readonly motivo_anulacion: string | null
  readonly falla: { readonly motivo: string; readonly mensaje: string; readonly etapa: string | null } | null
  readonly intentos: number
  readonly proximo_intento_at: string | null
  readonly created_at: string
  readonly updated_at: string
}

export function toSolicitudRecord(row: CafSolicitudRow): CafSolicitudRecord {
  return {
    id: row.id,
    operacion: row.operacion,
    origen: row.origen,
    tipo_dte: row.tipo_dte,
    estado: row.estado,
    cantidad_pedida: row.cantidad_pedida,
    cantidad_solicitada: row.cantidad_solicitada,
    max_autor: row.max_autor,
    folio_desde: row.folio_desde,
    folio_hasta: row.folio_hasta,
    fecha_otorgamiento: row.fecha_otorgamiento,
    caf_id: row.caf_id,
    motivo_anulacion: row.motivo_anulacion,
    falla: row.falla_motivo === null ? null : { motivo: row.falla_motivo, mensaje: row.falla_mensaje ?? '', etapa: row.falla_etapa },
    intentos: row.intentos,
    proximo_intento_at: row.estado === 'otorgado' ? row.proximo_intento_at : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

function requireCertificate(deps: Pick<Deps, 'store' | 'vault' | 'clock'>, empresaId: string, what: string): void {
  if (siiCredentials(deps, { empresaId, now: deps.clock.now() }) === null) {
    throw new TimbreError('CERTIFICATE_REQUIRED', { message: `La empresa no tiene un certificado activo: ${what} en el sitio del SII con el certificado de la empresa.` })
  }
}

// ------------------------------------------------------------------------------------------------------ requests

/**
 * `POST /caf/solicitar`: records the request (the folios job takes it within seconds) and answers it, `en_curso`.
 * One open request per type: a second is CAF_SOLICITUD_EN_CURSO naming the first.
 */
export function solicitarCaf(
  deps: Pick<Deps, 'store' | 'vault' | 'clock'>,
  input: { readonly empresaId: string; readonly tipo_dte: number; readonly cantidad?: number; readonly origen?: 'api' | 'automatica' },
): CafSolicitudRecord {
  requireCertificate(deps, input.empresaId, 'los folios se piden')
  const nowIso = isoTimestamp(deps.clock.now())
  const row = deps.store.db.transaction((tx) => insertSolicitud(tx, {
    empresa_id: input.empresaId, operacion: 'solicitud', origen: input.origen ?? 'api', tipo_dte: input.tipo_dte, cantidad_pedida: input.cantidad ?? null,
  }, nowIso), { behavior: 'immediate' })
  return toSolicitudRecord(row)
}

function insertSolicitud(tx: Db, row: Pick<NewCafSolicitud, 'empresa_id' | 'operacion' | 'origen' | 'tipo_dte' | 'cantidad_pedida'>, nowIso: string): CafSolicitudRow {
  const open = findOpenCafSolicitud(tx, row.empresa_id, row.tipo_dte)
  if (open) throw new TimbreError('CAF_SOLICITUD_EN_CURSO', { context: { solicitud_id: open.id, estado: open.estado } })
  return insertCafSolicitud(tx, { ...row, id: Bun.randomUUIDv7(), estado: 'en_curso', created_at: nowIso, updated_at: nowIso })
}

export function getCafSolicitud(deps: Pick<Deps, 'store'>, input: { empresaId: string; id: string }): CafSolicitudRecord {
  const row = findCafSolicitud(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return toSolicitudRecord(row)
}

const ESTADOS: readonly EstadoSolicitud[] = ['en_curso', 'otorgado', 'descargado', 'anulado', 'fallido']

/** `GET /caf/solicitudes`: newest first; `estado` and `tipo_dte` as they come in the query. */
export function listSolicitudes(
  deps: Pick<Deps, 'store'>,
  query: { readonly empresaId: string; readonly estado?: string; readonly tipo_dte?: string; readonly afterId: string | null; readonly limit: number },
): CafSolicitudRecord[] {
  const tipoDte = query.tipo_dte === undefined ? undefined : Number(query.tipo_dte)
  if (tipoDte !== undefined && !isTipoDte(tipoDte)) throw validationError([{ field: 'tipo_dte', code: 'INVALID_VALUE', message: 'Tipo de DTE desconocido.' }])
  if (query.estado !== undefined && !(ESTADOS as readonly string[]).includes(query.estado)) {
    throw validationError([{ field: 'estado', code: 'INVALID_VALUE', message: `El estado es uno de: ${ESTADOS.join(', ')}.` }])
  }
  return listCafSolicitudes(deps.store.db, query.empresaId, { estado: query.estado as EstadoSolicitud | undefined, tipoDte, afterId: query.afterId, limit: query.limit })
    .map(toSolicitudRecord)
}

// ------------------------------------------------------------------------------------------------------ annulment

/**
 * The folios of a CAF an annulment asks the SII to annul now: never used nor annulled, less those still being signed
 * (they commit, or come back and remain to annul).
 */
function rangosAAnular(deps: Pick<Deps, 'store' | 'clock'>, caf: CafRow): Rango[] {
  const pending = folioReserverOf(deps.store.db).pendingOf(caf.id)
  return quitarFolios(rangosSinUsar(caf, santiagoDate(deps.clock.now()), huecosDeCaf(deps.store.db, caf)), pending)
}

/**
 * `POST /caf/{id}/anular`: closes the CAF to issuance at once (the reserver hands out none of its folios from now on),
 * then records the annulment of its folios never used, which the folios job takes within seconds. `ya_anulados` is
 * the way out of a CAF left closed by an annulment whose outcome was unknown, once the person saw at the SII that its
 * folios are annulled: recorded as the SII's, without asking it again.
 */
export function anularCaf(
  deps: Pick<Deps, 'store' | 'vault' | 'clock'>,
  input: { readonly empresaId: string; readonly cafId: string; readonly motivo: string; readonly ya_anulados?: boolean },
): CafSolicitudRecord {
  const caf = findCafById(deps.store.db, input.empresaId, input.cafId)
  if (!caf) throw new TimbreError('NOT_FOUND')
  const open = findOpenAnulacion(deps.store.db, input.empresaId, caf.id)
  if (open) throw noAnulable('anulacion_en_curso', 'La anulación de este CAF ya está en curso.', { solicitud_id: open.id })
  const motivo = input.motivo.trim()
  const nowIso = isoTimestamp(deps.clock.now())
  if (input.ya_anulados === true) return confirmarAnulados(deps, caf, motivo, nowIso)
  requireCertificate(deps, input.empresaId, 'los folios se anulan')
  const wasOpen = caf.anulacion_estado === null
  const reserver = folioReserverOf(deps.store.db)
  if (wasOpen) reserver.close(deps.store.db, caf)
  const rangos = rangosAAnular(deps, caf)
  if (rangos.length === 0) {
    if (wasOpen) reserver.reopen(caf.id)
    if (caf.anulacion_estado === 'anulado') throw noAnulable('ya_anulado', 'Los folios sin usar de este CAF ya se anularon.')
    throw noAnulable('sin_folios_libres', 'Todos los folios de este CAF se usaron: no queda ninguno que anular.')
  }
  try {
    const row = deps.store.db.transaction((tx) => {
      if (wasOpen) markCafAnulando(tx, caf.id)
      return insertCafSolicitud(tx, {
        id: Bun.randomUUIDv7(), empresa_id: input.empresaId, operacion: 'anulacion', origen: 'api', tipo_dte: caf.tipo_dte, estado: 'en_curso',
        caf_id: caf.id, folio_desde: rangos[0]!.desde, folio_hasta: rangos.at(-1)!.hasta, motivo_anulacion: motivo,
        // Only an annulment of a CAF that was open may open it again on a clean refusal: one closed by an earlier
        // annulment stays closed, its folios possibly annulled already.
        reabrible: wasOpen, created_at: nowIso, updated_at: nowIso,
      })
    }, { behavior: 'immediate' })
    return toSolicitudRecord(row)
  } catch (err) {
    if (wasOpen) reserver.reopen(caf.id)
    throw err
  }
}

/** `ya_anulados`: only for a CAF closed by an annulment whose outcome was unknown (`en_curso`, none running). */
function confirmarAnulados(deps: Pick<Deps, 'store' | 'clock'>, caf: CafRow, motivo: string, nowIso: string): CafSolicitudRecord {
  if (caf.anulacion_estado !== 'en_curso') {
    throw noAnulable('sin_anulacion_incierta', 'ya_anulados solo confirma un CAF que quedó cerrado tras una anulación de resultado incierto; este no lo está.')
  }
  const rangos = rangosAAnular(deps, caf)
  const now = deps.clock.now()
  const row = deps.store.db.transaction((tx) => {
    addFoliosAnulados(tx, caf, { rangos, estado: 'anulado', motivo, atIso: nowIso })
    const solicitud = insertCafSolicitud(tx, {
      id: Bun.randomUUIDv7(), empresa_id: caf.empresa_id, operacion: 'anulacion', origen: 'api', tipo_dte: caf.tipo_dte, estado: 'anulado', caf_id: caf.id,
      folio_desde: rangos[0]?.desde ?? null, folio_hasta: rangos.at(-1)?.hasta ?? null, motivo_anulacion: motivo, created_at: nowIso, updated_at: nowIso,
    })
    emitEvent(tx, { empresaId: caf.empresa_id, type: 'caf.anulado', data: { solicitud: toSolicitudRecord(solicitud), caf: toCafRecord(tx, findCafById(tx, caf.empresa_id, caf.id)!, now) }, now })
    return solicitud
  }, { behavior: 'immediate' })
  return toSolicitudRecord(row)
}

function noAnulable(motivo: string, message: string, extra: Record<string, unknown> = {}): TimbreError {
  return new TimbreError('CAF_NO_ANULABLE', { message, context: { motivo, ...extra } })
}

// ------------------------------------------------------------------------------------------------------ automatic mode

export interface FoliosAutomaticosRecord {
  readonly activo: boolean
  readonly tipos: number[]
  readonly cantidad: number | null
  /** Null follows the instance's TIMBRE_CAF_LOW_STOCK (`umbral_efectivo`). */
  readonly umbral: number | null
  readonly umbral_efectivo: number
  readonly dias_antes_de_vencer: number
  readonly updated_at: string | null
}

function toAutomaticosRecord(row: FoliosAutomaticosRow | undefined, defaultUmbral: number): FoliosAutomaticosRecord {
  if (!row) return { activo: false, tipos: [], cantidad: null, umbral: null, umbral_efectivo: defaultUmbral, dias_antes_de_vencer: DIAS_ANTES_DE_VENCER, updated_at: null }
  return {
    activo: row.activo, tipos: row.tipos, cantidad: row.cantidad, umbral: row.umbral, umbral_efectivo: row.umbral ?? defaultUmbral,
    dias_antes_de_vencer: row.dias_antes_de_vencer, updated_at: row.updated_at,
  }
}

export function getFoliosAutomaticos(deps: Pick<Deps, 'store' | 'config'>, input: { readonly empresaId: string }): FoliosAutomaticosRecord {
  return toAutomaticosRecord(findFoliosAutomaticos(deps.store.db, input.empresaId), deps.config.cafLowStock)
}

/** `PUT /empresa/folios-automaticos`: the whole setting; turning it on needs the types and the quantity. */
export function setFoliosAutomaticos(
  deps: Pick<Deps, 'store' | 'config' | 'clock'>,
  input: {
    readonly empresaId: string
    readonly activo: boolean
    readonly tipos: readonly number[]
    readonly cantidad: number
    readonly umbral?: number | null
    readonly dias_antes_de_vencer?: number
  },
): FoliosAutomaticosRecord {
  const tipos = [...new Set(input.tipos)].sort((a, b) => a - b)
  if (input.activo && tipos.length === 0) throw validationError([{ field: 'tipos', code: 'TOO_FEW', message: 'Indique al menos un tipo de documento para pedir folios automáticamente.' }])
  const umbral = input.umbral ?? deps.config.cafLowStock
  // A CAF of `cantidad` folios must lift the stock over the threshold, or every new one would ask for the next.
  if (input.activo && input.cantidad <= umbral) {
    throw validationError([{ field: 'cantidad', code: 'OUT_OF_RANGE', message: `La cantidad por solicitud debe superar el umbral (${umbral} folios), o cada CAF nuevo pediría el siguiente.` }])
  }
  const row = upsertFoliosAutomaticos(deps.store.db, {
    empresa_id: input.empresaId, activo: input.activo, tipos, cantidad: input.cantidad, umbral: input.umbral ?? null,
    dias_antes_de_vencer: input.dias_antes_de_vencer ?? DIAS_ANTES_DE_VENCER, updated_at: isoTimestamp(deps.clock.now()),
  })
  return toAutomaticosRecord(row, deps.config.cafLowStock)
}

/**
 * Whether automatic mode holds back a type, from its latest requests (newest first):
 * - the last one was granted and never downloaded: a new grant would leave another range to annul; it waits for a
 *   person (a request that succeeds, or the setting saved again);
 * - failures in a row wait 1 h, 2 h, 4 h … up to a day after the last (a company blocked by the SII is not asked again
 *   every pass); saving the setting again ends the wait;
 * - a CAF it obtained in the last minute: when the SII's maximum is below the threshold each grant stays under it, and
 *   this bounds the grants to one a minute until the stock passes the threshold.
 */
export function enPausa(recientes: readonly CafSolicitudRow[], setting: Pick<FoliosAutomaticosRow, 'updated_at'>, now: Date): boolean {
  const last = recientes[0]
  if (!last) return false
  const ms = now.getTime() - Date.parse(last.updated_at)
  if (last.estado === 'descargado') return last.origen === 'automatica' && ms < AUTOMATICA_MINIMO_MS
  if (last.estado !== 'fallido' || setting.updated_at > last.updated_at) return false
  if (last.folio_desde !== null) return true
  const seguidas = recientes.findIndex((r) => r.estado !== 'fallido')
  const n = seguidas === -1 ? recientes.length : seguidas
  return ms < Math.min(AUTOMATICA_ESPERA_MAX_MS, AUTOMATICA_ESPERA_MS * 2 ** (n - 1))
}

/**
 * Automatic mode's pass: a request for each configured type whose folios that still serve `dias_antes_de_vencer` days
 * from now are at or below the threshold (domain/folios foliosUtiles), unless one is open or automatic mode is
 * holding the type back (enPausa). Returns how many it asked for.
 */
export function pedirFoliosAutomaticos(deps: Pick<Deps, 'store' | 'clock' | 'config' | 'log'>): number {
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  const today = santiagoDate(now)
  let asked = 0
  for (const setting of listActiveFoliosAutomaticos(deps.store.db)) {
    // Without a certificate no session opens: nothing is asked (the console says why).
    if (!findActiveCertificado(deps.store.db, setting.empresa_id)) continue
    const umbral = setting.umbral ?? deps.config.cafLowStock
    for (const tipo of setting.tipos) {
      if (findOpenCafSolicitud(deps.store.db, setting.empresa_id, tipo)) continue
      const recientes = listCafSolicitudes(deps.store.db, setting.empresa_id, { tipoDte: tipo, afterId: null, limit: 16 }).filter((r) => r.operacion === 'solicitud')
      if (enPausa(recientes, setting, now)) continue
      const utiles = foliosUtiles(listActiveCafsOfTipo(deps.store.db, setting.empresa_id, tipo, today), today, setting.dias_antes_de_vencer)
      if (utiles > umbral) continue
      try {
        deps.store.db.transaction((tx) => insertSolicitud(tx, { empresa_id: setting.empresa_id, operacion: 'solicitud', origen: 'automatica', tipo_dte: tipo, cantidad_pedida: setting.cantidad }, nowIso), { behavior: 'immediate' })
      } catch (err) {
        if (err instanceof TimbreError && err.code === 'CAF_SOLICITUD_EN_CURSO') continue
        throw err
      }
      deps.log.info('caf.solicitud.automatica', { empresa_id: setting.empresa_id, tipo_dte: tipo, folios_utiles: utiles, umbral, cantidad: setting.cantidad })
      asked++
    }
  }
  return asked
}

// ------------------------------------------------------------------------------------------------------ the job

/** The `folios` job's pass: automatic mode, then the due requests and annulments. Returns how many it handled. */
export async function runFoliosPass(deps: FoliosDeps): Promise<number> {
  const asked = pedirFoliosAutomaticos(deps)
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  const lease: SolicitudLease = { owner: LEASE_OWNER, until: isoTimestamp(new Date(now.getTime() + LEASE_MS)) }
  const claimed: CafSolicitudRow[] = []
  for (const row of dueCafSolicitudes(deps.store.db, nowIso, LEASE_OWNER, PER_PASS)) {
    const taken = claimCafSolicitud(deps.store.db, row.id, nowIso, lease)
    // `lease_owner` as it was: an earlier attempt (this process's or a dead one's) tells an annulment it may have happened.
    if (taken) claimed.push({ ...taken, lease_owner: row.lease_owner })
  }
  await Promise.all(claimed.map((row) => runSolicitud(deps, row, lease)))
  return asked + claimed.length
}

async function runSolicitud(deps: FoliosDeps, row: CafSolicitudRow, lease: SolicitudLease): Promise<void> {
  try {
    if (row.operacion === 'anulacion') await runAnulacion(deps, row, lease)
    else await runPedido(deps, row, lease)
  } catch (err) {
    // A bug, a worker or the store, not the SII: logged and counted like a failed attempt, so it ends `fallido` (with
    // its webhook) rather than looping. A grant is still never asked twice: `otorgando_at` was written before it, and a
    // request with a range only re-downloads.
    deps.log.error('caf.solicitud.error', { solicitud_id: row.id, empresa_id: row.empresa_id, error: String(err), stack: (err as Error)?.stack })
    const fresh = findCafSolicitud(deps.store.db, row.empresa_id, row.id) ?? row
    const falla: Falla = { motivo: 'error_interno', mensaje: 'Timbre falló al procesar la solicitud (error interno, registrado en su log).', etapa: 'interna' }
    const rango = fresh.operacion === 'solicitud' ? rangoDe(fresh) : null
    if (rango) return retryOrFail(deps, fresh, lease, { ...falla, otorgado: rango })
    if (fresh.intentos + 1 > REDESCARGA_ESPERAS_MS.length) return fail(deps, { ...fresh, intentos: fresh.intentos + 1 }, lease, falla)
    const now = deps.clock.now()
    updateLeasedCafSolicitud(deps.store.db, row.id, lease, {
      intentos: fresh.intentos + 1, lease_until: null, proximo_intento_at: isoTimestamp(new Date(now.getTime() + 60_000)), updated_at: isoTimestamp(now),
    })
  }
}

/** The SII proposed a range that overlaps a CAF the company holds: refused before the grant, nothing asked. */
class RangoEnConflicto extends Error {
  constructor(readonly caf: CafRow, readonly rango: RangoOtorgado) {
    super(`proposed range ${rango.folioDesde}-${rango.folioHasta} overlaps CAF ${caf.id}`)
  }
}

function companyOf(empresa: EmpresaRow): SiiCompany {
  return { rut: empresa.rut, ambiente: empresa.ambiente, isDemo: empresa.is_demo }
}

function empresaOf(deps: Pick<Deps, 'store'>, row: CafSolicitudRow): EmpresaRow {
  const empresa = findEmpresaById(deps.store.db, row.empresa_id)
  if (!empresa) throw new Error(`empresa ${row.empresa_id} of CAF request ${row.id} is missing`)
  return empresa
}

/** The range the SII granted, or may have granted (the grant was POSTed): such a request is only ever re-downloaded. */
function rangoDe(row: CafSolicitudRow): RangoOtorgado | null {
  if (row.folio_desde === null || row.folio_hasta === null || row.fecha_otorgamiento === null) return null
  if (row.estado !== 'otorgado' && row.otorgando_at === null) return null
  return { tipo: row.tipo_dte, folioDesde: row.folio_desde, folioHasta: row.folio_hasta, fecha: row.fecha_otorgamiento }
}

const SIN_CERTIFICADO: Pick<FoliosFalla, 'motivo' | 'mensaje'> = { motivo: 'login_rechazado', mensaje: 'La empresa no tiene un certificado activo: no se pudo entrar al sitio del SII.' }

async function runPedido(deps: FoliosDeps, row: CafSolicitudRow, lease: SolicitudLease): Promise<void> {
  const empresa = empresaOf(deps, row)
  const creds = siiCredentials(deps, { empresaId: row.empresa_id, now: deps.clock.now() })
  const rango = rangoDe(row)
  if (creds === null) {
    if (rango) return retryOrFail(deps, row, lease, { ...SIN_CERTIFICADO, etapa: 'ingreso', otorgado: rango })
    return fail(deps, row, lease, { ...SIN_CERTIFICADO, etapa: 'ingreso' })
  }
  const company = companyOf(empresa)
  let outcome: Awaited<ReturnType<FoliosPortalClient['solicitarCaf']>> | Awaited<ReturnType<FoliosPortalClient['redescargarCaf']>>
  try {
    outcome = rango
      ? await deps.foliosPortal.redescargarCaf(company, creds, rango)
      : await deps.foliosPortal.solicitarCaf(company, creds, {
          tipo: row.tipo_dte,
          cantidad: row.cantidad_pedida ?? HASTA_EL_MAXIMO,
          folioInicialMinimo: lastFolioHasta(deps.store.db, row.empresa_id, row.tipo_dte) + 1,
          antesDelOtorgamiento: (propuesto) => {
            const overlap = findOverlappingCaf(deps.store.db, row.empresa_id, row.tipo_dte, propuesto.folioDesde, propuesto.folioHasta)
            if (overlap) throw new RangoEnConflicto(overlap, propuesto)
            const written = updateLeasedCafSolicitud(deps.store.db, row.id, lease, {
              folio_desde: propuesto.folioDesde, folio_hasta: propuesto.folioHasta, fecha_otorgamiento: propuesto.fecha,
              otorgando_at: isoTimestamp(deps.clock.now()), updated_at: isoTimestamp(deps.clock.now()),
            })
            // Not recorded, not asked: the grant happens only once the range is on disk.
            if (!written) throw new Error(`CAF request ${row.id}: lease lost before the grant`)
          },
        })
  } catch (err) {
    if (!(err instanceof RangoEnConflicto)) throw err
    return fail(deps, row, lease, {
      motivo: 'respuesta_invalida', etapa: 'otorgamiento',
      mensaje: `El SII propuso los folios ${err.rango.folioDesde} a ${err.rango.folioHasta}, que se superponen con el CAF ${err.caf.id} (folios ${err.caf.folio_desde} a ${err.caf.folio_hasta}) ya registrado: no se pidió el otorgamiento. Revise en el sitio del SII qué folios tiene autorizados la empresa.`,
    })
  }
  if (outcome.kind === 'failed') {
    const otorgado = outcome.otorgado ?? rango ?? undefined
    if (otorgado) return retryOrFail(deps, row, lease, { ...outcome, otorgado })
    return fail(deps, row, lease, outcome)
  }
  const figures = 'maxAutor' in outcome ? { max_autor: outcome.maxAutor, cantidad_solicitada: outcome.cantidadSolicitada } : {}
  const granted: RangoOtorgado = { tipo: outcome.tipo, folioDesde: outcome.folioDesde, folioHasta: outcome.folioHasta, fecha: outcome.fecha }
  let checked: Awaited<ReturnType<typeof checkCaf>>
  try {
    // The bytes as the SII sent them (ISO-8859-1), in base64 so POST /caf's reader sees exactly them.
    checked = await checkCaf(deps, { empresaId: row.empresa_id, tipo_dte: row.tipo_dte, caf_xml: Buffer.from(outcome.caf).toString('base64') })
  } catch (err) {
    if (!(err instanceof TimbreError)) throw err
    return retryOrFail(deps, { ...row, ...figures } as CafSolicitudRow, lease, { motivo: 'respuesta_invalida', mensaje: `El CAF descargado no sirve: ${err.message}`, etapa: 'descarga', otorgado: granted })
  }
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  let conflicto: CafRow | undefined
  const stored = deps.store.db.transaction((tx) => {
    let caf: CafRow
    try {
      caf = storeCheckedCaf(tx, deps, checked, now)
    } catch (err) {
      if (!(err instanceof TimbreError) || err.code !== 'CAF_RANGE_EXISTS') throw err
      const existing = findCafById(tx, row.empresa_id, String(err.extra.context?.['caf_id']))!
      // The same range uploaded by hand meanwhile (POST /caf): that CAF is this request's. Another overlapping one is a
      // conflict no re-download mends.
      if (existing.folio_desde !== granted.folioDesde || existing.folio_hasta !== granted.folioHasta) {
        conflicto = existing
        return null
      }
      caf = existing
    }
    const done = updateLeasedCafSolicitud(tx, row.id, lease, {
      estado: 'descargado', caf_id: caf.id, folio_desde: granted.folioDesde, folio_hasta: granted.folioHasta, fecha_otorgamiento: granted.fecha, ...figures,
      falla_motivo: null, falla_mensaje: null, falla_etapa: null, proximo_intento_at: null, lease_until: null, updated_at: nowIso,
    })
    if (!done) return null
    const solicitud = findCafSolicitud(tx, row.empresa_id, row.id)!
    emitEvent(tx, { empresaId: row.empresa_id, type: 'caf.obtenido', data: { solicitud: toSolicitudRecord(solicitud), caf: toCafRecord(tx, caf, now) }, now })
    return caf
  }, { behavior: 'immediate' })
  if (conflicto) {
    return fail(deps, { ...row, ...figures } as CafSolicitudRow, lease, {
      motivo: 'respuesta_invalida', etapa: 'descarga', otorgado: granted,
      mensaje: `El SII otorgó los folios ${granted.folioDesde} a ${granted.folioHasta}, que se superponen con el CAF ${conflicto.id} (folios ${conflicto.folio_desde} a ${conflicto.folio_hasta}) ya registrado: el CAF descargado no se registró. Revise en el sitio del SII los folios autorizados a la empresa.`,
    })
  }
  if (stored) deps.log.info('caf.solicitud.descargado', { solicitud_id: row.id, empresa_id: row.empresa_id, tipo_dte: row.tipo_dte, caf_id: stored.id, folio_desde: stored.folio_desde, folio_hasta: stored.folio_hasta })
}

/** A failure as recorded: the client's (motivo, etapa of sii/portal/folios.ts) or Timbre's own (`error_interno`). */
interface Falla {
  readonly motivo: string
  readonly mensaje: string
  readonly etapa: string
  readonly otorgado?: RangoOtorgado
}

/** A failure with nothing granted: the request ends `fallido`, and its webhook says why. */
function fail(deps: FoliosDeps, row: CafSolicitudRow, lease: SolicitudLease, falla: Falla, also: (tx: Db) => void = () => {}): void {
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  deps.store.db.transaction((tx) => {
    const done = updateLeasedCafSolicitud(tx, row.id, lease, {
      estado: 'fallido', falla_motivo: falla.motivo, falla_mensaje: falla.mensaje, falla_etapa: falla.etapa, intentos: row.intentos, proximo_intento_at: null, lease_until: null, updated_at: nowIso,
      ...(falla.otorgado ? { folio_desde: falla.otorgado.folioDesde, folio_hasta: falla.otorgado.folioHasta, fecha_otorgamiento: falla.otorgado.fecha } : {}),
    })
    if (!done) return
    also(tx)
    emitEvent(tx, { empresaId: row.empresa_id, type: 'caf.solicitud_fallida', data: { solicitud: toSolicitudRecord(findCafSolicitud(tx, row.empresa_id, row.id)!) }, now })
  }, { behavior: 'immediate' })
  deps.log.warn('caf.solicitud.fallida', { solicitud_id: row.id, empresa_id: row.empresa_id, operacion: row.operacion, tipo_dte: row.tipo_dte, motivo: falla.motivo, etapa: falla.etapa })
}

/** A failure after the grant: the range is recorded `otorgado` and re-downloaded later; past the last wait, `fallido`. */
function retryOrFail(deps: FoliosDeps, row: CafSolicitudRow, lease: SolicitudLease, falla: Falla & { readonly otorgado: RangoOtorgado }): void {
  const intentos = row.intentos + 1
  if (intentos > REDESCARGA_ESPERAS_MS.length) {
    return fail(deps, { ...row, intentos }, lease, {
      ...falla,
      mensaje: `${falla.mensaje} Timbre intentó descargarlo ${intentos} veces: descargue el CAF de los folios ${falla.otorgado.folioDesde} a ${falla.otorgado.folioHasta} en el sitio del SII (Reobtención de CAF) y súbalo con POST /caf.`,
    })
  }
  const now = deps.clock.now()
  updateLeasedCafSolicitud(deps.store.db, row.id, lease, {
    estado: 'otorgado', folio_desde: falla.otorgado.folioDesde, folio_hasta: falla.otorgado.folioHasta, fecha_otorgamiento: falla.otorgado.fecha,
    ...(row.max_autor === null ? {} : { max_autor: row.max_autor, cantidad_solicitada: row.cantidad_solicitada }),
    falla_motivo: falla.motivo, falla_mensaje: falla.mensaje, falla_etapa: falla.etapa, intentos,
    proximo_intento_at: isoTimestamp(new Date(now.getTime() + REDESCARGA_ESPERAS_MS[intentos - 1]!)), lease_until: null, updated_at: isoTimestamp(now),
  })
  deps.log.warn('caf.solicitud.redescarga_pendiente', { solicitud_id: row.id, empresa_id: row.empresa_id, tipo_dte: row.tipo_dte, motivo: falla.motivo, etapa: falla.etapa, intentos, folio_desde: falla.otorgado.folioDesde, folio_hasta: falla.otorgado.folioHasta })
}

/** Refusals the SII's pages name: the folios were not annulled. Anything else at the annulment's POST may have been. */
const RECHAZOS: ReadonlySet<string> = new Set(['no_autorizado', 'f29_pendiente', 'excede_maximo', 'sii_rechazo'])

/**
 * Annuls the CAF's folios never used, one range per SII request (a tail, and any holes of a crash), recording each the
 * SII confirms at once. On failure the CAF opens again only when nothing reached the SII, the annulment was asked of an
 * open CAF and no earlier attempt of it may have acted; otherwise it stays closed, annulled folios and all.
 */
async function runAnulacion(deps: FoliosDeps, row: CafSolicitudRow, lease: SolicitudLease): Promise<void> {
  const empresa = empresaOf(deps, row)
  const cafId = row.caf_id!
  const motivo = row.motivo_anulacion!
  // An earlier attempt that never recorded its outcome may have reached the SII.
  const attemptedBefore = row.lease_owner !== null
  const creds = siiCredentials(deps, { empresaId: row.empresa_id, now: deps.clock.now() })
  const rangos = rangosAAnular(deps, findCafById(deps.store.db, row.empresa_id, cafId)!)
  const annulled: Rango[] = []
  let failure: FoliosFalla | null = creds === null ? { kind: 'failed', ...SIN_CERTIFICADO, etapa: 'ingreso' } : null
  for (const rango of rangos) {
    if (creds === null) break
    const outcome = await deps.foliosPortal.anularFolios(companyOf(empresa), creds, { tipo: row.tipo_dte, folioDesde: rango.desde, folioHasta: rango.hasta, motivo })
    if (outcome.kind === 'failed') {
      failure = outcome
      break
    }
    annulled.push({ desde: outcome.folioDesde, hasta: outcome.folioHasta })
    // Recorded as soon as the SII confirms it: a later failure or a crash does not forget it.
    const nowIso = isoTimestamp(deps.clock.now())
    deps.store.db.transaction((tx) => {
      const caf = findCafById(tx, row.empresa_id, cafId)!
      addFoliosAnulados(tx, caf, { rangos: [annulled.at(-1)!], estado: 'en_curso', motivo, atIso: nowIso })
      updateLeasedCafSolicitud(tx, row.id, lease, { updated_at: nowIso })
    }, { behavior: 'immediate' })
  }
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  if (failure === null) {
    deps.store.db.transaction((tx) => {
      const done = updateLeasedCafSolicitud(tx, row.id, lease, {
        estado: 'anulado', falla_motivo: null, falla_mensaje: null, falla_etapa: null, lease_until: null, updated_at: nowIso,
        ...(annulled.length > 0 ? { folio_desde: annulled[0]!.desde, folio_hasta: annulled.at(-1)!.hasta } : {}),
      })
      if (!done) return
      addFoliosAnulados(tx, findCafById(tx, row.empresa_id, cafId)!, { rangos: [], estado: 'anulado', motivo, atIso: nowIso })
      const caf = findCafById(tx, row.empresa_id, cafId)!
      emitEvent(tx, { empresaId: row.empresa_id, type: 'caf.anulado', data: { solicitud: toSolicitudRecord(findCafSolicitud(tx, row.empresa_id, row.id)!), caf: toCafRecord(tx, caf, now) }, now })
    }, { behavior: 'immediate' })
    deps.log.info('caf.anulado', { solicitud_id: row.id, empresa_id: row.empresa_id, caf_id: cafId, rangos: annulled })
    return
  }
  const refused = failure.etapa !== 'anulacion' || RECHAZOS.has(failure.motivo)
  const reopen = refused && annulled.length === 0 && row.reabrible && !attemptedBefore
  const mensaje = refused
    ? failure.mensaje
    : `${failure.mensaje} Puede que el SII sí los haya anulado: el CAF queda cerrado. Revise sus folios en el sitio del SII; si están anulados, confírmelo con POST /caf/${cafId}/anular {"ya_anulados": true}, y si no, pida la anulación otra vez.`
  fail(deps, row, lease, { ...failure, mensaje }, (tx) => {
    if (reopen) reopenCaf(tx, cafId)
    // Some ranges annulled: the CAF is annulled for them, and what is left shows por_anular, to be asked again.
    else if (annulled.length > 0) addFoliosAnulados(tx, findCafById(tx, row.empresa_id, cafId)!, { rangos: [], estado: 'anulado', motivo, atIso: nowIso })
  })
  if (reopen) folioReserverOf(deps.store.db).reopen(cafId)
}
