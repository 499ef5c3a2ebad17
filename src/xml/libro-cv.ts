// LibroCompraVenta (LibroCV_v10.xsd): the Información Electrónica de Ventas and de Compras the certification asks for
// (docs/decisions/certificacion.md "Los libros"), written from domain/libros.ts's lines and totals, signed, as
// ISO-8859-1 bytes; and read back, for the simulator's check of its totals. The libros' common shape lives here too
// (libro-guia.ts uses it): the root with the SII namespace, EnvioLibro with an ID as its first child, TmstFirma last,
// and the Signature over `#` + that ID appended as the root's last child by block-signature.ts's signBlock, in the
// profile of docs/sii-protocol.md §4.1 (what xmlsec1 and the SII verify).
//
// Carátula of a certification libro (instructions §III–IV, DESIGN §15): RutEmisorLibro, RutEnvia (the certificate's
// holder), PeriodoTributario, FchResol (the company's certification date), NroResol 0, TipoOperacion VENTA or COMPRA,
// TipoLibro ESPECIAL, TipoEnvio TOTAL, FolioNotificacion (domain/libros.ts FOLIO_NOTIFICACION).
import type {
  CodigoIvaNoRecuperable, DetalleCompraVenta, LibroCompraVenta, TipoOperacion, TotalesCompraVenta,
} from '../domain/libros'
import type { Signer } from '../domain/signer'
import { signBlock } from './block-signature'
import { SII_NS, XSI_NS } from './dsig-profile'
import {
  dateOrNull, integerValue, MAX_FOLIO, MAX_MONTO, optionalElement, readInteger, readRut, rutValue, textValue, timestampValue,
} from './exchange-values'
import { childElements, toLatin1Bytes } from './latin1'
import { childNamed, leafText } from './read-envio'
import type { LibroRoot } from './xsd'

/** EnvioLibro/@ID, the signature's Reference target (`#SetDoc`, as the 2026 certifications of research §1.4 sign it). */
export const ENVIO_LIBRO_ID = 'SetDoc'

/** LibroCV_v10.xsd and LibroGuia_v10.xsd: RznSoc maxLength 50. */
const MAX_RAZON_SOCIAL = 50

export interface CaratulaLibro {
  /** The company, canonical `12345678-K`. */
  readonly rutEmisorLibro: string
  /** The certificate's holder, who uploads it: equals the upload's rutSender (docs/sii-protocol.md §6.4). */
  readonly rutEnvia: string
  /** `YYYY-MM-DD`: in certification, the date the SII enabled the company (research §1.2 item 2). */
  readonly fchResol: string
  /** 0 in certification. */
  readonly nroResol: number
  readonly folioNotificacion: number
  /** TmstFirma, written in Santiago local time (docs/sii-protocol.md §1.3). */
  readonly tmstFirma: Date
}

/** The signed LibroCompraVenta, TipoLibro ESPECIAL and TipoEnvio TOTAL, as ISO-8859-1 bytes. Throws RangeError on values no XSD type carries. */
export function buildLibroCompraVenta(libro: LibroCompraVenta, caratula: CaratulaLibro, signer: Signer): Uint8Array {
  const body =
    '<Caratula>' +
    caratulaHead(caratula, libro.periodo) +
    `<TipoOperacion>${libro.operacion}</TipoOperacion><TipoLibro>ESPECIAL</TipoLibro><TipoEnvio>TOTAL</TipoEnvio>` +
    `<FolioNotificacion>${integerValue(caratula.folioNotificacion, 1, 9_999_999_999, 'folioNotificacion')}</FolioNotificacion>` +
    '</Caratula>\n' +
    `<ResumenPeriodo>\n${libro.resumen.map(totalesXml).join('\n')}\n</ResumenPeriodo>\n` +
    libro.detalle.map((d, i) => `${detalleXml(d, `detalle[${i}]`)}\n`).join('')
  return signedLibro('LibroCompraVenta', 'LibroCV_v10.xsd', body, caratula.tmstFirma, signer)
}

