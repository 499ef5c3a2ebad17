// What the SII checks on an uploaded envelope, in the order its states report them (docs/sii-protocol.md §6.5: REC → SOK schema
// → CRT carátula → FOK signatures → PRD → EPR), and the code each failure gives. Pure functions over the bytes, plus
// two look-ups the caller passes in (earlier accepted folios; CAF authority keys): no HTTP, no database, no clock.
//
// Where each failure surfaces (docs/decisions/simulator.md "Where each check answers"):
// - DTEUpload refuses synchronously what it must read to accept the file at all: not XML or not the envelope this
//   service takes (STATUS 7), the envelope signature (STATUS 8: its certificate names the sender), the sender
//   (STATUS 1) and the company (STATUS 6). The boleta REST envío receives everything and reports those later.
// - After a track id: XSD (RSC), carátula (RCT), the DTEs' own signatures (RFR), then each document on its own
//   (TED, CAF, folio range, duplicates, receptor rules) → DOK / RPR / RCH inside an EPR envelope.
import { verify, type KeyObject } from 'node:crypto'
import { normalizeRut } from '../../domain/rut'
import { verifyCafSignature } from '../../xml/caf'
import { SII_RUT } from '../../xml/envelope'
import { childElements, fromLatin1Bytes, parseXml, textOf, toLatin1Bytes } from '../../xml/latin1'
import { verifyXmlSignatures } from '../../xml/signature'
import { readTed } from '../../xml/ted'
import { validateEnvelopeSchema, type EnvelopeRoot } from './schemas'
import type { DocEstado, SiiError, StoredRejection } from './store'
import { certificateOf, verifyEnvelopeSignature } from './xmldsig'
import { SII_NS } from '../../xml/dsig-profile'


/** Receptor RUTs that let integrators reach every outcome (DESIGN §9). 66666666-6 is accepted like any RUT. */
export const RECEPTOR_RECHAZA = '88888888-8'
export const RECEPTOR_REPARO = '77777777-7'

/** One DTE of the envelope: its element in the envelope's tree and its text exactly as uploaded. */
export interface DteEntry {
  readonly element: Element
  /** `<DTE …>…</DTE>` verbatim; null when it could not be cut out of the file (then its signature cannot verify). */
  readonly text: string | null
  readonly fields: DocFields
}

/** What the SII records of each document (getEstDte compares these, docs/sii-protocol.md §6.6). */
export interface DocFields {
  readonly id: string
  readonly tipo: number
  readonly folio: number
  readonly fechaEmision: string
  readonly rutEmisor: string
  readonly rutReceptor: string
  readonly razonSocialReceptor: string | null
  readonly montoTotal: string
  readonly item1: string
}

export interface ReadEnvelope {
  readonly text: string
  readonly doc: Document
  readonly root: EnvelopeRoot
  readonly caratula: {
    readonly rutEmisor: string
    readonly rutEnvia: string
    readonly rutReceptor: string
    /** SubTotDTE as written: [TpoDTE, NroDTE] pairs. */
    readonly subtotales: ReadonlyArray<readonly [number, number]>
  }
  readonly dtes: readonly DteEntry[]
}

/** An upload-time refusal; DTEUpload answers its STATUS, the boleta REST envío turns it into an envelope rejection. */
export interface Refusal {
  readonly stage: 'file' | 'envelope-signature' | 'sender' | 'company'
  readonly status: 7 | 8 | 1 | 6
  readonly message: string
  readonly errors: readonly string[]
}

/** Decodes by the file's declaration: ISO-8859-1 unless it says UTF-8 (docs/sii-protocol.md §1.2; libxml2 does the same). */
export function decodeEnvelope(bytes: Uint8Array): string {
  const head = fromLatin1Bytes(bytes.subarray(0, 200))
  const declared = /^\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/.exec(head)?.[1]?.toLowerCase()
  return declared === 'utf-8' || declared === 'utf8' ? new TextDecoder('utf-8').decode(bytes) : fromLatin1Bytes(bytes)
}

