// RespuestaDTE (RespuestaEnvioDTE_v10.xsd): the receiver's answers to an issuer (DESIGN §13). Two kinds under one
// root, a choice in the XSD: RecepcionEnvio, the envelope receipt (acuse de recibo) with the SII's EstadoRecepEnv and
// EstadoRecepDTE codes, sent automatically on reception; ResultadoDTE, the commercial answer (EstadoDTE 0 accepted,
// 1 accepted with discrepancies, 2 rejected), sent after ACD or RCD. Signed like an envelope (docs/sii-protocol.md §4.2:
// the Signature after Resultado, referencing its ID), ISO-8859-1 bytes.
//
// The XSD's DTEType (SiiTypes_v10.xsd, 2005) lists 33, 34, 46, 52, 56 and 61 only: an answer about a 43 or an export
// names its real type and is therefore invalid against the SII's own schema. Timbre writes the real type all the same
// (an answer that names another type would be wrong, not merely invalid); receivers read it by value.
import type { Signer } from '../domain/signer'
import type { EstadoRecepDte, EstadoRecepEnv, EstadoResultadoDte } from '../domain/intercambio'
import { signBlock, verifyBlockSignature } from './block-signature'
import { parseXmlFile } from './decode-xml'
import { SII_NS, XSI_NS } from './dsig-profile'
import {
  dateOrNull, integerOrNull, integerValue, MAX_CODIGO, MAX_FOLIO, MAX_MONTO, optionalElement, readInteger, readRut,
  rutOrNull, rutValue, textValue, timestampValue,
} from './exchange-values'
import { childElements, toLatin1Bytes } from './latin1'
import { childNamed, leafText } from './read-envio'

/** Resultado/@ID of each kind: the signature's Reference target (an xs:ID, unique in the file). */
const ID_RECEPCION = 'RespuestaRecepcion'
const ID_RESULTADO = 'RespuestaResultado'

/** RespuestaEnvioDTE_v10.xsd lengths: NmbEnvio and EnvioDTEID 80, the glosas 256; NombreType 40, MailType 80 (SiiTypes). */
const MAX_NMB_ENVIO = 80
const MAX_ENVIO_DTE_ID = 80
const MAX_GLOSA = 256
const MAX_NMB_CONTACTO = 40
const MAX_MAIL_CONTACTO = 80
/** NroDetalles and NroDTE: positiveInteger, totalDigits 4. */
const MAX_DETALLES = 9999

interface RespuestaHeader {
  /** The receiver of the DTEs, who answers. */
  readonly rutResponde: string
  /** The issuer of the DTEs, who gets the answer. */
  readonly rutRecibe: string
  /** A number unique per answer of the responder (positiveInteger, 10 digits). */
  readonly idRespuesta: number
  readonly nmbContacto?: string
  readonly mailContacto?: string
  /** TmstFirmaResp. */
  readonly tmst: Date
}

/** How RecepcionDTE and ResultadoDTE name a document: TipoDTE … MntTotal (FchEmis `YYYY-MM-DD`). */
export interface DocumentoRef {
  readonly tipoDte: number
  readonly folio: number
  readonly fechaEmision: string
  readonly rutEmisor: string
  readonly rutReceptor: string
  readonly montoTotal: number
}

export interface RecepcionEnvioInput extends RespuestaHeader {
  readonly envio: {
    /** The attachment's file name. */
    readonly nmbEnvio: string
    /** When the envelope was received. */
    readonly fchRecep: Date
    /** The receiver's own number for the envelope (positiveInteger, 10 digits). */
    readonly codEnvio: number
    /** SetDTE/@ID of the envelope ('' when it could not be read). */
    readonly envioDteId: string
    /** The envelope signature's DigestValue; written when it is base64. */
    readonly digest: string | null
    /** Caratula RutEmisor and RutReceptor; written when they are valid RUTs. */
    readonly rutEmisor: string | null
    readonly rutReceptor: string | null
    readonly estadoRecepEnv: EstadoRecepEnv
    readonly glosa: string
    readonly documentos: ReadonlyArray<DocumentoRef & { readonly estadoRecepDte: EstadoRecepDte; readonly glosa: string }>
  }
}

