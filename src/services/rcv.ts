// The RCV mirror (DESIGN §16, issue 29): asking for a sync, running it (the rcv job, daily and on demand), and reading
// the last good copy back as the domain's registers. A sync reads the whole period through the SII portal client in one
// session and replaces the copy in one transaction; a failed one records why and leaves the last good copy as it was.
import { isoTimestamp, santiagoDate } from '../clock'
import { findEmpresaById, listEmpresas } from '../db/empresa-store'
import {
  claimRcvPeriodo, findAllRcvDetalles, type RcvClaim, findRcvPeriodo, findRequestedRcvPeriodos, recordRcvFalla, requestRcvSync, storeRcvCopia,
} from '../db/rcv-store'
import type { EmpresaRow, RcvDetalleRow, RcvPeriodoRow } from '../db/schema'
import {
  isPeriodoRcv, SECCIONES_COMPRAS, writeRegistroComprasCsv, writeRegistroVentasCsv, type DetalleRcv, type RegistroCompras, type RegistroVentas, type ResumenTipoRcv, type SeccionCompras,
} from '../domain/rcv'
import { TimbreError, validationError } from '../errors'
import type { SiiCompany } from '../sii/client/client'
import type { MotivoFallaPortal, RcvReadOutcome } from '../sii/portal/types'
import type { Deps } from './deps'
import { emitEvent } from './events'
import { siiCredentials } from './submit-dte'

export type RcvDeps = Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'rcvPortal' | 'config'>

/**
 * A sync reads up to 5 × (types) answers, each within the SII timeout, and may wait for several deferred downloads,
 * each up to `--rcv-diferida-espera`: the lease outlasts a slow one, and a sync that died is retried once it runs out.
 */
export function leaseMs(config: Pick<Deps['config'], 'rcvDiferidaEsperaMs'>): number {
  return Math.max(20 * 60_000, 5 * 60_000 + 6 * config.rcvDiferidaEsperaMs)
}
/** The daily sync: a period is read again when its last attempt is older than this. */
const DAILY_MS = 24 * 60 * 60 * 1000
/** Periods taken per pass: each holds one SII session, and the SII caps them per RUT. */
const PER_PASS = 4

// ------------------------------------------------------------------------------------------------------ periods

/** The Santiago tax period (`YYYYMM`) an instant falls in. */
export function periodoOf(now: Date): string {
  return santiagoDate(now).slice(0, 7).replace('-', '')
}

/** The period before `periodo`. */
export function periodoAnterior(periodo: string): string {
  const year = Number(periodo.slice(0, 4))
  const month = Number(periodo.slice(4, 6))
  return month === 1 ? `${year - 1}12` : `${year}${String(month - 1).padStart(2, '0')}`
}

/** A period the API may name: `YYYYMM` since the RCV exists (08/2017) and not after the current one. */
export function checkPeriodo(periodo: string, now: Date, field = 'periodo'): string {
  if (!/^\d{6}$/.test(periodo) || !isPeriodoRcv(periodo) || periodo < '201708') {
    throw validationError([{ field, code: 'INVALID_VALUE', message: 'El período es AAAAMM, desde 201708 (el RCV existe desde agosto de 2017).' }])
  }
  if (periodo > periodoOf(now)) throw validationError([{ field, code: 'INVALID_VALUE', message: `El período ${periodo} aún no comienza.` }])
  return periodo
}

// ------------------------------------------------------------------------------------------------------ state

export type EstadoSincronizacion = 'sin_sincronizar' | 'pendiente' | 'sincronizando' | 'sincronizado' | 'fallido'