/** Parses the file and reads the Caratula and the DTEs; a refusal when it is not the envelope `expected`. */
export function readEnvelope(bytes: Uint8Array, expected: EnvelopeRoot): ReadEnvelope | Refusal {
  const text = decodeEnvelope(bytes)
  let doc: Document
  try {
    doc = parseXml(text)
  } catch (err) {
    return refusal('file', `el archivo no es XML bien formado: ${err instanceof Error ? err.message : String(err)}`)
  }
  const root = doc.documentElement
  if (root.localName !== expected || root.namespaceURI !== SII_NS) {
    // docs/sii-protocol.md §1.1, §7.1: boletas go only to the REST envío in EnvioBOLETA, every other type only to DTEUpload.
    return refusal('file', `se esperaba ${expected} en el espacio de nombres ${SII_NS}, se recibió ${root.localName}`)
  }
  const setDte = childElements(root).find((e) => e.localName === 'SetDTE')
  if (setDte === undefined) return refusal('file', `${expected} sin SetDTE`)
  const caratula = childElements(setDte).find((e) => e.localName === 'Caratula')
  const elements = childElements(setDte).filter((e) => e.localName === 'DTE')
  const texts = dteTexts(text, elements.length)
  return {
    text,
    doc,
    root: expected,
    caratula: {
      rutEmisor: leaf(caratula, 'RutEmisor'),
      rutEnvia: leaf(caratula, 'RutEnvia'),
      rutReceptor: leaf(caratula, 'RutReceptor'),
      subtotales: (caratula === undefined ? [] : childElements(caratula).filter((e) => e.localName === 'SubTotDTE'))
        .map((s) => [Number(leaf(s, 'TpoDTE')), Number(leaf(s, 'NroDTE'))] as const),
    },
    dtes: elements.map((element, i) => ({ element, text: texts?.[i] ?? null, fields: fieldsOf(element) })),
  }
}

export function isRefusal(value: ReadEnvelope | Refusal): value is Refusal {
  return 'stage' in value
}

/**
 * The upload checks of DTEUpload, after the file was read: the envelope signature, then who sends for whom. Rules
 * (simulator choices, documented): the sender `rutSender` must be the token's holder, the Caratula's RutEnvia and
 * the RUT in the envelope signature's certificate (docs/sii-protocol.md §5: "RutEnvia must be the RUT in the signing certificate
 * and equal to rutSender"); the company `rutCompany` must be the Caratula's RutEmisor.
 */
export function checkSender(read: ReadEnvelope, upload: UploadParties): Refusal | null {
  const signature = verifyEnvelopeSignature(read.doc)
  if (!signature.isValid) return refusal('envelope-signature', `firma del envío inválida: ${signature.reason}`)
  const signerRut = signature.signature === null ? null : certificateOf(signature.signature)?.rut ?? null
  const sender = upload.rutSender
  if (sender === null) return refusal('sender', 'rutSender/dvSender no es un RUT válido')
  if (sender !== upload.tokenRut) return refusal('sender', `el usuario autenticado (${upload.tokenRut}) no es rutSender ${sender}`)
  if (normalizeRut(read.caratula.rutEnvia) !== sender) return refusal('sender', `RUT envia diferente al Upload: RutEnvia ${read.caratula.rutEnvia}, rutSender ${sender}`)
  if (signerRut !== sender) return refusal('sender', `el certificado que firma el envío (${signerRut ?? 'sin RUT'}) no es de rutSender ${sender}`)
  if (upload.rutCompany === null) return refusal('company', 'rutCompany/dvCompany no es un RUT válido')
  if (normalizeRut(read.caratula.rutEmisor) !== upload.rutCompany) {
    return refusal('company', `la empresa ${upload.rutCompany} no es el RutEmisor ${read.caratula.rutEmisor} del envío`)
  }
  return null
}

export interface UploadParties {
  /** rutSender-dvSender, canonical; null when not a valid RUT. */
  readonly rutSender: string | null
  readonly rutCompany: string | null
  /** Holder of the token the upload came with. */
  readonly tokenRut: string
}

/**
 * The checks after a track id up to the documents: XSD (RSC), Caratula (RCT), every DTE signature (RFR). Null when
 * the envelope passes them. Async only for the XSD; everything else is synchronous.
 */
