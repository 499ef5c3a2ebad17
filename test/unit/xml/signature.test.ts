import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignedXml } from 'xml-crypto'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../src/xml/latin1'
import { signDte, verifyXmlSignatures } from '../../../src/xml/signature'
import { buildTed, verifyTed } from '../../../src/xml/ted'
import { makeCertificate, makeTestCaf, testCa } from '../../support/pki'

const SHARED = join(import.meta.dir, '../../../../shared/sii')
const SCHEMAS = join(SHARED, 'schemas')
const OFFICIAL_EXAMPLE = fromLatin1Bytes(readFileSync(join(SHARED, 'examples/F60T33-ejemplo-oficial-SII.xml')))
const DIR = mkdtempSync(join(tmpdir(), 'timbre-sig-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

const { caf } = makeTestCaf()
const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const SII_ID_ATTR = ['--id-attr:ID', 'http://www.sii.cl/SiiDte:Documento']

/** A schema-valid DTE 33 (DTE_v10.xsd element order), stamped, unsigned; `lines` Detalle lines. */
function dte33(lines = 1, folio = 7): string {
  const detalle = Array.from({ length: lines }, (_, i) =>
    `<Detalle><NroLinDet>${i + 1}</NroLinDet><NmbItem>Café molido Ñuble &amp; "Sur" línea ${i + 1}</NmbItem>` +
      `<DscItem>Bolsa de 1 kg, tueste medio, origen Colombia</DscItem><QtyItem>1</QtyItem><PrcItem>1000</PrcItem><MontoItem>1000</MontoItem></Detalle>`,
  ).join('\n')
  const neto = 1000 * lines
  const iva = Math.round(neto * 0.19)
  const ted = buildTed({
    rutEmisor: '76543210-3', tipoDte: 33, folio, fechaEmision: '2026-01-10', rutReceptor: '77777777-7',
    razonSocialReceptor: 'Ñandú & "Cía" <Ltda>', montoTotal: neto + iva, item1: 'Café molido Ñuble & "Sur" línea 1', timestamp: '2026-01-10T10:11:12',
  }, caf)
  return `<?xml version="1.0" encoding="ISO-8859-1"?>
<DTE version="1.0"><Documento ID="F${folio}T33"><Encabezado><IdDoc><TipoDTE>33</TipoDTE><Folio>${folio}</Folio><FchEmis>2026-01-10</FchEmis></IdDoc>` +
    '<Emisor><RUTEmisor>76543210-3</RUTEmisor><RznSoc>Comercializadora Ñandú Limitada</RznSoc><GiroEmis>Venta de café</GiroEmis><Acteco>620100</Acteco><DirOrigen>Av. Irarrázaval 1234</DirOrigen><CmnaOrigen>Ñuñoa</CmnaOrigen></Emisor>' +
    '<Receptor><RUTRecep>77777777-7</RUTRecep><RznSocRecep>Ñandú &amp; &quot;Cía&quot; &lt;Ltda&gt;</RznSocRecep><GiroRecep>Comercio</GiroRecep><DirRecep>Calle 1</DirRecep><CmnaRecep>Santiago</CmnaRecep></Receptor>' +
    `<Totales><MntNeto>${neto}</MntNeto><TasaIVA>19</TasaIVA><IVA>${iva}</IVA><MntTotal>${neto + iva}</MntTotal></Totales></Encabezado>\n${detalle}\n${ted}<TmstFirma>2026-01-10T10:11:12</TmstFirma></Documento></DTE>\n`
}

function envioDte(signedDte: string): string {
  return `<?xml version="1.0" encoding="ISO-8859-1"?>
<EnvioDTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.sii.cl/SiiDte EnvioDTE_v10.xsd" version="1.0">
<SetDTE ID="SetDoc"><Caratula version="1.0"><RutEmisor>76543210-3</RutEmisor><RutEnvia>7880442-4</RutEnvia><RutReceptor>60803000-K</RutReceptor><FchResol>2026-01-01</FchResol><NroResol>0</NroResol><TmstFirmaEnv>2026-01-10T10:11:13</TmstFirmaEnv><SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>1</NroDTE></SubTotDTE></Caratula>
${signedDte.replace(/^<\?xml[^>]*\?>\s*/, '')}</SetDTE></EnvioDTE>
`
}

let fileCount = 0
/** Writes the XML as ISO-8859-1 bytes, as Timbre stores and uploads it. */
function writeLatin1(xml: string): string {
  const path = join(DIR, `doc-${++fileCount}.xml`)
  writeFileSync(path, toLatin1Bytes(xml))
  return path
}

function xmlsec1(path: string, extra: readonly string[] = []): { ok: boolean; output: string } {
  const run = spawnSync('xmlsec1', ['--verify', ...SII_ID_ATTR, ...extra, path], { encoding: 'utf8' })
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
}

function xmllint(path: string, xsd: string): { ok: boolean; output: string } {
  const run = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, xsd), path], { encoding: 'utf8' })
  return { ok: run.status === 0, output: run.stderr }
}

