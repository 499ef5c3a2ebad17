// EnvioDTE and EnvioBOLETA: the signed envelopes that carry already-signed DTEs to the SII (docs/sii-protocol.md §5).
// Each DTE goes in as text, byte for byte as it was signed and stored, so its own signature still verifies in place
// and standalone (docs/sii-protocol.md §4.3 items 2 and 6); the envelope signature covers the SetDTE, canonicalized once in the
// envelope's context (§4.3 item 3). Two ways to that canonical form, as for signDte (docs/decisions/signing.md
// "Envelope fast path"): DTEs in the narrow form signDte writes are canonicalized from their text (`./c14n.ts`), and
// the envelope is concatenated from the stored text; anything else makes the whole SetDTE take the reference path,
// one xmldom parse and one xml-crypto C14N. Either way linear in the number of DTEs plus one RSA signature
// (bench/envelope.ts).
import { createHash, sign } from 'node:crypto'
import { C14nCanonicalization, findAncestorNs } from 'xml-crypto'
import { isTipoDte, type TipoDte } from '../domain/emision'
import { normalizeRut } from '../domain/rut'
import { TIPOS, type Envelope } from '../domain/tipos'
import { canonicalDteInSetDte, canonicalizeElement, canonicalSignedInfo as canonicalSignedInfoFromText } from './c14n'
import { C14N, DSIG_NS, keyInfoContent, signedInfoXml, SII_NS, XSI_NS } from './dsig-profile'
import { childElements, parseXml, textOf, toLatin1Bytes } from './latin1'
import type { Signer } from '../domain/signer'

/**
 * `SetDTE/@ID`, the envelope Reference's target. The SII's own example uses it (docs/sii-protocol.md §5); Timbre's Documento IDs
 * are `F<folio>T<tipo>`, so it can never collide with one (an xs:ID must be unique in the file, §1.3).
 */
export const SET_DTE_ID = 'SetDoc'

export { SII_RUT } from '../domain/rut'

export interface Caratula {
  /** The issuer of every DTE in the envelope, canonical `12345678-K`. */
  readonly rutEmisor: string
  /** The signer's RUT (from the certificate): must equal the upload's `rutSender` (docs/sii-protocol.md §5). */
  readonly rutEnvia: string
  /** `SII_RUT` for an upload; the customer's RUT for intercambio. */
  readonly rutReceptor: string
  /** Date of the resolution that authorized the issuer, `YYYY-MM-DD` (certificación: the date the SII gave). */
  readonly fchResol: string
  /** Resolution number; 0 in certificación (docs/sii-protocol.md §5). */
  readonly nroResol: number
  /** `YYYY-MM-DDTHH:MM:SS`, America/Santiago local time, chosen by the caller (docs/sii-protocol.md §1.3). */
  readonly tmstFirmaEnv: string
}

export interface EnvioInput {
  /**
   * Signed DTEs exactly as stored: one `<DTE …>…</DTE>` each, optionally preceded by an XML declaration (dropped,
   * since a declaration cannot appear inside the envelope) and surrounded by whitespace (dropped).
   */
  readonly dtes: readonly string[]
  readonly caratula: Caratula
  readonly signer: Signer
}

interface EnvelopeKind {
  readonly root: Envelope
  /** The exported function's name, which starts every error message. */
  readonly builder: string
  readonly schema: string
  /** EnvioDTE_v10.xsd: DTE maxOccurs 2000; EnvioBOLETA_v11.xsd: 500 (docs/sii-protocol.md §5, test/fixtures/sii/README.md). */
  readonly maxDtes: number
}

const KINDS: Readonly<Record<Envelope, EnvelopeKind>> = {
  EnvioDTE: { root: 'EnvioDTE', builder: 'buildEnvioDte', schema: 'EnvioDTE_v10.xsd', maxDtes: 2000 },
  EnvioBOLETA: { root: 'EnvioBOLETA', builder: 'buildEnvioBoleta', schema: 'EnvioBOLETA_v11.xsd', maxDtes: 500 },
}


/** The signed EnvioDTE for DTEs of every type but boletas (docs/sii-protocol.md §1.1, §5). Throws on a boleta or bad input. */
export function buildEnvioDte(input: EnvioInput): string {
  return buildEnvelope(KINDS.EnvioDTE, input)
}