export async function checkEnvelope(read: ReadEnvelope, bytes: Uint8Array): Promise<StoredRejection | null> {
  const schema = await validateEnvelopeSchema(bytes, read.root)
  if (!schema.isValid) {
    const errors = schema.errors.slice(0, 20).map((e) => siiError('SCH', 1, 'Error de schema', e, lineOf(e)))
    return envelopeRejection('RSC', errors)
  }
  const caratula = caratulaErrors(read)
  if (caratula.length > 0) return envelopeRejection('RCT', caratula)
  const signatures = read.dtes.flatMap((dte) => dteSignatureErrors(dte))
  if (signatures.length > 0) return envelopeRejection('RFR', signatures)
  return null
}

/** The envelope's GLOSA names the SII's stage and its first reason: `Rechazado por Error en Firma: (FRM-3-2) …`. */
function envelopeRejection(estado: StoredRejection['estado'], errors: readonly SiiError[]): StoredRejection {
  const stage = { RSC: 'Rechazado por Error en Schema', RCT: 'Rechazado por Error en Caratula', RFR: 'Rechazado por Error en Firma' }[estado]
  return { estado, glosa: errors[0] === undefined ? stage : `${stage}: ${detalleLine(errors[0])}`, errors }
}

/**
 * One reason as the SII writes it in REVISIONDTE/DETALLE of its result e-mail, `(DTE-3-101) Folio para este Tipo de
 * documento ya fue recibido en el SII` (the section, nivel and code of the boleta REST error line, docs/sii-protocol.md
 * §7.3), plus the simulator's own detail after an em dash (a character the SII's ISO-8859-1 never carries).
 */
export function detalleLine(e: SiiError): string {
  return `(${e.seccion}-${e.nivel}-${e.codigo}) ${e.descripcion}${e.detalle === '' ? '' : ` — ${e.detalle}`}`
}

/** A refusal of the REST envío reported as the SII's boleta status does: RSC, RFR or RCT (docs/sii-protocol.md §7.3 example). */
export function rejectionOfRefusal(r: Refusal): StoredRejection {
  if (r.stage === 'file') return envelopeRejection('RSC', [siiError('SCH', 1, 'Error de schema', r.message)])
  if (r.stage === 'envelope-signature') return envelopeRejection('RFR', [siiError('FRM', 1, 'Firma del envío inválida', r.message)])
  const codigo = r.stage === 'sender' ? 11 : 15
  const descripcion = r.stage === 'sender' ? 'RUT envia diferente al Upload' : 'Empresa distinta del Upload'
  return envelopeRejection('RCT', [siiError('CRT', codigo, descripcion, r.message)])
}

/** docs/sii-protocol.md §5: RutReceptor is the SII, SubTotDTE counts each type, every DTE is issued by the Caratula's RutEmisor. */
function caratulaErrors(read: ReadEnvelope): SiiError[] {
  const errors: SiiError[] = []
  const { caratula } = read
  if (normalizeRut(caratula.rutReceptor) !== SII_RUT) {
    errors.push(siiError('CRT', 14, 'RutReceptor debe ser el SII', `RutReceptor ${caratula.rutReceptor}, se espera ${SII_RUT}`))
  }
  const counted = new Map<number, number>()
  for (const dte of read.dtes) counted.set(dte.fields.tipo, (counted.get(dte.fields.tipo) ?? 0) + 1)
  const declared = new Map<number, number>()
  for (const [tipo, n] of caratula.subtotales) declared.set(tipo, (declared.get(tipo) ?? 0) + n)
  for (const tipo of new Set([...counted.keys(), ...declared.keys()])) {
    if ((counted.get(tipo) ?? 0) !== (declared.get(tipo) ?? 0)) {
      errors.push(siiError('CRT', 13, 'SubTotDTE no cuadra', `tipo ${tipo}: carátula ${declared.get(tipo) ?? 0}, envío ${counted.get(tipo) ?? 0}`))
    }
  }
  const rutEmisor = normalizeRut(caratula.rutEmisor)
  for (const dte of read.dtes) {
    if (normalizeRut(dte.fields.rutEmisor) !== rutEmisor) {
      errors.push(siiError('CRT', 12, 'RutEmisor distinto en DTE', `DTE ${dte.fields.id}: RUTEmisor ${dte.fields.rutEmisor}, carátula ${caratula.rutEmisor}`))
    }
  }
  return errors
}

