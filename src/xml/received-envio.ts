// An EnvioDTE another company sent (by mail or uploaded by hand) and DESIGN §13's checks of it, each recorded, with
// the SII's receipt codes of RespuestaEnvioDTE_v10.xsd for the acuse de recibo. Pure apart from the XSD validation
// (async, in process) and the caller's duplicate look-up. Never throws on what is in the file: every failure is a
// check result (it only rethrows what `ctx.isDuplicate` throws).
//
// The envelope (EstadoRecepEnv), in this order, the first that applies:
// - 91 Archivo Ilegible: larger than 20 MB (MAX_XML_BYTES), not XML, root other than EnvioDTE in the SII namespace,
//   no SetDTE, more than the XSD's 2000 DTEs, or unreadable however it fails. No documents are listed.
// - 1 Error de Schema: not valid against EnvioDTE_v10.xsd (check `schema`).
// - 2 Error de Firma: the envelope's Signature over SetDTE does not verify (check `firma_envio`).
// - 3 RUT Receptor No Corresponde: Caratula RutReceptor is not the receiving company (check `receptor_envio`).
// - 0 Envio Recibido Conforme otherwise, even when some documents fail: the per-document codes say which.
// Every DTE of a readable envelope is listed, with all nine checks (CHECK_NAMES order): the envelope's three as they
// apply to it (its `schema` also fails when a value of the document cannot be held: a folio, type or amount that is
// not an exact integer, a date that is not one), then its own six: `firma_dte` its own signature, on its text cut out
// of the envelope, standalone (docs/sii-protocol.md §4.3); `ted` FRMT verifies with the CAF's RSAPK and the DD matches
// the document (RE, TD, F, FE, RR, MNT, RSR, IT1); `caf` FRMA verifies with the authority key of its IDK (an IDK not in
// `ctx.authorityKeys` fails), the CAF is the issuer's for this type, the folio within its range; `receptor` RUTRecep
// = the company; `emisor` RUTEmisor = Caratula RutEmisor = TED RE; `duplicado` the same issuer, type and folio was
// received before (`ctx.isDuplicate`) or earlier in this envelope.
// The document (EstadoRecepDTE) is the code of its first failing check in this order: schema 99, firma_envio 1,
// receptor_envio 3 (the envelope's failures first), then firma_dte 1, emisor 2, receptor 3, duplicado 4, ted 99,
// caf 99 (the specific codes before "Otros"); 0 when all pass. docs/decisions/intercambio.md "Receipt checks and codes".
import type { KeyObject } from 'node:crypto'
import {
  ESTADO_RECEP_DTE, ESTADO_RECEP_ENV, GLOSA_RECEP_DTE, GLOSA_RECEP_ENV,
  type CheckName, type CheckResult, type EstadoRecepDte, type EstadoRecepEnv,
} from '../domain/intercambio'
import { normalizeRut } from '../domain/rut'
import { verifyEnvelopeSignature } from './block-signature'
import { MAX_XML_BYTES } from './decode-xml'
import { dteSignatureProblem, stampProblems, type StampProblem } from './dte-checks'
import { exchangeKindOf } from './exchange-kind'
import { dateOrNull, readRut } from './exchange-values'
import { XMLSerializer } from '@xmldom/xmldom'
import { childElements, isLatin1, toLatin1Bytes } from './latin1'
import { childNamed, isUnreadable, leafText, readEnvio, type EnvioDteEntry, type ReadEnvio } from './read-envio'
import { validateSchema } from './xsd'