/** The signed EnvioBOLETA for boletas 39 and 41 (docs/sii-protocol.md §5, §7.2). Throws on any other type or bad input. */
export function buildEnvioBoleta(input: EnvioInput): string {
  return buildEnvelope(KINDS.EnvioBOLETA, input)
}

/** The envelope as the ISO-8859-1 bytes its declaration announces, for upload and storage (docs/sii-protocol.md §1.2). */
export function envelopeBytes(envelope: string): Uint8Array {
  return toLatin1Bytes(envelope)
}

/**
 * SHA-1 (base64) of the inclusive C14N of `SetDTE` in its envelope's context: the DigestValue of the envelope's
 * Reference, computed on the DOM path (`build*` reaches the same bytes by either path); exported so a test can reproduce
 * the SII example's vector (§4.3).
 */
export function setDteDigest(envelope: string): string {
  return sha1Base64(canonicalSetDteOf(parseXml(envelope)))
}

/**
 * `buildEnvioDte` or `buildEnvioBoleta` on the reference path alone (xmldom and xml-crypto for SetDTE and SignedInfo):
 * what the string path's output is compared with, byte for byte, in test/unit/xml/envelope-fast-path.test.ts.
 */
export function buildEnvelopeOnDom(root: Envelope, input: EnvioInput): string {
  return buildEnvelope(KINDS[root], input, 'dom')
}

/** SetDTE's canonical form by the string path, or null when it declines (`build*` then takes the DOM path). For tests. */
export function canonicalSetDteFromText(root: Envelope, input: EnvioInput): string | null {
  return canonicalSetFromText(prepareSet(KINDS[root], input), input.caratula.rutEmisor)?.join('\n') ?? null
}

interface PlacedDte {
  /** The `<DTE …>…</DTE>` text, verbatim. */
  readonly text: string
  readonly tipo: TipoDte
}

/** `text`: the string path wherever it is sure, else the DOM path; `dom`: the DOM path only (the reference, for tests). */
type C14nPath = 'text' | 'dom'

/** What both paths start from: the checked inputs and the envelope's text up to the Signature. */
interface PreparedSet {
  readonly kind: EnvelopeKind
  readonly placed: readonly PlacedDte[]
  readonly startTag: string
  readonly caratula: string
  /** `<SetDTE …>…</SetDTE>` exactly as it goes into the file: the stored DTE texts concatenated, nothing re-serialized. */
  readonly setDte: string
}

function buildEnvelope(kind: EnvelopeKind, input: EnvioInput, path: C14nPath = 'text'): string {
  const set = prepareSet(kind, input)
  const fromText = path === 'text' ? canonicalSetFromText(set, input.caratula.rutEmisor) : null
  const digest = fromText === null ? sha1Base64(canonicalSetFromDom(set, input.caratula.rutEmisor)) : sha1Base64OfLines(fromText)
  const signature = envelopeSignature(set.startTag, digest, input.signer, path)
  return `<?xml version="1.0" encoding="ISO-8859-1"?>\n${set.startTag}\n${set.setDte}${signature}</${kind.root}>\n`
}

function prepareSet(kind: EnvelopeKind, input: EnvioInput): PreparedSet {
  const where = kind.builder
  if (input.dtes.length === 0) throw new Error(`${where}: an envelope needs at least one DTE`)
  if (input.dtes.length > kind.maxDtes) throw new Error(`${where}: ${input.dtes.length} DTEs; ${kind.schema} allows at most ${kind.maxDtes}`)
  checkCaratula(where, input.caratula)
  const placed = input.dtes.map((dte, i) => placeDte(where, kind, dte, i))
  const caratula = caratulaXml(input.caratula, subtotals(placed))
  const setDte = `<SetDTE ID="${SET_DTE_ID}">\n${caratula}\n${placed.map((p) => p.text).join('\n')}\n</SetDTE>`
  return { kind, placed, startTag: rootStartTag(kind), caratula, setDte }
}

/**
 * The reference path: one xmldom parse of the unsigned envelope, the checks of `checkParsedSet` (which throw), and one
 * xml-crypto C14N of the whole SetDTE (the Signature goes after SetDTE, so it is not in the way).
 */