export interface EstadoRcvRecord {
  readonly periodo: string
  /** Where the mirror stands: never read, asked for, being read, read, or the last attempt failed (the last good copy stays). */
  readonly estado: EstadoSincronizacion
  readonly sincronizado_at: string | null
  readonly solicitado_at: string | null
  readonly ultimo_intento_at: string | null
  readonly falla: { readonly motivo: string; readonly mensaje: string; readonly at: string } | null
  readonly diferidas: number
  /** The last good copy's summaries; null until one exists. */
  readonly resumen: { readonly compras: Record<SeccionCompras, ResumenTipoRcv[]>; readonly ventas: ResumenTipoRcv[] } | null
}

export function estadoDe(row: RcvPeriodoRow | undefined, periodo: string, now: Date): EstadoRcvRecord {
  if (!row) return { periodo, estado: 'sin_sincronizar', sincronizado_at: null, solicitado_at: null, ultimo_intento_at: null, falla: null, diferidas: 0, resumen: null }
  const nowIso = isoTimestamp(now)
  const recorded = row.falla_at !== null && row.falla_motivo !== null ? { motivo: row.falla_motivo, mensaje: row.falla_mensaje ?? '', at: row.falla_at } : null
  // An attempt newer than both its outcomes whose lease ran out: the process stopped mid-sync.
  const leaseOver = row.lease_until === null || row.lease_until <= nowIso
  const interrupted = leaseOver && row.intento_at !== null && row.intento_at > (row.sincronizado_at ?? '') && row.intento_at > (row.falla_at ?? '')
  const falla = interrupted ? { motivo: 'interrumpido', mensaje: 'La lectura anterior se interrumpió (Timbre se detuvo); la última copia buena se mantiene.', at: row.intento_at! } : recorded
  const estado: EstadoSincronizacion =
    row.lease_until !== null && row.lease_until > nowIso ? 'sincronizando'
      : row.solicitado_at !== null ? 'pendiente'
        : falla !== null && (row.sincronizado_at === null || falla.at > row.sincronizado_at) ? 'fallido'
          : row.sincronizado_at !== null ? 'sincronizado'
            : 'sin_sincronizar'
  return {
    periodo,
    estado,
    sincronizado_at: row.sincronizado_at,
    solicitado_at: row.solicitado_at,
    ultimo_intento_at: row.intento_at,
    falla,
    diferidas: row.diferidas,
    resumen: row.resumen as EstadoRcvRecord['resumen'],
  }
}

/** `GET /rcv/{periodo}`: the sync state and the last good copy's summaries. */
export function estadoRcv(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; periodo: string }): EstadoRcvRecord {
  const now = deps.clock.now()
  const periodo = checkPeriodo(input.periodo, now)
  return estadoDe(findRcvPeriodo(deps.store.db, input.empresaId, periodo), periodo, now)
}

/**
 * `POST /rcv/{periodo}/sincronizar`: records the request (the rcv job takes it within seconds) and answers the state.
 * A company with no active certificate cannot open a session at the SII: refused now rather than failed later.
 */
export function solicitarSincronizacion(deps: Pick<Deps, 'store' | 'vault' | 'clock'>, input: { empresaId: string; periodo: string }): EstadoRcvRecord {
  const now = deps.clock.now()
  const periodo = checkPeriodo(input.periodo, now)
  if (siiCredentials(deps, { empresaId: input.empresaId, now }) === null) {
    throw new TimbreError('CERTIFICATE_REQUIRED', { message: 'La empresa no tiene un certificado activo: el RCV se lee en el portal del SII con el certificado de la empresa.' })
  }
  return estadoDe(requestRcvSync(deps.store.db, input.empresaId, periodo, isoTimestamp(now)), periodo, now)
}

// ------------------------------------------------------------------------------------------------------ sync

export type SyncResult = 'ok' | 'fallido' | 'ocupado'

