// The RCV mirror's records (rcv.ts) as the month's reconciliation (conciliacion.ts) and the F29 proposal (f29.ts) read
// them (DESIGN §16, issue 29). Pure: the mirror's registers in, each module's plain input rows out. How the SII's
// reception time becomes an instant is the caller's (clock.ts santiagoInstant), so the domain stays free of time zones.
import type { CompraRcv, VentaRcv } from './conciliacion'
import type { CompraF29, VentaF29 } from './f29'
import { SECCIONES_COMPRAS, TIPOS_SOLO_RESUMEN, type DetalleRcv, type RegistroCompras, type RegistroVentas } from './rcv'

const monto = (m: number | null): number => m ?? 0

/**
 * The document's whole IVA as the RC splits it (recuperable, no recuperable, uso común): what the received DTE's own
 * IVA is compared with. An invoice booked as uso común carries its IVA there, not in "Monto IVA Recuperable".
 */
function ivaDelDocumento(d: DetalleRcv): number {
  return monto(d.montoIva) + monto(d.montoIvaNoRecuperable) + monto(d.ivaUsoComun)
}

/** Every purchase of every section, with the SII's reception as an instant (null when the row has none or it is unreadable). */
export function comprasParaConciliar(registro: RegistroCompras, instante: (local: string) => Date | null): CompraRcv[] {
  return SECCIONES_COMPRAS.flatMap((seccion) =>
    registro.secciones[seccion].detalle.map((d): CompraRcv => ({
      seccion,
      tipoDte: d.tipoDoc,
      folio: d.folio,
      rut: d.rut,
      recepcionSii: d.fechaRecepcion === null ? null : instante(d.fechaRecepcion),
      referencias: d.referencia ? [{ tipoDte: d.referencia.tipoDoc, folio: d.referencia.folio }] : [],
      montoExento: monto(d.montoExento),
      montoNeto: monto(d.montoNeto),
      montoIva: ivaDelDocumento(d),
      montoTotal: d.montoTotal,
    })),
  )
}

export function ventasParaConciliar(registro: RegistroVentas): VentaRcv[] {
  return registro.detalle.map((d) => ({
    tipoDte: d.tipoDoc,
    folio: d.folio,
    rut: d.rut,
    fechaEmision: d.fechaEmision.slice(0, 10),
    montoExento: monto(d.montoExento),
    montoNeto: monto(d.montoNeto),
    montoIva: monto(d.montoIva),
    montoTotal: d.montoTotal,
  }))
}

/**
 * Every purchase with its IVA split as the F29 books it. The RC detail names no IVA retained on a purchase (rcv.ts reads
 * none): a factura de compra the company issued is counted from Timbre's own documents, not from here (docs/decisions/f29.md).
 */
export function comprasParaF29(registro: RegistroCompras): CompraF29[] {
  return SECCIONES_COMPRAS.flatMap((seccion) =>
    registro.secciones[seccion].detalle.map((d): CompraF29 => ({
      seccion,
      tipoDte: d.tipoDoc,
      folio: d.folio,
      rut: d.rut,
      montoExento: monto(d.montoExento),
      montoNeto: monto(d.montoNeto),
      ivaRecuperable: monto(d.montoIva),
      ivaNoRecuperable: monto(d.montoIvaNoRecuperable),
      ivaUsoComun: monto(d.ivaUsoComun),
      ivaRetenido: 0,
      montoTotal: d.montoTotal,
      referencias: d.referencia ? [{ tipoDte: d.referencia.tipoDoc, folio: d.referencia.folio }] : [],
    })),
  )
}

/**
 * Every sale, one document each; the IVA the buyer retained (a 46 received as seller) is the RV's total plus partial.
 * Boletas and vouchers come as the RV's summary rows (`cantidad` documents each, no folio): the detail never lists them.
 */
export function ventasParaF29(registro: RegistroVentas): VentaF29[] {
  const totales = registro.resumen.filter((r) => r.cantidad > 0 && TIPOS_SOLO_RESUMEN.includes(r.tipoDoc)).map((r): VentaF29 => ({
    tipoDte: r.tipoDoc, folio: 0, rut: '', cantidad: r.cantidad,
    montoExento: r.montoExento, montoNeto: r.montoNeto, montoIva: r.montoIva, ivaRetenido: 0, montoTotal: r.montoTotal,
  }))
  return [...registro.detalle.filter((d) => !TIPOS_SOLO_RESUMEN.includes(d.tipoDoc)).map(ventaDeDetalle), ...totales]
}

function ventaDeDetalle(d: DetalleRcv): VentaF29 {
  return {
    tipoDte: d.tipoDoc,
    folio: d.folio,
    rut: d.rut,
    cantidad: 1,
    montoExento: monto(d.montoExento),
    montoNeto: monto(d.montoNeto),
    montoIva: monto(d.montoIva),
    ivaRetenido: monto(d.ivaRetenidoTotal) + monto(d.ivaRetenidoParcial),
    montoTotal: d.montoTotal,
  }
}
