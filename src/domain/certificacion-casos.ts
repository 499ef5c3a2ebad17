// A case of the SII's set of tests as the EmitirDTERequest Timbre issues for it (DESIGN §15 "Issuing the set";
// docs/decisions/certificacion.md "Emitir el set"). Pure: the parsed case, the folios and dates the cases it cites got,
// and the company's choices in; the request, or the reason it cannot be issued yet, out.
import { PESO_CL, TIPO_DOC_REF_SET, type EmitirDte, type Receptor, type Referencia, type TipoDte } from './emision'
import type { CasoSet, SetPruebas } from './set-pruebas'
import { TIPOS } from './tipos'

/** What an issued case got: its reference is written with these. */
export interface CasoEmitido {
  readonly tipoDte: TipoDte
  readonly folio: number
  /** `YYYY-MM-DD`. */
  readonly fechaEmision: string
}

/**
 * The receivers of the set's documents. The SII asks for a real RUT ("no existen empresas de prueba"): by default the
 * SII itself, as LibreDTE's certification examples do, and for exports the SII's generic foreign receiver 55555555-5.
 */
export const RECEPTOR_SET_NACIONAL: Receptor = {
  rut: '60803000-K',
  razon_social: 'SERVICIO DE IMPUESTOS INTERNOS',
  giro: 'ADMINISTRACION PUBLICA',
  direccion: 'TEATINOS 120',
  comuna: 'SANTIAGO',
  ciudad: 'SANTIAGO',
}

export const RECEPTOR_SET_EXTRANJERO: Receptor = {
  rut: '55555555-5',
  razon_social: 'CLIENTE EXTRANJERO DEL SET DE PRUEBAS',
  giro: 'IMPORTADOR',
  direccion: 'EXTRANJERO',
  ciudad: 'EXTRANJERO',
}

export interface OpcionesCaso {
  /** Santiago's date of the issuance: the SET reference's date and each customs reference's. */
  readonly fecha: string
  /** The exchange rate for a set in a foreign currency (DESIGN §15 `tpo_cambio`): the set text gives none. */
  readonly tpoCambio?: number
  readonly receptor?: Receptor
  readonly receptorExtranjero?: Receptor
  /** The SET first reference; false for the simulation's documents, which stand for the company's real ones. */
  readonly referenciaSet?: boolean
}

export type SolicitudCaso =
  | { readonly ok: true; readonly request: EmitirDte }
  | { readonly ok: false; readonly code: 'CASO_PENDIENTE' | 'TPO_CAMBIO_REQUERIDO'; readonly message: string }

/** `RazonRef` of the SET reference: `CASO <n>-<k>`, as the SII's instructions name it (research §1.2 item 1). */
export function razonSet(caso: string): string {
  return `CASO ${caso}`
}

/** A document issued for a case of the set: its first reference is the SII's `SET` (research §1.2 item 1). */
export function isDocumentoDeSet(referencias: readonly unknown[]): boolean {
  const first = referencias[0] as { tipo_doc_ref?: unknown } | undefined
  return first?.tipo_doc_ref === TIPO_DOC_REF_SET
}

/** A document issued by the certification flow (a set case, a simulation, a boleta case): its metadata says so. */
export function isDocumentoDeCertificacion(metadata: unknown): boolean {
  return typeof metadata === 'object' && metadata !== null && 'certificacion' in metadata
}

/** Does this case need an exchange rate (an export in a currency other than PESO CL)? */
export function necesitaTpoCambio(caso: CasoSet): boolean {
  const moneda = caso.documento.export_data?.tpo_moneda
  return moneda !== undefined && moneda !== PESO_CL
}

/**
 * The request for `caso`. `set` holds the case (its cited cases are earlier in it, the parser checked); `emitidos` has
 * what each issued case got. Not issued until the cases it cites are: their folio and date are in its reference.
 */
export function solicitudDeCaso(set: Pick<SetPruebas, 'casos'>, caso: CasoSet, emitidos: ReadonlyMap<string, CasoEmitido>, opts: OpcionesCaso): SolicitudCaso {
  const referencias: Referencia[] = opts.referenciaSet === false ? [] : [{ tipo_doc_ref: TIPO_DOC_REF_SET, folio_ref: 0, fecha_ref: opts.fecha, razon_ref: razonSet(caso.caso) }]
  let detalle = caso.documento.detalle
  if (caso.referenciaCaso) {
    const citado = emitidos.get(caso.referenciaCaso.caso)
    if (!citado)
      return { ok: false, code: 'CASO_PENDIENTE', message: `El caso ${caso.caso} cita el caso ${caso.referenciaCaso.caso}, que aún no tiene folio.` }
    referencias.push({
      tipo_doc_ref: citado.tipoDte,
      folio_ref: citado.folio,
      fecha_ref: citado.fechaEmision,
      codigo_ref: caso.referenciaCaso.codigoRef,
      razon_ref: caso.referenciaCaso.razon,
    })
    // A note that annuls a text correction (the SII's "ANULA NOTA DE CREDITO" over a "CORRIGE GIRO") reverses no
    // amount: the cited note had none. Its lines carry MontoItem 0, which the rules and DTE_v10.xsd accept, instead of
    // amounts the set never gave (docs/decisions/certificacion.md).
    const citadoCaso = set.casos.find((c) => c.caso === caso.referenciaCaso!.caso)
    if (caso.referenciaCaso.codigoRef === 1 && citadoCaso?.referenciaCaso?.codigoRef === 2)
      detalle = detalle.map((l) => (l.cantidad === undefined && l.precio === undefined && l.monto_item === undefined ? { ...l, monto_item: 0 } : l))
  }
  // A guía that moves goods without a sale (the SII's traslado interno) gives quantities and no prices: its lines are
  // worth 0 (MontoItem 0), as the SII's own examples of such guías read, instead of a price the set never gave.
  if (caso.tipoDte === 52)
    detalle = detalle.map((l) => (l.precio === undefined && l.monto_item === undefined ? { ...l, monto_item: 0 } : l))
  // Customs documents an export cites (DUS, AWB, MIC, resolución SNA): the set numbers none; each gets the case's
  // position as its folio and the issue date, which is what the SII's instructions leave to the issuer.
  caso.referenciasAduana?.forEach((r, i) =>
    referencias.push({ tipo_doc_ref: r.tipoDocRef, folio_ref: i + 1, fecha_ref: opts.fecha, razon_ref: r.glosa }))
  let exportData = caso.documento.export_data
  if (exportData && necesitaTpoCambio(caso)) {
    if (opts.tpoCambio === undefined)
      return { ok: false, code: 'TPO_CAMBIO_REQUERIDO', message: `El caso ${caso.caso} está en ${exportData.tpo_moneda}: indique tpo_cambio.` }
    exportData = { ...exportData, tpo_cambio: opts.tpoCambio }
  }
  const receptor = TIPOS[caso.tipoDte].isExport
    ? (opts.receptorExtranjero ?? RECEPTOR_SET_EXTRANJERO)
    : (opts.receptor ?? RECEPTOR_SET_NACIONAL)
  const request: EmitirDte = {
    ...caso.documento,
    detalle,
    ...(exportData ? { export_data: exportData } : {}),
    receptor,
    referencias,
    // The set's documents leave in one envelope per set (DESIGN §15), never one by one.
    auto_send: false,
    metadata: { certificacion: { caso: caso.caso } },
  }
  return { ok: true, request }
}
