// The month's reconciliation (DESIGN §16, research/next-capabilities.md §2.3): Timbre's issued and received documents
// against the SII's Registro de Compras y Ventas (RCV), matched by (tipo, RUT, folio), each finding with the documents
// behind it. Pure: the service reads the store and the RCV mirror and passes plain lists; "today" is an argument. The
// input types are the few fields the rules need, so the RCV mirror's own record types can be mapped onto them.
// Rules and their sources: docs/decisions/f29.md "Conciliación".
import { plazoFrom } from './intercambio'
import { normalizeRut } from './rut'

/** The four sections of the Registro de Compras (SII FAQ RCV #1–#4). */
export const SECCIONES_COMPRA = ['registro', 'pendiente', 'no_incluir', 'reclamado'] as const
export type SeccionCompra = (typeof SECCIONES_COMPRA)[number]

/** The amounts compared between Timbre and the SII, in integer pesos. */
export interface MontosDocumento {
  readonly montoExento: number
  readonly montoNeto: number
  readonly montoIva: number
  readonly montoTotal: number
}

/** The document a note modifies (TpoDocRef, FolioRef). */
export interface ReferenciaDocumento {
  readonly tipoDte: number
  readonly folio: number
}

/** A document issued by Timbre in the period. `rut` is the receptor's. */
export interface EmitidoTimbre extends MontosDocumento {
  readonly tipoDte: number
  readonly folio: number
  readonly rut: string
  /** `YYYY-MM-DD`. */
  readonly fechaEmision: string
  /** The SII accepted the upload (estado aceptado or con reparos): from then on it belongs in the Registro de Ventas. */
  readonly aceptadoSii: boolean
}

/** A document Timbre received for the company. `rut` is the issuer's. */
export interface RecibidoTimbre extends MontosDocumento {
  readonly tipoDte: number
  readonly folio: number
  readonly rut: string
  /** recibido | rechazado_tecnico | aceptado | reclamado | aceptado_tacito (DESIGN §13). */
  readonly estado: 'recibido' | 'rechazado_tecnico' | 'aceptado' | 'reclamado' | 'aceptado_tacito'
  /** The SII's reception instant, which starts the 8 days; null when not known yet. */
  readonly recepcionSii: Date | null
  readonly referencias: readonly ReferenciaDocumento[]
}

/** One row of the Registro de Compras, any section. `rut` is the supplier's. */
export interface CompraRcv extends MontosDocumento {
  readonly seccion: SeccionCompra
  readonly tipoDte: number
  readonly folio: number
  readonly rut: string
  /** Fecha Recepcion: the SII's reception, which starts the 8 days; null when the row does not carry it. */
  readonly recepcionSii: Date | null
  /** The documents a note modifies, when the mirror knows them; [] otherwise. */
  readonly referencias: readonly ReferenciaDocumento[]
}

/** One row of the Registro de Ventas. `rut` is the receptor's. */
export interface VentaRcv extends MontosDocumento {
  readonly tipoDte: number
  readonly folio: number
  readonly rut: string
  /** `YYYY-MM-DD`. */
  readonly fechaEmision: string
}

export interface ConciliacionInput {
  readonly emitidos: readonly EmitidoTimbre[]
  readonly recibidos: readonly RecibidoTimbre[]
  readonly compras: readonly CompraRcv[]
  readonly ventas: readonly VentaRcv[]
  /** The instant the days left are counted from. */
  readonly hoy: Date
}

export const TIPOS_HALLAZGO = [
  'recibido_sin_registro',   // received by Timbre, not in the SII's Registro de Compras: ask the supplier to resend (FAQ RCV #13)
  'compra_sin_documento',    // in the Registro de Compras, never received by Timbre: the XML did not arrive
  'montos_distintos',        // same (tipo, RUT, folio), different amounts
  'emitido_sin_registro',    // issued and accepted by the SII, missing from the Registro de Ventas
  'venta_sin_documento',     // in the Registro de Ventas, not issued by Timbre (the SII's portal, another system)
  'pendiente_aceptacion',    // a purchase neither accepted nor claimed, with days left before it counts as accepted
  'nota_sobre_reclamada',    // a credit note over a claimed invoice: both stay out of the F29 (FAQ RCV #34)
  'boleta_duplicada',        // a sale counted twice as boleta, or as boleta and comprobante de pago (FAQ comprobante #6)
] as const
export type TipoHallazgo = (typeof TIPOS_HALLAZGO)[number]

