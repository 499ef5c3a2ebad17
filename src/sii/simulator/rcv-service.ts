// The simulated SII portal on the plain origin (src/sii/portal-protocol.ts; docs/decisions/simulator.md "Portal y RCV"):
// the login's first hop (307 to the TLS listener of portal-login.ts, which asks for the certificate), the RCV's home
// the login sends the browser back to, the logout, and the RCV's data service (consdcvinternetui facadeService) over
// the registers rcv-registers.ts builds from what the simulator holds, with its deferred download. Every data answer
// is HTTP 200 JSON `{data, metaData, respEstado}`, as the SII's; the faults the CLI switches on (store.ts falla) apply here.
import { computeDv } from '../../domain/rut'
import {
  ESTADO_CONTAB, isPeriodoRcv, resumenDeDetalles, writeRegistroComprasCsv, writeRegistroVentasCsv, type DetalleRcv, type SeccionCompras,
} from '../../domain/rcv'
import {
  FACADE_OPS, PORTAL_PATHS, SESSION_INVALID_TEXT, type EstadoDiferida,
} from '../portal-protocol'
import type { Route, SimulatorContext } from './channel'
import { jsonResponse, textResponse } from './http-responses'
import { SESSION_IDLE_MS } from './portal-login'
import { detalleRow, resumenRow } from './rcv-rows'
import { registrosRcv } from './rcv-registers'
import type { RcvSolicitudRow } from './store'

/** A deferred download is CREADO when requested, EN PROCESO from 1 s, TERMINADO from 2 s (simulator clock). */
export const DIFERIDA_EN_PROCESO_MS = 1000
export const DIFERIDA_TERMINADA_MS = 2000

const HTML = 'text/html; charset=utf-8'
const BLOB_PREFIX = `${PORTAL_PATHS.facade}${FACADE_OPS.archivoDiferida}/`

export const RCV_ROUTES: readonly Route[] = [
  { method: 'POST', matches: (url) => url.pathname === PORTAL_PATHS.login, answer: toTlsListener },
  { method: 'GET', matches: (url) => url.pathname === PORTAL_PATHS.login, answer: toTlsListener },
  { method: 'GET', matches: (url) => url.pathname === PORTAL_PATHS.rcvHome, answer: () => textResponse(homePage(), HTML) },
  { method: 'GET', matches: (url) => url.pathname === PORTAL_PATHS.logout, answer: logout },
  { method: 'POST', matches: (url) => url.pathname.startsWith(PORTAL_PATHS.facade), answer: answerFacade },
  { method: 'GET', matches: (url) => url.pathname.startsWith(BLOB_PREFIX), answer: archivoDiferida },
]

/** The login asks for a certificate, which only the TLS listener can: 307 there, same path and query (the body is re-sent). */
async function toTlsListener(ctx: SimulatorContext, _req: Request, url: URL): Promise<Response> {
  const port = await ctx.portal.tlsPort()
  return new Response(null, { status: 307, headers: { Location: `https://${url.hostname}:${port}${url.pathname}${url.search}` } })
}

function homePage(): string {
  return '<html><head><meta charset="utf-8"><title>Registro de Compras y Ventas</title></head><body><h1>Registro de Compras y Ventas</h1></body></html>'
}

/** autTermino.cgi ends the session its TOKEN cookie names, if any, and always answers the portal's goodbye page. */
function logout(ctx: SimulatorContext, req: Request): Response {
  const token = cookie(req, 'TOKEN')
  if (token !== null) ctx.store.endPortalSesion(token, ctx.clock().getTime())
  ctx.log('sii_simulator.portal_logout', { had_token: token !== null })
  return textResponse('<html><head><meta charset="utf-8"><title>SII</title></head><body><p>Su sesión ha finalizado.</p></body></html>', HTML)
}