/** Spanish words for the state when the portal could not be read (the client's own message follows). */
const FALLA_TEXTO: Readonly<Record<MotivoFallaPortal | 'sin_certificado' | 'error_interno', string>> = {
  login_rechazado: 'El portal del SII no aceptó el certificado de la empresa.',
  tope_sesiones: 'El SII tiene abiertas demasiadas sesiones de este RUT; se reintentará más tarde.',
  sesion_expirada: 'La sesión del SII expiró durante la lectura.',
  descarga_diferida_sin_terminar: 'La descarga diferida del SII no terminó a tiempo.',
  sii_rechazo: 'El SII rechazó la consulta.',
  respuesta_invalida: 'El SII respondió algo que Timbre no puede leer.',
  sin_conexion: 'No hubo respuesta del SII.',
  sin_certificado: 'La empresa no tiene un certificado activo.',
  error_interno: 'Timbre falló al leer el RCV (error interno, registrado en su log).',
}

function companyOf(empresa: EmpresaRow): SiiCompany {
  return { rut: empresa.rut, ambiente: empresa.ambiente, isDemo: empresa.is_demo }
}

/** One sync of one period: claim it, read the whole RCV in one portal session, keep the copy or record why not. */
export async function sincronizarPeriodo(deps: RcvDeps, input: { empresaId: string; periodo: string }): Promise<SyncResult> {
  const { empresaId, periodo } = input
  const started = deps.clock.now()
  const claim: RcvClaim = { startedIso: isoTimestamp(started), leaseUntil: isoTimestamp(new Date(started.getTime() + leaseMs(deps.config))) }
  if (!claimRcvPeriodo(deps.store.db, empresaId, periodo, claim.startedIso, claim.leaseUntil)) return 'ocupado'
  const empresa = findEmpresaById(deps.store.db, empresaId)
  if (!empresa) throw new Error(`empresa ${empresaId} is missing`)
  const creds = siiCredentials(deps, { empresaId, now: started })
  const outcome = creds === null
    ? ({ kind: 'failed', motivo: 'sin_certificado', mensaje: '' } as const)
    : await leer(deps, empresa, creds, periodo)
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  if (outcome.kind === 'failed') {
    const mensaje = [FALLA_TEXTO[outcome.motivo], outcome.mensaje].filter((t) => t !== '').join(' ')
    const recorded = recordRcvFalla(deps.store.db, empresaId, periodo, { motivo: outcome.motivo, mensaje }, nowIso, claim, (tx) =>
      emitEvent(tx, { empresaId, type: 'rcv.sincronizado', now, data: { periodo, resultado: 'fallido', falla: { motivo: outcome.motivo, mensaje } } }))
    deps.log.warn('rcv.sync_failed', { empresa_id: empresaId, periodo, motivo: outcome.motivo, recorded })
    return recorded ? 'fallido' : 'ocupado'
  }
  const resumen = {
    compras: Object.fromEntries(SECCIONES_COMPRAS.map((s) => [s, outcome.compras.secciones[s].resumen])),
    ventas: outcome.ventas.resumen,
  }
  const detalles = [
    ...SECCIONES_COMPRAS.flatMap((s) => outcome.compras.secciones[s].detalle.map((d, n) => detalleRow('compras', s, n, d))),
    ...outcome.ventas.detalle.map((d, n) => detalleRow('ventas', 'ventas', n, d)),
  ]
  const stored = storeRcvCopia(deps.store.db, empresaId, periodo, { resumen, detalles, diferidas: outcome.diferidas }, nowIso, claim, (tx) =>
    emitEvent(tx, {
      empresaId, type: 'rcv.sincronizado', now,
      data: {
        periodo, resultado: 'ok', sincronizado_at: nowIso,
        compras: Object.fromEntries(SECCIONES_COMPRAS.map((s) => [s, outcome.compras.secciones[s].detalle.length])),
        ventas: outcome.ventas.detalle.length,
      },
    }))
  if (!stored) {
    // Our lease ran out and another sync took the period: its copy is the newer one.
    deps.log.warn('rcv.sync_lease_lost', { empresa_id: empresaId, periodo })
    return 'ocupado'
  }
  deps.log.info('rcv.synced', { empresa_id: empresaId, periodo, detalles: detalles.length, diferidas: outcome.diferidas, ms: now.getTime() - started.getTime() })
  return 'ok'
}

