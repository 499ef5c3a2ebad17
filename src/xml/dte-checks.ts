// The checks of one DTE read out of an envelope someone else signed, shared by the SII's side (the simulator's
// reception of uploads) and a company's side (a supplier's EnvioDTE, DESIGN §13): its own XML signature, checked on its
// text alone (docs/sii-protocol.md §4.3), and its TED against its CAF and the CAF against the SII (§3.2 "Verifying a
// TED"). Each side words and codes the outcome its own way; the rules live here once. Never throws.
import { verify, type KeyObject } from 'node:crypto'
import { normalizeRut } from '../domain/rut'
import { verifyCafSignature } from './caf'
import { toLatin1Bytes } from './latin1'
import type { DocFields } from './read-envio'
import { verifyXmlSignatures } from './signature'
import { readTed } from './ted'

/**
 * What is wrong with the DTE's own signature, in Spanish, or null when it verifies. The SII verifies each DTE from its
 * own text, standalone (docs/sii-protocol.md §4.3): the SII's tool signed DTEs with no namespace, Timbre declares the
 * envelope's namespaces; both verify standalone. One Signature, covering the document element's ID `id`, verified
 * with its RSAKeyValue (the certificate is not required to match, §4.1).
 */
export function dteSignatureProblem(text: string | null, id: string): string | null {
  if (text === null) return 'no se pudo aislar el texto del DTE en el envío'
  let checks: ReturnType<typeof verifyXmlSignatures>
  try {
    checks = verifyXmlSignatures(text, { requireCertificateMatch: false })
  } catch (err) {
    return `DTE ilegible por sí solo: ${err instanceof Error ? err.message : String(err)}`
  }
  const [check, ...more] = checks
  if (check === undefined) return 'sin firma'
  if (more.length > 0) return 'más de una firma'
  if (check.uri !== `#${id}`) return `la firma referencia "${check.uri}", no "#${id}"`
  return check.isValid ? null : (check.reason ?? 'firma inválida')
}

/**
 * One finding about a DTE's stamp. `ilegible`: no TED, or one that cannot be read; `frmt`: FRMT does not verify over
 * the DD with the CAF's RSAPK; `caf_firma`: the CAF's FRMA does not verify with the authority key of its IDK (or the
 * IDK is unknown here); `dato`: a DD field disagrees with the document; `caf_emisor`: the CAF is another issuer's or
 * type's; `caf_rango`: the folio is outside the CAF's range.
 */
export interface StampProblem {
  readonly kind: 'ilegible' | 'frmt' | 'caf_firma' | 'dato' | 'caf_emisor' | 'caf_rango'
  /** In Spanish. */
  readonly detalle: string
  /** For `dato`: the DD element that disagrees (RE, TD, F, FE, RR, MNT, RSR, IT1). */
  readonly field?: string
}

/**
 * The document's stamp (docs/sii-protocol.md §3.2 "Verifying a TED"), on the DTE's text: FRMT over the flat DD with
 * the DD's own RSAPK; the CAF's FRMA with the authority key of its IDK; the DD's fields against the document (RE, TD,
 * F, FE, RR, MNT; RSR and IT1 as prefixes of RznSocRecep and the first NmbItem, compared trimmed, §3.1); the CAF is
 * the issuer's, for this type, and its range holds the folio. An unreadable TED or a bad FRMT stops there (the DD
 * itself cannot be trusted); every other finding is listed, a CAF the authority did not sign first. Empty when all pass.
 */
export function stampProblems(text: string, fields: DocFields, authorityKeys: ReadonlyMap<number, KeyObject>): StampProblem[] {
  const f = fields
  let ted: ReturnType<typeof readTed>
  try {
    ted = readTed(text)
  } catch (err) {
    return [{ kind: 'ilegible', detalle: err instanceof Error ? err.message : String(err) }]
  }
  if (!frmtVerifies(ted.ddXml, ted.frmt, ted.caf.publicKey)) {
    return [{ kind: 'frmt', detalle: 'FRMT no verifica sobre DD con la llave RSAPK del CAF' }]
  }
  const problems: StampProblem[] = []
  try {
    verifyCafSignature(ted.caf, authorityKeys)
  } catch (err) {
    problems.push({ kind: 'caf_firma', detalle: err instanceof Error ? err.message : String(err) })
  }
  const d = ted.data
  const mismatch = (field: string, inTed: string | number, inDoc: string | number): void => {
    problems.push({ kind: 'dato', field, detalle: `${field} ${inTed} en el TED, ${inDoc} en el documento` })
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
    problems.push({ kind: 'caf_emisor', detalle: `CAF de ${ted.caf.rutEmisor} tipo ${ted.caf.tipoDte}` })
  }
  if (f.folio < ted.caf.folioDesde || f.folio > ted.caf.folioHasta) {
    problems.push({ kind: 'caf_rango', detalle: `folio ${f.folio}, CAF ${ted.caf.folioDesde}..${ted.caf.folioHasta}` })
  }
  return problems
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