/** RutEmisorLibro … NroResol, the carátula's head both libros share (same order in LibroCV_v10.xsd and LibroGuia_v10.xsd). */
export function caratulaHead(caratula: CaratulaLibro, periodo: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(periodo)) throw new RangeError(`periodo "${periodo}" is not YYYY-MM`)
  return (
    `<RutEmisorLibro>${rutValue(caratula.rutEmisorLibro, 'rutEmisorLibro')}</RutEmisorLibro>` +
    `<RutEnvia>${rutValue(caratula.rutEnvia, 'rutEnvia')}</RutEnvia>` +
    `<PeriodoTributario>${periodo}</PeriodoTributario>` +
    `<FchResol>${dateValue(caratula.fchResol, 'fchResol')}</FchResol>` +
    `<NroResol>${integerValue(caratula.nroResol, 0, 999_999, 'nroResol')}</NroResol>`
  )
}

/**
 * The document as the SII wants it signed: `<root>` in the SII namespace, EnvioLibro ID=SetDoc holding `body` and
 * TmstFirma, then the Signature over EnvioLibro, as ISO-8859-1 bytes.
 */
export function signedLibro(root: LibroRoot, schema: string, body: string, tmstFirma: Date, signer: Signer): Uint8Array {
  const unsigned =
    '<?xml version="1.0" encoding="ISO-8859-1"?>\n' +
    `<${root} xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}" xsi:schemaLocation="${SII_NS} ${schema}" version="1.0">\n` +
    `<EnvioLibro ID="${ENVIO_LIBRO_ID}">\n${body}<TmstFirma>${timestampValue(tmstFirma, 'tmstFirma')}</TmstFirma>\n</EnvioLibro>\n</${root}>\n`
  return toLatin1Bytes(signBlock(unsigned, signer))
}

/** TotalesPeriodo in LibroCV_v10.xsd's order; zero optional amounts are left out, the five required ones never. */
function totalesXml(t: TotalesCompraVenta): string {
  const where = `resumen[${t.tipoDoc}]`
  return (
    '<TotalesPeriodo>' +
    `<TpoDoc>${tipoValue(t.tipoDoc, where)}</TpoDoc><TotDoc>${count(t.cantidad, `${where}.cantidad`)}</TotDoc>` +
    `<TotMntExe>${monto(t.montoExento, where)}</TotMntExe><TotMntNeto>${monto(t.montoNeto, where)}</TotMntNeto><TotMntIVA>${monto(t.montoIva, where)}</TotMntIVA>` +
    t.ivaNoRecuperable.map((i) =>
      `<TotIVANoRec><CodIVANoRec>${i.codigo}</CodIVANoRec><TotOpIVANoRec>${count(i.operaciones, where)}</TotOpIVANoRec><TotMntIVANoRec>${monto(i.monto, where)}</TotMntIVANoRec></TotIVANoRec>`).join('') +
    optionalElement('TotOpIVAUsoComun', t.operacionesIvaUsoComun > 0 ? count(t.operacionesIvaUsoComun, where) : null) +
    optionalElement('TotIVAUsoComun', t.ivaUsoComun > 0 ? monto(t.ivaUsoComun, where) : null) +
    optionalElement('FctProp', t.factorMilesimas === null ? null : factorText(t.factorMilesimas)) +
    optionalElement('TotCredIVAUsoComun', t.factorMilesimas === null ? null : monto(t.creditoIvaUsoComun, where)) +
    t.otrosImpuestos.map((o) => `<TotOtrosImp><CodImp>${o.codigo}</CodImp><TotMntImp>${monto(o.monto, where)}</TotMntImp></TotOtrosImp>`).join('') +
    optionalElement('TotIVARetTotal', t.ivaRetenidoTotal > 0 ? monto(t.ivaRetenidoTotal, where) : null) +
    `<TotMntTotal>${monto(t.montoTotal, where)}</TotMntTotal>` +
    '</TotalesPeriodo>'
  )
}

