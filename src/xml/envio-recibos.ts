// EnvioRecibos (EnvioRecibos_v10.xsd, Recibo from Recibos_v10.xsd): the receipt of goods or services of Ley 19.983
// (the receiver's ERM action, DESIGN §13), mailed to the issuer. Nested signatures, as DTEs inside an envelope
// (docs/sii-protocol.md §4.2, §4.3): each Recibo is built and signed as a document of its own over its
// DocumentoRecibo, then placed byte for byte into SetRecibos, which is signed last. Every `<Recibo>` start tag
// declares the namespaces the root declares (`xmlns` and `xmlns:xsi`, Timbre's choice for DTEs, §4.3 item 6), so its
// signature verifies the same standalone and in place. ISO-8859-1 bytes.
//
// Recibo's TipoDoc is SiiTypes_v10.xsd DocType (33, 34, 46, 52, 56, 61): a receipt for a 43 names its real type and is
// invalid against the SII's schema, as RespuestaDTE's answers are (see respuesta-dte.ts).
import type { Signer } from '../domain/signer'
import { signBlock, verifyBlockSignature } from './block-signature'
import { parseXmlFile } from './decode-xml'
import { SII_NS, XSI_NS } from './dsig-profile'
import {
  dateOrNull, integerValue, MAX_FOLIO, MAX_MONTO, optionalElement, readInteger, readRut, rutValue, textValue, timestampValue,
} from './exchange-values'
import { childElements, parseXml, toLatin1Bytes } from './latin1'
import { childNamed, elementTexts, leafText } from './read-envio'

/**
 * Recibos_v10.xsd fixes `Declaracion` to this text, the declaration of Ley 19.983 (letra b) del art. 4 and letra c)
 * del art. 5) that makes the receipt evidence that the goods or services were received. Byte for byte the XSD's
 * `fixed` value, unaccented as the SII wrote it: any other text is schema-invalid.
 */
export const DECLARACION_RECIBO =
  'El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4, y la letra c) ' +
  'del Art. 5 de la Ley 19.983, acredita que la entrega de mercaderias o servicio(s) prestado(s) ha(n) sido recibido(s).'

/** SetRecibos/@ID, the outer signature's target. */
const SET_RECIBOS_ID = 'SetRecibos'
/** Recibos_v10.xsd Recinto 80; SiiTypes NombreType 40, MailType 80. */
const MAX_RECINTO = 80
const MAX_NMB_CONTACTO = 40
const MAX_MAIL_CONTACTO = 80

export interface ReciboInput {
  readonly tipoDoc: number
  readonly folio: number
  /** FchEmis of the document, `YYYY-MM-DD`. */
  readonly fechaEmision: string
  readonly rutEmisor: string
  readonly rutRecep: string
  readonly montoTotal: number
  /** Where the goods or services were received. */
  readonly recinto: string
  /** The person who signs the receipt: the RUT of the signing certificate. */
  readonly rutFirma: string
  /** TmstFirmaRecibo. */
  readonly tmst: Date
}

export interface EnvioRecibosInput {
  /** The receiver of the documents, who sends the receipts. */
  readonly rutResponde: string
  /** The issuer of the documents, who gets them. */
  readonly rutRecibe: string
  readonly nmbContacto?: string
  readonly mailContacto?: string
  /** TmstFirmaEnv. */
  readonly tmst: Date
  readonly recibos: readonly ReciboInput[]
}

/**
 * The signed EnvioRecibos, ISO-8859-1 bytes: each Recibo signed on its own, then SetRecibos. Everything in it is the
 * receiver's own record, so a value the XSD cannot carry is the caller's bug: throws RangeError (texts are cut to
 * their lengths instead).
 */
export function buildEnvioRecibos(input: EnvioRecibosInput, signer: Signer): Uint8Array {
  if (input.recibos.length === 0) throw new RangeError('buildEnvioRecibos: EnvioRecibos_v10.xsd needs at least one Recibo')
  const recibos = input.recibos.map((r, i) => signBlock(reciboXml(r, i), signer))
  const caratula =
    '<Caratula version="1.0">' +
    `<RutResponde>${rutValue(input.rutResponde, 'rutResponde')}</RutResponde>` +
    `<RutRecibe>${rutValue(input.rutRecibe, 'rutRecibe')}</RutRecibe>` +
    optionalElement('NmbContacto', input.nmbContacto === undefined ? null : textValue(input.nmbContacto, MAX_NMB_CONTACTO)) +
    optionalElement('MailContacto', input.mailContacto === undefined ? null : textValue(input.mailContacto, MAX_MAIL_CONTACTO)) +
    `<TmstFirmaEnv>${timestampValue(input.tmst, 'tmst')}</TmstFirmaEnv>` +
    '</Caratula>'
  const unsigned =
    '<?xml version="1.0" encoding="ISO-8859-1"?>\n' +
    `<EnvioRecibos xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}" xsi:schemaLocation="${SII_NS} EnvioRecibos_v10.xsd" version="1.0">\n` +
    `<SetRecibos ID="${SET_RECIBOS_ID}">\n${caratula}\n${recibos.join('\n')}\n</SetRecibos>\n</EnvioRecibos>\n`
  return toLatin1Bytes(signBlock(unsigned, signer))
}

