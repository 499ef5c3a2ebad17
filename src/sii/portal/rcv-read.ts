// The RCV of one company and period, read inside an open portal session (research §2.2): per section of the Registro
// de Compras and for the Registro de Ventas, the summary (getResumen), then each document type's detail, by the JSON
// service (getDetalleCompra / getDetalleVenta) or, for a type with more documents than `diferidaDesde`, by the
// deferred download (solicitar → poll caEstado until TERMINADO → obtenerArchivoBLOB, a gzip CSV; research §2.2,
// SII FAQ RCV #31 "Descargas Diferidas"). One request at a time: the SII's portal is shared by every taxpayer.
import { readRegistroComprasCsv, readRegistroVentasCsv } from '../../domain/rcv-csv'
import {
  ESTADO_CONTAB, readDetalleRcv, readResumenRcv, SECCIONES_COMPRAS, TIPOS_SOLO_RESUMEN,
  type DetalleRcv, type OperacionRcv, type RcvResult, type RegistroCompras, type RegistroVentas, type ResumenYDetalle, type SeccionCompras,
} from '../../domain/rcv'
import { ESTADOS_DIFERIDA, FACADE_OPS, type EstadoDiferida, type FacadeRequest } from '../portal-protocol'
import { callFacade, dataOf, fetchArchivoDiferido, refusalCode, siiRechazo, type FacadeDeps } from './facade'
import { PortalFailure, respuestaInvalida } from './failure'

export interface RcvReadSettings {
  /** A type with more documents than this in its summary comes by the deferred download. */
  readonly diferidaDesde: number
  readonly diferidaPollMs: number
  /** How long a deferred download may stay CREADO or EN PROCESO. */
  readonly diferidaTimeoutMs: number
  readonly sleep: (ms: number) => Promise<void>
  readonly nowMs: () => number
}

export interface RcvReadContext {
  readonly facade: FacadeDeps
  readonly settings: RcvReadSettings
  /** The company's RUT as the request body splits it. */
  readonly rutEmisor: string
  readonly dvEmisor: string
  readonly periodo: string
  /** Logs one event per data request (polls apart): English fields, never the session. */
  readonly log: (event: string, fields: object) => void
}

export interface RcvRead {
  readonly compras: RegistroCompras
  readonly ventas: RegistroVentas
  readonly diferidas: number
}

/** The four sections of the Registro de Compras, then the Registro de Ventas, in one session. Failures throw PortalFailure. */
export async function readRcvInSession(ctx: RcvReadContext): Promise<RcvRead> {
  let diferidas = 0
  const secciones = {} as Record<SeccionCompras, ResumenYDetalle>
  for (const seccion of SECCIONES_COMPRAS) {
    const leida = await readRegistro(ctx, 'COMPRA', seccion)
    secciones[seccion] = leida.registro
    diferidas += leida.diferidas
  }
  const ventas = await readRegistro(ctx, 'VENTA', null)
  return {
    compras: { periodo: ctx.periodo, secciones },
    ventas: { periodo: ctx.periodo, ...ventas.registro },
    diferidas: diferidas + ventas.diferidas,
  }
}

/**
 * One section (COMPRA) or the sales register (VENTA): its summary as the SII gave it, which stays the section's
 * summary (the accountant compares with the SII's screen), and the details of every type it counts.
 */
async function readRegistro(
  ctx: RcvReadContext, operacion: OperacionRcv, seccion: SeccionCompras | null,
): Promise<{ readonly registro: ResumenYDetalle; readonly diferidas: number }> {
  // VENTA has no section: estadoContab '' (the PHP client research A-rcv agrees with, portal-protocol.ts).
  const base = { rutEmisor: ctx.rutEmisor, dvEmisor: ctx.dvEmisor, ptributario: ctx.periodo, estadoContab: seccion === null ? '' : ESTADO_CONTAB[seccion], operacion }
  const label = `${operacion}${seccion === null ? '' : ` ${base.estadoContab}`}`
  const resumen = await request(ctx, FACADE_OPS.resumen, { ...base, codTipoDoc: 0 }, `getResumen ${label}`, readResumenRcv)
  const detalle: DetalleRcv[] = []
  let diferidas = 0
  for (const tipo of resumen) {
    // A type the summary counts no document of has no detail to ask for; boletas and vouchers are totals only.
    if (tipo.cantidad === 0 || TIPOS_SOLO_RESUMEN.includes(tipo.tipoDoc)) continue
    const data = { ...base, codTipoDoc: tipo.tipoDoc }
    if (tipo.cantidad > ctx.settings.diferidaDesde) {
      detalle.push(...(await readDiferida(ctx, data, seccion, `descarga diferida ${label} tipo ${tipo.tipoDoc}`)))
      diferidas++
    } else {
      const op = operacion === 'COMPRA' ? FACADE_OPS.detalleCompra : FACADE_OPS.detalleVenta
      detalle.push(...(await request(ctx, op, data, `${op} ${label} tipo ${tipo.tipoDoc}`, readDetalleRcv)))
    }
  }
  return { registro: { resumen, detalle }, diferidas }
}