export interface ReceivedDocument {
  readonly tipoDte: number
  readonly folio: number
  /** FchEmis, `YYYY-MM-DD` (as written when it is not a date; then `schema` fails). */
  readonly fechaEmision: string
  /** Canonical `12345678-K` when valid; as written (cut to 20 characters) otherwise, and a check fails. */
  readonly rutEmisor: string
  /** RznSoc (RznSocEmisor in a boleta), cut to the XSD's 100 characters. */
  readonly razonSocialEmisor: string
  readonly rutReceptor: string
  readonly montoNeto: number | null
  readonly montoExento: number | null
  readonly iva: number | null
  /** 0 when it cannot be read (then `schema` fails). */
  readonly montoTotal: number
  /**
   * The standalone signed `<DTE>` cut from the envelope, behind an ISO-8859-1 XML declaration: it verifies alone with
   * xmlsec1 when `firma_dte` passed (docs/sii-protocol.md §4.3). Characters outside ISO-8859-1 (an envelope declared
   * UTF-8) are written as character references, which neither signature nor TED sees.
   */
  readonly xml: Uint8Array
  readonly checks: readonly CheckResult[]
  readonly estadoRecepDte: EstadoRecepDte
  readonly glosa: string
}

export interface ReceivedEnvio {
  readonly estadoRecepEnv: EstadoRecepEnv
  readonly glosa: string
  /** Envelope level: schema, firma_envio, receptor_envio (only `schema` when the file is unreadable, 91). */
  readonly checks: readonly CheckResult[]
  /** SetDTE/@ID. */
  readonly envioDteId: string | null
  /** The Caratula's RUTs, canonical; null when absent or not valid RUTs. */
  readonly rutEmisor: string | null
  readonly rutEnvia: string | null
  readonly rutReceptor: string | null
  /** The envelope signature's DigestValue as written (RecepcionEnvio/Digest), whether or not it verifies. */
  readonly digest: string | null
  /** Empty only when the envelope cannot be read at all (91). */
  readonly documentos: readonly ReceivedDocument[]
}

export interface ReceptionContext {
  /** The receiving company, canonical. */
  readonly rutEmpresa: string
  /** xml/authority-keys.ts authorityKeys({ allowSimulator }): IDK 900 only where simulated CAFs are accepted (DESIGN §8). */
  readonly authorityKeys: ReadonlyMap<number, KeyObject>
  /** Already received and not rechazado_tecnico. Called with a canonical RUT. */
  readonly isDuplicate: (rutEmisor: string, tipoDte: number, folio: number) => boolean
}

/** EnvioDTE_v10.xsd: DTE maxOccurs 2000. */
const MAX_DTES = 2000
/**
 * libxml2 refuses documents nested deeper than 256 elements ("Excessive depth in document", without XML_PARSE_HUGE),
 * so the SII cannot read one either; a real EnvioDTE is about 8 deep. Refusing them here also spares every later step
 * (each DTE is parsed twice more, and C14N and the TED reading recurse) the cost of absurd nesting.
 */
const MAX_DEPTH = 256

/** The checks of an envelope and what each costs its documents, in the order of precedence (see the top of this file). */
const ENVELOPE_CODES = [
  ['schema', ESTADO_RECEP_ENV.errorSchema, ESTADO_RECEP_DTE.otros],
  ['firma_envio', ESTADO_RECEP_ENV.errorFirma, ESTADO_RECEP_DTE.errorFirma],
  ['receptor_envio', ESTADO_RECEP_ENV.rutReceptorNoCorresponde, ESTADO_RECEP_DTE.errorRutReceptor],
] as const satisfies ReadonlyArray<readonly [CheckName, EstadoRecepEnv, EstadoRecepDte]>

/** A document's own checks by precedence: the specific codes (1 to 4) before 99 "Otros". */
const DOCUMENT_CODES = [
  ['firma_dte', ESTADO_RECEP_DTE.errorFirma],
  ['emisor', ESTADO_RECEP_DTE.errorRutEmisor],
  ['receptor', ESTADO_RECEP_DTE.errorRutReceptor],
  ['duplicado', ESTADO_RECEP_DTE.repetido],
  ['ted', ESTADO_RECEP_DTE.otros],
  ['caf', ESTADO_RECEP_DTE.otros],
] as const satisfies ReadonlyArray<readonly [CheckName, EstadoRecepDte]>

