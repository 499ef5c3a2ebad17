// The month's close (DESIGN §16, issue 29): the reconciliation of Timbre's documents with the RCV mirror, the F29
// proposal (from the mirror, or from Timbre's own documents while none is synced), the pending-acceptance board and the
// administrator's table of every company for a month. The rules are the domain's (conciliacion.ts, f29.ts,
// cierre-mes.ts); this module reads the store and shapes the answers.
import { and, asc, eq, gte, inArray, lte, sql } from 'drizzle-orm'
import { santiagoInstant } from '../clock'
import { listEmpresas } from '../db/empresa-store'
import type { Db } from '../db/open'
import { findRcvPeriodo } from '../db/rcv-store'
import { dtes, recibidos, type DteRow, type EmpresaRow, type RecibidoRow } from '../db/schema'
import { comprasParaConciliar, comprasParaF29, ventasParaConciliar, ventasParaF29 } from '../domain/cierre-mes'
import { conciliar, plazoAceptacion, type EmitidoTimbre, type Hallazgo, type RecibidoTimbre } from '../domain/conciliacion'
import { proponerF29, type CompraF29, type PropuestaF29, type VentaF29 } from '../domain/f29'
import { readDteView } from '../pdf/dte-view'
import type { Deps } from './deps'
import { checkPeriodo, estadoDe, registrosDe, type EstadoRcvRecord } from './rcv'

type ReadDeps = Pick<Deps, 'store' | 'clock'>

/** The first and last day of a period, as the DTEs' `fecha_emision` is written. */
function diasDe(periodo: string): { readonly desde: string; readonly hasta: string } {
  const y = periodo.slice(0, 4)
  const m = periodo.slice(4, 6)
  return { desde: `${y}-${m}-01`, hasta: `${y}-${m}-31` }
}

const SIN_DTE = ['borrador', 'generado', 'rechazado'] as const

/** The company's issued documents of the period that exist for the SII (signed at least, not rejected). */
function emitidosDe(db: Db, empresaId: string, periodo: string): DteRow[] {
  const { desde, hasta } = diasDe(periodo)
  return db.select().from(dtes)
    .where(and(eq(dtes.empresa_id, empresaId), gte(dtes.fecha_emision, desde), lte(dtes.fecha_emision, hasta), sql`${dtes.estado} not in ${SIN_DTE}`))
    .orderBy(asc(dtes.tipo_dte), asc(dtes.folio))
    .all()
}

function recibidosDe(db: Db, empresaId: string, periodo: string): RecibidoRow[] {
  const { desde, hasta } = diasDe(periodo)
  return db.select().from(recibidos)
    .where(and(eq(recibidos.empresa_id, empresaId), gte(recibidos.fecha_emision, desde), lte(recibidos.fecha_emision, hasta)))
    .orderBy(asc(recibidos.tipo_dte), asc(recibidos.folio))
    .all()
}

const NOTAS = [56, 61]

/** The documents a received note modifies, read from its XML (only notes need them: FAQ RCV #34). */
function referenciasDe(row: RecibidoRow): Array<{ tipoDte: number; folio: number }> {
  if (!NOTAS.includes(row.tipo_dte)) return []
  try {
    return readDteView(Buffer.from(row.xml).toString('latin1'))
      .referencias.map((r) => ({ tipoDte: Number(r.tpoDocRef), folio: Number(r.folioRef) }))
      .filter((r) => Number.isInteger(r.tipoDte) && Number.isInteger(r.folio))
  } catch {
    return []
  }
}

function toEmitido(row: DteRow): EmitidoTimbre {
  return {
    tipoDte: row.tipo_dte, folio: row.folio, rut: row.rut_receptor, fechaEmision: row.fecha_emision,
    aceptadoSii: row.estado === 'aceptado' || row.estado === 'con_reparos',
    montoExento: row.monto_exento ?? 0, montoNeto: row.monto_neto ?? 0, montoIva: row.iva ?? 0, montoTotal: row.monto_total,
  }
}