/**
 * The SII verifies each DTE from its own text, standalone (docs/sii-protocol.md §4.3): the SII's tool signed DTEs with no
 * namespace, Timbre declares the envelope's namespaces; both verify standalone. One Signature, covering the
 * document element's ID, verified with its RSAKeyValue (the certificate is not required to match, §4.1).
 */
export function dteSignatureErrors(dte: DteEntry): SiiError[] {
  const fail = (detalle: string): SiiError[] => [siiError('FRM', 2, 'Firma del DTE inválida', `DTE ${dte.fields.id}: ${detalle}`)]
  if (dte.text === null) return fail('no se pudo aislar el texto del DTE en el envío')
  let checks: ReturnType<typeof verifyXmlSignatures>
  try {
    checks = verifyXmlSignatures(dte.text, { requireCertificateMatch: false })
  } catch (err) {
    return fail(`DTE ilegible por sí solo: ${err instanceof Error ? err.message : String(err)}`)
  }
  const [check, ...more] = checks
  if (check === undefined) return fail('sin firma')
  if (more.length > 0) return fail('más de una firma')
  if (check.uri !== `#${dte.fields.id}`) return fail(`la firma referencia "${check.uri}", no "#${dte.fields.id}"`)
  return check.isValid ? [] : fail(check.reason ?? 'firma inválida')
}

/**
 * The document on its own (docs/sii-protocol.md §3.2 "Verifying a TED"): FRMT over the flat DD with the DD's own RSAPK; the
 * CAF's FRMA with the authority key of its IDK (100, 300, 900 accepted); the DD's fields against the document
 * (RE, TD, F, FE, RR, MNT; RSR and IT1 as prefixes of RznSocRecep and the first NmbItem, compared trimmed, §3.1);
 * the CAF is the issuer's, for this type, and its range holds the folio. Empty when all pass.
 */
export function documentErrors(dte: DteEntry, authorityKeys: ReadonlyMap<number, KeyObject>): SiiError[] {
  const f = dte.fields
  const error = (seccion: string, codigo: number, descripcion: string, detalle: string): SiiError =>
    siiError(seccion, codigo, descripcion, `DTE ${f.id}: ${detalle}`)
  let ted: ReturnType<typeof readTed>
  try {
    ted = readTed(dte.text ?? '')
  } catch (err) {
    return [error('TED', 4, 'TED no encontrado o ilegible', err instanceof Error ? err.message : String(err))]
  }
  if (!frmtVerifies(ted.ddXml, ted.frmt, ted.caf.publicKey)) {
    return [error('TED', 1, 'Firma del TED (FRMT) no corresponde al CAF', 'FRMT no verifica sobre DD con la llave RSAPK del CAF')]
  }
  try {
    verifyCafSignature(ted.caf, authorityKeys)
  } catch (err) {
    return [error('TED', 2, 'CAF no autorizado por el SII', err instanceof Error ? err.message : String(err))]
  }
  const errors: SiiError[] = []
  const d = ted.data
  const mismatch = (field: string, inTed: string | number, inDoc: string | number): void => {
    errors.push(error('TED', 3, 'Dato del TED no coincide con el documento', `${field} ${inTed} en el TED, ${inDoc} en el documento`))
  }
  if (normalizeRut(d.rutEmisor) !== normalizeRut(f.rutEmisor)) mismatch('RE', d.rutEmisor, f.rutEmisor)
  if (d.tipoDte !== f.tipo) mismatch('TD', d.tipoDte, f.tipo)
  if (d.folio !== f.folio) mismatch('F', d.folio, f.folio)
  if (d.fechaEmision !== f.fechaEmision) mismatch('FE', d.fechaEmision, f.fechaEmision)
  if (normalizeRut(d.rutReceptor) !== normalizeRut(f.rutReceptor)) mismatch('RR', d.rutReceptor, f.rutReceptor)
  if (Number(d.montoTotal) !== Number(f.montoTotal) || f.montoTotal.trim() === '') mismatch('MNT', d.montoTotal, f.montoTotal)
  // Boletas may omit RznSocRecep; LibreDTE then writes RR as RSR (docs/sii-protocol.md §3.1): nothing to compare against.
  if (f.razonSocialReceptor !== null && !isPrefix(d.razonSocialReceptor, f.razonSocialReceptor)) mismatch('RSR', d.razonSocialReceptor, f.razonSocialReceptor)
  if (!isPrefix(d.item1, f.item1)) mismatch('IT1', d.item1, f.item1)
  if (ted.caf.rutEmisor !== normalizeRut(f.rutEmisor) || ted.caf.tipoDte !== f.tipo) {
    errors.push(error('CAF', 2, 'CAF de otro emisor o tipo', `CAF de ${ted.caf.rutEmisor} tipo ${ted.caf.tipoDte}`))
  }
  if (f.folio < ted.caf.folioDesde || f.folio > ted.caf.folioHasta) {
    errors.push(error('CAF', 1, 'Folio fuera del rango autorizado', `folio ${f.folio}, CAF ${ted.caf.folioDesde}..${ted.caf.folioHasta}`))
  }
  return errors
}

