// An RCV mirror for tests: the registers a test decides, stored by the real service (sincronizarPeriodo claims the
// period, keeps the copy in one transaction and records a failure) with a fake portal client in place of the SII's.
import { resumenDeDetalles, SECCIONES_COMPRAS, type DetalleRcv, type SeccionCompras } from '../../src/domain/rcv'
import type { Deps } from '../../src/services/deps'
import { sincronizarPeriodo } from '../../src/services/rcv'
import type { MotivoFallaPortal, RcvPortalClient } from '../../src/sii/portal/types'

/** One document of the RCV with the amounts a test names; the rest as the SII leaves them (empty). */
export function detalleRcv(d: { tipoDoc?: number; rut: string; razonSocial: string; folio: number; fecha: string; neto: number; iva: number; exento?: number }): DetalleRcv {
  const exento = d.exento ?? 0
  return {
    tipoDoc: d.tipoDoc ?? 33, rut: d.rut, razonSocial: d.razonSocial, folio: d.folio, fechaEmision: d.fecha,
    fechaRecepcion: `${d.fecha}T10:00:00`, fechaAcuse: `${d.fecha}T12:00:00`, fechaReclamo: null, tipoTransaccion: 'Del Giro',
    montoExento: exento, montoNeto: d.neto, montoIva: d.iva, montoIvaNoRecuperable: null, codigoIvaNoRecuperable: null,
    montoTotal: d.neto + d.iva + exento, montoNetoActivoFijo: null, ivaActivoFijo: null, ivaUsoComun: null, impuestoSinDerechoCredito: null,
    ivaNoRetenido: null, otrosImpuestos: [], ivaRetenidoTotal: null, ivaRetenidoParcial: null, ivaPropio: null, ivaTerceros: null,
    ivaFueraPlazo: null, referencia: null,
  }
}

export interface MirrorData {
  readonly compras?: Partial<Record<SeccionCompras, readonly DetalleRcv[]>>
  readonly ventas?: readonly DetalleRcv[]
}

function portalAnswering(periodo: string, data: MirrorData): RcvPortalClient {
  const seccion = (s: SeccionCompras) => {
    const detalle = data.compras?.[s] ?? []
    return { resumen: resumenDeDetalles(detalle), detalle }
  }
  return {
    leerRcv: async () => ({
      kind: 'ok',
      compras: { periodo, secciones: Object.fromEntries(SECCIONES_COMPRAS.map((s) => [s, seccion(s)])) as Record<SeccionCompras, ReturnType<typeof seccion>> },
      ventas: { periodo, resumen: resumenDeDetalles(data.ventas ?? []), detalle: data.ventas ?? [] },
      diferidas: 0,
    }),
  }
}

/** The company's copy of `periodo` is `data`, as a good sync leaves it. The company needs an active certificate. */
export async function storeMirror(deps: Deps, empresaId: string, periodo: string, data: MirrorData): Promise<void> {
  const result = await sincronizarPeriodo({ ...deps, rcvPortal: portalAnswering(periodo, data) }, { empresaId, periodo })
  if (result !== 'ok') throw new Error(`the mirror was not stored: ${result}`)
}

/** A sync of `periodo` the portal refused, as the service records it. */
export async function failMirror(deps: Deps, empresaId: string, periodo: string, motivo: MotivoFallaPortal, mensaje: string): Promise<void> {
  const rcvPortal: RcvPortalClient = { leerRcv: async () => ({ kind: 'failed', motivo, mensaje }) }
  const result = await sincronizarPeriodo({ ...deps, rcvPortal }, { empresaId, periodo })
  if (result !== 'fallido') throw new Error(`the failure was not recorded: ${result}`)
}