/**
 * The portal client answers every SII outcome as a value; a throw is Timbre's own bug. It still ends the sync as a
 * failure with words, so the period is not held by its lease for 20 minutes and the accountant sees why.
 */
async function leer(deps: RcvDeps, empresa: EmpresaRow, creds: NonNullable<ReturnType<typeof siiCredentials>>, periodo: string): Promise<RcvReadOutcome | { kind: 'failed'; motivo: 'error_interno'; mensaje: string }> {
  try {
    return await deps.rcvPortal.leerRcv(companyOf(empresa), creds, periodo)
  } catch (err) {
    deps.log.error('rcv.read_threw', { empresa_id: empresa.id, periodo, error: err instanceof Error ? err.stack ?? err.message : String(err) })
    return { kind: 'failed', motivo: 'error_interno', mensaje: '' }
  }
}

function detalleRow(registro: 'compras' | 'ventas', seccion: string, n: number, d: DetalleRcv): Omit<RcvDetalleRow, 'empresa_id' | 'periodo'> {
  return { registro, seccion, n, tipo_doc: d.tipoDoc, rut: d.rut, folio: d.folio, detalle: d as unknown as Record<string, unknown> }
}

/**
 * One pass of the rcv job: the periods asked for on demand, then the daily read of the current and the previous period
 * of every company in producción with a certificate (certificación companies and the demo are read only on demand: the
 * RCV holds producción documents). Sequential: each sync holds one SII session.
 */
export async function runRcvPass(deps: RcvDeps): Promise<number> {
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  let handled = 0
  for (const row of findRequestedRcvPeriodos(deps.store.db, nowIso, PER_PASS)) {
    if ((await sincronizarPeriodo(deps, { empresaId: row.empresa_id, periodo: row.periodo })) !== 'ocupado') handled++
  }
  const actual = periodoOf(now)
  for (const empresa of listEmpresas(deps.store.db)) {
    if (handled >= PER_PASS) break
    if (empresa.ambiente !== 'produccion' || empresa.is_demo) continue
    for (const periodo of [actual, periodoAnterior(actual)]) {
      const row = findRcvPeriodo(deps.store.db, empresa.id, periodo)
      const last = row?.intento_at ?? null
      if (last !== null && now.getTime() - Date.parse(last) < DAILY_MS) continue
      if (siiCredentials(deps, { empresaId: empresa.id, now }) === null) continue
      if ((await sincronizarPeriodo(deps, { empresaId: empresa.id, periodo })) !== 'ocupado') handled++
      if (handled >= PER_PASS) break
    }
  }
  return handled
}

// ------------------------------------------------------------------------------------------------------ the copy

/** The last good copy's registers; null while the period was never read. */
export function registrosDe(
  deps: Pick<Deps, 'store'>,
  empresaId: string,
  periodo: string,
): { readonly compras: RegistroCompras; readonly ventas: RegistroVentas; readonly sincronizadoAt: string } | null {
  // One read transaction: the period's row (its sincronizado_at dates the files) and the details are the same copy,
  // even when a sync (this server's job, or the CLI's) commits between the two reads.
  const { row, detalles } = deps.store.db.transaction((tx) => {
    const found = findRcvPeriodo(tx, empresaId, periodo)
    return { row: found, detalles: found ? findAllRcvDetalles(tx, empresaId, periodo) : [] }
  })
  if (!row || row.sincronizado_at === null || row.resumen === null) return null
  const resumen = row.resumen as unknown as { compras: Record<SeccionCompras, ResumenTipoRcv[]>; ventas: ResumenTipoRcv[] }
  const bySection = new Map<string, DetalleRcv[]>()
  for (const d of detalles) {
    const key = `${d.registro}:${d.seccion}`
    const list = bySection.get(key) ?? []
    list.push(d.detalle as unknown as DetalleRcv)
    bySection.set(key, list)
  }
  const secciones = Object.fromEntries(
    SECCIONES_COMPRAS.map((s) => [s, { resumen: resumen.compras[s] ?? [], detalle: bySection.get(`compras:${s}`) ?? [] }]),
  ) as unknown as RegistroCompras['secciones']
  return {
    compras: { periodo, secciones },
    ventas: { periodo, resumen: resumen.ventas ?? [], detalle: bySection.get('ventas:ventas') ?? [] },
    sincronizadoAt: row.sincronizado_at,
  }
}