function toRecibido(row: RecibidoRow): RecibidoTimbre {
  return {
    tipoDte: row.tipo_dte, folio: row.folio, rut: row.rut_emisor, estado: row.estado,
    recepcionSii: row.fecha_recepcion_sii === null ? null : new Date(row.fecha_recepcion_sii),
    referencias: referenciasDe(row),
    montoExento: row.monto_exento ?? 0, montoNeto: row.monto_neto ?? 0, montoIva: row.iva ?? 0, montoTotal: row.monto_total,
  }
}

/** A 46 the company received as seller: a sale of its own, accepted by the SII when it reached the company. */
function ventaDe46Recibida(row: RecibidoRow): EmitidoTimbre {
  return {
    tipoDte: 46, folio: row.folio, rut: row.rut_emisor, fechaEmision: row.fecha_emision, aceptadoSii: true,
    montoExento: row.monto_exento ?? 0, montoNeto: row.monto_neto ?? 0, montoIva: row.iva ?? 0, montoTotal: row.monto_total,
  }
}

/** A 46 the company issued as buyer: its own purchase, with no acceptance to wait for. */
function compraDe46Emitida(row: DteRow): RecibidoTimbre {
  return {
    tipoDte: 46, folio: row.folio, rut: row.rut_receptor, estado: 'aceptado', recepcionSii: null, referencias: [],
    montoExento: row.monto_exento ?? 0, montoNeto: row.monto_neto ?? 0, montoIva: row.iva ?? 0, montoTotal: row.monto_total,
  }
}

// ------------------------------------------------------------------------------------------------------ reconciliation

export interface ConciliacionRecord {
  readonly periodo: string
  /** The mirror it was made against; `estado` sin_sincronizar: only what Timbre alone can tell (pending acceptances, notes over claims). */
  readonly rcv: Pick<EstadoRcvRecord, 'estado' | 'sincronizado_at' | 'falla'>
  readonly completa: boolean
  readonly total: number
  readonly por_tipo: Record<string, number>
  readonly hallazgos: readonly HallazgoRecord[]
}

export interface HallazgoRecord {
  readonly tipo: Hallazgo['tipo']
  readonly mensaje: string
  readonly documentos: ReadonlyArray<{ origen: 'timbre' | 'sii'; tipo_dte: number; folio: number; rut: string; registro: string | null; id: string | null }>
  readonly diferencias?: ReadonlyArray<{ campo: string; timbre: number; sii: number }>
  readonly plazo?: string
  readonly dias_restantes?: number
}

/** Hallazgos that need no mirror: Timbre's own documents tell them. */
const SOLO_TIMBRE = new Set<Hallazgo['tipo']>(['pendiente_aceptacion', 'nota_sobre_reclamada'])

const CAMPO_API: Readonly<Record<string, string>> = { montoExento: 'monto_exento', montoNeto: 'monto_neto', montoIva: 'iva', montoTotal: 'monto_total' }

interface Periodo {
  readonly empresaId: string
  readonly periodo: string
  readonly emitidos: DteRow[]
  readonly recibidos: RecibidoRow[]
  readonly registros: ReturnType<typeof registrosDe>
  readonly estado: EstadoRcvRecord
  readonly hallazgos: Hallazgo[]
  readonly now: Date
}

/** Everything the reconciliation and the F29 of one company and period read, read once. */
function leerPeriodo(deps: ReadDeps, empresaId: string, periodo: string, now: Date): Periodo {
  const db = deps.store.db
  const emitidos = emitidosDe(db, empresaId, periodo)
  const recibidosRows = recibidosDe(db, empresaId, periodo)
  const registros = registrosDe(deps, empresaId, periodo)
  const estado = estadoDe(findRcvPeriodo(db, empresaId, periodo), periodo, now)
  // A factura de compra (46) is the buyer's purchase and the seller's sale: the one the company issued is matched
  // against its Registro de Compras, one it received against its Registro de Ventas.
  const todos = conciliar({
    emitidos: [...emitidos.filter((d) => d.tipo_dte !== 46).map(toEmitido), ...recibidosRows.filter((r) => r.tipo_dte === 46 && r.estado !== 'rechazado_tecnico').map(ventaDe46Recibida)],
    recibidos: [...recibidosRows.filter((r) => r.tipo_dte !== 46).map(toRecibido), ...emitidos.filter((d) => d.tipo_dte === 46).map(compraDe46Emitida)],
    compras: registros === null ? [] : comprasParaConciliar(registros.compras, santiagoInstant),
    ventas: registros === null ? [] : ventasParaConciliar(registros.ventas),
    hoy: now,
  })
  const hallazgos = registros === null ? todos.filter((h) => SOLO_TIMBRE.has(h.tipo)) : todos
  return { empresaId, periodo, emitidos, recibidos: recibidosRows, registros, estado, hallazgos, now }
}