/** One unsigned `<Recibo>`, standalone, with the root's two namespaces declared (see the top of this file). */
function reciboXml(r: ReciboInput, i: number): string {
  const where = `recibos[${i}]`
  const fecha = dateOrNull(r.fechaEmision)
  if (fecha === null) throw new RangeError(`${where}.fechaEmision "${r.fechaEmision}" is not a date YYYY-MM-DD`)
  const tipo = integerValue(r.tipoDoc, 1, 999, `${where}.tipoDoc`)
  const folio = integerValue(r.folio, 1, MAX_FOLIO, `${where}.folio`)
  // An xs:ID unique in the file (the index) that still says which document it is.
  const id = `R${i + 1}T${tipo}F${folio}`
  return (
    `<Recibo xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}" version="1.0"><DocumentoRecibo ID="${id}">` +
    `<TipoDoc>${tipo}</TipoDoc><Folio>${folio}</Folio><FchEmis>${fecha}</FchEmis>` +
    `<RUTEmisor>${rutValue(r.rutEmisor, `${where}.rutEmisor`)}</RUTEmisor><RUTRecep>${rutValue(r.rutRecep, `${where}.rutRecep`)}</RUTRecep>` +
    `<MntTotal>${integerValue(r.montoTotal, 0, MAX_MONTO, `${where}.montoTotal`)}</MntTotal>` +
    `<Recinto>${textValue(r.recinto, MAX_RECINTO)}</Recinto><RutFirma>${rutValue(r.rutFirma, `${where}.rutFirma`)}</RutFirma>` +
    `<Declaracion>${DECLARACION_RECIBO}</Declaracion><TmstFirmaRecibo>${timestampValue(r.tmst, `${where}.tmst`)}</TmstFirmaRecibo>` +
    '</DocumentoRecibo></Recibo>'
  )
}

export interface EnvioRecibosRead {
  readonly rutResponde: string
  readonly rutRecibe: string
  /**
   * The SetRecibos signature verifies in place, and every Recibo's own signature verifies on the Recibo cut out of
   * the file, standalone, as the SII checks a DTE's (docs/sii-protocol.md §4.3).
   */
  readonly signatureOk: boolean
  readonly recibos: ReadonlyArray<{
    readonly tipoDoc: number
    readonly folio: number
    readonly fechaEmision: string
    readonly rutEmisor: string
    readonly rutRecep: string
    readonly montoTotal: number
    readonly recinto: string
    /** TmstFirmaRecibo as written. */
    readonly tmst: string
  }>
}

/**
 * Reads an EnvioRecibos another company sent. RUTs come canonical when valid, as written otherwise; a Recibo whose
 * numbers cannot be read is left out (nothing could be matched with it). Null when the file is not an EnvioRecibos
 * with a SetRecibos and its Caratula. Never throws.
 */
export function readEnvioRecibos(bytes: Uint8Array): EnvioRecibosRead | null {
  try {
    const file = parseXmlFile(bytes)
    if (file === null || file.doc.documentElement.localName !== 'EnvioRecibos') return null
    const { doc, text } = file
    const set = childNamed(doc.documentElement, 'SetRecibos')
    const caratula = childNamed(set, 'Caratula')
    if (set === undefined || caratula === undefined) return null
    const elements = childElements(set).filter((e) => e.localName === 'Recibo')
    const setOk = verifyBlockSignature(doc, doc.documentElement, 'SetRecibos', 'el envío de recibos').isValid
    return {
      rutResponde: readRut(leafText(caratula, 'RutResponde')),
      rutRecibe: readRut(leafText(caratula, 'RutRecibe')),
      signatureOk: setOk && recibosVerifyStandalone(text, elements.length),
      recibos: elements.flatMap(readRecibo),
    }
  } catch {
    return null  // a stack overflow on absurd nesting, say: not an EnvioRecibos Timbre can read
  }
}

/** Each `<Recibo>` cut out of the file and verified as a document of its own; false when one cannot be cut or fails. */
function recibosVerifyStandalone(text: string, count: number): boolean {
  const texts = elementTexts(text, 'Recibo', count)
  if (texts === null) return false
  return texts.every((t) => {
    try {
      const doc = parseXml(t)
      return verifyBlockSignature(doc, doc.documentElement, 'DocumentoRecibo', 'el recibo').isValid
    } catch {
      return false
    }
  })
}

function readRecibo(el: Element): EnvioRecibosRead['recibos'] {
  const documento = childNamed(el, 'DocumentoRecibo')
  const tipoDoc = readInteger(leafText(documento, 'TipoDoc'))
  const folio = readInteger(leafText(documento, 'Folio'))
  const montoTotal = readInteger(leafText(documento, 'MntTotal'))
  if (documento === undefined || tipoDoc === null || folio === null || montoTotal === null) return []
  return [{
    tipoDoc,
    folio,
    fechaEmision: leafText(documento, 'FchEmis'),
    rutEmisor: readRut(leafText(documento, 'RUTEmisor')),
    rutRecep: readRut(leafText(documento, 'RUTRecep')),
    montoTotal,
    recinto: leafText(documento, 'Recinto'),
    tmst: leafText(documento, 'TmstFirmaRecibo'),
  }]
}