function canonicalSetFromDom(set: PreparedSet, rutEmisor: string): string {
  const doc = parseXml(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${set.startTag}\n${set.setDte}</${set.kind.root}>\n`)
  checkParsedSet(set.kind.builder, doc, set.placed, rutEmisor)
  return canonicalSetDteOf(doc)
}

/**
 * What `checkParsedSet` reads, read from the canonical form of a DTE's signed element (`canonicalDteInSetDte`'s
 * `container`): 1 its ID, 2 Encabezado/IdDoc/TipoDTE, 3 Encabezado/Emisor/RUTEmisor. The pattern only matches when
 * every element on the way is the first child of its parent (nothing, not even whitespace, before it; IdDoc is closed
 * by the first `</IdDoc>` because none is nested in it), so they are the elements `childNamed` finds, and when the
 * values hold no reference or element, so the text is what getAttribute and textOf return. A DTE written otherwise
 * (indented, say) does not match and the DOM path decides.
 */
const CONTAINER_FACTS =
  /^<(?:Documento|Liquidacion|Exportaciones) ID="([^"&]*)"><Encabezado><IdDoc><TipoDTE>(\d+)<\/TipoDTE>(?:(?!<\/?IdDoc[ >])[^])*<\/IdDoc><Emisor><RUTEmisor>([^<&]*)<\/RUTEmisor>/

/**
 * SetDTE's canonical form computed from the text, as the lines the text has (hashed one by one, not joined first: a
 * 14 MB copy the digest does not need): the apex with the root's two namespaces, as the DOM path renders it; the
 * Caratula, which Timbre wrote in the subset; each DTE as `canonicalDteInSetDte` gives it. Null, and the DOM path
 * decides, as soon as a DTE is outside the subset or a check of `checkParsedSet` is not proven to pass: an ID unique
 * in the file, the TipoDTE counted for the Caratula, the Caratula's RutEmisor.
 */
function canonicalSetFromText(set: PreparedSet, rutEmisor: string): readonly string[] | null {
  const caratula = canonicalizeElement(set.caratula, 0, '')
  if (caratula === null || caratula.end !== set.caratula.length) return null
  const parts = [`<SetDTE xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}" ID="${SET_DTE_ID}">\n${caratula.canonical}`]
  const ids = new Set([SET_DTE_ID])
  for (const p of set.placed) {
    const dte = canonicalDteInSetDte(p.text)
    const facts = dte === null ? null : CONTAINER_FACTS.exec(dte.container)
    if (dte === null || facts === null) return null
    const [, id = '', tipo, rut] = facts
    if (ids.has(id) || tipo !== String(p.tipo) || rut !== rutEmisor) return null
    ids.add(id)
    parts.push(dte.canonical)
  }
  parts.push('</SetDTE>')
  return parts
}

/** Root attributes exactly as the SII's example writes them (docs/sii-protocol.md §5), schemaLocation naming this kind's XSD. */
function rootStartTag(kind: EnvelopeKind): string {
  return `<${kind.root} xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}" xsi:schemaLocation="${SII_NS} ${kind.schema}" version="1.0">`
}

/**
 * Strips the XML declaration and surrounding whitespace, checks what is left is one `<DTE>` element of a type this
 * envelope carries, and reads its TipoDTE for the Caratula. The element text itself is never touched.
 */
function placeDte(where: string, kind: EnvelopeKind, dte: string, index: number): PlacedDte {
  const text = dte.replace(/^\s*(?:<\?xml\s[^>]*\?>)?\s*/, '').trimEnd()
  if (!/^<DTE[\s>]/.test(text) || !text.endsWith('</DTE>')) {
    throw new Error(`${where}: dtes[${index}] must be one <DTE> element (an XML declaration before it is allowed)`)
  }
  // The first TipoDTE of a DTE is IdDoc's: Encabezado/IdDoc come first in every container (DTE_v10.xsd, BOLETADefType).
  const tipo = Number(/<TipoDTE>\s*(\d+)\s*<\/TipoDTE>/.exec(text)?.[1])
  if (!isTipoDte(tipo)) throw new Error(`${where}: dtes[${index}] has no TipoDTE Timbre knows`)
  if (TIPOS[tipo].envelope !== kind.root) {
    // docs/sii-protocol.md §1.1: boletas (39, 41) go only in EnvioBOLETA, every other type only in EnvioDTE.
    throw new Error(`${where}: dtes[${index}] is a DTE ${tipo}, which belongs in ${TIPOS[tipo].envelope}, not ${kind.root}`)
  }
  return { text, tipo }
}