/**
 * The signed envelope receipt (RespuestaDTE with one RecepcionEnvio), ISO-8859-1 bytes. What came from the other
 * company is written as far as the XSD lets it be: glosas and names cut to their lengths, optional values (Digest,
 * the Caratula's RUTs) left out when they are not of their type, and a document whose identification cannot be
 * written as the XSD types it (RUTs, folio, date, type, a non-negative integer amount) left out of RecepcionDTE: it
 * cannot be named to its issuer. Throws RangeError on the caller's own values: rutResponde, rutRecibe, idRespuesta,
 * codEnvio, the dates.
 */
export function buildRecepcionEnvio(input: RecepcionEnvioInput, signer: Signer): Uint8Array {
  const e = input.envio
  const documentos = e.documentos.flatMap((d) => {
    const written = documentoXml(d)
    return written === null ? [] : [`<RecepcionDTE>${written}<EstadoRecepDTE>${d.estadoRecepDte}</EstadoRecepDTE><RecepDTEGlosa>${textValue(d.glosa, MAX_GLOSA)}</RecepDTEGlosa></RecepcionDTE>`]
  }).slice(0, MAX_DETALLES)
  const recepcion =
    '<RecepcionEnvio>' +
    `<NmbEnvio>${textValue(e.nmbEnvio, MAX_NMB_ENVIO)}</NmbEnvio>` +
    `<FchRecep>${timestampValue(e.fchRecep, 'envio.fchRecep')}</FchRecep>` +
    `<CodEnvio>${integerValue(e.codEnvio, 1, MAX_CODIGO, 'envio.codEnvio')}</CodEnvio>` +
    `<EnvioDTEID>${textValue(e.envioDteId, MAX_ENVIO_DTE_ID)}</EnvioDTEID>` +
    optionalElement('Digest', e.digest !== null && /^[A-Za-z0-9+/]{1,200}={0,2}$/.test(e.digest) ? e.digest : null) +
    optionalElement('RutEmisor', rutOrNull(e.rutEmisor)) +
    optionalElement('RutReceptor', rutOrNull(e.rutReceptor)) +
    `<EstadoRecepEnv>${e.estadoRecepEnv}</EstadoRecepEnv>` +
    `<RecepEnvGlosa>${textValue(e.glosa, MAX_GLOSA)}</RecepEnvGlosa>` +
    optionalElement('NroDTE', documentos.length === 0 ? null : String(documentos.length)) +
    documentos.join('') +
    '</RecepcionEnvio>'
  return signed(ID_RECEPCION, input, 1, recepcion, signer)
}

export interface ResultadoDteInput extends RespuestaHeader {
  readonly resultados: ReadonlyArray<DocumentoRef & {
    /** CodEnvio of the RecepcionEnvio in which the DTE came. */
    readonly codEnvio: number
    readonly estadoDte: EstadoResultadoDte
    readonly glosa: string
    /** CodRchDsc: the reason of a rejection or discrepancy, a negative integer of up to 3 digits (−1 … −999). */
    readonly codRchDsc?: number
  }>
}

/**
 * The signed commercial answer (RespuestaDTE with one ResultadoDTE per document), ISO-8859-1 bytes. Everything in it
 * is the receiver's own record of documents it accepted, so anything the XSD cannot carry is the caller's bug: throws
 * RangeError.
 */
export function buildResultadoDte(input: ResultadoDteInput, signer: Signer): Uint8Array {
  if (input.resultados.length === 0 || input.resultados.length > MAX_DETALLES) {
    throw new RangeError(`buildResultadoDte: ${input.resultados.length} resultados; RespuestaEnvioDTE_v10.xsd takes 1 to ${MAX_DETALLES}`)
  }
  const resultados = input.resultados.map((r, i) => {
    const written = documentoXml(r)
    if (written === null) throw new RangeError(`buildResultadoDte: resultados[${i}] has a type, folio, date, RUT or amount the XSD cannot carry`)
    const codRchDsc = r.codRchDsc === undefined ? null : integerValue(r.codRchDsc, -999, -1, `resultados[${i}].codRchDsc`)
    return (
      `<ResultadoDTE>${written}<CodEnvio>${integerValue(r.codEnvio, 1, MAX_CODIGO, `resultados[${i}].codEnvio`)}</CodEnvio>` +
      `<EstadoDTE>${r.estadoDte}</EstadoDTE><EstadoDTEGlosa>${textValue(r.glosa, MAX_GLOSA)}</EstadoDTEGlosa>` +
      `${optionalElement('CodRchDsc', codRchDsc)}</ResultadoDTE>`
    )
  })
  return signed(ID_RESULTADO, input, resultados.length, resultados.join(''), signer)
}