/** A cookie of the request (the portal's TOKEN), shared with folios-service.ts. */
export function cookie(req: Request, name: string): string | null {
  for (const part of (req.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return null
}

// ------------------------------------------------------------------------------------------------ data service

type MetaData = Readonly<Record<string, unknown>> | null

function answer(metaData: MetaData, codRespuesta: number, msgeRespuesta: string, data: unknown = null): Response {
  return jsonResponse({ data, metaData, respEstado: { codRespuesta, msgeRespuesta, codError: codRespuesta === 0 ? null : codRespuesta } })
}

const OPERATIONS: Readonly<Record<string, (ctx: SimulatorContext, q: Consulta, now: Date, metaData: MetaData) => Response>> = {
  [FACADE_OPS.resumen]: (ctx, q, now, metaData) => {
    const filas = resumenDeDetalles(detallesDe(ctx, q, now)).map(resumenRow)
    return filas.length === 0 ? answer(metaData, 3, 'No hay registros para el periodo consultado') : answer(metaData, 0, 'Ok', filas)
  },
  [FACADE_OPS.detalleCompra]: (ctx, q, now, metaData) => detalle(ctx, q, now, metaData, 'COMPRA'),
  [FACADE_OPS.detalleVenta]: (ctx, q, now, metaData) => detalle(ctx, q, now, metaData, 'VENTA'),
  [FACADE_OPS.solicitarDiferida]: (ctx, q, now, metaData) => {
    if (q.codTipoDoc === null) return answer(metaData, 1, 'Falta el tipo de documento')
    const idSolicitud = ctx.store.insertRcvSolicitud({
      rut_emisor: q.rut, periodo: q.periodo, operacion: q.operacion, estado_contab: q.seccion === null ? '' : ESTADO_CONTAB[q.seccion], tipo_doc: q.codTipoDoc,
      created_at: now.getTime(), is_eterna: ctx.store.takeFalla('diferida_eterna'),
    })
    return answer(metaData, 0, 'Ok', { idSolicitud })
  },
  [FACADE_OPS.estadoDiferida]: (ctx, q, now, metaData) => {
    const solicitud = q.idSolicitud === null ? null : ctx.store.findRcvSolicitud(q.idSolicitud)
    if (solicitud === null) return answer(metaData, 1, 'La solicitud no existe')
    return answer(metaData, 0, 'Ok', { idSolicitud: solicitud.id, caEstado: estadoDiferida(solicitud, now) })
  },
}

function detalle(ctx: SimulatorContext, q: Consulta, now: Date, metaData: MetaData, operacion: Consulta['operacion']): Response {
  if (q.operacion !== operacion) return answer(metaData, 1, `La operación debe ser ${operacion}`)
  if (q.codTipoDoc === null) return answer(metaData, 1, 'Falta el tipo de documento')
  const filas = detallesDe(ctx, q, now).filter((d) => d.tipoDoc === q.codTipoDoc).map(detalleRow)
  return filas.length === 0 ? answer(metaData, 3, 'No hay registros para el periodo consultado') : answer(metaData, 0, 'Ok', filas)
}

/** A data request read: the company, period, register and section, type and deferred id it names. */
interface Consulta {
  readonly rut: string
  readonly periodo: string
  readonly operacion: 'COMPRA' | 'VENTA'
  /** COMPRA's section; null for VENTA. */
  readonly seccion: SeccionCompras | null
  readonly codTipoDoc: number | null
  readonly idSolicitud: string | null
}

/** The details a request names, all types: a section of the Registro de Compras, or the Registro de Ventas. */
function detallesDe(ctx: SimulatorContext, q: Pick<Consulta, 'rut' | 'periodo' | 'operacion' | 'seccion'>, now: Date): readonly DetalleRcv[] {
  const registros = registrosRcv(ctx.store, q.rut, q.periodo, now)
  return q.operacion === 'VENTA' ? registros.ventas : registros.compras[q.seccion ?? 'registro']
}

async function answerFacade(ctx: SimulatorContext, req: Request, url: URL): Promise<Response> {
  const op = url.pathname.slice(PORTAL_PATHS.facade.length)
  const operation = Object.hasOwn(OPERATIONS, op) ? OPERATIONS[op] : undefined
  if (operation === undefined) return textResponse('<html><body><h1>404 Not Found</h1></body></html>', 'text/html', 404)
  const now = ctx.clock()
  let body: unknown = null
  try {
    body = JSON.parse(await req.text())
  } catch {
    // Read as no body: the session check below refuses it.
  }
  const metaData = isRecord(body) && isRecord(body.metaData) ? body.metaData : null
  const token = cookie(req, 'TOKEN')
  if (token === null || metaData?.conversationId !== token || ctx.store.usePortalSesion(token, now.getTime(), SESSION_IDLE_MS) === null) {
    return answer(metaData, 99, SESSION_INVALID_TEXT)
  }
  if (ctx.store.takeFalla('sesion_expirada')) {
    ctx.store.endPortalSesion(token, now.getTime())
    return answer(metaData, 99, SESSION_INVALID_TEXT)
  }
  // A body cut short, as a proxy or a crashed backend leaves it: 200, JSON's content type, not JSON.
  if (ctx.store.takeFalla('respuesta_malformada')) return textResponse('{"data":[{"detTipoDoc":33,"detRutDoc":7', 'application/json')
  const consulta = readConsulta(isRecord(body) ? body.data : null)
  if ('codRespuesta' in consulta) return answer(metaData, consulta.codRespuesta, consulta.msgeRespuesta)
  ctx.log('sii_simulator.rcv', { op, rut: consulta.rut, periodo: consulta.periodo, operacion: consulta.operacion, seccion: consulta.seccion, tipo: consulta.codTipoDoc })
  return operation(ctx, consulta, now, metaData)
}

const SECCION_DE_ESTADO = new Map<string, SeccionCompras>(Object.entries(ESTADO_CONTAB).map(([seccion, estado]) => [estado, seccion as SeccionCompras]))

/** The request's `data`: a RUT whose check digit does not match is 99 (invalid), a bad period, operation, section or type 1 (business). */
function readConsulta(data: unknown): Consulta | { readonly codRespuesta: number; readonly msgeRespuesta: string } {
  if (!isRecord(data)) return { codRespuesta: 99, msgeRespuesta: 'La consulta no trae datos' }
  const cuerpo = String(data.rutEmisor ?? '').trim()
  const dv = String(data.dvEmisor ?? '').trim().toUpperCase()
  if (!/^\d{1,8}$/.test(cuerpo) || computeDv(String(Number(cuerpo))) !== dv) return { codRespuesta: 99, msgeRespuesta: 'El rut no es valido' }
  const periodo = String(data.ptributario ?? '')
  if (!isPeriodoRcv(periodo)) return { codRespuesta: 1, msgeRespuesta: 'El periodo tributario no es valido' }
  const operacion = data.operacion
  if (operacion !== 'COMPRA' && operacion !== 'VENTA') return { codRespuesta: 1, msgeRespuesta: 'La operacion no es valida' }
  const seccion = operacion === 'COMPRA' ? SECCION_DE_ESTADO.get(String(data.estadoContab ?? '')) ?? null : null
  if (operacion === 'COMPRA' && seccion === null) return { codRespuesta: 1, msgeRespuesta: 'El estado contable no es valido' }
  const tipo = data.codTipoDoc
  const codTipoDoc = typeof tipo === 'number' && Number.isInteger(tipo) && tipo > 0 ? tipo : typeof tipo === 'string' && /^\d{1,3}$/.test(tipo) && Number(tipo) > 0 ? Number(tipo) : null
  const id = data.idSolicitud
  return {
    rut: `${Number(cuerpo)}-${dv}`, periodo, operacion, seccion, codTipoDoc,
    idSolicitud: typeof id === 'string' || typeof id === 'number' ? String(id) : null,
  }
}

function estadoDiferida(s: RcvSolicitudRow, now: Date): EstadoDiferida {
  const elapsed = now.getTime() - s.created_at
  if (elapsed < DIFERIDA_EN_PROCESO_MS) return 'CREADO'
  return s.is_eterna || elapsed < DIFERIDA_TERMINADA_MS ? 'EN PROCESO' : 'TERMINADO'
}

/** The finished download: the gzip of the CSV of that section (or of the ventas) and type, in the SII's layout (domain/rcv.ts). */
function archivoDiferida(ctx: SimulatorContext, req: Request, url: URL): Response {
  const now = ctx.clock()
  const token = cookie(req, 'TOKEN')
  if (token === null || ctx.store.usePortalSesion(token, now.getTime(), SESSION_IDLE_MS) === null) return answer(null, 99, SESSION_INVALID_TEXT)
  const solicitud = ctx.store.findRcvSolicitud(decodeURIComponent(url.pathname.slice(BLOB_PREFIX.length)))
  if (solicitud === null) return textResponse('<html><body><h1>404 Not Found</h1></body></html>', 'text/html', 404)
  if (estadoDiferida(solicitud, now) !== 'TERMINADO') return answer(null, 1, 'La solicitud aun no termina')
  const operacion = solicitud.operacion === 'VENTA' ? 'VENTA' : 'COMPRA'
  const seccion = SECCION_DE_ESTADO.get(solicitud.estado_contab) ?? 'registro'
  const detalles = detallesDe(ctx, { rut: solicitud.rut_emisor, periodo: solicitud.periodo, operacion, seccion }, now).filter((d) => d.tipoDoc === solicitud.tipo_doc)
  const csv = operacion === 'VENTA' ? writeRegistroVentasCsv(detalles) : writeRegistroComprasCsv(seccion, detalles)
  const name = `RCV_${operacion}_${operacion === 'VENTA' ? '' : `${solicitud.estado_contab}_`}${solicitud.rut_emisor}_${solicitud.periodo}.csv.gz`
  return new Response(Bun.gzipSync(Buffer.from(csv, 'utf8')), {
    status: 200,
    headers: { 'content-type': 'application/gzip', 'content-disposition': `attachment; filename="${name}"` },
  })
}

function isRecord(x: unknown): x is Readonly<Record<string, unknown>> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}