/** SubTotDTE: how many DTEs of each type, in ascending type order (docs/sii-protocol.md §5; the SII checks the counts). */
function subtotals(placed: readonly PlacedDte[]): ReadonlyMap<TipoDte, number> {
  const counts = new Map<TipoDte, number>()
  for (const p of placed) counts.set(p.tipo, (counts.get(p.tipo) ?? 0) + 1)
  return new Map([...counts].sort(([a], [b]) => a - b))
}

function caratulaXml(c: Caratula, counts: ReadonlyMap<TipoDte, number>): string {
  const subTot = [...counts].map(([tipo, n]) => `<SubTotDTE><TpoDTE>${tipo}</TpoDTE><NroDTE>${n}</NroDTE></SubTotDTE>`).join('')
  return (
    `<Caratula version="1.0"><RutEmisor>${c.rutEmisor}</RutEmisor><RutEnvia>${c.rutEnvia}</RutEnvia>` +
    `<RutReceptor>${c.rutReceptor}</RutReceptor><FchResol>${c.fchResol}</FchResol><NroResol>${c.nroResol}</NroResol>` +
    `<TmstFirmaEnv>${c.tmstFirmaEnv}</TmstFirmaEnv>${subTot}</Caratula>`
  )
}

/**
 * Caratula values are written unescaped, so each is checked against its XSD type first (SiiTypes_v10.xsd RUTType,
 * FechaType, NroResolType, FechaHoraType): a bad value is the caller's bug and must not reach the SII.
 */
function checkCaratula(where: string, c: Caratula): void {
  for (const field of ['rutEmisor', 'rutEnvia', 'rutReceptor'] as const) {
    if (normalizeRut(c[field]) !== c[field]) throw new RangeError(`${where}: caratula.${field} "${c[field]}" is not a valid RUT in the form 12345678-K`)
  }
  if (!isDateBetween(c.fchResol, /^\d{4}-\d{2}-\d{2}$/, 'T00:00:00')) {
    throw new RangeError(`${where}: caratula.fchResol "${c.fchResol}" is not a date YYYY-MM-DD between 2000 and 2050`)
  }
  if (!Number.isSafeInteger(c.nroResol) || c.nroResol < 0 || c.nroResol > 999_999) {
    throw new RangeError(`${where}: caratula.nroResol ${c.nroResol} is not an integer of at most 6 digits`)
  }
  if (!isDateBetween(c.tmstFirmaEnv, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/, '')) {
    throw new RangeError(`${where}: caratula.tmstFirmaEnv "${c.tmstFirmaEnv}" is not a local time YYYY-MM-DDTHH:MM:SS between 2000 and 2050`)
  }
}

/** Matches the pattern, is a real calendar date and time (no 2026-02-30), and lies in FechaType's 2000–2050. */
function isDateBetween(value: string, pattern: RegExp, timeSuffix: string): boolean {
  if (!pattern.test(value)) return false
  const iso = `${value}${timeSuffix}`
  const parsed = new Date(`${iso}Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === iso && iso >= '2000-01-01' && iso < '2051-01-01'
}

/**
 * Checks on the parsed envelope that each input was exactly one DTE in the SII namespace, signed, of the type the
 * Caratula counted, issued by the Caratula's RutEmisor, with a Documento ID unique in the file (xs:ID, docs/sii-protocol.md §1.3).
 * A handful of child look-ups per DTE: no canonicalization, no serialization.
 */
function checkParsedSet(where: string, doc: Document, placed: readonly PlacedDte[], rutEmisor: string): void {
  const setDte = childElements(doc.documentElement)[0]
  const dtes = setDte === undefined ? [] : childElements(setDte).slice(1)
  if (dtes.length !== placed.length) throw new Error(`${where}: ${placed.length} inputs gave ${dtes.length} DTE elements; each input must be exactly one <DTE>`)
  const ids = new Set([SET_DTE_ID])
  dtes.forEach((dte, i) => {
    const fail = (why: string): never => {
      throw new Error(`${where}: dtes[${i}] ${why}`)
    }
    if (dte.namespaceURI !== SII_NS) fail(`is in namespace "${dte.namespaceURI ?? ''}", not ${SII_NS}`)
    const [container, ...rest] = childElements(dte)
    const last = rest[rest.length - 1]
    if (last?.localName !== 'Signature' || last.namespaceURI !== DSIG_NS) fail('is not signed (no Signature after its document element)')
    const id = container?.getAttribute('ID') ?? ''
    if (ids.has(id)) fail(`has the ID "${id}", already used in this envelope`)
    ids.add(id)
    const encabezado = container === undefined ? undefined : childNamed(container, 'Encabezado')
    if (textAt(encabezado, 'IdDoc', 'TipoDTE') !== String(placed[i]?.tipo)) fail('has a TipoDTE other than the first <TipoDTE> of its text')
    if (textAt(encabezado, 'Emisor', 'RUTEmisor') !== rutEmisor) fail(`is not issued by the Caratula's RutEmisor ${rutEmisor}`)
  })
}

