// The RCV the simulator serves, built from what it holds (DESIGN §16 "Simulator"; docs/decisions/simulator.md "Portal y
// RCV"): each document it accepted is a row of its seller's Registro de Ventas and of its buyer's Registro de Compras
// (the issuer and the receptor, except a 46, which the buyer issues), in the period of its FchEmis; a 33, 34 or 43
// stays pendiente until an acceptance (ACD, ERM) or 8 days after its reception on the simulator's clock, then registro
// with that instant as Fecha Acuse; a claim (RCD, RFP, RFT) makes it reclamado; other types enter registro at once. Rows added with `sii-simulator rcv add` join the same registers.
import { santiagoInstant, santiagoTimestamp } from '../../clock'
import { isAccion, isClaim } from '../../domain/intercambio'
import type { DetalleRcv, SeccionCompras } from '../../domain/rcv'
import { childNamed, leafText } from '../../xml/read-envio'
import { childElements } from '../../xml/latin1'
import { envioState } from './states'
import type { DocumentoRcvRow, DocumentoRegistrado, EventoRow, RcvFilaRow, SimulatorStore } from './store'

/** The types the RCV lists (DESIGN §16): not boletas (39, 41, their own summary) nor guías (52). */
export const TIPOS_RCV: readonly number[] = [33, 34, 43, 46, 56, 61, 110, 111, 112]

/** The types a receptor accepts or claims, which wait in pendiente until it does or 8 days pass (Ley 19.983). */
export const TIPOS_CON_ACUSE: readonly number[] = [33, 34, 43]
const FACTURA_COMPRA = 46

/** Tacit acceptance: 8 calendar days from the SII's reception (research §2.1; the simulator's RegistroReclamoDTE plazo). */
export const ACUSE_TACITO_MS = 8 * 24 * 60 * 60_000

export interface RegistrosRcv {
  readonly compras: Readonly<Record<SeccionCompras, readonly DetalleRcv[]>>
  readonly ventas: readonly DetalleRcv[]
}

/** Where a document stands at `now`: its section and the instants of its acuse and claim (ms). */
export interface EstadoAcuse {
  readonly seccion: 'pendiente' | 'registro' | 'reclamado'
  readonly fechaAcuse: number | null
  readonly fechaReclamo: number | null
}

/** The rule, pure: a claim wins, then the first acceptance, then the 8 days; events after `now` have not happened yet. */
export function estadoAcuse(recibidoAt: number, eventos: readonly Pick<EventoRow, 'accion' | 'registered_at'>[], now: number): EstadoAcuse {
  const ocurridos = eventos.filter((e) => e.registered_at <= now && isAccion(e.accion))
  const reclamo = ocurridos.find((e) => isAccion(e.accion) && isClaim(e.accion))
  if (reclamo !== undefined) return { seccion: 'reclamado', fechaAcuse: null, fechaReclamo: reclamo.registered_at }
  const acuse = ocurridos.find((e) => e.accion === 'ACD' || e.accion === 'ERM')
  if (acuse !== undefined) return { seccion: 'registro', fechaAcuse: acuse.registered_at, fechaReclamo: null }
  const tacito = recibidoAt + ACUSE_TACITO_MS
  return now >= tacito ? { seccion: 'registro', fechaAcuse: tacito, fechaReclamo: null } : { seccion: 'pendiente', fechaAcuse: null, fechaReclamo: null }
}