/** TipoDTE … MntTotal, the six elements RecepcionDTE and ResultadoDTE share; null when one cannot be written. */
function documentoXml(d: DocumentoRef): string | null {
  const tipo = integerOrNull(d.tipoDte, 1, 999)
  const folio = integerOrNull(d.folio, 1, MAX_FOLIO)
  const fecha = dateOrNull(d.fechaEmision)
  const emisor = rutOrNull(d.rutEmisor)
  const receptor = rutOrNull(d.rutReceptor)
  const monto = integerOrNull(d.montoTotal, 0, MAX_MONTO)
  if (tipo === null || folio === null || fecha === null || emisor === null || receptor === null || monto === null) return null
  return `<TipoDTE>${tipo}</TipoDTE><Folio>${folio}</Folio><FchEmis>${fecha}</FchEmis><RUTEmisor>${emisor}</RUTEmisor><RUTRecep>${receptor}</RUTRecep><MntTotal>${monto}</MntTotal>`
}

/** The whole document around `body`, signed over Resultado (docs/sii-protocol.md §4.2), as ISO-8859-1 bytes. */
function signed(id: string, h: RespuestaHeader, nroDetalles: number, body: string, signer: Signer): Uint8Array {
  const caratula =
    '<Caratula version="1.0">' +
    `<RutResponde>${rutValue(h.rutResponde, 'rutResponde')}</RutResponde>` +
    `<RutRecibe>${rutValue(h.rutRecibe, 'rutRecibe')}</RutRecibe>` +
    `<IdRespuesta>${integerValue(h.idRespuesta, 1, MAX_CODIGO, 'idRespuesta')}</IdRespuesta>` +
    `<NroDetalles>${integerValue(nroDetalles, 1, MAX_DETALLES, 'NroDetalles')}</NroDetalles>` +
    optionalElement('NmbContacto', h.nmbContacto === undefined ? null : textValue(h.nmbContacto, MAX_NMB_CONTACTO)) +
    optionalElement('MailContacto', h.mailContacto === undefined ? null : textValue(h.mailContacto, MAX_MAIL_CONTACTO)) +
    `<TmstFirmaResp>${timestampValue(h.tmst, 'tmst')}</TmstFirmaResp>` +
    '</Caratula>'
  const unsigned =
    '<?xml version="1.0" encoding="ISO-8859-1"?>\n' +
    `<RespuestaDTE xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}" xsi:schemaLocation="${SII_NS} RespuestaEnvioDTE_v10.xsd" version="1.0">\n` +
    `<Resultado ID="${id}">${caratula}${body}</Resultado>\n</RespuestaDTE>\n`
  return toLatin1Bytes(signBlock(unsigned, signer))
}

export type RespuestaDteRead =
  | {
      readonly kind: 'recepcion'
      readonly rutResponde: string
      readonly rutRecibe: string
      /** The Signature over Resultado verifies (in place, with its RSAKeyValue). */
      readonly signatureOk: boolean
      readonly envios: ReadonlyArray<{
        readonly envioDteId: string
        readonly estadoRecepEnv: number
        readonly glosa: string
        readonly fchRecep: string
        readonly documentos: ReadonlyArray<{
          readonly tipoDte: number
          readonly folio: number
          readonly rutEmisor: string
          readonly rutReceptor: string
          readonly montoTotal: number
          readonly estadoRecepDte: number
          readonly glosa: string
        }>
      }>
    }
  | {
      readonly kind: 'resultado'
      readonly rutResponde: string
      readonly rutRecibe: string
      readonly signatureOk: boolean
      /** TmstFirmaResp as written. */
      readonly tmst: string
      readonly resultados: ReadonlyArray<{
        readonly tipoDte: number
        readonly folio: number
        readonly rutEmisor: string
        readonly rutReceptor: string
        readonly montoTotal: number
        readonly estadoDte: number
        readonly glosa: string
      }>
    }