function childNamed(parent: Element, localName: string): Element | undefined {
  return childElements(parent).find((e) => e.localName === localName)
}

function textAt(encabezado: Element | undefined, group: string, leaf: string): string | undefined {
  const parent = encabezado === undefined ? undefined : childNamed(encabezado, group)
  const element = parent === undefined ? undefined : childNamed(parent, leaf)
  return element === undefined ? undefined : textOf(element).trim()
}

/**
 * Inclusive C14N 1.0 of the root's first child (SetDTE) with the namespaces it inherits from the root: its apex gets
 * `xmlns` and `xmlns:xsi`, the redundant declarations on each inner `<DTE>` drop out (docs/sii-protocol.md §4.3 item 3).
 */
function canonicalSetDteOf(doc: Document): string {
  const setDte = childElements(doc.documentElement)[0]
  if (setDte?.localName !== 'SetDTE') throw new Error('envelope: the root\'s first child is not SetDTE')
  return canonicalize(doc, setDte, '/*/*[1]')
}

/** C14N output is UTF-8 by definition (docs/sii-protocol.md §4.3 library notes), whatever the file's encoding. */
function sha1Base64(canonical: string): string {
  return createHash('sha1').update(canonical, 'utf8').digest('base64')
}

/** `sha1Base64(lines.join('\n'))` without building the joined string. */
function sha1Base64OfLines(lines: readonly string[]): string {
  const hash = createHash('sha1')
  lines.forEach((line, i) => {
    if (i > 0) hash.update('\n', 'utf8')
    hash.update(line, 'utf8')
  })
  return hash.digest('base64')
}

function canonicalize(doc: Document, node: Element, anchoredXpath: string): string {
  const ancestorNamespaces = findAncestorNs(doc, anchoredXpath)
  return new C14nCanonicalization().process(node, { ancestorNamespaces, defaultNsForPrefix: { ds: DSIG_NS } }).toString()
}

/**
 * The envelope's Signature, last child of the root (docs/sii-protocol.md §4.2), in the profile of §4.1. SignedInfo is
 * canonicalized under the real root start tag, so it inherits `xmlns:xsi` as every verifier sees it in place (§4.3).
 */
function envelopeSignature(rootStartTag: string, digest: string, signer: Signer, path: C14nPath): string {
  const signedInfo = signedInfoXml(`#${SET_DTE_ID}`, C14N, digest)
  // Under the root it inherits the same two namespaces as under a DTE (xmlns=xmldsig from Signature, xmlns:xsi), so
  // the string form signDte uses applies here unchanged.
  const fromText = path === 'text' ? canonicalSignedInfoFromText(signedInfo) : null
  const canonical = fromText ?? canonicalSignedInfo(rootStartTag, signedInfo)
  const signatureValue = sign('sha1', Buffer.from(canonical, 'utf8'), signer.privateKey)
  return (
    `<Signature xmlns="${DSIG_NS}">${signedInfo}<SignatureValue>${signatureValue.toString('base64')}</SignatureValue>` +
    `<KeyInfo>${keyInfoContent(signer)}</KeyInfo></Signature>`
  )
}

/** SignedInfo as it will sit: under `<Signature xmlns=xmldsig>` under the real root start tag (a few hundred bytes). */
function canonicalSignedInfo(rootStartTag: string, signedInfo: string): string {
  const rootName = /^<(\w+)/.exec(rootStartTag)?.[1] ?? ''
  const wrapper = parseXml(`${rootStartTag}<Signature xmlns="${DSIG_NS}">${signedInfo}</Signature></${rootName}>`)
  const signature = childElements(wrapper.documentElement)[0]
  const node = signature === undefined ? undefined : childElements(signature)[0]
  if (node === undefined) throw new Error('envelope: SignedInfo wrapper did not parse as expected')
  return canonicalize(wrapper, node, '/*/*[1]/*[1]')
}