/** One document behind a finding, and where it was seen. */
export interface DocumentoHallazgo {
  readonly origen: 'timbre' | 'sii'
  readonly tipoDte: number
  readonly folio: number
  readonly rut: string
  /** The Registro de Compras section of an SII purchase; 'ventas' for the Registro de Ventas; null for Timbre's. */
  readonly registro: SeccionCompra | 'ventas' | null
}

export interface DiferenciaMonto {
  readonly campo: keyof MontosDocumento
  readonly timbre: number
  readonly sii: number
}

export interface Hallazgo {
  readonly tipo: TipoHallazgo
  /** Spanish, for the accountant: what was found and what to do. */
  readonly mensaje: string
  readonly documentos: readonly DocumentoHallazgo[]
  /** montos_distintos: each amount that differs. */
  readonly diferencias?: readonly DiferenciaMonto[]
  /** pendiente_aceptacion: the instant it counts as accepted (ISO) and the whole days left, rounded up. */
  readonly plazo?: string
  readonly diasRestantes?: number
}

/**
 * Types the Registro de Compras and de Ventas list one by one, among those Timbre issues and receives: facturas,
 * liquidaciones-factura, facturas de compra, notas and export documents. Boletas (39, 41) reach the Registro de Ventas
 * as a daily summary, without folio, and guías (52) are not VAT documents, so neither can be matched by folio.
 */
export const TIPOS_POR_FOLIO = [33, 34, 43, 46, 56, 61, 110, 111, 112] as const
/** Types whose acceptance decides the purchase's section (Ley 19.983; docs/sii-protocol.md §6.7). */
const TIPOS_CON_PLAZO = [33, 34, 43] as const
const BOLETAS = [39, 41] as const
const COMPROBANTE_PAGO = 48
const NOTA_CREDITO = 61
const DAY_MS = 24 * 60 * 60_000

/** The match key (tipo, RUT, folio), with the RUT in its canonical form so `76.086.428-5` meets `76086428-5`. */
export function claveDocumento(doc: { readonly tipoDte: number; readonly rut: string; readonly folio: number }): string {
  return `${doc.tipoDte}|${normalizeRut(doc.rut) ?? doc.rut.toUpperCase()}|${doc.folio}`
}

/** The instant a purchase counts as accepted and the whole days left until then; null once the 8 days have passed. */
export function plazoAceptacion(recepcionSii: Date, hoy: Date): { readonly plazo: Date; readonly diasRestantes: number } | null {
  const plazo = plazoFrom(recepcionSii)
  const leftMs = plazo.getTime() - hoy.getTime()
  // At the limit itself the receiver can still act (intercambio.checkAccion refuses only after it), so 0 days is shown.
  if (leftMs < 0) return null
  return { plazo, diasRestantes: Math.ceil(leftMs / DAY_MS) }
}

/** Every finding of the period, in a stable order: by kind as TIPOS_HALLAZGO lists them, then by key. */
export function conciliar(input: ConciliacionInput): Hallazgo[] {
  const hallazgos = [
    ...conciliarCompras(input),
    ...conciliarVentas(input),
    ...pendientesAceptacion(input),
    ...notasSobreReclamadas(input),
    ...boletasDuplicadas(input),
  ]
  const orden = (h: Hallazgo): number => TIPOS_HALLAZGO.indexOf(h.tipo)
  const clave = (h: Hallazgo): string => h.documentos.map((d) => claveDocumento(d)).join(',')
  return hallazgos.sort((a, b) => orden(a) - orden(b) || clave(a).localeCompare(clave(b)))
}

function indexBy<T extends { readonly tipoDte: number; readonly rut: string; readonly folio: number }>(list: readonly T[]): Map<string, T[]> {
  const map = new Map<string, T[]>()
  for (const item of list) {
    const key = claveDocumento(item)
    map.set(key, [...(map.get(key) ?? []), item])
  }
  return map
}

function porFolio(tipoDte: number): boolean {
  return (TIPOS_POR_FOLIO as readonly number[]).includes(tipoDte)
}

function deTimbre(doc: { readonly tipoDte: number; readonly folio: number; readonly rut: string }): DocumentoHallazgo {
  return { origen: 'timbre', tipoDte: doc.tipoDte, folio: doc.folio, rut: doc.rut, registro: null }
}

function deCompra(row: CompraRcv): DocumentoHallazgo {
  return { origen: 'sii', tipoDte: row.tipoDte, folio: row.folio, rut: row.rut, registro: row.seccion }
}

function deVenta(row: VentaRcv): DocumentoHallazgo {
  return { origen: 'sii', tipoDte: row.tipoDte, folio: row.folio, rut: row.rut, registro: 'ventas' }
}

function describe(doc: { readonly tipoDte: number; readonly folio: number; readonly rut: string }): string {
  return `tipo ${doc.tipoDte} folio ${doc.folio} (RUT ${doc.rut})`
}