/** One Detalle in LibroCV_v10.xsd's order. MntIVA and MntTotal always (formato IECV: obligatory, 0 when none). */
function detalleXml(d: DetalleCompraVenta, where: string): string {
  return (
    `<Detalle><TpoDoc>${tipoValue(d.tipoDoc, where)}</TpoDoc><NroDoc>${integerValue(d.folio, 1, MAX_FOLIO, `${where}.folio`)}</NroDoc>` +
    optionalElement('TasaImp', d.tasaImpuesto === null ? null : tasaText(d.tasaImpuesto, where)) +
    `<FchDoc>${dateValue(d.fecha, `${where}.fecha`)}</FchDoc><RUTDoc>${rutValue(d.rut, `${where}.rut`)}</RUTDoc>` +
    optionalElement('RznSoc', razonSocialValue(d.razonSocial)) +
    (d.referencia === null ? '' : `<TpoDocRef>${tipoValue(d.referencia.tipoDoc, where)}</TpoDocRef><FolioDocRef>${integerValue(d.referencia.folio, 1, MAX_FOLIO, where)}</FolioDocRef>`) +
    optionalElement('MntExe', d.montoExento > 0 ? monto(d.montoExento, where) : null) +
    optionalElement('MntNeto', d.montoNeto > 0 ? monto(d.montoNeto, where) : null) +
    `<MntIVA>${monto(d.montoIva, where)}</MntIVA>` +
    d.ivaNoRecuperable.map((i) => `<IVANoRec><CodIVANoRec>${i.codigo}</CodIVANoRec><MntIVANoRec>${monto(i.monto, where)}</MntIVANoRec></IVANoRec>`).join('') +
    optionalElement('IVAUsoComun', d.ivaUsoComun > 0 ? monto(d.ivaUsoComun, where) : null) +
    d.otrosImpuestos.map((o) =>
      `<OtrosImp><CodImp>${o.codigo}</CodImp>${optionalElement('TasaImp', o.tasa === null ? null : tasaText(o.tasa, where))}<MntImp>${monto(o.monto, where)}</MntImp></OtrosImp>`).join('') +
    optionalElement('IVARetTotal', d.ivaRetenidoTotal > 0 ? monto(d.ivaRetenidoTotal, where) : null) +
    `<MntTotal>${monto(d.montoTotal, where)}</MntTotal>` +
    '</Detalle>'
  )
}

// ------------------------------------------------------------------------------------------------ values

/** RznSoc cut to the XSD's 50 characters, without the blank a cut may leave at its end; null when empty. */
export function razonSocialValue(value: string): string | null {
  const text = textValue(value.trim(), MAX_RAZON_SOCIAL).trimEnd()
  return text === '' ? null : text
}

export function monto(value: number, where: string): string {
  return integerValue(value, 0, MAX_MONTO, where)
}

function count(value: number, where: string): string {
  return integerValue(value, 1, 9_999_999_999, where)
}

/** DoctoType is an enumeration of 3-digit codes; the XSD has the last word on which. */
export function tipoValue(value: number, where: string): string {
  return integerValue(value, 1, 999, `${where}.tipoDoc`)
}

/** PctType: 0 to 100 with at most 2 decimals. */
export function tasaText(value: number, where: string): string {
  if (!(value >= 0 && value <= 100) || Math.round(value * 100) !== value * 100) throw new RangeError(`${where}: TasaImp ${value} is not a percentage with 2 decimals`)
  return String(value)
}

export function dateValue(value: string, where: string): string {
  const date = dateOrNull(value)
  if (date === null) throw new RangeError(`${where} "${value}" is not a date YYYY-MM-DD`)
  return date
}

/** FctProp from thousandths, shortest: 600 → `0.6` (the set's "0.60"), 1000 → `1`. */
function factorText(milesimas: number): string {
  if (!Number.isInteger(milesimas) || milesimas < 1 || milesimas > 99_999) throw new RangeError(`FctProp ${milesimas}/1000 is out of range`)
  return (milesimas / 1000).toFixed(3).replace(/\.?0+$/, '')
}

// ------------------------------------------------------------------------------------------------ reading

/** The carátula as written, what DTEUpload and the status query compare with the upload (RUTs canonical when valid). */
export interface CaratulaLibroRead {
  readonly rutEmisorLibro: string
  readonly rutEnvia: string
  readonly periodo: string
  /** TipoOperacion of a LibroCompraVenta; '' in a LibroGuia. */
  readonly tipoOperacion: string
}

/** The carátula of a LibroCompraVenta or LibroGuia document; null when it has no EnvioLibro/Caratula. */
export function readCaratulaLibro(doc: Document): CaratulaLibroRead | null {
  const caratula = childNamed(envioLibroOf(doc), 'Caratula')
  if (caratula === undefined) return null
  return {
    rutEmisorLibro: readRut(leafText(caratula, 'RutEmisorLibro')),
    rutEnvia: readRut(leafText(caratula, 'RutEnvia')),
    periodo: leafText(caratula, 'PeriodoTributario'),
    tipoOperacion: leafText(caratula, 'TipoOperacion'),
  }
}

export function envioLibroOf(doc: Document): Element | undefined {
  return childNamed(doc.documentElement, 'EnvioLibro')
}