/**
 * Reads a RespuestaDTE another company sent: 'resultado' when it holds ResultadoDTE elements, 'recepcion' otherwise.
 * RUTs come canonical when valid, as written otherwise. An entry whose numbers cannot be read (type, folio, amount,
 * code) is left out: nothing could be matched with it. Null when the file is not a RespuestaDTE with a Resultado and
 * its Caratula. Never throws.
 */
export function readRespuestaDte(bytes: Uint8Array): RespuestaDteRead | null {
  try {
    const doc = parseXmlFile(bytes)?.doc
    if (doc === undefined || doc.documentElement.localName !== 'RespuestaDTE') return null
    const resultado = childNamed(doc.documentElement, 'Resultado')
    const caratula = childNamed(resultado, 'Caratula')
    if (resultado === undefined || caratula === undefined) return null
    const header = {
      rutResponde: readRut(leafText(caratula, 'RutResponde')),
      rutRecibe: readRut(leafText(caratula, 'RutRecibe')),
      signatureOk: verifyBlockSignature(doc, doc.documentElement, 'Resultado', 'el archivo de respuesta').isValid,
    }
    const children = childElements(resultado)
    const resultados = children.filter((e) => e.localName === 'ResultadoDTE')
    if (resultados.length > 0) {
      return { kind: 'resultado', ...header, tmst: leafText(caratula, 'TmstFirmaResp'), resultados: resultados.flatMap(readResultado) }
    }
    return { kind: 'recepcion', ...header, envios: children.filter((e) => e.localName === 'RecepcionEnvio').flatMap(readEnvio) }
  } catch {
    return null  // a stack overflow on absurd nesting, say: not a RespuestaDTE Timbre can read
  }
}

type Documento = { tipoDte: number; folio: number; rutEmisor: string; rutReceptor: string; montoTotal: number }

function readDocumento(el: Element): Documento | null {
  const tipoDte = readInteger(leafText(el, 'TipoDTE'))
  const folio = readInteger(leafText(el, 'Folio'))
  const montoTotal = readInteger(leafText(el, 'MntTotal'))
  if (tipoDte === null || folio === null || montoTotal === null) return null
  return { tipoDte, folio, rutEmisor: readRut(leafText(el, 'RUTEmisor')), rutReceptor: readRut(leafText(el, 'RUTRecep')), montoTotal }
}

function readResultado(el: Element): Extract<RespuestaDteRead, { kind: 'resultado' }>['resultados'] {
  const documento = readDocumento(el)
  const estadoDte = readInteger(leafText(el, 'EstadoDTE'))
  return documento === null || estadoDte === null ? [] : [{ ...documento, estadoDte, glosa: leafText(el, 'EstadoDTEGlosa') }]
}

function readEnvio(el: Element): Extract<RespuestaDteRead, { kind: 'recepcion' }>['envios'] {
  const estadoRecepEnv = readInteger(leafText(el, 'EstadoRecepEnv'))
  if (estadoRecepEnv === null) return []
  const documentos = childElements(el).filter((e) => e.localName === 'RecepcionDTE').flatMap((d) => {
    const documento = readDocumento(d)
    const estadoRecepDte = readInteger(leafText(d, 'EstadoRecepDTE'))
    return documento === null || estadoRecepDte === null ? [] : [{ ...documento, estadoRecepDte, glosa: leafText(d, 'RecepDTEGlosa') }]
  })
  return [{ envioDteId: leafText(el, 'EnvioDTEID'), estadoRecepEnv, glosa: leafText(el, 'RecepEnvGlosa'), fchRecep: leafText(el, 'FchRecep'), documentos }]
}