/** The company, or 404 as every other resource of another company (DESIGN §4). */
export function empresaOf(deps: Pick<Deps, 'store'>, empresaId: string): EmpresaRow {
  const empresa = findEmpresaById(deps.store.db, empresaId)
  if (!empresa) throw new TimbreError('NOT_FOUND', { message: 'Empresa no encontrada.' })
  return empresa
}

// ------------------------------------------------------------------------------------------------------ reads

/** A detail as the API shows it: snake_case, the section it sits in. */
export interface DetalleRcvRecord {
  readonly seccion: string
  readonly tipo_dte: number
  readonly rut: string
  readonly razon_social: string
  readonly folio: number
  readonly fecha_emision: string
  readonly fecha_recepcion: string | null
  readonly fecha_acuse: string | null
  readonly fecha_reclamo: string | null
  readonly tipo_transaccion: string | null
  readonly monto_exento: number | null
  readonly monto_neto: number | null
  readonly monto_iva: number | null
  readonly monto_iva_no_recuperable: number | null
  readonly monto_total: number
  readonly iva_uso_comun: number | null
  readonly iva_retenido_total: number | null
  readonly iva_retenido_parcial: number | null
  readonly referencia: { readonly tipo_dte: number; readonly folio: number } | null
}

export function detalleRecord(seccion: string, d: DetalleRcv): DetalleRcvRecord {
  return {
    seccion, tipo_dte: d.tipoDoc, rut: d.rut, razon_social: d.razonSocial, folio: d.folio, fecha_emision: d.fechaEmision,
    fecha_recepcion: d.fechaRecepcion, fecha_acuse: d.fechaAcuse, fecha_reclamo: d.fechaReclamo, tipo_transaccion: d.tipoTransaccion,
    monto_exento: d.montoExento, monto_neto: d.montoNeto, monto_iva: d.montoIva, monto_iva_no_recuperable: d.montoIvaNoRecuperable,
    monto_total: d.montoTotal, iva_uso_comun: d.ivaUsoComun, iva_retenido_total: d.ivaRetenidoTotal, iva_retenido_parcial: d.ivaRetenidoParcial,
    referencia: d.referencia === null ? null : { tipo_dte: d.referencia.tipoDoc, folio: d.referencia.folio },
  }
}

/** `?seccion=` of the purchases' lists and exports. */
export function checkSeccion(raw: string | undefined, fallback: SeccionCompras | undefined): SeccionCompras | undefined {
  if (raw === undefined || raw === '') return fallback
  if ((SECCIONES_COMPRAS as readonly string[]).includes(raw)) return raw as SeccionCompras
  throw validationError([{ field: 'seccion', code: 'INVALID_VALUE', message: `Sección desconocida; valores aceptados: ${SECCIONES_COMPRAS.join(', ')}.` }])
}

/** The copy, or 409 RCV_NO_SINCRONIZADO: a list or a file of a period never read would be an empty answer that lies. */
export function copiaDe(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; periodo: string }): NonNullable<ReturnType<typeof registrosDe>> {
  const periodo = checkPeriodo(input.periodo, deps.clock.now())
  const registros = registrosDe(deps, input.empresaId, periodo)
  if (registros === null) throw new TimbreError('RCV_NO_SINCRONIZADO', { context: { periodo } })
  return registros
}

