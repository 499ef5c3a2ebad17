// LibroGuia (LibroGuia_v10.xsd): the libro de guías de despacho the certification asks for (SET LIBRO DE GUIAS,
// docs/decisions/certificacion.md "Los libros"), written from domain/libros.ts's lines and totals, signed as
// libro-cv.ts signs the IECV (EnvioLibro ID=SetDoc, the Signature over it last), as ISO-8859-1 bytes; and read back for
// the simulator's check of its totals. Carátula: TipoLibro ESPECIAL (the only value the XSD has), TipoEnvio TOTAL,
// FolioNotificacion (required here, unlike in LibroCV_v10.xsd).
import type { DetalleGuia, LibroGuias, ResumenGuias, TipoOperacionGuia } from '../domain/libros'
import type { Signer } from '../domain/signer'
import { integerValue, MAX_FOLIO, optionalElement, readRut, rutValue } from './exchange-values'
import {
  caratulaHead, childrenNamed, dateValue, envioLibroOf, int, monto, razonSocialValue, signedLibro, tasaText, tipoValue, type CaratulaLibro,
} from './libro-cv'
import { childNamed, leafText } from './read-envio'

/** The signed LibroGuia, as ISO-8859-1 bytes. Throws RangeError on values no XSD type carries. */
export function buildLibroGuia(libro: LibroGuias, caratula: CaratulaLibro, signer: Signer): Uint8Array {
  const body =
    '<Caratula>' +
    caratulaHead(caratula, libro.periodo) +
    '<TipoLibro>ESPECIAL</TipoLibro><TipoEnvio>TOTAL</TipoEnvio>' +
    // FolioNotificacion: totalDigits 18 here, kept within what a JS number holds.
    `<FolioNotificacion>${integerValue(caratula.folioNotificacion, 1, Number.MAX_SAFE_INTEGER, 'folioNotificacion')}</FolioNotificacion>` +
    '</Caratula>\n' +
    `${resumenXml(libro.resumen)}\n` +
    libro.detalle.map((d, i) => `${detalleXml(d, `detalle[${i}]`)}\n`).join('')
  return signedLibro('LibroGuia', 'LibroGuia_v10.xsd', body, caratula.tmstFirma, signer)
}

/** ResumenPeriodo in LibroGuia_v10.xsd's order; TotGuiaVenta and TotMntGuiaVta always, the rest when not zero. */
function resumenXml(r: ResumenGuias): string {
  return (
    '<ResumenPeriodo>' +
    optionalElement('TotFolAnulado', r.foliosAnulados > 0 ? String(r.foliosAnulados) : null) +
    optionalElement('TotGuiaAnulada', r.guiasAnuladas > 0 ? String(r.guiasAnuladas) : null) +
    `<TotGuiaVenta>${integerValue(r.guiasVenta, 0, 9_999_999_999, 'guiasVenta')}</TotGuiaVenta>` +
    `<TotMntGuiaVta>${monto(r.montoGuiasVenta, 'montoGuiasVenta')}</TotMntGuiaVta>` +
    r.traslados.map((t) =>
      `<TotTraslado><TpoTraslado>${integerValue(t.tipo, 2, 9, 'traslado.tipo')}</TpoTraslado><CantGuia>${integerValue(t.cantidad, 0, 9_999_999_999, 'traslado.cantidad')}</CantGuia>` +
      `${optionalElement('MntGuia', t.monto > 0 ? monto(t.monto, 'traslado.monto') : null)}</TotTraslado>`).join('') +
    '</ResumenPeriodo>'
  )
}

/** One Detalle in LibroGuia_v10.xsd's order; the annulled guía keeps its data (Anulado 2 is "posterior a su envío"). */
function detalleXml(d: DetalleGuia, where: string): string {
  return (
    `<Detalle><Folio>${integerValue(d.folio, 1, MAX_FOLIO, `${where}.folio`)}</Folio>` +
    optionalElement('Anulado', d.anulado === null ? null : String(d.anulado)) +
    `<TpoOper>${integerValue(d.tipoOperacion, 1, 7, `${where}.tipoOperacion`)}</TpoOper>` +
    `<FchDoc>${dateValue(d.fecha, `${where}.fecha`)}</FchDoc><RUTDoc>${rutValue(d.rut, `${where}.rut`)}</RUTDoc>` +
    optionalElement('RznSoc', razonSocialValue(d.razonSocial)) +
    optionalElement('MntNeto', d.montoNeto > 0 ? monto(d.montoNeto, where) : null) +
    optionalElement('TasaImp', d.tasaImpuesto === null || d.montoNeto === 0 ? null : tasaText(d.tasaImpuesto, where)) +
    optionalElement('IVA', d.iva > 0 ? monto(d.iva, where) : null) +
    `<MntTotal>${monto(d.montoTotal, where)}</MntTotal>` +
    (d.referencia === null
      ? ''
      : `<TpoDocRef>${tipoValue(d.referencia.tipoDoc, where)}</TpoDocRef><FolioDocRef>${integerValue(d.referencia.folio, 1, MAX_FOLIO, where)}</FolioDocRef>` +
        `<FchDocRef>${dateValue(d.referencia.fecha, `${where}.referencia.fecha`)}</FchDocRef>`) +
    '</Detalle>'
  )
}

export interface LibroGuiaRead {
  readonly detalle: readonly DetalleGuia[]
  readonly resumen: ResumenGuias
}

/** The lines and totals of a LibroGuia as written (after its XSD; an absent amount reads 0). */
export function readLibroGuia(doc: Document): LibroGuiaRead {
  const envio = envioLibroOf(doc)
  const resumen = childNamed(envio, 'ResumenPeriodo')
  return {
    detalle: childrenNamed(envio, 'Detalle').map(readDetalle),
    resumen: {
      foliosAnulados: resumen === undefined ? 0 : int(resumen, 'TotFolAnulado'),
      guiasAnuladas: resumen === undefined ? 0 : int(resumen, 'TotGuiaAnulada'),
      guiasVenta: resumen === undefined ? 0 : int(resumen, 'TotGuiaVenta'),
      montoGuiasVenta: resumen === undefined ? 0 : int(resumen, 'TotMntGuiaVta'),
      traslados: childrenNamed(resumen, 'TotTraslado').map((t) => ({ tipo: int(t, 'TpoTraslado'), cantidad: int(t, 'CantGuia'), monto: int(t, 'MntGuia') })),
    },
  }
}

function readDetalle(d: Element): DetalleGuia {
  const anulado = int(d, 'Anulado')
  const tasa = leafText(d, 'TasaImp')
  return {
    folio: int(d, 'Folio'), anulado: anulado === 1 || anulado === 2 ? anulado : null, tipoOperacion: int(d, 'TpoOper') as TipoOperacionGuia,
    fecha: leafText(d, 'FchDoc'), rut: readRut(leafText(d, 'RUTDoc')), razonSocial: leafText(d, 'RznSoc'),
    montoNeto: int(d, 'MntNeto'), tasaImpuesto: tasa === '' ? null : Number(tasa), iva: int(d, 'IVA'), montoTotal: int(d, 'MntTotal'),
    referencia: childNamed(d, 'TpoDocRef') === undefined ? null : { tipoDoc: int(d, 'TpoDocRef'), folio: int(d, 'FolioDocRef'), fecha: leafText(d, 'FchDocRef') },
  }
}