/** The amounts that differ between Timbre's document and the SII's row; [] when they agree. */
export function diferenciasMontos(timbre: MontosDocumento, sii: MontosDocumento): DiferenciaMonto[] {
  const campos = ['montoExento', 'montoNeto', 'montoIva', 'montoTotal'] as const
  return campos.filter((c) => timbre[c] !== sii[c]).map((campo) => ({ campo, timbre: timbre[campo], sii: sii[campo] }))
}

function montosDistintos(doc: RecibidoTimbre | EmitidoTimbre, row: CompraRcv | VentaRcv, fila: DocumentoHallazgo): Hallazgo[] {
  const diferencias = diferenciasMontos(doc, row)
  if (diferencias.length === 0) return []
  const lista = diferencias.map((d) => `${d.campo} ${d.timbre} en Timbre y ${d.sii} en el SII`).join('; ')
  return [{ tipo: 'montos_distintos', mensaje: `Los montos del ${describe(doc)} no coinciden: ${lista}.`, documentos: [deTimbre(doc), fila], diferencias }]
}

/**
 * Received against the Registro de Compras, both ways (LibreDTE's rcv_diferencias compares only the REGISTRO section;
 * here every section counts as "the SII holds it", since a pending or claimed purchase is still one the SII received).
 * A document Timbre refused at reception (rechazado_tecnico) was never a valid purchase and is left out.
 */
function conciliarCompras(input: ConciliacionInput): Hallazgo[] {
  const recibidos = input.recibidos.filter((r) => porFolio(r.tipoDte) && r.estado !== 'rechazado_tecnico')
  const compras = indexBy(input.compras)
  const timbre = indexBy(recibidos)
  const out: Hallazgo[] = []
  for (const doc of recibidos) {
    const row = compras.get(claveDocumento(doc))?.[0]
    if (row === undefined)
      out.push({
        tipo: 'recibido_sin_registro',
        mensaje: `El ${describe(doc)} llegó a Timbre pero no está en el Registro de Compras del SII: pida al proveedor que lo reenvíe al SII; sin registro no da crédito.`,
        documentos: [deTimbre(doc)],
      })
    else out.push(...montosDistintos(doc, row, deCompra(row)))
  }
  for (const row of input.compras)
    if (porFolio(row.tipoDte) && !timbre.has(claveDocumento(row)))
      out.push({
        tipo: 'compra_sin_documento',
        mensaje: `El ${describe(row)} está en el Registro de Compras del SII (${row.seccion}) pero su XML no llegó a Timbre: pídalo al proveedor.`,
        documentos: [deCompra(row)],
      })
  return out
}

/** Issued against the Registro de Ventas, both ways; a document the SII did not accept is not expected there. */
function conciliarVentas(input: ConciliacionInput): Hallazgo[] {
  const emitidos = input.emitidos.filter((e) => porFolio(e.tipoDte))
  const ventas = indexBy(input.ventas)
  const timbre = indexBy(emitidos)
  const out: Hallazgo[] = []
  for (const doc of emitidos) {
    const row = ventas.get(claveDocumento(doc))?.[0]
    if (row !== undefined) out.push(...montosDistintos(doc, row, deVenta(row)))
    else if (doc.aceptadoSii)
      out.push({
        tipo: 'emitido_sin_registro',
        mensaje: `El ${describe(doc)} fue aceptado por el SII pero no está en su Registro de Ventas: revíselo con el SII antes de declarar.`,
        documentos: [deTimbre(doc)],
      })
  }
  for (const row of input.ventas)
    if (porFolio(row.tipoDte) && !timbre.has(claveDocumento(row)))
      out.push({
        tipo: 'venta_sin_documento',
        mensaje: `El ${describe(row)} está en el Registro de Ventas del SII pero no fue emitido con Timbre.`,
        documentos: [deVenta(row)],
      })
  return out
}

/**
 * Purchases of 33, 34 and 43 still open, with the days left (Ley 19.983: 8 days from the SII's reception). The SII's
 * PENDIENTE section is the authority when the mirror has it; a Timbre document still `recibido` counts as well, once
 * per key, so a mirror not synced yet still shows it.
 */