export interface DocumentVerdict {
  readonly fields: DocFields
  readonly estado: DocEstado
  readonly errors: readonly SiiError[]
}

/** What the SII keeps of a document it took, to tell a repeated document from another one on the same folio. */
export interface ReceivedCopy {
  readonly rutReceptor: string
  readonly fechaEmision: string
  readonly monto: string
}

/**
 * Each document's outcome (docs/sii-protocol.md §6.5 document codes; DESIGN §9 receptor rules). Synchronous, so the caller can
 * store the result in the same tick: two concurrent uploads of one folio cannot both be accepted.
 */
export function decideDocuments(
  read: ReadEnvelope,
  deps: {
    readonly authorityKeys: ReadonlyMap<number, KeyObject>
    /** The copy of this folio the SII accepted in an earlier envelope (DOK/RPR/RLV), or null. */
    readonly acceptedCopy: (rutEmisor: string, tipo: number, folio: number) => ReceivedCopy | null
  },
): DocumentVerdict[] {
  const seen = new Map<string, ReceivedCopy>()
  return read.dtes.map((dte) => {
    const f = dte.fields
    const rutEmisor = normalizeRut(f.rutEmisor) ?? f.rutEmisor
    const key = `${rutEmisor}|${f.tipo}|${f.folio}`
    const errors = documentErrors(dte, deps.authorityKeys)
    const inEnvelope = seen.get(key)
    const earlier = inEnvelope ?? (errors.length === 0 ? deps.acceptedCopy(rutEmisor, f.tipo, f.folio) : null)
    if (errors.length === 0 && earlier) errors.push(repeated(f, earlier, inEnvelope !== undefined))
    if (inEnvelope === undefined) seen.set(key, copyOf(f))
    if (errors.length > 0) return { fields: f, estado: 'RCH', errors }
    const receptor = normalizeRut(f.rutReceptor)
    if (receptor === RECEPTOR_RECHAZA) {
      return { fields: f, estado: 'RCH', errors: [siiError('RCV', 1, 'Documento rechazado (receptor de prueba 88888888-8)', `DTE ${f.id}`)] }
    }
    if (receptor === RECEPTOR_REPARO) {
      return { fields: f, estado: 'RPR', errors: [siiError('RCV', 2, 'Documento aceptado con reparos (receptor de prueba 77777777-7)', `DTE ${f.id}`, 0, 2)] }
    }
    return { fields: f, estado: 'DOK', errors: [] }
  })
}

function copyOf(f: DocFields): ReceivedCopy {
  return { rutReceptor: normalizeRut(f.rutReceptor) ?? f.rutReceptor, fechaEmision: f.fechaEmision, monto: f.montoTotal }
}

/**
 * A folio the SII already has (accepted earlier, or earlier in this envelope), with the SII's codes as its result
 * e-mails give them ([3P] certification reports, LibreDTE's help texts keyed on them): the same document again is
 * DTE-3-100 "DTE Repetido"; another document on that folio is DTE-3-101 "Folio para este Tipo de documento ya fue
 * recibido en el SII".
 */