/** One data request read by a domain reader; logged with its outcome. */
async function request<T>(
  ctx: RcvReadContext, op: string, data: FacadeRequest['data'], where: string, reader: (answer: unknown) => RcvResult<T>,
): Promise<T> {
  const fields = { op, operacion: data.operacion, estado_contab: data.estadoContab, tipo_doc: data.codTipoDoc }
  try {
    const answer = await callFacade(ctx.facade, op, data, where)
    const read = reader(answer)
    if (!read.ok) throw readFailure(answer, read.errors, where)
    ctx.log('sii.portal.facade', { ...fields, outcome: 'ok' })
    return read.value
  } catch (err) {
    if (err instanceof PortalFailure) ctx.log('sii.portal.facade', { ...fields, outcome: err.motivo })
    throw err
  }
}

/** A reader's errors: the SII's refusal (codRespuesta 1, 2, 99 or unknown) or an answer Timbre cannot read. */
function readFailure(answer: unknown, errors: readonly { campo: string; mensaje: string }[], where: string): PortalFailure {
  if (refusalCode(answer) !== null) return siiRechazo(where, errors[0]?.mensaje ?? '')
  const first = errors.slice(0, 3).map((e) => `${e.campo}: ${e.mensaje}`).join('; ')
  return respuestaInvalida(where, `${first}${errors.length > 3 ? ` (y ${errors.length - 3} más)` : ''}`)
}

/** solicitar → caEstado until TERMINADO or the limit → the CSV, read by the layout of its section. */
async function readDiferida(ctx: RcvReadContext, data: FacadeRequest['data'], seccion: SeccionCompras | null, where: string): Promise<DetalleRcv[]> {
  const fields = { op: FACADE_OPS.solicitarDiferida, operacion: data.operacion, estado_contab: data.estadoContab, tipo_doc: data.codTipoDoc }
  try {
    const idSolicitud = readIdSolicitud(dataOf(await callFacade(ctx.facade, FACADE_OPS.solicitarDiferida, data, where), where), where)
    const polls = await waitTerminado(ctx, { ...data, idSolicitud }, where)
    const text = await fetchArchivoDiferido(ctx.facade, idSolicitud, where)
    const read = seccion === null ? readRegistroVentasCsv(text) : readRegistroComprasCsv(seccion, text)
    if (!read.ok) throw readFailure(null, read.errors, `${where}, archivo CSV`)
    ctx.log('sii.portal.diferida', { ...fields, polls, rows: read.value.length, outcome: 'ok' })
    return read.value
  } catch (err) {
    if (err instanceof PortalFailure) ctx.log('sii.portal.diferida', { ...fields, outcome: err.motivo })
    throw err
  }
}

/**
 * Polls getEstadoDescargaDiferida every `diferidaPollMs` until TERMINADO. The limit counts both the wall clock and the
 * time slept, so an injected `sleep` that returns at once still ends the wait. Returns the number of polls.
 */
async function waitTerminado(ctx: RcvReadContext, data: FacadeRequest['data'], where: string): Promise<number> {
  const { diferidaPollMs, diferidaTimeoutMs, sleep, nowMs } = ctx.settings
  const started = nowMs()
  let slept = 0
  for (let polls = 1; ; polls++) {
    const answer = await callFacade(ctx.facade, FACADE_OPS.estadoDiferida, data, where)
    const estado = readCaEstado(dataOf(answer, where), where)
    if (estado === 'TERMINADO') return polls
    if (Math.max(slept, nowMs() - started) + diferidaPollMs > diferidaTimeoutMs) {
      const minutos = Math.max(1, Math.round(diferidaTimeoutMs / 60_000))
      throw new PortalFailure('descarga_diferida_sin_terminar',
        `El SII no terminó de preparar la descarga diferida (${where}) en ${minutos} ${minutos === 1 ? 'minuto' : 'minutos'}: seguía ${estado}. Vuelva a sincronizar más tarde.`,
        `${where}: still ${estado} after ${polls} polls`)
    }
    await sleep(diferidaPollMs)
    slept += diferidaPollMs
  }
}

function readIdSolicitud(data: Readonly<Record<string, unknown>>, where: string): string {
  const raw = Object.hasOwn(data, 'idSolicitud') ? data.idSolicitud : undefined
  const id = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : raw
  if (typeof id !== 'string' || !/^[\w.-]{1,100}$/.test(id)) throw respuestaInvalida(where, 'data.idSolicitud falta o no es un identificador')
  return id
}

function readCaEstado(data: Readonly<Record<string, unknown>>, where: string): EstadoDiferida {
  const raw = Object.hasOwn(data, 'caEstado') ? data.caEstado : undefined
  const estado = ESTADOS_DIFERIDA.find((e) => e === raw)
  if (estado === undefined) throw respuestaInvalida(where, `data.caEstado ${JSON.stringify(raw) ?? 'falta'}: se esperaba ${ESTADOS_DIFERIDA.join(', ')}`)
  return estado
}
