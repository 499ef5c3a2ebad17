// The RCV data service's rows as the simulator writes them (docs/decisions/simulator.md "Portal y RCV"): the inverse of
// domain/rcv.ts readDetalleRcv and readResumenRcv, field for field, so what the simulator holds reads back into the
// same records (test/sii/simulator-rcv-rows.test.ts proves the round trip). Names and formats are the reader's: dates
// `dd/mm/yyyy`, timestamps `dd/mm/yyyy HH:MM:SS`, the RUT as body (a number) and check digit, empty values as null.
import type { DetalleRcv, MontoRcv, ResumenTipoRcv } from '../../domain/rcv'

/** `YYYY-MM-DD` → `dd/mm/yyyy`. */
function fecha(iso: string): string {
  return `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`
}

/** `YYYY-MM-DDTHH:MM:SS` → `dd/mm/yyyy HH:MM:SS`; null stays null. */
function fechaHora(iso: string | null): string | null {
  return iso === null ? null : `${fecha(iso.slice(0, 10))} ${iso.slice(11, 19)}`
}

const monto = (m: MontoRcv): number | null => m

/** One det* row of getDetalleCompra / getDetalleVenta. */
export function detalleRow(d: DetalleRcv): Record<string, string | number | null> {
  const [cuerpo = '', dv = ''] = d.rut.split('-')
  return {
    detTipoDoc: d.tipoDoc,
    detRutDoc: Number(cuerpo),
    detDvDoc: dv,
    detRznSoc: d.razonSocial,
    detNroDoc: d.folio,
    detFchDoc: fecha(d.fechaEmision),
    detFecRecepcion: fechaHora(d.fechaRecepcion),
    detFecAcuse: fechaHora(d.fechaAcuse),
    detFecReclamado: fechaHora(d.fechaReclamo),
    descTipoTransaccion: d.tipoTransaccion,
    detMntExe: monto(d.montoExento),
    detMntNeto: monto(d.montoNeto),
    detMntIVA: monto(d.montoIva),
    detMntIVANoRec: monto(d.montoIvaNoRecuperable),
    detCodIVANoRec: d.codigoIvaNoRecuperable,
    detMntTotal: d.montoTotal,
    detMntActFijo: monto(d.montoNetoActivoFijo),
    detMntIVAActFijo: monto(d.ivaActivoFijo),
    detIVAUsoComun: monto(d.ivaUsoComun),
    detMntSinCredito: monto(d.impuestoSinDerechoCredito),
    detIVANoRetenido: monto(d.ivaNoRetenido),
    detIVARetTotal: monto(d.ivaRetenidoTotal),
    detIVARetParcial: monto(d.ivaRetenidoParcial),
    detIVAPropio: monto(d.ivaPropio),
    detIVATerceros: monto(d.ivaTerceros),
    detIVAFueraPlazo: monto(d.ivaFueraPlazo),
    detTipoDocRef: d.referencia?.tipoDoc ?? null,
    detFolioDocRef: d.referencia?.folio ?? null,
  }
}

/** One rsmn* row of getResumen. */
export function resumenRow(r: ResumenTipoRcv): Record<string, number> {
  return {
    rsmnTipoDocInteger: r.tipoDoc,
    rsmnTotDoc: r.cantidad,
    rsmnMntExe: r.montoExento,
    rsmnMntNeto: r.montoNeto,
    rsmnMntIVA: r.montoIva,
    rsmnMntIVANoRec: r.montoIvaNoRecuperable,
    rsmnIVAUsoComun: r.ivaUsoComun,
    rsmnMntTotal: r.montoTotal,
  }
}