/** The Registro de Compras (by section) and de Ventas of `rut` for `periodo` (`YYYYMM`) at `now`. */
export function registrosRcv(store: SimulatorStore, rut: string, periodo: string, now: Date): RegistrosRcv {
  const mes = `${periodo.slice(0, 4)}-${periodo.slice(4, 6)}`
  const compras: Record<SeccionCompras, DetalleRcv[]> = { registro: [], pendiente: [], no_incluir: [], reclamado: [] }
  const ventas: DetalleRcv[] = []
  const vistos = new Set<string>()
  for (const doc of store.documentosRegistrados(rut, mes)) {
    const d = doc.documento
    const key = `${d.rut_emisor}|${d.tipo}|${d.folio}`
    if (!TIPOS_RCV.includes(d.tipo) || vistos.has(key) || !envioState(doc.envio, now).isFinal) continue
    vistos.add(key)
    // Only 33, 34 and 43 wait for an acceptance (Ley 19.983); notes, exports and a 46 enter the registers at reception.
    const estado = TIPOS_CON_ACUSE.includes(d.tipo)
      ? estadoAcuse(doc.envio.received_at, store.eventosOf(d.rut_emisor, d.tipo, d.folio), now.getTime())
      : { seccion: 'registro' as const, fechaAcuse: doc.envio.received_at, fechaReclamo: null }
    // A factura de compra (46) is issued by the buyer: it is its issuer's purchase and its receptor's (the seller's) sale.
    const [vendedor, comprador] = d.tipo === FACTURA_COMPRA ? [d.rut_receptor, d.rut_emisor] : [d.rut_emisor, d.rut_receptor]
    // Each row's counterpart is the other party: for a 46 the seller's counterpart is its issuer (the buyer).
    if (vendedor === rut) ventas.push(detalleRegistrado(doc, estado, d.tipo === FACTURA_COMPRA ? 'emisor' : 'receptor', true))
    if (comprador === rut) compras[estado.seccion].push(detalleRegistrado(doc, estado, d.tipo === FACTURA_COMPRA ? 'receptor' : 'emisor', false))
  }
  for (const fila of store.rcvFilasOf(rut, mes)) {
    const { seccion, detalle } = detalleDeFila(fila, now.getTime())
    if (fila.registro === 'ventas') ventas.push(detalle)
    else compras[seccion].push(detalle)
  }
  return { compras, ventas }
}

const instante = (ms: number | null): string | null => (ms === null ? null : santiagoTimestamp(new Date(ms)))

/** A detail with every amount the simulator does not know left empty, as the SII leaves an absent value. */
function detalleBase(campos: Pick<DetalleRcv, 'tipoDoc' | 'rut' | 'razonSocial' | 'folio' | 'fechaEmision' | 'montoTotal'> & Partial<DetalleRcv>): DetalleRcv {
  return {
    fechaRecepcion: null, fechaAcuse: null, fechaReclamo: null, tipoTransaccion: 'Del Giro',
    montoExento: null, montoNeto: null, montoIva: null, montoIvaNoRecuperable: null, codigoIvaNoRecuperable: null,
    montoNetoActivoFijo: null, ivaActivoFijo: null, ivaUsoComun: null, impuestoSinDerechoCredito: null, ivaNoRetenido: null,
    otrosImpuestos: [], ivaRetenidoTotal: null, ivaRetenidoParcial: null, ivaPropio: null, ivaTerceros: null, ivaFueraPlazo: null,
    referencia: null,
    ...campos,
  }
}

function montosDe(doc: DocumentoRegistrado): Pick<DetalleRcv, 'montoExento' | 'montoNeto' | 'montoIva' | 'montoTotal' | 'referencia' | 'fechaRecepcion'> {
  const m = doc.rcv
  return {
    montoExento: m?.monto_exento ?? null,
    montoNeto: m?.monto_neto ?? null,
    montoIva: m?.monto_iva ?? null,
    // Documents received before the simulator kept documento_rcv: MntTotal as the documento row wrote it.
    montoTotal: m?.monto_total ?? Math.round(Number(doc.documento.monto) || 0),
    referencia: m !== null && m.tipo_ref !== null && m.folio_ref !== null ? { tipoDoc: m.tipo_ref, folio: m.folio_ref } : null,
    fechaRecepcion: instante(doc.envio.received_at),
  }
}

/**
 * A document's row in one register: the counterpart is the other party (the receptor in the issuer's row, the issuer in
 * the receptor's), and a sale carries the IVA the buyer retained. The pendiente section has no Fecha Acuse column;
 * reclamado has Fecha Reclamo in its place (domain/rcv.ts COLUMNAS_COMPRAS).
 */
function detalleRegistrado(doc: DocumentoRegistrado, estado: EstadoAcuse, contraparte: 'emisor' | 'receptor', venta: boolean): DetalleRcv {
  const d = doc.documento
  return detalleBase({
    tipoDoc: d.tipo, folio: d.folio, fechaEmision: d.fecha_emision,
    rut: contraparte === 'emisor' ? d.rut_emisor : d.rut_receptor,
    razonSocial: (contraparte === 'emisor' ? doc.rcv?.razon_social_emisor : doc.rcv?.razon_social_receptor) ?? '',
    ...montosDe(doc),
    fechaAcuse: instante(estado.fechaAcuse),
    fechaReclamo: instante(estado.fechaReclamo),
    ...(venta ? { ivaRetenidoTotal: doc.rcv?.iva_retenido_total ?? null } : {}),
  })
}