/** Runs DESIGN §13's checks on an EnvioDTE's bytes as received. */
export async function checkReceivedEnvio(bytes: Uint8Array, ctx: ReceptionContext): Promise<ReceivedEnvio> {
  try {
    return await checkEnvio(bytes, ctx)
  } catch (err) {
    if (err instanceof ContextError) throw err.cause
    return ilegible(`el envío no se pudo procesar: ${messageOf(err)}`)
  }
}

/** What `ctx.isDuplicate` threw: the caller's failure, not the file's, so it is rethrown instead of becoming a 91. */
class ContextError {
  constructor(readonly cause: unknown) {}
}

async function checkEnvio(bytes: Uint8Array, ctx: ReceptionContext): Promise<ReceivedEnvio> {
  if (bytes.byteLength > MAX_XML_BYTES) {
    return ilegible(`el archivo pesa ${(bytes.byteLength / 1024 / 1024).toFixed(1)} MB; se aceptan envíos de hasta ${MAX_XML_BYTES / 1024 / 1024} MB`)
  }
  if (exchangeKindOf(bytes) !== 'EnvioDTE') return ilegible('el archivo no es XML o su elemento raíz no es EnvioDTE')
  const read = readEnvio(bytes, 'EnvioDTE')
  if (isUnreadable(read)) return ilegible(read.problem)
  if (read.dtes.length > MAX_DTES) return ilegible(`el envío trae ${read.dtes.length} DTE; EnvioDTE_v10.xsd admite hasta ${MAX_DTES}`)
  if (depthExceeds(read.doc.documentElement, MAX_DEPTH)) return ilegible(`el XML anida más de ${MAX_DEPTH} niveles de elementos`)
  const schema = await validateSchema(bytes, 'EnvioDTE')
  const signature = verifyEnvelopeSignature(read.doc)
  const rutReceptor = normalizeRut(read.caratula.rutReceptor)
  const empresa = normalizeRut(ctx.rutEmpresa) ?? ctx.rutEmpresa
  const checks: CheckResult[] = [
    result('schema', schema.isValid, schemaDetalle(schema.errors)),
    result('firma_envio', signature.isValid, signature.reason),
    result('receptor_envio', rutReceptor === empresa, `la carátula dirige el envío a ${read.caratula.rutReceptor || '(sin RutReceptor)'}, no a ${empresa}`),
  ]
  const failed = ENVELOPE_CODES.find(([name]) => checks.some((c) => c.check === name && !c.ok))
  const estadoRecepEnv: EstadoRecepEnv = failed?.[1] ?? ESTADO_RECEP_ENV.conforme
  const seen = new Set<string>()
  return {
    estadoRecepEnv,
    glosa: glosaOf(GLOSA_RECEP_ENV[estadoRecepEnv], failed === undefined ? null : detalleOf(checks, failed[0])),
    checks,
    envioDteId: read.setDteId === '' ? null : read.setDteId,
    rutEmisor: normalizeRut(read.caratula.rutEmisor),
    rutEnvia: normalizeRut(read.caratula.rutEnvia),
    rutReceptor,
    digest: signature.digestValue === '' ? null : signature.digestValue,
    documentos: read.dtes.map((entry) => receivedDocument(entry, read, checks, empresa, ctx, seen)),
  }
}