function hallazgoRecord(h: Hallazgo, p: Periodo): HallazgoRecord {
  const idDe = (d: Hallazgo['documentos'][number]): string | null => {
    if (d.origen !== 'timbre') return null
    const own = p.emitidos.find((e) => e.tipo_dte === d.tipoDte && e.folio === d.folio && e.rut_receptor === d.rut)
      ?? p.recibidos.find((r) => r.tipo_dte === d.tipoDte && r.folio === d.folio && r.rut_emisor === d.rut)
    return own?.id ?? null
  }
  return {
    tipo: h.tipo,
    mensaje: h.mensaje,
    documentos: h.documentos.map((d) => ({ origen: d.origen, tipo_dte: d.tipoDte, folio: d.folio, rut: d.rut, registro: d.registro, id: idDe(d) })),
    ...(h.diferencias ? { diferencias: h.diferencias.map((d) => ({ campo: CAMPO_API[d.campo] ?? d.campo, timbre: d.timbre, sii: d.sii })) } : {}),
    ...(h.plazo !== undefined ? { plazo: h.plazo } : {}),
    ...(h.diasRestantes !== undefined ? { dias_restantes: h.diasRestantes } : {}),
  }
}

function conciliacionRecord(p: Periodo): ConciliacionRecord {
  const porTipo: Record<string, number> = {}
  for (const h of p.hallazgos) porTipo[h.tipo] = (porTipo[h.tipo] ?? 0) + 1
  return {
    periodo: p.periodo,
    rcv: { estado: p.estado.estado, sincronizado_at: p.estado.sincronizado_at, falla: p.estado.falla },
    completa: p.registros !== null,
    total: p.hallazgos.length,
    por_tipo: porTipo,
    hallazgos: p.hallazgos.map((h) => hallazgoRecord(h, p)),
  }
}

/** `GET /conciliacion/{periodo}`. */
export function conciliacionDe(deps: ReadDeps, input: { empresaId: string; periodo: string }): ConciliacionRecord {
  const now = deps.clock.now()
  return conciliacionRecord(leerPeriodo(deps, input.empresaId, checkPeriodo(input.periodo, now), now))
}

// ------------------------------------------------------------------------------------------------------ F29

/**
 * Timbre's documents as the F29 reads them while no mirror is synced: sales issued (not a 46, which is a purchase of
 * the buyer that issues it, nor a guía), and facturas de compra (46) the company received as seller, whose IVA the buyer
 * retained: their ImptoReten code 15 (retención total, DTE format) is the retained amount.
 */
function ventasDeTimbre(emitidos: readonly DteRow[], recibidosRows: readonly RecibidoRow[]): VentaF29[] {
  const emitidas = emitidos.filter((d) => d.tipo_dte !== 46 && d.tipo_dte !== 52).map((d): VentaF29 => ({
    tipoDte: d.tipo_dte, folio: d.folio, rut: d.rut_receptor, cantidad: 1,
    montoExento: d.monto_exento ?? 0, montoNeto: d.monto_neto ?? 0, montoIva: d.iva ?? 0, ivaRetenido: 0, montoTotal: d.monto_total,
  }))
  const facturasCompraRecibidas = recibidosRows.filter((r) => r.tipo_dte === 46 && r.estado !== 'rechazado_tecnico').map((r): VentaF29 => ({
    tipoDte: 46, folio: r.folio, rut: r.rut_emisor, cantidad: 1,
    montoExento: r.monto_exento ?? 0, montoNeto: r.monto_neto ?? 0, montoIva: r.iva ?? 0, ivaRetenido: ivaRetenidoDe(r), montoTotal: r.monto_total,
  }))
  return [...emitidas, ...facturasCompraRecibidas]
}

