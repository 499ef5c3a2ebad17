// ConsumoFolios (ConsumoFolio_v10.xsd): the report of the boleta folios a company used, the "RCOF" of the boleta
// certification (DESIGN §15 `GET /certificacion/boletas/consumo-folios`). In producción the SII dropped it on
// 2022-08-01 (Res. 53/2022); some certification reviewers still ask for it, so Timbre builds it on demand and never
// sends it (docs/decisions/certificacion.md, «Muestras de impresión y consumo de folios»). Signed like the exchange
// documents (block-signature.ts: the Signature after DocumentoConsumoFolios, referencing its ID), ISO-8859-1 bytes.
//
// What each total means is the XSD's own documentation: FoliosEmitidos counts documents issued; FoliosAnulados counts
// folios annulled at the SII ("Opción anulación de folios"), never documents voided by a credit note; FoliosUtilizados
// is both. RangoUtilizados carries the issued folios and RangoAnulados the annulled ones, so the two never overlap and
// together cover FoliosUtilizados folios (LibreDTE and the Odoo engine put only issued folios in RangoUtilizados).
import type { Signer } from '../domain/signer'
import { TASA_IVA } from '../domain/totals'
import { signBlock } from './block-signature'
import { SII_NS, XSI_NS } from './dsig-profile'
import { dateOrNull, integerValue, MAX_FOLIO, MAX_MONTO, rutValue, timestampValue } from './exchange-values'
import { toLatin1Bytes } from './latin1'

/** ConsumoFolio_v10.xsd TipoConsumoType: boletas afecta and exenta, and the credit notes over them. In this order. */
export const TIPOS_CONSUMO = [39, 41, 61] as const
export type TipoConsumo = (typeof TIPOS_CONSUMO)[number]

/** FoliosEmitidos, FoliosAnulados, FoliosUtilizados: nonNegativeInteger, totalDigits 6. */
const MAX_FOLIOS = 999_999
/** SecEnvio: nonNegativeInteger, totalDigits 3; the XSD asks for 1 the first time, one more at each correction. */
const MAX_SEC_ENVIO = 999
/** NroResolType: totalDigits 6. */
const MAX_NRO_RESOL = 999_999

/** One folio of the report: an issued boleta (or note), or a folio annulled at the SII. Amounts in pesos. */
export interface FolioConsumido {
  readonly tipo: number
  readonly folio: number
  /** Fecha de emisión (or of the annulment), `YYYY-MM-DD`: gives the Caratula's FchInicio and FchFinal. */
  readonly fecha: string
  readonly neto: number
  readonly iva: number
  readonly exento: number
  readonly total: number
  /** A folio annulled at the SII, never issued: counted in FoliosAnulados and RangoAnulados, its amounts ignored. */
  readonly anulado?: boolean
}

export interface ConsumoFoliosInput {
  /** The issuer of the boletas, canonical or with dots. */
  readonly rutEmisor: string
  /** The signer's RUT (from the certificate). */
  readonly rutEnvia: string
  /** `YYYY-MM-DD`: in certificación, the date the SII gave; NroResol 0 (as the envelopes' Caratula, docs/sii-protocol.md §5). */
  readonly fchResol: string
  readonly nroResol: number
  /** 1 the first time; each corrected report of the same days goes with the next number (the XSD's SecEnvio). */
  readonly secEnvio: number
  /** TmstFirmaEnv, written in Santiago's local time. */
  readonly tmstFirmaEnv: Date
  readonly documentos: readonly FolioConsumido[]
}

export interface RangoFolios {
  readonly inicial: number
  readonly final: number
}

/** One `Resumen`: a type's totals and ranges. Amounts are null when the XSD's optional element is left out. */
export interface ResumenConsumo {
  readonly tipo: TipoConsumo
  readonly mntNeto: number | null
  readonly mntIva: number | null
  readonly tasaIva: number | null
  readonly mntExento: number | null
  readonly mntTotal: number
  readonly foliosEmitidos: number
  readonly foliosAnulados: number
  readonly foliosUtilizados: number
  readonly rangoUtilizados: readonly RangoFolios[]
  readonly rangoAnulados: readonly RangoFolios[]
}