const FIRST_SIGNATURE = ['--node-xpath', "(//*[local-name()='Signature'])[1]"]

describe('signDte', () => {
  const unsigned = dte33(3)
  const signed = signDte(unsigned, identity.signer)

  test('xmlsec1 verifies the standalone DTE, and it validates against DTE_v10.xsd', () => {
    const path = writeLatin1(signed)
    const check = xmlsec1(path)
    expect(check.output).toContain('OK')
    expect(check.ok).toBe(true)
    const schema = xmllint(path, 'DTE_v10.xsd')
    expect(schema.output).toContain('validates')
    expect(schema.ok).toBe(true)
  })

  test('xmlsec1 verifies the same DTE inside an EnvioDTE, byte for byte (PROTOCOL §4.3)', () => {
    const check = xmlsec1(writeLatin1(envioDte(signed)), FIRST_SIGNATURE)
    expect(check.output).toContain('OK')
    expect(check.ok).toBe(true)
  })

  test('xmlsec1 also verifies it with the signer certificate as the key (KeyValue is the certificate key)', () => {
    const certPath = join(DIR, 'signer.pem')
    writeFileSync(certPath, identity.certificatePem)
    expect(xmlsec1(writeLatin1(signed), ['--pubkey-cert-pem', certPath]).ok).toBe(true)
  })

  test.each([
    ['MntTotal', (x: string) => x.replace('<MntTotal>3570</MntTotal>', '<MntTotal>3571</MntTotal>')],
    ['one letter of a name', (x: string) => x.replace('Av. Irarrázaval', 'Av. Irarrazaval')],
    ['TmstFirma', (x: string) => x.replace('<TmstFirma>2026-01-10T10:11:12</TmstFirma>', '<TmstFirma>2026-01-10T10:11:13</TmstFirma>')],
    ['the SignatureValue', (x: string) => x.replace(/<SignatureValue>(.)/, (_m, c: string) => `<SignatureValue>${c === 'A' ? 'B' : 'A'}`)],
  ])('a one-character change in %s fails xmlsec1 and verifyXmlSignatures, standalone and in the envelope', (_, spoil) => {
    const tampered = spoil(signed)
    expect(tampered).not.toBe(signed)
    expect(xmlsec1(writeLatin1(tampered)).ok).toBe(false)
    expect(xmlsec1(writeLatin1(envioDte(tampered)), FIRST_SIGNATURE).ok).toBe(false)
    expect(verifyXmlSignatures(tampered)[0]?.isValid).toBe(false)
  })

  test('verifyXmlSignatures agrees with xmlsec1 on the good document, standalone and in the envelope', () => {
    expect(verifyXmlSignatures(signed)).toEqual([{ uri: '#F7T33', isValid: true }])
    expect(verifyXmlSignatures(envioDte(signed))).toEqual([{ uri: '#F7T33', isValid: true }])
  })

  test('SignedInfo and SignatureValue are byte for byte what xml-crypto\'s SignedXml.computeSignature produces', () => {
    const namespaced = unsigned.replace('<DTE version="1.0">', '<DTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">')
    const reference = new SignedXml({
      privateKey: identity.signer.privateKey,
      signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
      canonicalizationAlgorithm: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
      getKeyInfoContent: () => '<X509Data/>',
    })
    reference.addReference({ xpath: '/*/*[1]', transforms: ['http://www.w3.org/TR/2001/REC-xml-c14n-20010315'], digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1' })
    reference.computeSignature(namespaced, { location: { reference: '/*', action: 'append' } })
    const core = (x: string) => /<SignedInfo>.*<\/SignatureValue>/s.exec(x)?.[0]
    expect(core(signed)).toBeDefined()
    expect(core(signed)).toBe(core(reference.getSignatureXml()))
  })

  test('the SII profile: one C14N transform, RSA-SHA1, SHA-1, KeyValue then X509Data, Signature last in <DTE>', () => {
    const signature = /<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">.*<\/Signature>/s.exec(signed)?.[0] ?? ''
    expect(signature).toContain(
      '<SignedInfo><CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>' +
        '<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/><Reference URI="#F7T33">' +
        '<Transforms><Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/></Transforms>' +
        '<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><DigestValue>',
    )
    expect(signature).toMatch(/<\/SignatureValue><KeyInfo><KeyValue><RSAKeyValue><Modulus>[^<]+<\/Modulus><Exponent>AQAB<\/Exponent><\/RSAKeyValue><\/KeyValue><X509Data><X509Certificate>[^<]+<\/X509Certificate><\/X509Data><\/KeyInfo><\/Signature>$/)
    expect(signature).not.toMatch(/\sId=|\r/)
    expect(signed).toEndWith(`</Documento>${signature}</DTE>\n`)
  })

  test('everything but the new namespace declarations and the Signature is the input, byte for byte (the TED keeps its escaping)', () => {
    const signature = /<Signature .*<\/Signature>/s.exec(signed)?.[0] ?? ''
    const expected = unsigned.replace('<DTE version="1.0">', '<DTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">')
    expect(signed.replace(signature, '')).toBe(expected)
    expect(signed).toContain('<RSR>Ñandú &amp; &quot;Cía&quot; &lt;Ltda&gt;</RSR>')
    expect(verifyTed(signed)).toBe(true)
  })

  test('namespace declarations already on <DTE> are kept, not repeated', () => {
    const declared = unsigned.replace('<DTE version="1.0">', '<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">')
    const out = signDte(declared, identity.signer)
    expect(out).toContain('<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">')
    expect(xmlsec1(writeLatin1(out)).ok).toBe(true)
  })

  test.each([
    ['another default namespace', (x: string) => x.replace('<DTE version="1.0">', '<DTE xmlns="urn:other" version="1.0">'), /xmlns/],
    ['no ID on Documento', (x: string) => x.replace(' ID="F7T33"', ''), /ID/],
    ['a root other than DTE', (x: string) => x.replace('<DTE version="1.0">', '<EnvioDTE>').replace('</DTE>', '</EnvioDTE>'), /root/],
    ['an already signed DTE', (x: string) => signDte(x, identity.signer), /already signed/],
  ])('refuses %s', (_, change, message) => {
    expect(() => signDte(change(unsigned), identity.signer)).toThrow(message)
  })

  test('performance: one signDte of a ~4 KB DTE', () => {
    const xml = dte33(11, 8)
    expect(xml.length).toBeGreaterThan(3800)
    expect(xml.length).toBeLessThan(4400)
    for (let i = 0; i < 20; i++) signDte(xml, identity.signer)  // warm up the JIT
    const runs = 200
    const start = performance.now()
    for (let i = 0; i < runs; i++) signDte(xml, identity.signer)
    const ms = (performance.now() - start) / runs
    console.log(`signDte: ${ms.toFixed(2)} ms per ${xml.length}-character DTE (RSA-2048, mean of ${runs})`)
    expect(ms).toBeLessThan(25)  // a guard against pathological regressions, not a benchmark (bench/ owns targets)
    expect(xmlsec1(writeLatin1(signDte(xml, identity.signer))).ok).toBe(true)
  })
})

describe('the SII official example, through verifyXmlSignatures (PROTOCOL §4.3 vectors)', () => {
  // Its X509Certificate is not the key that signed it (examples/README): check with its RSAKeyValue, as xmlsec1 does.
  const loose = { requireCertificateMatch: false }

  test('the DTE, extracted as its own document, verifies: Documento digest hlmQtu… is the standalone C14N', () => {
    const dte = /<DTE version="1\.0">[\s\S]*?<\/DTE>/.exec(OFFICIAL_EXAMPLE)?.[0] ?? ''
    expect(dte).toContain('<DigestValue>hlmQtu/AyjUjTDhM3852wvRCr8w=</DigestValue>')
    expect(verifyXmlSignatures(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${dte}`, loose)).toEqual([{ uri: '#F60T33', isValid: true }])
  })

  test('in the envelope, the SetDTE signature (4OTWXyRl…) verifies in context and the DTE one does not (§4.3 item 4)', () => {
    const [dteCheck, envelopeCheck] = verifyXmlSignatures(OFFICIAL_EXAMPLE, loose)
    expect(envelopeCheck).toEqual({ uri: '#SetDoc', isValid: true })
    expect(dteCheck?.isValid).toBe(false)
  })

  test('with the certificate check on, its mismatching X509Certificate is reported', () => {
    const checks = verifyXmlSignatures(OFFICIAL_EXAMPLE)
    expect(checks.map((c) => c.reason)).toEqual(['X509Certificate does not hold the RSAKeyValue key', 'X509Certificate does not hold the RSAKeyValue key'])
  })
})