/** The IVA the buyer retained on a received 46 (ImptoReten TipoImp 15); 0 when unreadable, which the F29 then flags. */
function ivaRetenidoDe(row: RecibidoRow): number {
  try {
    return readDteView(Buffer.from(row.xml).toString('latin1')).totales.impuestos
      .filter((i) => i.tipo === '15').reduce((a, i) => a + (Number(i.monto) || 0), 0)
  } catch {
    return 0
  }
}

const SECCION_DE_ESTADO: Readonly<Record<RecibidoRow['estado'], CompraF29['seccion'] | null>> = {
  recibido: 'pendiente', aceptado: 'registro', aceptado_tacito: 'registro', reclamado: 'reclamado', rechazado_tecnico: null,
}

/** Received types that are no purchase of the company: boletas, guías, and a 46 (the company sold; see ventasDeTimbre). */
const NO_COMPRA = [39, 41, 46, 52]
/** Received types that wait for an acceptance (Ley 19.983: 8 days); the rest enter the RC directly (FAQ RCV #3). */
const CON_PLAZO = [33, 34, 43]

function comprasDeTimbre(recibidosRows: readonly RecibidoRow[], emitidos: readonly DteRow[], now: Date): CompraF29[] {
  const recibidas = recibidosRows.flatMap((r): CompraF29[] => {
    if (NO_COMPRA.includes(r.tipo_dte)) return []
    const seccion = SECCION_DE_ESTADO[r.estado]
    // Past its plazo a document counts as accepted even before the follow-up records it (as conciliacion.ts reads it).
    const vencido = r.plazo !== null && Date.parse(r.plazo) < now.getTime()
    const efectiva = seccion === 'pendiente' && (!CON_PLAZO.includes(r.tipo_dte) || vencido) ? 'registro' : seccion
    if (efectiva === null) return []
    return [{
      seccion: efectiva, tipoDte: r.tipo_dte, folio: r.folio, rut: r.rut_emisor,
      montoExento: r.monto_exento ?? 0, montoNeto: r.monto_neto ?? 0, ivaRecuperable: r.iva ?? 0, ivaNoRecuperable: 0, ivaUsoComun: 0,
      ivaRetenido: 0, montoTotal: r.monto_total, referencias: referenciasDe(r),
    }]
  })
  // A factura de compra (46) the company issued is a purchase whose IVA it retained (DESIGN §16; domain/f29.ts).
  const facturasCompra = emitidos.filter((d) => d.tipo_dte === 46).map((d): CompraF29 => ({
    seccion: 'registro', tipoDte: 46, folio: d.folio, rut: d.rut_receptor,
    montoExento: d.monto_exento ?? 0, montoNeto: d.monto_neto ?? 0, ivaRecuperable: d.iva ?? 0, ivaNoRecuperable: 0, ivaUsoComun: 0,
    ivaRetenido: d.iva ?? 0, montoTotal: d.monto_total, referencias: [],
  }))
  return [...recibidas, ...facturasCompra]
}

function propuestaDe(p: Periodo): PropuestaF29 {
  if (p.registros === null) {
    return proponerF29({
      periodo: p.periodo, origen: 'timbre', ventas: ventasDeTimbre(p.emitidos, p.recibidos), compras: comprasDeTimbre(p.recibidos, p.emitidos, p.now),
      factorUsoComunMilesimas: null, hallazgos: p.hallazgos,
    })
  }
  // The RC names no IVA retained: the company's own 46 still come from Timbre (domain/cierre-mes.ts comprasParaF29).
  const facturasCompra = comprasDeTimbre([], p.emitidos, p.now)
  const compras = comprasParaF29(p.registros.compras).filter((c) => c.tipoDte !== 46)
  return proponerF29({
    periodo: p.periodo, origen: 'rcv', ventas: ventasParaF29(p.registros.ventas), compras: [...compras, ...facturasCompra],
    factorUsoComunMilesimas: null, hallazgos: p.hallazgos,
  })
}

export interface F29Record {
  readonly periodo: string
  readonly origen: 'rcv' | 'timbre'
  readonly rcv: Pick<EstadoRcvRecord, 'estado' | 'sincronizado_at'>
  readonly codigos: ReadonlyArray<F29CodigoRecord>
  readonly resultado: F29CodigoRecord
  readonly advertencias: ReadonlyArray<{ tipo: string; bloquea: boolean; mensaje: string; documentos: ReadonlyArray<{ tipo_dte: number; folio: number; rut: string }> }>
  readonly limpia: boolean
  readonly confirmada: boolean
}