/** The folios, in any order, as runs of consecutive numbers, ascending: [5, 1, 2, 3, 7, 8] → 1–3, 5–5, 7–8. */
export function folioRanges(folios: readonly number[]): RangoFolios[] {
  const sorted = [...folios].sort((a, b) => a - b)
  const ranges: Array<{ inicial: number; final: number }> = []
  for (const folio of sorted) {
    const last = ranges[ranges.length - 1]
    if (last !== undefined && folio === last.final + 1) last.final = folio
    else if (last === undefined || folio > last.final) ranges.push({ inicial: folio, final: folio })
  }
  return ranges
}

/**
 * The `Resumen` of each type present, in TIPOS_CONSUMO order. MntNeto, MntIva and TasaIVA (19, domain/totals.ts)
 * only for a type with a taxed amount, MntExento only with an exempt one, as LibreDTE writes them: a 41 has no neto.
 * Throws RangeError on a type the XSD does not take, a folio given twice, or a value outside its XSD type (the
 * caller's bug: the folios come from Timbre's own records).
 */
export function resumenConsumo(documentos: readonly FolioConsumido[]): ResumenConsumo[] {
  documentos.forEach(checkFolio)
  const seen = new Set<string>()
  for (const d of documentos) {
    const key = `${d.tipo}-${d.folio}`
    if (seen.has(key)) throw new RangeError(`resumenConsumo: tipo ${d.tipo} folio ${d.folio} is given twice`)
    seen.add(key)
  }
  return TIPOS_CONSUMO.flatMap((tipo) => {
    const ofTipo = documentos.filter((d) => d.tipo === tipo)
    return ofTipo.length === 0 ? [] : [resumenOf(tipo, ofTipo)]
  })
}

function resumenOf(tipo: TipoConsumo, documentos: readonly FolioConsumido[]): ResumenConsumo {
  const emitidos = documentos.filter((d) => d.anulado !== true)
  const anulados = documentos.filter((d) => d.anulado === true)
  const sum = (pick: (d: FolioConsumido) => number, what: string): number => {
    const total = emitidos.reduce((acc, d) => acc + pick(d), 0)
    if (total > MAX_MONTO) throw new RangeError(`resumenConsumo: the ${what} of tipo ${tipo} exceeds ${MAX_MONTO}`)
    return total
  }
  const neto = sum((d) => d.neto, 'neto')
  const iva = sum((d) => d.iva, 'iva')
  const exento = sum((d) => d.exento, 'exento')
  const isAfecto = neto > 0 || iva > 0
  if (documentos.length > MAX_FOLIOS) throw new RangeError(`resumenConsumo: tipo ${tipo} has more than ${MAX_FOLIOS} folios`)
  return {
    tipo,
    mntNeto: isAfecto ? neto : null,
    mntIva: isAfecto ? iva : null,
    tasaIva: isAfecto ? TASA_IVA : null,
    mntExento: exento > 0 ? exento : null,
    mntTotal: sum((d) => d.total, 'total'),
    foliosEmitidos: emitidos.length,
    foliosAnulados: anulados.length,
    foliosUtilizados: documentos.length,
    rangoUtilizados: folioRanges(emitidos.map((d) => d.folio)),
    rangoAnulados: folioRanges(anulados.map((d) => d.folio)),
  }
}

function checkFolio(d: FolioConsumido, i: number): void {
  const where = `documentos[${i}]`
  if (!(TIPOS_CONSUMO as readonly number[]).includes(d.tipo)) {
    throw new RangeError(`${where}.tipo ${d.tipo} is not a type of ConsumoFolio_v10.xsd (39, 41, 61)`)
  }
  integerValue(d.folio, 1, MAX_FOLIO, `${where}.folio`)
  if (dateOrNull(d.fecha) === null) throw new RangeError(`${where}.fecha "${d.fecha}" is not a date YYYY-MM-DD`)
  if (d.anulado === true) return
  for (const field of ['neto', 'iva', 'exento', 'total'] as const) integerValue(d[field], 0, MAX_MONTO, `${where}.${field}`)
}