/** One DTE with its nine checks; `seen` holds the issuer/type/folio keys met earlier in the envelope. */
function receivedDocument(
  entry: EnvioDteEntry, read: ReadEnvio, envelope: readonly CheckResult[], empresa: string, ctx: ReceptionContext, seen: Set<string>,
): ReceivedDocument {
  const values = documentValues(entry)
  const standalone = standaloneText(entry.text)
  const own = ownChecks(entry, standalone, read, empresa, ctx.authorityKeys)
  const duplicado = duplicateCheck(values, ctx, seen)
  const [envelopeSchema, ...envelopeRest] = envelope
  const schemaOk = (envelopeSchema?.ok ?? false) && values.problems.length === 0
  const schemaDetalle = envelopeSchema?.ok === false ? envelopeSchema.detalle : values.problems.join('; ')
  const checks: CheckResult[] = [result('schema', schemaOk, schemaDetalle), ...envelopeRest, ...own, duplicado]
  const { estadoRecepDte, deciding } = documentCode(checks)
  return {
    tipoDte: values.tipoDte,
    folio: values.folio,
    fechaEmision: values.fechaEmision,
    rutEmisor: values.rutEmisor,
    razonSocialEmisor: values.razonSocialEmisor,
    rutReceptor: values.rutReceptor,
    montoNeto: values.montoNeto,
    montoExento: values.montoExento,
    iva: values.iva,
    montoTotal: values.montoTotal,
    xml: standalone === null ? serializedFallback(entry.element) : toLatin1Bytes(standalone),
    checks,
    estadoRecepDte,
    glosa: glosaOf(GLOSA_RECEP_DTE[estadoRecepDte], deciding?.detalle ?? null),
  }
}

/** The code of the first failing check, envelope first, then the document's by precedence (see the top of this file). */
function documentCode(checks: readonly CheckResult[]): { readonly estadoRecepDte: EstadoRecepDte; readonly deciding: CheckResult | null } {
  const failing = (name: CheckName): CheckResult | undefined => checks.find((c) => c.check === name && !c.ok)
  const order: ReadonlyArray<readonly [CheckName, EstadoRecepDte]> = [...ENVELOPE_CODES.map(([name, , code]) => [name, code] as const), ...DOCUMENT_CODES]
  for (const [name, code] of order) {
    const deciding = failing(name)
    if (deciding !== undefined) return { estadoRecepDte: code, deciding }
  }
  return { estadoRecepDte: ESTADO_RECEP_DTE.ok, deciding: null }
}

/** firma_dte, ted, caf, receptor, emisor: the document's own checks but duplicates, in CHECK_NAMES order. */
function ownChecks(entry: EnvioDteEntry, standalone: string | null, read: ReadEnvio, empresa: string, keys: ReadonlyMap<number, KeyObject>): CheckResult[] {
  const f = entry.fields
  const firma = guarded(() => dteSignatureProblem(standalone, f.id))
  const stamp = guarded(() => stampProblems(standalone ?? '', f, keys))
  const problems: readonly StampProblem[] = typeof stamp === 'string' ? [{ kind: 'ilegible', detalle: stamp }] : stamp
  const tedProblems = problems.filter((p) => p.kind === 'ilegible' || p.kind === 'frmt' || p.kind === 'dato')
  const unverified = problems.find((p) => p.kind === 'ilegible' || p.kind === 'frmt')
  const cafProblems = problems.filter((p) => p.kind === 'caf_firma' || p.kind === 'caf_emisor' || p.kind === 'caf_rango')
  const emisor = normalizeRut(f.rutEmisor)
  const caratulaEmisor = normalizeRut(read.caratula.rutEmisor)
  // The TED's RE only once its FRMT verified (stampProblems compares the DD only then); a bad TED is `ted`'s to report.
  const teRe = problems.find((p) => p.kind === 'dato' && p.field === 'RE')
  const emisorProblem =
    emisor === null ? `RUTEmisor "${cut(f.rutEmisor)}" no es un RUT válido`
    : emisor !== caratulaEmisor ? `RUTEmisor ${emisor} del DTE, ${read.caratula.rutEmisor || '(sin RutEmisor)'} en la carátula`
    : teRe !== undefined ? teRe.detalle
    : null
  const receptor = normalizeRut(f.rutReceptor)
  return [
    result('firma_dte', firma === null, firma ?? ''),
    result('ted', tedProblems.length === 0, tedProblems.map((p) => tedDetalle(p)).join('; ')),
    result('caf', unverified === undefined && cafProblems.length === 0,
      unverified !== undefined ? 'no verificado: el TED no es válido' : cafProblems.map((p) => p.detalle).join('; ')),
    result('receptor', receptor === empresa, `RUTRecep ${cut(f.rutReceptor) || '(vacío)'} del DTE no es ${empresa}`),
    result('emisor', emisorProblem === null, emisorProblem ?? ''),
  ]
}