function repeated(f: DocFields, earlier: ReceivedCopy, inEnvelope: boolean): SiiError {
  const mine = copyOf(f)
  const same = mine.rutReceptor === earlier.rutReceptor && mine.fechaEmision === earlier.fechaEmision && Number(mine.monto) === Number(earlier.monto)
  const where = inEnvelope ? 'ya viene en este envío' : 'ya fue recibido por el SII en un envío anterior'
  return same
    ? siiError('DTE', 100, 'DTE Repetido', `DTE ${f.id}: tipo ${f.tipo} folio ${f.folio} ${where}, con los mismos datos`)
    : siiError('DTE', 101, 'Folio para este Tipo de documento ya fue recibido en el SII', `DTE ${f.id}: tipo ${f.tipo} folio ${f.folio} ${where}, con otros datos`)
}

function frmtVerifies(ddXml: string, frmt: string, key: KeyObject): boolean {
  try {
    return verify('sha1', toLatin1Bytes(ddXml), key, Buffer.from(frmt, 'base64'))
  } catch {
    return false
  }
}

/** RSR/IT1 are the first 40 characters of the document's value, possibly trimmed (docs/sii-protocol.md §3.1). */
function isPrefix(inTed: string, inDocument: string): boolean {
  const cut = inTed.trim()
  return cut !== '' && inDocument.trimStart().startsWith(cut)
}

/**
 * The text of each `<DTE>` element as uploaded, in order, or null when the count found differs from the parsed one
 * (a `</DTE>` inside a comment, say): DTEs do not nest, so the first `</DTE>` after a start tag closes it.
 */
function dteTexts(text: string, expected: number): string[] | null {
  const found = [...text.matchAll(/<((?:[\w.-]+:)?)DTE(?=[\s>/])[\s\S]*?<\/\1DTE\s*>/g)].map((m) => m[0])
  return found.length === expected ? found : null
}

function fieldsOf(dte: Element): DocFields {
  const container = childElements(dte)[0]
  const encabezado = child(container, 'Encabezado')
  const idDoc = child(encabezado, 'IdDoc')
  const receptor = child(encabezado, 'Receptor')
  const razon = child(receptor, 'RznSocRecep')
  const detalle = container === undefined ? undefined : childElements(container).find((e) => e.localName === 'Detalle')
  return {
    id: container?.getAttribute('ID') ?? '',
    tipo: Number(leaf(idDoc, 'TipoDTE')),
    folio: Number(leaf(idDoc, 'Folio')),
    fechaEmision: leaf(idDoc, 'FchEmis'),
    rutEmisor: leaf(child(encabezado, 'Emisor'), 'RUTEmisor'),
    rutReceptor: leaf(receptor, 'RUTRecep'),
    razonSocialReceptor: razon === undefined ? null : textOf(razon),
    montoTotal: leaf(child(encabezado, 'Totales'), 'MntTotal'),
    item1: detalle === undefined ? '' : leaf(detalle, 'NmbItem'),
  }
}

function child(parent: Element | undefined, name: string): Element | undefined {
  return parent === undefined ? undefined : childElements(parent).find((e) => e.localName === name)
}

function leaf(parent: Element | undefined, name: string): string {
  const el = child(parent, name)
  return el === undefined ? '' : textOf(el).trim()
}

function refusal(stage: Refusal['stage'], message: string): Refusal {
  const status = ({ file: 7, 'envelope-signature': 8, sender: 1, company: 6 } as const)[stage]
  return { stage, status, message, errors: [message] }
}

/** `nivel` 3 rejects, 2 is a reparo (the boleta API's error shape, docs/sii-protocol.md §7.3). */
export function siiError(seccion: string, codigo: number, descripcion: string, detalle: string, linea = 0, nivel = 3): SiiError {
  return { seccion, linea, nivel, codigo, descripcion, detalle }
}

/** xmllint's `envio.xml:46: Schemas validity error : …` → 46. */
function lineOf(message: string): number {
  return Number(/^[^:]*:(\d+):/.exec(message)?.[1] ?? 0)
}