function pendientesAceptacion(input: ConciliacionInput): Hallazgo[] {
  const out = new Map<string, Hallazgo>()
  const add = (doc: { readonly tipoDte: number; readonly folio: number; readonly rut: string; readonly recepcionSii: Date | null }, fila: DocumentoHallazgo): void => {
    if (!(TIPOS_CON_PLAZO as readonly number[]).includes(doc.tipoDte) || doc.recepcionSii === null) return
    const plazo = plazoAceptacion(doc.recepcionSii, input.hoy)
    if (plazo === null) return
    const key = claveDocumento(doc)
    const previo = out.get(key)
    const documentos = previo === undefined ? [fila] : [...previo.documentos, fila]
    out.set(key, {
      tipo: 'pendiente_aceptacion',
      mensaje: `El ${describe(doc)} espera aceptación o reclamo: quedan ${plazo.diasRestantes} días; el ${plazo.plazo.toISOString()} se considerará aceptado.`,
      documentos, plazo: plazo.plazo.toISOString(), diasRestantes: plazo.diasRestantes,
    })
  }
  for (const row of input.compras) if (row.seccion === 'pendiente') add(row, deCompra(row))
  for (const doc of input.recibidos) if (doc.estado === 'recibido') add(doc, deTimbre(doc))
  return [...out.values()]
}

/** An NC (61) received over an invoice the company claimed, seen in either source: FAQ RCV #34 keeps both out. */
function notasSobreReclamadas(input: ConciliacionInput): Hallazgo[] {
  const reclamadas = new Map<string, DocumentoHallazgo>()
  for (const row of input.compras) if (row.seccion === 'reclamado') reclamadas.set(claveDocumento(row), deCompra(row))
  for (const doc of input.recibidos) if (doc.estado === 'reclamado' && !reclamadas.has(claveDocumento(doc))) reclamadas.set(claveDocumento(doc), deTimbre(doc))
  const notas = [
    ...input.compras.filter((r) => r.tipoDte === NOTA_CREDITO).map((r) => ({ doc: r, fila: deCompra(r) })),
    ...input.recibidos.filter((r) => r.tipoDte === NOTA_CREDITO).map((r) => ({ doc: r, fila: deTimbre(r) })),
  ]
  const out = new Map<string, Hallazgo>()
  for (const { doc, fila } of notas)
    for (const ref of doc.referencias) {
      const factura = reclamadas.get(claveDocumento({ tipoDte: ref.tipoDte, rut: doc.rut, folio: ref.folio }))
      const key = `${claveDocumento(doc)}>${ref.tipoDte}|${ref.folio}`
      if (factura === undefined || out.has(key)) continue
      out.set(key, {
        tipo: 'nota_sobre_reclamada',
        mensaje: `La nota de crédito ${describe(doc)} anula la factura folio ${ref.folio}, que fue reclamada: ambas quedan fuera de la propuesta del F29.`,
        documentos: [fila, factura],
      })
    }
  return [...out.values()]
}

/**
 * A sale counted twice (FAQ comprobante #6, the fix is a credit note): the same boleta listed twice by the SII, or a
 * comprobante de pago electrónico (48) and a boleta of the same day, receptor and total. The second is a likeness,
 * not proof: the accountant decides whether it is one sale.
 */
function boletasDuplicadas(input: ConciliacionInput): Hallazgo[] {
  const esBoleta = (t: number): boolean => (BOLETAS as readonly number[]).includes(t)
  const out: Hallazgo[] = []
  for (const [, rows] of indexBy(input.ventas.filter((v) => esBoleta(v.tipoDte))))
    if (rows.length > 1 && rows[0] !== undefined)
      out.push({ tipo: 'boleta_duplicada', mensaje: `La boleta ${describe(rows[0])} aparece ${rows.length} veces en el Registro de Ventas.`, documentos: rows.map(deVenta) })
  const mismoRut = (a: string, b: string): boolean => (normalizeRut(a) ?? a) === (normalizeRut(b) ?? b)
  const boletas = [
    ...input.ventas.filter((v) => esBoleta(v.tipoDte)).map((v) => ({ doc: v, fila: deVenta(v) })),
    ...input.emitidos.filter((e) => esBoleta(e.tipoDte)).map((e) => ({ doc: e, fila: deTimbre(e) })),
  ]
  for (const comprobante of input.ventas.filter((v) => v.tipoDte === COMPROBANTE_PAGO)) {
    const gemela = boletas.find(({ doc }) =>
      doc.fechaEmision === comprobante.fechaEmision && doc.montoTotal === comprobante.montoTotal && mismoRut(doc.rut, comprobante.rut))
    if (gemela === undefined) continue
    out.push({
      tipo: 'boleta_duplicada',
      mensaje: `El comprobante de pago ${describe(comprobante)} y la boleta folio ${gemela.doc.folio} son del mismo día y monto: si son la misma venta, anule una con nota de crédito.`,
      documentos: [deVenta(comprobante), gemela.fila],
    })
  }
  return out
}