export interface LibroCompraVentaRead {
  readonly operacion: TipoOperacion | null
  readonly detalle: readonly DetalleCompraVenta[]
  readonly resumen: readonly TotalesCompraVenta[]
}

/**
 * The lines and the totals of a LibroCompraVenta as written, for the check of its totals (run after its XSD: every
 * number is then an integer; one that is not reads 0). Amounts the libro leaves out read 0.
 */
export function readLibroCompraVenta(doc: Document): LibroCompraVentaRead {
  const envio = envioLibroOf(doc)
  const operacion = leafText(childNamed(envio, 'Caratula'), 'TipoOperacion')
  const periodo = childNamed(envio, 'ResumenPeriodo')
  return {
    operacion: operacion === 'VENTA' || operacion === 'COMPRA' ? operacion : null,
    detalle: childrenNamed(envio, 'Detalle').map(readDetalle),
    resumen: childrenNamed(periodo, 'TotalesPeriodo').map(readTotales),
  }
}

function readDetalle(d: Element): DetalleCompraVenta {
  const tasa = leafText(d, 'TasaImp')
  return {
    tipoDoc: int(d, 'TpoDoc'), folio: int(d, 'NroDoc'), tasaImpuesto: tasa === '' ? null : Number(tasa), fecha: leafText(d, 'FchDoc'),
    rut: readRut(leafText(d, 'RUTDoc')), razonSocial: leafText(d, 'RznSoc'),
    referencia: childNamed(d, 'TpoDocRef') === undefined ? null : { tipoDoc: int(d, 'TpoDocRef'), folio: int(d, 'FolioDocRef') },
    montoExento: int(d, 'MntExe'), montoNeto: int(d, 'MntNeto'), montoIva: int(d, 'MntIVA'),
    ivaNoRecuperable: childrenNamed(d, 'IVANoRec').map((i) => ({ codigo: int(i, 'CodIVANoRec') as CodigoIvaNoRecuperable, monto: int(i, 'MntIVANoRec') })),
    ivaUsoComun: int(d, 'IVAUsoComun'),
    otrosImpuestos: childrenNamed(d, 'OtrosImp').map((o) => ({ codigo: int(o, 'CodImp'), tasa: leafText(o, 'TasaImp') === '' ? null : Number(leafText(o, 'TasaImp')), monto: int(o, 'MntImp') })),
    ivaRetenidoTotal: int(d, 'IVARetTotal'), montoTotal: int(d, 'MntTotal'),
  }
}

function readTotales(t: Element): TotalesCompraVenta {
  return {
    tipoDoc: int(t, 'TpoDoc'), cantidad: int(t, 'TotDoc'), montoExento: int(t, 'TotMntExe'), montoNeto: int(t, 'TotMntNeto'), montoIva: int(t, 'TotMntIVA'),
    ivaNoRecuperable: childrenNamed(t, 'TotIVANoRec').map((i) => ({
      codigo: int(i, 'CodIVANoRec') as CodigoIvaNoRecuperable, operaciones: int(i, 'TotOpIVANoRec'), monto: int(i, 'TotMntIVANoRec'),
    })),
    operacionesIvaUsoComun: int(t, 'TotOpIVAUsoComun'), ivaUsoComun: int(t, 'TotIVAUsoComun'), factorMilesimas: milesimasOf(leafText(t, 'FctProp')),
    creditoIvaUsoComun: int(t, 'TotCredIVAUsoComun'),
    otrosImpuestos: childrenNamed(t, 'TotOtrosImp').map((o) => ({ codigo: int(o, 'CodImp'), monto: int(o, 'TotMntImp') })),
    ivaRetenidoTotal: int(t, 'TotIVARetTotal'), montoTotal: int(t, 'TotMntTotal'),
  }
}

/** `0.60` → 600; null when absent or not a decimal of at most 3 places. */
function milesimasOf(text: string): number | null {
  const m = /^(\d{1,2})(?:\.(\d{1,3}))?$/.exec(text)
  return m === null ? null : Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0'))
}

/** The integer child `name`; 0 when absent or not an integer. */
export function int(parent: Element, name: string): number {
  return readInteger(leafText(parent, name)) ?? 0
}

export function childrenNamed(parent: Element | undefined, name: string): Element[] {
  return parent === undefined ? [] : childElements(parent).filter((e) => e.localName === name)
}
