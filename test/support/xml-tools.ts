// The referees of the XML: xmllint against the SII's XSDs and xmlsec1 for signatures. The SII's files live in the
// repository, byte for byte, under test/fixtures/sii (see its README): a clone alone runs every test.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TIPOS } from '../../src/domain/tipos'
import type { TipoDte } from '../../src/domain/emision'
import { adjustForLibxml2 } from '../../src/xml/xsd'

/** test/fixtures/sii: the SII's XSDs (schemas/), its signed example (examples/) and its CAF keys (sii-certs/). */
export const SII_FIXTURES = join(import.meta.dir, '../fixtures/sii')
export const SCHEMAS = join(SII_FIXTURES, 'schemas')
/** The SII's own signed EnvioDTE (factura 33, folio 60): raw bytes, ISO-8859-1 with CRLF. */
export const OFFICIAL_EXAMPLE_FILE = join(SII_FIXTURES, 'examples/F60T33-ejemplo-oficial-SII.xml')

let work: string | undefined
let seq = 0

/** The scratch folder is made on first use, so importing the constants above has no side effect. */
function tempFile(bytes: Uint8Array, ext = 'xml'): string {
  work ??= mkdtempSync(join(tmpdir(), 'timbre-xml-'))
  const file = join(work, `f${++seq}.${ext}`)
  writeFileSync(file, bytes)
  return file
}

/** A Signature of the profile's shape for the envelope level: the XSD checks shape, xmlsec1 checks the DTE's own. */
const DUMMY_SET_SIGNATURE =
  '<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>' +
  '<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>' +
  '<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>' +
  '<Reference URI="#SetDoc"><Transforms><Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/></Transforms>' +
  '<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><DigestValue>hlmQtu/AyjUjTDhM3852wvRCr8w=</DigestValue></Reference>' +
  '</SignedInfo><SignatureValue>AAAA</SignatureValue><KeyInfo><KeyValue><RSAKeyValue><Modulus>AAAA</Modulus><Exponent>AQAB</Exponent>' +
  '</RSAKeyValue></KeyValue><X509Data><X509Certificate>AAAA</X509Certificate></X509Data></KeyInfo></Signature>'

/** Boletas only validate inside an EnvioBOLETA (docs/sii-protocol.md §7.2): wrap the signed DTE's bytes verbatim in a minimal one. */
function boletaEnvelope(dte: Uint8Array, tipo: number): Uint8Array {
  const head =
    '<?xml version="1.0" encoding="ISO-8859-1"?><EnvioBOLETA xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">' +
    '<SetDTE ID="SetDoc"><Caratula version="1.0"><RutEmisor>76543210-3</RutEmisor><RutEnvia>7880442-4</RutEnvia><RutReceptor>60803000-K</RutReceptor>' +
    `<FchResol>2014-08-22</FchResol><NroResol>0</NroResol><TmstFirmaEnv>2026-01-01T00:00:00</TmstFirmaEnv><SubTotDTE><TpoDTE>${tipo}</TpoDTE><NroDTE>1</NroDTE></SubTotDTE></Caratula>`
  const body = Buffer.from(dte).toString('latin1').replace(/^<\?xml[^>]*\?>/, '')
  return Buffer.from(`${head}${body}</SetDTE>${DUMMY_SET_SIGNATURE}</EnvioBOLETA>`, 'latin1')
}

/** Schema errors of a stored DTE ([] when valid): DTE_v10.xsd, or EnvioBOLETA_v11.xsd for 39/41. */
export function schemaErrors(dte: Uint8Array, tipo: TipoDte): string[] {
  const isBoleta = TIPOS[tipo].envelope === 'EnvioBOLETA'
  const file = tempFile(isBoleta ? boletaEnvelope(dte, tipo) : dte)
  const xsd = join(SCHEMAS, isBoleta ? 'EnvioBOLETA_v11.xsd' : 'DTE_v10.xsd')
  const run = Bun.spawnSync(['xmllint', '--noout', '--nonet', '--schema', xsd, file], { stdout: 'pipe', stderr: 'pipe' })
  return run.exitCode === 0 ? [] : run.stderr.toString('latin1').split('\n').filter((l) => l.trim() !== '')
}

/** xmlsec1 verifies the standalone DTE's signature with the key in its KeyInfo. */
export function xmlsec1Verifies(dte: Uint8Array, tipo: TipoDte): boolean {
  const file = tempFile(dte)
  const run = Bun.spawnSync(['xmlsec1', '--verify', '--id-attr:ID', `http://www.sii.cl/SiiDte:${TIPOS[tipo].container}`, file], { stdout: 'pipe', stderr: 'pipe' })
  return run.exitCode === 0
}

let adjustedSchemas: string | undefined
/**
 * The SII's XSDs as libxml2 can compile them: LceSiiTypes_v10.xsd's 34-digit maxInclusive replaced the way Timbre does
 * in memory (src/xml/xsd.ts adjustForLibxml2), in a copy of the folder; the project's copies stay byte for byte.
 */
function compilableSchemas(): string {
  if (adjustedSchemas) return adjustedSchemas
  const dir = mkdtempSync(join(tmpdir(), 'timbre-xsd-'))
  for (const name of readdirSync(SCHEMAS).filter((f) => f.endsWith('.xsd')))
    writeFileSync(join(dir, name), adjustForLibxml2(name, new Uint8Array(readFileSync(join(SCHEMAS, name)))))
  return (adjustedSchemas = dir)
}

/** Schema errors of any SII document against the SII's XSDs, with the system's xmllint ([] when valid). */
export function xsdErrors(bytes: Uint8Array, xsdFile: string): string[] {
  const run = Bun.spawnSync(['xmllint', '--noout', '--nonet', '--schema', join(compilableSchemas(), xsdFile), tempFile(bytes)], { stdout: 'pipe', stderr: 'pipe' })
  return run.exitCode === 0 ? [] : run.stderr.toString('latin1').split('\n').filter((l) => l.trim() !== '')
}

/**
 * xmlsec1 verifies every signature of a document, in place, one run per Signature (xmlsec1 checks one per run); the
 * signed elements carry `ID` (`SetDTE`, `Documento`, `DocumentoConsumoFolios`…).
 */
export function xmlsec1VerifiesAll(bytes: Uint8Array, idElements: readonly string[]): boolean {
  const ids = idElements.flatMap((e) => ['--id-attr:ID', `http://www.sii.cl/SiiDte:${e}`])
  const file = tempFile(bytes)
  const count = Buffer.from(bytes).toString('latin1').match(/<Signature[\s>]/g)?.length ?? 0
  if (count === 0) return false
  for (let n = 1; n <= count; n++) {
    const run = Bun.spawnSync(['xmlsec1', '--verify', ...ids, '--node-xpath', `(//*[local-name()='Signature'])[${n}]`, file], { stdout: 'pipe', stderr: 'pipe' })
    if (run.exitCode !== 0) return false
  }
  return true
}