function tedDetalle(p: StampProblem): string {
  if (p.kind === 'ilegible') return `TED no encontrado o ilegible: ${p.detalle}`
  return p.detalle
}

/** Same issuer, type and folio as a document received before, or earlier in this envelope (then the later ones). */
function duplicateCheck(values: DocumentValues, ctx: ReceptionContext, seen: Set<string>): CheckResult {
  const rut = normalizeRut(values.rutEmisor)
  if (rut === null || values.tipoDte <= 0 || values.folio <= 0) return result('duplicado', true, '')
  const key = `${rut}|${values.tipoDte}|${values.folio}`
  const what = `tipo ${values.tipoDte} folio ${values.folio} de ${rut}`
  if (seen.has(key)) return result('duplicado', false, `${what} ya viene antes en este envío`)
  seen.add(key)
  let before: boolean
  try {
    before = ctx.isDuplicate(rut, values.tipoDte, values.folio)
  } catch (err) {
    throw new ContextError(err)
  }
  return result('duplicado', !before, `${what} ya fue recibido`)
}

interface DocumentValues {
  readonly tipoDte: number
  readonly folio: number
  readonly fechaEmision: string
  readonly rutEmisor: string
  readonly razonSocialEmisor: string
  readonly rutReceptor: string
  readonly montoNeto: number | null
  readonly montoExento: number | null
  readonly iva: number | null
  readonly montoTotal: number
  /** What cannot be held as Timbre holds it, in Spanish: the document's `schema` check fails with these. */
  readonly problems: readonly string[]
}

/** RznSocType: 100 characters (DTE_v10.xsd Emisor/RznSoc). */
const MAX_RAZON_SOCIAL = 100

/** The record's values, each checked: a number must be an exact integer (amounts: safe integers), a date a date. */
function documentValues(entry: EnvioDteEntry): DocumentValues {
  const problems: string[] = []
  const f = entry.fields
  // Documento, Liquidacion or Exportaciones: the first child of <DTE> (DTE_v10.xsd), as read-envio.ts reads it.
  const encabezado = childNamed(childElements(entry.element)[0], 'Encabezado')
  const emisor = childNamed(encabezado, 'Emisor')
  const totales = childNamed(encabezado, 'Totales')
  const integer = (text: string, name: string, maxDigits: number): number => {
    if (new RegExp(`^\\d{1,${maxDigits}}$`).test(text) && Number(text) > 0) return Number(text)
    problems.push(`${name} "${cut(text)}" no es un número entero positivo de hasta ${maxDigits} dígitos`)
    return 0
  }
  const amount = (name: string, required: boolean): number | null => {
    const text = leafText(totales, name)
    if (text === '' && !required) return null
    const value = /^-?\d{1,18}(\.\d{1,10})?$/.test(text) ? Number(text) : Number.NaN
    if (Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER) return value
    problems.push(`${name} "${cut(text)}" no es un monto que se pueda registrar`)
    return required ? 0 : null
  }
  const fecha = dateOrNull(f.fechaEmision)
  if (fecha === null) problems.push(`FchEmis "${cut(f.fechaEmision)}" no es una fecha AAAA-MM-DD`)
  return {
    tipoDte: integer(leafOf(encabezado, 'IdDoc', 'TipoDTE'), 'TipoDTE', 3),
    folio: integer(leafOf(encabezado, 'IdDoc', 'Folio'), 'Folio', 10),
    fechaEmision: fecha ?? cut(f.fechaEmision, 10),
    rutEmisor: readRut(f.rutEmisor),
    razonSocialEmisor: (leafText(emisor, 'RznSoc') || leafText(emisor, 'RznSocEmisor')).slice(0, MAX_RAZON_SOCIAL),
    rutReceptor: readRut(f.rutReceptor),
    montoNeto: amount('MntNeto', false),
    montoExento: amount('MntExe', false),
    iva: amount('IVA', false),
    montoTotal: amount('MntTotal', true) ?? 0,
    problems,
  }
}