/**
 * The signed ConsumoFolios of the given folios, ISO-8859-1 bytes. One report from the earliest to the latest `fecha`
 * (FchInicio, FchFinal): the SII's production report was daily, the certification's covers the set's boletas,
 * usually issued on one day. Throws RangeError with no folios (the XSD needs one Resumen, and the dates come from
 * them) or on a value outside its XSD type.
 */
export function buildConsumoFolios(input: ConsumoFoliosInput, signer: Signer): Uint8Array {
  if (input.documentos.length === 0) throw new RangeError('buildConsumoFolios: ConsumoFolio_v10.xsd needs at least one Resumen, and so one folio')
  const resumenes = resumenConsumo(input.documentos)
  const fechas = input.documentos.map((d) => d.fecha).sort()
  const fchInicio = fechas[0] as string
  const fchFinal = fechas[fechas.length - 1] as string
  const rutEmisor = rutValue(input.rutEmisor, 'rutEmisor')
  const fchResol = dateOrNull(input.fchResol)
  if (fchResol === null) throw new RangeError(`fchResol "${input.fchResol}" is not a date YYYY-MM-DD`)
  // An xs:ID (an NCName: no leading digit) that says whose report, from which day, which sending.
  const id = `CF_${rutEmisor.replace('-', '')}_${fchInicio.replaceAll('-', '')}_${input.secEnvio}`
  const caratula =
    '<Caratula version="1.0">' +
    `<RutEmisor>${rutEmisor}</RutEmisor><RutEnvia>${rutValue(input.rutEnvia, 'rutEnvia')}</RutEnvia>` +
    `<FchResol>${fchResol}</FchResol><NroResol>${integerValue(input.nroResol, 0, MAX_NRO_RESOL, 'nroResol')}</NroResol>` +
    `<FchInicio>${fchInicio}</FchInicio><FchFinal>${fchFinal}</FchFinal>` +
    `<SecEnvio>${integerValue(input.secEnvio, 1, MAX_SEC_ENVIO, 'secEnvio')}</SecEnvio>` +
    `<TmstFirmaEnv>${timestampValue(input.tmstFirmaEnv, 'tmstFirmaEnv')}</TmstFirmaEnv>` +
    '</Caratula>'
  const unsigned =
    '<?xml version="1.0" encoding="ISO-8859-1"?>\n' +
    `<ConsumoFolios xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}" xsi:schemaLocation="${SII_NS} ConsumoFolio_v10.xsd" version="1.0">\n` +
    `<DocumentoConsumoFolios ID="${id}">\n${caratula}\n${resumenes.map(resumenXml).join('\n')}\n</DocumentoConsumoFolios>\n</ConsumoFolios>\n`
  return toLatin1Bytes(signBlock(unsigned, signer))
}

/** One `<Resumen>`, its children in the XSD's sequence order. */
function resumenXml(r: ResumenConsumo): string {
  const optional = (name: string, value: number | null) => (value === null ? '' : `<${name}>${value}</${name}>`)
  const rangos = (name: string, list: readonly RangoFolios[]) =>
    list.map((g) => `<${name}><Inicial>${g.inicial}</Inicial><Final>${g.final}</Final></${name}>`).join('')
  return (
    `<Resumen><TipoDocumento>${r.tipo}</TipoDocumento>` +
    optional('MntNeto', r.mntNeto) + optional('MntIva', r.mntIva) + optional('TasaIVA', r.tasaIva) + optional('MntExento', r.mntExento) +
    `<MntTotal>${r.mntTotal}</MntTotal><FoliosEmitidos>${r.foliosEmitidos}</FoliosEmitidos>` +
    `<FoliosAnulados>${r.foliosAnulados}</FoliosAnulados><FoliosUtilizados>${r.foliosUtilizados}</FoliosUtilizados>` +
    rangos('RangoUtilizados', r.rangoUtilizados) + rangos('RangoAnulados', r.rangoAnulados) +
    '</Resumen>'
  )
}
