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
import type { KeyObject } from 'node:crypto'
import { normalizeRut } from '../../domain/rut'
import { verifyEnvelopeSignature } from '../../xml/block-signature'
import { dteSignatureProblem, stampProblems, type StampProblem } from '../../xml/dte-checks'
import { SII_RUT } from '../../xml/envelope'
import { childElements } from '../../xml/latin1'
import { isUnreadable, leafText, readEnvio, type DocFields, type EnvioDteEntry, type ReadEnvio } from '../../xml/read-envio'
import { validateSchema, type EnvelopeRoot } from '../../xml/xsd'
import { casoKey, type DocEstado, type SetCasoFound, type SiiError, type StoredRejection } from './store'
import { certificateOf } from './xmldsig'


/** Receptor RUTs that let integrators reach every outcome (DESIGN §9). 66666666-6 is accepted like any RUT. */
export const RECEPTOR_RECHAZA = '88888888-8'
export const RECEPTOR_REPARO = '77777777-7'

/** One DTE of the envelope (xml/read-envio.ts reads envelopes for the simulator and for reception alike). */
export type DteEntry = EnvioDteEntry
export type ReadEnvelope = ReadEnvio

/** An upload-time refusal; DTEUpload answers its STATUS, the boleta REST envío turns it into an envelope rejection. */
export interface Refusal {
  readonly stage: 'file' | 'envelope-signature' | 'sender' | 'company'
  readonly status: 7 | 8 | 1 | 6
  readonly message: string
  readonly errors: readonly string[]
}