/** `GET /rcv/{periodo}/compras` and `/ventas`: one page of details, in the SII's order; the cursor is the position. */
export function listarDetalles(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { empresaId: string; periodo: string; registro: 'compras' | 'ventas'; seccion?: string; cursor?: string; limit: number },
): { items: DetalleRcvRecord[]; next_cursor: string | null; total_count: number } {
  const registros = copiaDe(deps, input)
  const seccion = input.registro === 'compras' ? checkSeccion(input.seccion, undefined) : undefined
  const all: DetalleRcvRecord[] = input.registro === 'ventas'
    ? registros.ventas.detalle.map((d) => detalleRecord('ventas', d))
    : SECCIONES_COMPRAS.filter((s) => seccion === undefined || s === seccion).flatMap((s) => registros.compras.secciones[s].detalle.map((d) => detalleRecord(s, d)))
  const start = decodePosition(input.cursor)
  const items = all.slice(start, start + input.limit)
  const next = start + input.limit < all.length ? encodePosition(start + input.limit) : null
  return { items, next_cursor: next, total_count: all.length }
}

const POSITION_PREFIX = 'p1.'

function encodePosition(n: number): string {
  return POSITION_PREFIX + Buffer.from(String(n), 'utf8').toString('base64url')
}

function decodePosition(cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return 0
  const raw = cursor.startsWith(POSITION_PREFIX) ? Buffer.from(cursor.slice(POSITION_PREFIX.length), 'base64url').toString('utf8') : ''
  if (!/^\d{1,9}$/.test(raw)) throw validationError([{ field: 'cursor', code: 'INVALID_FORMAT', message: 'Cursor inválido; use el next_cursor de la página anterior.' }])
  return Number(raw)
}

// ------------------------------------------------------------------------------------------------------ files

export interface ArchivoRcv {
  readonly bytes: Uint8Array
  readonly contentType: string
  /** Named as the SII names its exports: register, section, RUT, period. */
  readonly fileName: string
}

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/**
 * A register of the last good copy as a file: the SII's own CSV (one section of the purchases per file, as the SII
 * exports them) or a workbook an accountant opens (every section, a summary). The xlsx writer loads on first use.
 */
export async function archivoRcv(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { empresaId: string; periodo: string; registro: 'compras' | 'ventas'; formato: 'csv' | 'xlsx'; seccion?: string },
): Promise<ArchivoRcv> {
  const copia = copiaDe(deps, input)
  const empresa = empresaOf(deps, input.empresaId)
  const base = `RCV_${input.registro === 'compras' ? 'COMPRA' : 'VENTA'}`
  if (input.formato === 'csv') {
    const csv = (text: string, name: string): ArchivoRcv => ({ bytes: new TextEncoder().encode(text), contentType: 'text/csv; charset=utf-8', fileName: name })
    if (input.registro === 'ventas') return csv(writeRegistroVentasCsv(copia.ventas.detalle), `${base}_${empresa.rut}_${input.periodo}.csv`)
    const seccion = checkSeccion(input.seccion, 'registro')!
    return csv(writeRegistroComprasCsv(seccion, copia.compras.secciones[seccion].detalle), `${base}_${seccion.toUpperCase()}_${empresa.rut}_${input.periodo}.csv`)
  }
  const { registroComprasXlsx, registroVentasXlsx } = await import('../sheets/rcv-xlsx')
  const owner = { rut: empresa.rut, razonSocial: empresa.razon_social }
  const leidoAt = new Date(copia.sincronizadoAt)
  const bytes = input.registro === 'compras' ? await registroComprasXlsx(copia.compras, owner, leidoAt) : await registroVentasXlsx(copia.ventas, owner, leidoAt)
  return { bytes, contentType: XLSX_TYPE, fileName: `${base}_${empresa.rut}_${input.periodo}.xlsx` }
}