export interface F29CodigoRecord {
  readonly codigo: number
  readonly glosa: string
  readonly valor: number
  readonly confirmado: boolean
  readonly fuente: string
  readonly documentos: ReadonlyArray<{ tipo_dte: number; folio: number; rut: string }>
}

const docRecord = (d: { tipoDte: number; folio: number; rut: string }) => ({ tipo_dte: d.tipoDte, folio: d.folio, rut: d.rut })

function f29Record(p: Periodo, propuesta: PropuestaF29): F29Record {
  const codigo = (c: PropuestaF29['resultado']): F29CodigoRecord => ({
    codigo: c.codigo, glosa: c.glosa, valor: c.valor, confirmado: c.confirmado, fuente: c.fuente, documentos: c.documentos.map(docRecord),
  })
  return {
    periodo: p.periodo,
    origen: propuesta.origen,
    rcv: { estado: p.estado.estado, sincronizado_at: p.estado.sincronizado_at },
    codigos: propuesta.codigos.map(codigo),
    resultado: codigo(propuesta.resultado),
    advertencias: propuesta.advertencias.map((a) => ({ tipo: a.tipo, bloquea: a.bloquea, mensaje: a.mensaje, documentos: a.documentos.map(docRecord) })),
    limpia: propuesta.limpia,
    confirmada: propuesta.confirmada,
  }
}

/** `GET /f29/{periodo}`. */
export function f29De(deps: ReadDeps, input: { empresaId: string; periodo: string }): F29Record {
  const now = deps.clock.now()
  const p = leerPeriodo(deps, input.empresaId, checkPeriodo(input.periodo, now), now)
  return f29Record(p, propuestaDe(p))
}

// ------------------------------------------------------------------------------------------------------ pending board

export interface PendienteRecord {
  readonly id: string
  readonly empresa_id: string
  readonly rut_emisor: string
  readonly razon_social_emisor: string
  readonly tipo_dte: number
  readonly folio: number
  readonly fecha_emision: string
  readonly monto_total: number
  readonly fecha_recepcion_sii: string | null
  readonly plazo: string | null
  /** Whole days left before it counts as accepted, rounded up; null while the SII's reception date is not known. */
  readonly dias_restantes: number | null
}

const TIPOS_CON_PLAZO = [33, 34, 43]

/** The list's filters the board also takes (services/recibidos.ts recibidoFilterOf checked them). */
export interface FiltroPendientes {
  readonly rutEmisor?: string
  readonly tipoDte?: number
  readonly fechaDesde?: string
  readonly fechaHasta?: string
}

/**
 * Every received 33, 34 and 43 still open (estado recibido) of these companies, oldest deadline first (a document
 * whose SII reception is not known yet has no deadline and goes last), then by id.
 */
export function pendientesDe(deps: ReadDeps, empresaIds: readonly string[], filtro: FiltroPendientes = {}): PendienteRecord[] {
  if (empresaIds.length === 0) return []
  const now = deps.clock.now()
  const tipos = filtro.tipoDte === undefined ? TIPOS_CON_PLAZO : TIPOS_CON_PLAZO.filter((t) => t === filtro.tipoDte)
  if (tipos.length === 0) return []
  const conditions = [inArray(recibidos.empresa_id, [...empresaIds]), eq(recibidos.estado, 'recibido'), inArray(recibidos.tipo_dte, tipos)]
  if (filtro.rutEmisor !== undefined) conditions.push(eq(recibidos.rut_emisor, filtro.rutEmisor))
  if (filtro.fechaDesde !== undefined) conditions.push(gte(recibidos.fecha_emision, filtro.fechaDesde))
  if (filtro.fechaHasta !== undefined) conditions.push(lte(recibidos.fecha_emision, filtro.fechaHasta))
  const rows = deps.store.db.select({
    id: recibidos.id, empresa_id: recibidos.empresa_id, rut_emisor: recibidos.rut_emisor, razon_social_emisor: recibidos.razon_social_emisor,
    tipo_dte: recibidos.tipo_dte, folio: recibidos.folio, fecha_emision: recibidos.fecha_emision, monto_total: recibidos.monto_total,
    fecha_recepcion_sii: recibidos.fecha_recepcion_sii, plazo: recibidos.plazo,
  }).from(recibidos)
    .where(and(...conditions))
    .orderBy(sql`${recibidos.plazo} is null`, asc(recibidos.plazo), asc(recibidos.id))
    .all()
  return rows.map((r) => {
    const left = r.fecha_recepcion_sii === null ? null : plazoAceptacion(new Date(r.fecha_recepcion_sii), now)
    return { ...r, dias_restantes: r.fecha_recepcion_sii === null ? null : (left?.diasRestantes ?? 0) }
  })
}