/** Parses the file and reads the Caratula and the DTEs; a refusal when it is not the envelope `expected`. */
export function readEnvelope(bytes: Uint8Array, expected: EnvelopeRoot): ReadEnvelope | Refusal {
  const read = readEnvio(bytes, expected)
  return isUnreadable(read) ? refusal('file', read.problem) : read
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
  const schema = await validateSchema(bytes, read.root)
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
 * The SII verifies each DTE from its own text, standalone (docs/sii-protocol.md §4.3; the rule: xml/dte-checks.ts
 * dteSignatureProblem), and answers FRM-2 when it fails.
 */
export function dteSignatureErrors(dte: DteEntry): SiiError[] {
  const problem = dteSignatureProblem(dte.text, dte.fields.id)
  return problem === null ? [] : [siiError('FRM', 2, 'Firma del DTE inválida', `DTE ${dte.fields.id}: ${problem}`)]
}

/**
 * The document on its own (docs/sii-protocol.md §3.2 "Verifying a TED"; the rules: xml/dte-checks.ts stampProblems),
 * with the authority keys the simulator accepts (100, 300, 900), each finding as the simulator codes it. Empty when all pass.
 */
export function documentErrors(dte: DteEntry, authorityKeys: ReadonlyMap<number, KeyObject>): SiiError[] {
  const problems = stampProblems(dte.text ?? '', dte.fields, authorityKeys)
  // A CAF the SII did not authorize is the one reason given (TED-2): nothing else about the stamp matters then.
  const unauthorized = problems.filter((p) => p.kind === 'caf_firma')
  return (unauthorized.length > 0 ? unauthorized : problems).map((p) => {
    const [seccion, codigo, descripcion] = STAMP_CODES[p.kind]
    return siiError(seccion, codigo, descripcion, `DTE ${dte.fields.id}: ${p.detalle}`)
  })
}

/** The simulator's section, code and text of each stamp finding (docs/decisions/simulator.md). */
const STAMP_CODES: Readonly<Record<StampProblem['kind'], readonly [string, number, string]>> = {
  ilegible: ['TED', 4, 'TED no encontrado o ilegible'],
  frmt: ['TED', 1, 'Firma del TED (FRMT) no corresponde al CAF'],
  caf_firma: ['TED', 2, 'CAF no autorizado por el SII'],
  dato: ['TED', 3, 'Dato del TED no coincide con el documento'],
  caf_emisor: ['CAF', 2, 'CAF de otro emisor o tipo'],
  caf_rango: ['CAF', 1, 'Folio fuera del rango autorizado'],
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
 * Each document's outcome (docs/sii-protocol.md §6.5 document codes; DESIGN §9 receptor rules; DESIGN §15 the checks of a
 * set envío). Synchronous, so the caller can store the result in the same tick: two concurrent uploads of one folio
 * cannot both be accepted.
 */
export function decideDocuments(
  read: ReadEnvelope,
  deps: {
    readonly authorityKeys: ReadonlyMap<number, KeyObject>
    /** The copy of this folio the SII accepted in an earlier envelope (DOK/RPR/RLV), or null. */
    readonly acceptedCopy: (rutEmisor: string, tipo: number, folio: number) => ReceivedCopy | null
    /** A case of a set of tests given to the company (`casoKey`), or null (store.ts findSetCaso). */
    readonly findSetCaso: (rutEmisor: string, caso: string) => SetCasoFound | null
  },
): DocumentVerdict[] {
  const seen = new Map<string, ReceivedCopy>()
  const empresa = normalizeRut(read.caratula.rutEmisor) ?? read.caratula.rutEmisor
  return read.dtes.map((dte) => {
    const f = dte.fields
    const rutEmisor = normalizeRut(f.rutEmisor) ?? f.rutEmisor
    const key = `${rutEmisor}|${f.tipo}|${f.folio}`
    const errors = documentErrors(dte, deps.authorityKeys)
    const inEnvelope = seen.get(key)
    const earlier = inEnvelope ?? (errors.length === 0 ? deps.acceptedCopy(rutEmisor, f.tipo, f.folio) : null)
    if (errors.length === 0 && earlier) errors.push(repeated(f, earlier, inEnvelope !== undefined))
    if (inEnvelope === undefined) seen.set(key, copyOf(f))
    // Boletas mark their set in CodRef, not TpoDocRef (EnvioBOLETA_v11.xsd): only an EnvioDTE's documents are set documents here.
    const setFindings = read.root === 'EnvioDTE' ? setCaseErrors(dte, empresa, deps.findSetCaso) : []
    errors.push(...setFindings.filter((e) => e.nivel === 3))
    if (errors.length > 0) return { fields: f, estado: 'RCH', errors }
    const receptor = normalizeRut(f.rutReceptor)
    if (receptor === RECEPTOR_RECHAZA) {
      return { fields: f, estado: 'RCH', errors: [siiError('RCV', 1, 'Documento rechazado (receptor de prueba 88888888-8)', `DTE ${f.id}`)] }
    }
    const reparos = setFindings.filter((e) => e.nivel !== 3)
    if (receptor === RECEPTOR_REPARO) {
      reparos.push(siiError('RCV', 2, 'Documento aceptado con reparos (receptor de prueba 77777777-7)', `DTE ${f.id}`, 0, 2))
    }
    return reparos.length > 0 ? { fields: f, estado: 'RPR', errors: reparos } : { fields: f, estado: 'DOK', errors: [] }
  })
}

/** `RazonRef` of a set document's first reference: `CASO <n>-<k>` (research §1.2 fact 1), spaces as anyone writes them. */
const RAZON_SET = /^CASO\s+(\d+)\s*-\s*(\d+)$/i

/**
 * The SII's checks of a set document (DESIGN §15 "Simulator"; docs/decisions/simulator.md "The set of tests"): a DTE
 * whose first reference has TpoDocRef `SET` must name, in RazonRef, a case of a set given to the envelope's company,
 * with the case's type. A set envío must come "sin rechazos ni reparos" (research §1.2), so a document the set does not
 * account for is rejected: no such case (SET-3-2), another type (SET-3-3), no case named at all (SET-3-1). A case of a
 * set the company was given before its latest set of that name is a reparo (SET-2-4): the document is valid, but the
 * SII evaluates only the last set downloaded. Documents without a SET first reference: no finding.
 */
export function setCaseErrors(dte: DteEntry, rutEmisor: string, findSetCaso: (rutEmisor: string, caso: string) => SetCasoFound | null): SiiError[] {
  const ref = firstReferencia(dte)
  if (ref === null || ref.tpoDocRef !== 'SET') return []
  const { id, tipo } = dte.fields
  const m = RAZON_SET.exec(ref.razonRef)
  if (m === null) {
    return [siiError('SET', 1, 'Referencia SET no indica un caso del set de pruebas', `DTE ${id}: RazonRef «${ref.razonRef}», se espera «CASO <n>-<k>»`)]
  }
  const caso = casoKey(m[1]!, m[2]!)
  const found = findSetCaso(rutEmisor, caso)
  if (found === null) {
    return [siiError('SET', 2, 'Caso no corresponde a un set de pruebas del contribuyente', `DTE ${id}: CASO ${caso} no es de un set de pruebas entregado a ${rutEmisor}`)]
  }
  if (found.tipo !== tipo) {
    return [siiError('SET', 3, 'Tipo de documento no corresponde al caso', `DTE ${id}: el CASO ${caso} (SET ${found.set_nombre}) es de tipo ${found.tipo}, el documento es de tipo ${tipo}`)]
  }
  if (found.numero_atencion !== found.numero_atencion_vigente) {
    return [siiError('SET', 4, 'Caso de un set de pruebas anterior', `DTE ${id}: el CASO ${caso} es del SET ${found.set_nombre} N° ${found.numero_atencion}; el SII evalúa el último set entregado, N° ${found.numero_atencion_vigente}`, 0, 2)]
  }
  return []
}

/** TpoDocRef and RazonRef of the document's first Referencia (DTE_v10.xsd: after Detalle, in NroLinRef order), or null. */
function firstReferencia(dte: DteEntry): { readonly tpoDocRef: string; readonly razonRef: string } | null {
  const container = childElements(dte.element)[0]
  const first = container === undefined ? undefined : childElements(container).find((e) => e.localName === 'Referencia')
  return first === undefined ? null : { tpoDocRef: leafText(first, 'TpoDocRef'), razonRef: leafText(first, 'RazonRef') }
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