function leafOf(encabezado: Element | undefined, group: string, name: string): string {
  return leafText(childNamed(encabezado, group), name)
}

/**
 * The DTE as a file of its own: the ISO-8859-1 declaration, then its text exactly as it sat in the envelope. An
 * envelope declared UTF-8 may hold characters ISO-8859-1 lacks: they become character references, which parse back to
 * the same characters, so neither the signature (over the canonical form) nor the TED (over the parsed values) sees
 * the difference; the signature check runs on this very text. Null when the text could not be cut out.
 */
function standaloneText(text: string | null): string | null {
  if (text === null) return null
  const latin1 = isLatin1(text) ? text : text.replace(/[^\u0000-\u00ff]/gu, (c) => `&#x${(c.codePointAt(0) ?? 0x3f).toString(16)};`)
  return `<?xml version="1.0" encoding="ISO-8859-1"?>\n${latin1}`
}

/** When the DTE's text could not be cut out (its signature then fails), the element as the parser read it: a record of what came. */
function serializedFallback(element: Element): Uint8Array {
  const text = guarded(() => new XMLSerializer().serializeToString(element))
  return toLatin1Bytes(standaloneText(typeof text === 'string' ? text : '') ?? '')
}

/** True when some element lies more than `max` levels below the root. Iterative: no recursion to overflow. */
function depthExceeds(root: Element, max: number): boolean {
  let depth = 0
  let node: Node | null = root
  while (node !== null) {
    if (node.firstChild !== null) {
      node = node.firstChild
      if (++depth > max) return true
      continue
    }
    while (node !== null && node !== root && node.nextSibling === null) {
      node = node.parentNode
      depth--
    }
    node = node === null || node === root ? null : node.nextSibling
  }
  return false
}

/** The value, or the thrown error's message (a stack overflow on absurd nesting, say) as a string. */
function guarded<T>(run: () => T): T | string {
  try {
    return run()
  } catch (err) {
    return messageOf(err)
  }
}

function ilegible(detalle: string): ReceivedEnvio {
  return {
    estadoRecepEnv: ESTADO_RECEP_ENV.archivoIlegible,
    glosa: glosaOf(GLOSA_RECEP_ENV[ESTADO_RECEP_ENV.archivoIlegible], detalle),
    checks: [result('schema', false, detalle)],
    envioDteId: null,
    rutEmisor: null,
    rutEnvia: null,
    rutReceptor: null,
    digest: null,
    documentos: [],
  }
}

function result(check: CheckName, ok: boolean, detalle: string): CheckResult {
  return { check, ok, detalle: ok ? '' : detalle }
}

function detalleOf(checks: readonly CheckResult[], name: CheckName): string | null {
  return checks.find((c) => c.check === name)?.detalle ?? null
}

/** The XSD's text for the code, then what was found: `Envio Rechazado - Error de Firma: la SignatureValue no verifica …`. */
function glosaOf(glosa: string, detalle: string | null): string {
  return detalle === null || detalle === '' ? glosa : `${glosa}: ${detalle}`
}

/** The first libxml2 messages, without the file name, short enough for a glosa and a record. */
function schemaDetalle(errors: readonly string[]): string {
  const lines = errors.slice(0, 3).map((e) => e.replace(/^[^:]*:\d+:\s*/, '').trim())
  return cut(lines.join('; ') || 'el envío no cumple EnvioDTE_v10.xsd', 500)
}

function cut(text: string, max = 40): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