/** The board's order as one comparable key: deadline (none last), then id. */
function ordenPendiente(p: Pick<RecibidoRow, 'plazo' | 'id'>): string {
  return `${p.plazo === null ? '1' : `0${p.plazo}`}|${p.id}`
}

/**
 * One page of the board after the document `afterId` named. The cursor is a position in the order, not in a list:
 * when that document has left the board (accepted, claimed, past its plazo) the page still starts after where it was.
 */
export function pendientesPagina(
  deps: ReadDeps, input: { empresaId: string; filtro: FiltroPendientes; afterId: string | null; limit: number },
): { readonly items: PendienteRecord[]; readonly hayMas: boolean; readonly total: number } {
  const board = pendientesDe(deps, [input.empresaId], input.filtro)
  let start = 0
  if (input.afterId !== null) {
    const after = deps.store.db.select({ plazo: recibidos.plazo, id: recibidos.id }).from(recibidos)
      .where(and(eq(recibidos.empresa_id, input.empresaId), eq(recibidos.id, input.afterId))).get()
    const key = after === undefined ? `1|${input.afterId}` : ordenPendiente(after)
    start = board.findIndex((p) => ordenPendiente(p) > key)
    if (start < 0) start = board.length
  }
  return { items: board.slice(start, start + input.limit), hayMas: start + input.limit < board.length, total: board.length }
}

// ------------------------------------------------------------------------------------------------------ month table

export interface MesEmpresaRecord {
  readonly empresa: { readonly id: string; readonly rut: string; readonly razon_social: string; readonly ambiente: string }
  readonly rcv: Pick<EstadoRcvRecord, 'estado' | 'sincronizado_at' | 'falla'>
  readonly hallazgos: number
  readonly pendientes: number
  /** 538, 537 and the result: 89 IVA to pay, or 77 remanente (negative `iva_a_pagar`). */
  readonly debito: number
  readonly credito: number
  readonly iva_a_pagar: number
  readonly origen_f29: 'rcv' | 'timbre'
  readonly limpia: boolean
}

/** The administrator's month: one row per company (DESIGN §16 "Console"). */
export function mesDeEmpresas(deps: ReadDeps, input: { periodo: string; empresas?: readonly EmpresaRow[] }): MesEmpresaRecord[] {
  const now = deps.clock.now()
  const periodo = checkPeriodo(input.periodo, now)
  const empresas = input.empresas ?? listEmpresas(deps.store.db)
  return empresas.map((e) => {
    const p = leerPeriodo(deps, e.id, periodo, now)
    const propuesta = propuestaDe(p)
    const valor = (codigo: number): number => propuesta.codigos.find((c) => c.codigo === codigo)?.valor ?? 0
    return {
      empresa: { id: e.id, rut: e.rut, razon_social: e.razon_social, ambiente: e.ambiente },
      rcv: { estado: p.estado.estado, sincronizado_at: p.estado.sincronizado_at, falla: p.estado.falla },
      hallazgos: p.hallazgos.length,
      pendientes: p.hallazgos.filter((h) => h.tipo === 'pendiente_aceptacion').length,
      debito: valor(538),
      credito: valor(537),
      iva_a_pagar: propuesta.resultado.codigo === 89 ? propuesta.resultado.valor : -propuesta.resultado.valor,
      origen_f29: propuesta.origen,
      limpia: propuesta.limpia,
    }
  })
}