/**
 * A row added by `rcv add`. Its section, when given, is kept, with the reception as the instant of the acuse (registro,
 * no_incluir) or of the claim (reclamado); without one, a purchase follows the 8-day rule (no events: the simulator
 * did not receive the document, so RegistroReclamoDTE cannot register any). A sale's Fecha Acuse follows the 8 days.
 */
function detalleDeFila(fila: RcvFilaRow, now: number): { seccion: SeccionCompras; detalle: DetalleRcv } {
  const recibidoAt = santiagoInstant(fila.fecha_recepcion)?.getTime() ?? now
  const regla: EstadoAcuse = TIPOS_CON_ACUSE.includes(fila.tipo) ? estadoAcuse(recibidoAt, [], now) : { seccion: 'registro', fechaAcuse: recibidoAt, fechaReclamo: null }
  const seccion: SeccionCompras = fila.registro === 'compras' && fila.seccion !== null ? fila.seccion : regla.seccion
  const recepcion = fila.fecha_recepcion
  const fechaAcuse = fila.seccion === null ? instante(regla.fechaAcuse) : seccion === 'registro' || seccion === 'no_incluir' ? recepcion : null
  return {
    seccion,
    detalle: detalleBase({
      tipoDoc: fila.tipo, rut: fila.rut, razonSocial: fila.razon_social, folio: fila.folio, fechaEmision: fila.fecha_emision,
      montoTotal: fila.monto_total, montoExento: fila.monto_exento, montoNeto: fila.monto_neto, montoIva: fila.monto_iva,
      fechaRecepcion: recepcion,
      fechaAcuse,
      fechaReclamo: seccion === 'reclamado' ? recepcion : null,
      tipoTransaccion: seccion === 'no_incluir' ? 'No Corresp. Incluir' : 'Del Giro',
    }),
  }
}

// ------------------------------------------------------------------------------------------------ at reception

/** Whole pesos of an amount as written ('' → null); an export's decimals are rounded. */
function pesos(text: string): number | null {
  if (text === '') return null
  const n = Number(text)
  return Number.isFinite(n) ? Math.round(n) : null
}

/**
 * What the registers show of a DTE, read from its element when the envelope is received (the store keeps no DTE XML):
 * razones sociales, Totales, the IVA retained on a 46 (ImptoReten TipoImp 15) and a note's first reference. An export's
 * Totales are in its currency: its OtraMoneda in PESO CL is taken when present, else the Totales rounded.
 */
export function documentoRcvOf(dte: Element): DocumentoRcvRow {
  const container = childElements(dte)[0]
  const encabezado = childNamed(container, 'Encabezado')
  const emisor = childNamed(encabezado, 'Emisor')
  const totales = childNamed(encabezado, 'Totales')
  const otra = childNamed(encabezado, 'OtraMoneda')
  const enPesos = otra !== undefined && leafText(otra, 'TpoMoneda') === 'PESO CL'
  const retenido = (totales === undefined ? [] : childElements(totales)).filter((e) => e.localName === 'ImptoReten' && leafText(e, 'TipoImp') === '15')
  // A set document's first reference is TpoDocRef SET (not a document type): no reference for the register then.
  const referencia = childNamed(container, 'Referencia')
  const tpoDocRef = leafText(referencia, 'TpoDocRef')
  const folioRef = leafText(referencia, 'FolioRef')
  const tipoRef = /^\d{1,3}$/.test(tpoDocRef) && /^\d{1,18}$/.test(folioRef) ? Number(tpoDocRef) : null
  return {
    razon_social_emisor: leafText(emisor, 'RznSoc') || leafText(emisor, 'RznSocEmisor'),
    razon_social_receptor: leafText(childNamed(encabezado, 'Receptor'), 'RznSocRecep'),
    monto_exento: enPesos ? pesos(leafText(otra, 'MntExeOtrMnda')) : pesos(leafText(totales, 'MntExe')),
    monto_neto: enPesos ? pesos(leafText(otra, 'MntNetoOtrMnda')) : pesos(leafText(totales, 'MntNeto')),
    monto_iva: enPesos ? pesos(leafText(otra, 'IVAOtrMnda')) : pesos(leafText(totales, 'IVA')),
    monto_total: (enPesos ? pesos(leafText(otra, 'MntTotOtrMnda')) : pesos(leafText(totales, 'MntTotal'))) ?? 0,
    iva_retenido_total: retenido.length === 0 ? null : retenido.reduce((sum, e) => sum + (pesos(leafText(e, 'MontoImp')) ?? 0), 0),
    tipo_ref: tipoRef,
    folio_ref: tipoRef === null ? null : Number(folioRef),
  }
}

