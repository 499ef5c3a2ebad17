import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignedXml } from 'xml-crypto'
import type { EmitirDte } from '../../../src/domain/emision'
import { buildDteXml, tedDataFor, type EmpresaEmisora, type TedInput } from '../../../src/xml/dte-xml'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../src/xml/latin1'
import { canonicalFormsFromText, signDte, verifyXmlSignatures } from '../../../src/xml/signature'
import { buildTed, verifyTed } from '../../../src/xml/ted'
import { dteFixtures } from '../../support/fixtures'
import { makeCertificate, makeTestCaf, signerOf, testCa } from '../../support/pki'
import { OFFICIAL_EXAMPLE_FILE, SCHEMAS } from '../../support/xml-tools'

const OFFICIAL_EXAMPLE = fromLatin1Bytes(readFileSync(OFFICIAL_EXAMPLE_FILE))
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

  test('xmlsec1 verifies the same DTE inside an EnvioDTE, byte for byte (docs/sii-protocol.md §4.3)', () => {
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

describe('the SII official example, through verifyXmlSignatures (docs/sii-protocol.md §4.3 vectors)', () => {
  // Its X509Certificate is not the key that signed it (test/fixtures/sii/README.md): check with its RSAKeyValue, as xmlsec1 does.
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

// ------------------------------------------------------------------------------------------------ pinned output
// signDte's output for fixed inputs and a fixed key, recorded from the xml-crypto (DOM) implementation before the
// string canonicalizer existed: any change to how signDte canonicalizes must keep these bytes (RSA PKCS#1 v1.5 is
// deterministic, so the whole signed text is). The key and certificate are throwaway test material made with
// `openssl req -x509 -newkey rsa:2048 -nodes`.
const PINNED_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCgV/tDa544kJwQ
FhGp1SCpuymg226soQCwNUy2WF3bNTa6vNFS8HDi0LNSWsud0tr6ofKNzywJFnYv
ha1uW6+IcIpt9ZpDmxtuzBEnCIbGoG4OaYwUru7ZCElDgZNiqam6aNAJ4MxuXqEm
k3ZYvPKGWi56mHK45xdC1y0Znfxq9moefAFQiGhjJhuw8EUaCBLXBeV04fWVOI5d
gddoIbbZkoJMqVkNqYB3CYfeXjnJcGnXyD8NXO6ztpS48GQeCSUl8EEhpEonYdtx
sQjOm+/1AQ7kwQD2z1XJ+MiAAiHmLEjFfymuhSaSd1MzPWRaWxEbi87mH7K5y9m5
HOFAzgBbAgMBAAECggEADwOzaWtKPBVn1REeo07BSb4sa5Ml/cVFHrrxotY10mEy
bZxhD4lTUMc723eEFJRvi+5JRmKCxvETAmfb8cxlF1DOgvXEyxWFpUOM9vY970Xg
4w7wHpReP6AegtM/MrXHc8dSdR0B7PMwgj+8Ym/YV/YENIJST80tPkWO7r9T/ndM
Psreeuk5l/foNUWEiwCIFrpO+7VIRkIGw36UXTxZmtsKV3A1G9Cqwi6U99TXX0HQ
DsuUT7Zph+SLSTMQ+QrGiB1eN7srJ+Fo5dXTK+/VckQbztWnxwKzUHsLjCyCI+Yb
z6tg2WJSS57QEOjVqYS7I9oLoTBbgddSdfEERhCBlQKBgQDWhGcGpQv+hzoF5269
jN6CDFNf3Y64D2vj/8J7oj2xWzCg09OJeMJOziFgSMQzVasR8qujkzeqCN1DO+r5
oXIuqo4PwdUw+5Pi3GZWPqzDC2wr+0tfITX+BeiCfvPv0isTjwJzjKQIpZSztc5t
186xWOYcdqO4Vfaj/zFmw8vfrwKBgQC/Wbz9fOUzxF+2bq6qkEt7uoetqHH24g3k
uZ4+Dvzlu5fxSjrtRmsKBcrtQY2glE0V9Zq8cqfB7P/T+H9rTXR2DxhCavOjgtAk
fDuBggy/4NjNg6z2fuM97DFPkZNr2AWH0YVt3tXxkEJBK1eCTBRcAmwYi3nOwujB
O27Wh6CJFQKBgQDNO/2JuOyBxwS3U1V62kSjrYEzDbkW1gJGL5L1UCKwBWu/4wnW
04creEEsalH0PzkdQcv/AsFV14dBZRkJXfHtPdYOs0bxxzAU8wKh7vLA5LPIXHMe
/5o1f5eVCjr+LlhyLPeOb3ccorZjPUTTiI5C1KfLgaJfoTcIbgXoqNjsFwKBgEFx
YY+YfZM84Dc2l4pCG27PlsOvznpPSc0mJpa27Ytso0SkzI6F/OnKnWKTfuqijdKq
0ycMV4+djMlkPb/nF6Og+f0NMxKDFMjFrFxYrB+buMpg9HDBaNquwxahhTfnA801
vVqcUbNyURaUyjMH7hahxXKHkTtDsfMUbo30iNUZAoGBALpZDIlkKjb9+1WYGjNc
RHC28Jh2Ky+5ttgGLd/VV0+sYLBv0uFojlWaAdwSFwZ2E5W7FtrgPSRuyYaNKcvh
mfs75iMujMINsJcSZrvPFemZqjJ1gVTNjRT94cZ42mDKB7DHBmZVmgxBappp12Av
ccJZNfvNIi/jXSCIBt0YM21e
-----END PRIVATE KEY-----`
const PINNED_CERT_PEM = `-----BEGIN CERTIFICATE-----
MIIDGTCCAgGgAwIBAgICEJIwDQYJKoZIhvcNAQELBQAwJDEiMCAGA1UEAwwZVGlt
YnJlIHBpbm5lZCB0ZXN0IHNpZ25lcjAgFw0yNjExMjIyMTU1NDdaGA8yMDUxMDcx
NDIxNTU0N1owJDEiMCAGA1UEAwwZVGltYnJlIHBpbm5lZCB0ZXN0IHNpZ25lcjCC
ASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAKBX+0NrnjiQnBAWEanVIKm7
KaDbbqyhALA1TLZYXds1Nrq80VLwcOLQs1Jay53S2vqh8o3PLAkWdi+FrW5br4hw
im31mkObG27MEScIhsagbg5pjBSu7tkISUOBk2Kpqbpo0AngzG5eoSaTdli88oZa
LnqYcrjnF0LXLRmd/Gr2ah58AVCIaGMmG7DwRRoIEtcF5XTh9ZU4jl2B12ghttmS
gkypWQ2pgHcJh95eOclwadfIPw1c7rO2lLjwZB4JJSXwQSGkSidh23GxCM6b7/UB
DuTBAPbPVcn4yIACIeYsSMV/Ka6FJpJ3UzM9ZFpbERuLzuYfsrnL2bkc4UDOAFsC
AwEAAaNTMFEwHQYDVR0OBBYEFCiKVSoQv8EcaowvKv421Uc2ZHNxMB8GA1UdIwQY
MBaAFCiKVSoQv8EcaowvKv421Uc2ZHNxMA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZI
hvcNAQELBQADggEBAArXYFootNw0s4DUjj3tBTPokwft3sfHWnRvpPXqubzMbz/n
2un9dNaI3GHy62Zsb8MdPsUC7+o4hq+DEppH+Wvxy4iywyl4yci7fTXUq9zrRVzj
ZySis+rxbBWsmz/jO4rUyDgGyVCL2lkEOrL87CHyEq5kqGmBVONeMl1vNDW+C7kA
7jA7ND6qBlzYHx2kHtujaaCWag03MsBfCboB38nN7COgRCFLzpqb7EUwUlEjtROU
TXYlPj6SUIThRWTJciI7J27+IDJCyxN50NZ/ffStBdOY7PX50mgpp8UfpPAWzU6W
VCvlrMQdFLBhdxtTL6nqLZtzOkQHcLVcS8ib/DQ=
-----END CERTIFICATE-----`

const PINNED_SIGNER = signerOf(createPrivateKey(PINNED_KEY_PEM), new X509Certificate(PINNED_CERT_PEM).raw)
const PIN_EMPRESA: EmpresaEmisora = {
  rut: '76.543.210-3',
  razon_social: 'Ferretería y Servicios Ñandú SpA',
  giro: 'Venta al por mayor de materiales de construcción y artículos de ferretería',
  acteco: [466302, 475201],
  direccion: 'Av. Libertador Bernardo O’Higgins 1449, piso 3',
  comuna: 'Santiago',
  ciudad: 'Santiago',
}
const PIN_TMST = '2025-06-30T10:15:00'
const FIVE: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }
const five = (s: string) => s.replace(/[&<>"']/g, (c) => FIVE[c]!)

/** A TED with the shape and escaping buildTed writes, with fixed FRMA/FRMT bytes (signDte never checks them). */
function pinnedTed(t: TedInput): string {
  return (
    `<TED version="1.0"><DD><RE>${t.rutEmisor}</RE><TD>${t.tipoDte}</TD><F>${t.folio}</F><FE>${t.fechaEmision}</FE>` +
    `<RR>${t.rutReceptor}</RR><RSR>${five(t.razonSocialReceptor)}</RSR><MNT>${t.montoTotal}</MNT><IT1>${five(t.item1)}</IT1>` +
    `<CAF version="1.0"><DA><RE>${t.rutEmisor}</RE><RS>FERRETERIA NANDU</RS><TD>${t.tipoDte}</TD><RNG><D>1</D><H>5000</H></RNG>` +
    '<FA>2025-01-02</FA><RSAPK><M>0a4O6Kbx8Qj3K4iWSP4w7KneZYeJ+g/prihYtIEolKt3cykSxl1zO8vSXu397QhTmsX7SBEudTUx++2zDXBhZw==</M><E>Aw==</E></RSAPK>' +
    '<IDK>100</IDK></DA><FRMA algoritmo="SHA1withRSA">g1AQX0sy8NJugX52k2hTJEZAE9Cuul6pqYBdFxj1N17umW7zG/hAavCALKByHzdYAfZ3LhGTXCai5zNxOo4lDQ==</FRMA></CAF>' +
    `<TSTED>${PIN_TMST}</TSTED></DD><FRMT algoritmo="SHA1withRSA">GbmDcS9e/jVC2LsLIe1iRV12Bf6lxsILtbQiCkh6mbjckFCJ7fj/kakFTS06Jo8iS4HXvJj3oYZuey53Krniew==</FRMT></TED>`
  )
}

/** The unsigned DTE of a fixture, as the issuance pipeline builds it (with the pinned TED). */
function pinnedDte(request: EmitirDte, today: string, folio: number): string {
  const input = { empresa: PIN_EMPRESA, folio, request, today }
  return buildDteXml({ ...input, ted: pinnedTed(tedDataFor(input)), tmstFirma: PIN_TMST })
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex').slice(0, 32)

/** Inputs outside what buildDteXml writes, each still a DTE signDte accepts today. */
function pinnedVariants(): Record<string, string> {
  const base = pinnedDte(dteFixtures()[1]!.request, '2025-06-30', 77)
  return {
    'hand-written, indented with LF': base.replace(/></g, '>\n  <').replace('>\n  <DTE', '>\n<DTE'),
    'a comment inside Documento': base.replace('<Encabezado>', '<!-- nota & "x" --><Encabezado>'),
    'CDATA in a name': base.replace(/<NmbItem>[^<]*<\/NmbItem>/, '<NmbItem><![CDATA[Tornillo <M6> & "tuerca"]]></NmbItem>'),
    'numeric character references': base.replace(/<NmbItem>/, '<NmbItem>&#209;&#xE1;&#62;&#38;&#13;'),
    'single-quoted attributes': base.replace('<TED version="1.0">', "<TED version='1.0'>").replace('<CAF version="1.0">', "<CAF version='1.0'>"),
    'CR and CRLF between and inside elements': base.replace('<Encabezado>', '\r\n<Encabezado>').replace(/<NmbItem>/, '<NmbItem>a\r\nb\rc'),
    'an empty element': base.replace('<Encabezado>', '<Encabezado><Nada/>').replace('<IdDoc>', '<IdDoc><Vacío a="1" b="&quot;2&gt;"/>'),
    'two attributes and entities in attributes': base.replace('<TED version="1.0">', '<TED version="1.0" z="&lt;&amp;&apos;&quot;\t\n" a="x">'),
    'no XML declaration, namespaces declared': base.replace(/^<\?xml[^>]*\?>/, ''),
    'DTE without namespaces': base.replace(' xmlns="http://www.sii.cl/SiiDte"', '').replace(' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"', ''),
  }
}

const PINNED_SIGNED: Record<string, string> = {
  "033/001-ejemplo-oficial-sii.json": "c53d34dd82bd4b40c3e9920326410f34",
  "033/002-afecta-y-exenta.json": "368ea90696677cf6db1a5354abcb5681",
  "033/003-descuento-linea.json": "f6dee246e06ce7d2105fd3dedf2cd667",
  "033/004-descuento-global.json": "6e9bc83890d00102afb2e63189c912bf",
  "033/005-impuestos-adicionales.json": "d9bc81adc7b6e0fff7c175c25d91cb3c",
  "033/006-montos-brutos.json": "6623c1a9b800885302769bcfd21480f4",
  "033/007-orden-de-compra.json": "f35d14610a367f8ece4f9e61e0413d17",
  "033/008-set-de-pruebas.json": "c6667fdff1cd1b456db9eb5424e1fbef",
  "034/001-servicios-exentos.json": "b72e2c2a297c2817f037fe0fb86a00f2",
  "034/002-no-facturable.json": "e0dd1a400396ffa881f6bbd613d3154d",
  "034/003-descuento-inferido-exento.json": "54891ead5bf2f46b6f78d9d7016b9904",
  "039/001-descuento-global.json": "206d887c495e07656defe056a6e4f6aa",
  "039/002-tres-lineas.json": "6c093c7e47592f4026ce4088d28d2e44",
  "039/003-linea-exenta.json": "f1fe8fe3801eede944f5643140bf5509",
  "039/004-descuento-linea.json": "5553e9228e1800b702d7f5b886d0c1a0",
  "041/001-exenta.json": "7ee277a21c95fe97f9d9aa717a1ab957",
  "041/002-descuento-global.json": "88de5522709f9da222444b69b14ab309",
  "043/001-liquidacion.json": "39288e729dbf31c0a531e26da44cb1e6",
  "043/002-anticipo-negativo.json": "62192b4b3a453b39c294fe028e08d742",
  "046/001-retencion-total.json": "ca90f0389df67913e1af68bf5ab68dfa",
  "046/002-retencion-parcial.json": "2be7893d976c06a38bb4d9be86117b17",
  "046/003-retencion-con-descuento.json": "b2fa294acf423d5474effbe113e309d9",
  "052/001-venta.json": "bef18824cfc4d69579ee0d64e37161c5",
  "052/002-traslado-interno.json": "72ae593fa0776394b211bc3f02c185ae",
  "052/003-consignacion.json": "5bf790d2dbf4fee7f40a93e316c94cc8",
  "056/001-intereses.json": "0670fc7f68666b2226bd249a67d29f13",
  "056/002-anula-nota-credito.json": "4749212c9a2b62a373298ed68376d435",
  "056/003-boleta-montos-brutos.json": "38c00fbfe27f526615bd5b2663bfe27c",
  "061/001-anula-factura.json": "42b2098863a5b46beafa322c37a50832",
  "061/002-corrige-texto.json": "79ac133cb98c35904cc8f918c0304a70",
  "061/003-devolucion-parcial.json": "b3e088847ad0b746518d45dd9ac871bd",
  "061/004-boleta-montos-brutos.json": "12f9b382d10555405105be64e0d88ce3",
  "061/005-set-de-pruebas.json": "0fd1453012130bf4f0f7dda353f76b43",
  "110/001-dolares.json": "7713530a9588d71fba2232d087c55067",
  "110/002-recargo-linea.json": "7e9559f31fbfec0f11e002936d3c03b8",
  "110/003-sin-pago.json": "9ea8addc130b60d52042d5077ef11857",
  "110/004-pesos.json": "cbd80d960b18d32248d5e49418f9a934",
  "110/005-euros-descuento.json": "b9915127a0a9acbb95ad3ac0ba0e768b",
  "111/001-nota-debito.json": "e21b967ad47c245855b8ad1e5786a2b2",
  "112/001-nota-credito.json": "3949107fe2e8dc598577e11edaac6f74",
  "112/002-corrige-texto.json": "f99271e6233c16824d93c06c70de00c5",
  "CDATA in a name": "30784b3a310982f0b5d3c3a3c4485b61",
  "CR and CRLF between and inside elements": "d33660fed97fc5e3bac434dbea398a64",
  "DTE without namespaces": "d9d30a16171b2c65b69a5ee18dcbb9bf",
  "a comment inside Documento": "96e77039739719679291c06a3001b053",
  "an empty element": "ce39e1c5fe7da7b511955d39068e3b2b",
  "hand-written, indented with LF": "23c96f0a3942e94bdb9567623e6dc062",
  "no XML declaration, namespaces declared": "af7b4a4af9927af562dfd3416a945a64",
  "numeric character references": "c52700b2419465840538bf17c450383e",
  "single-quoted attributes": "857cd3ec508400c896e963274e89d63b",
  "two attributes and entities in attributes": "01ae85ebc925a07111ff4ea626cf771f",
}

describe('signDte output is pinned (byte-identical to the xml-crypto implementation)', () => {
  test('every fixture, built by buildDteXml, signs to the recorded bytes', () => {
    const got = Object.fromEntries(dteFixtures().map((f, i) => [f.name, sha256(signDte(pinnedDte(f.request, f.today, 1000 + i), PINNED_SIGNER))]))
    expect(got).toEqual(Object.fromEntries(Object.entries(PINNED_SIGNED).filter(([k]) => k in got)))
    expect(Object.keys(got).length).toBeGreaterThanOrEqual(35)
  })

  test('inputs outside the builder\'s form (comments, CDATA, references, quotes, CR…) sign to the recorded bytes', () => {
    const base = pinnedDte(dteFixtures()[1]!.request, '2025-06-30', 77)
    for (const xml of Object.values(pinnedVariants())) expect(xml).not.toBe(base)
    const got = Object.fromEntries(Object.entries(pinnedVariants()).map(([name, xml]) => [name, sha256(signDte(xml, PINNED_SIGNER))]))
    expect(got).toEqual(Object.fromEntries(Object.entries(PINNED_SIGNED).filter(([k]) => k in got)))
  })
})

// ------------------------------------------------------------------------------------------------ both paths, xmlsec1
// The string canonicalizer (xml/c14n.ts) is compared with xml-crypto in c14n.test.ts; here the signatures it leads to
// are checked by the referee, xmlsec1 (libxml2's C14N), and by verifyXmlSignatures, for documents of every type.

describe('signatures made on the string path and on the DOM path verify with xmlsec1 and verifyXmlSignatures', () => {
  const signer = makeCertificate({ rut: '07880442-4', keySlot: 3 }).signer
  const cafs = new Map<number, ReturnType<typeof makeTestCaf>['caf']>()
  const stamped = (request: EmitirDte, today: string, folio: number): string => {
    let tipoCaf = cafs.get(request.tipo_dte)
    if (tipoCaf === undefined) {
      tipoCaf = makeTestCaf({ tipoDte: request.tipo_dte, folioDesde: 1, folioHasta: 10_000 }).caf
      cafs.set(request.tipo_dte, tipoCaf)
    }
    const input = { empresa: { ...PIN_EMPRESA, rut: '76543210-3' }, folio, request, today }
    const ted = buildTed({ ...tedDataFor(input), timestamp: PIN_TMST }, tipoCaf)
    return buildDteXml({ ...input, ted, tmstFirma: PIN_TMST })
  }

  test('every fixture (12 types), stamped with a real CAF: string path, xmlsec1 OK standalone and in EnvioDTE, TED verifies', () => {
    for (const [i, f] of dteFixtures().entries()) {
      const unsigned = stamped(f.request, f.today, 500 + i)
      expect(canonicalFormsFromText(unsigned)).not.toBeNull()
      const signed = signDte(unsigned, signer)
      // --id-attr names the signed element: Documento, Liquidacion (43) or Exportaciones (110–112).
      const container = ['--id-attr:ID', `http://www.sii.cl/SiiDte:${/<DTE[^>]*><(\w+)/.exec(signed)?.[1]}`]
      const check = xmlsec1(writeLatin1(signed), container)
      if (!check.ok) throw new Error(`${f.name}: ${check.output}`)
      expect(xmlsec1(writeLatin1(envioDte(signed)), [...container, ...FIRST_SIGNATURE]).ok).toBe(true)
      expect(verifyXmlSignatures(signed)).toEqual([{ uri: `#F${500 + i}T${f.request.tipo_dte}`, isValid: true }])
      expect(verifyTed(signed)).toBe(true)
    }
  }, 60_000)

  test('documents with the hardest texts the builder accepts (& < > " \' TAB LF, all of Latin-1 but U+0085) verify', () => {
    const nasty = Array.from({ length: 224 }, (_, i) => String.fromCharCode(0x20 + i)).join('').replace('\u0085', '')
    const cases: Array<[string, string]> = [
      ['quotes and brackets', `Ñandú & "Cía" <Ltda> 'Sur' ]]> ½ ° á`],
      ['tabs and line feeds', '\tuno\n dos\r\ntres\n'],
      ['all of Latin-1, first 40', nasty.slice(0, 40)],
      ['all of Latin-1, the rest', nasty.slice(40)],
    ]
    for (const [name, text] of cases) {
      const request: EmitirDte = {
        ...dteFixtures()[1]!.request,
        receptor: { rut: '76.555.835-2', razon_social: text.slice(0, 100), giro: text.slice(0, 40), direccion: text.slice(0, 70) },
        detalle: [{ nombre: text.slice(0, 80), dsc_item: text, cantidad: 1, precio: 1000 }],
      }
      const unsigned = stamped(request, '2025-06-30', 900)
      expect(canonicalFormsFromText(unsigned)).not.toBeNull()
      const signed = signDte(unsigned, signer)
      const check = xmlsec1(writeLatin1(signed))
      if (!check.ok) throw new Error(`${name}: ${check.output}`)
      expect(verifyXmlSignatures(signed)[0]?.isValid).toBe(true)
    }
  }, 30_000)

  // Which path each pinned variant takes; every one verifies either way.
  const PATH: Record<string, 'string' | 'dom'> = {
    'hand-written, indented with LF': 'string',
    'a comment inside Documento': 'dom',
    'CDATA in a name': 'dom',
    'numeric character references': 'dom',
    'single-quoted attributes': 'dom',
    'CR and CRLF between and inside elements': 'dom',
    'an empty element': 'dom',  // two attributes on <Vacío>
    'two attributes and entities in attributes': 'dom',
    'no XML declaration, namespaces declared': 'string',
    'DTE without namespaces': 'string',
  }

  test.each(Object.keys(PATH))('%s: takes the expected path, xmlsec1 and verifyXmlSignatures accept it', (name) => {
    const xml = pinnedVariants()[name]!
    const withNamespaces = xml.includes('xmlns=') ? xml : xml.replace('<DTE version="1.0">', `<DTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">`)
    expect(canonicalFormsFromText(withNamespaces) === null ? 'dom' : 'string').toBe(PATH[name]!)
    const signed = signDte(xml, signer)
    // Without a declaration the file is UTF-8 by definition (XML 1.0 §4.3.3), so write it that way for xmlsec1.
    const path = signed.startsWith('<?xml') ? writeLatin1(signed) : join(DIR, `doc-${++fileCount}.xml`)
    if (!signed.startsWith('<?xml')) writeFileSync(path, signed, 'utf8')
    const check = xmlsec1(path)
    if (!check.ok) throw new Error(check.output)
    expect(verifyXmlSignatures(signed)[0]?.isValid).toBe(true)
  })

  test('malformed text still throws (the string path never signs what the parser refuses)', () => {
    const base = stamped(dteFixtures()[0]!.request, '2025-06-30', 901)
    for (const bad of [base.replace('</Encabezado>', ''), base.replace('<RznSoc>', '<RznSoc>&A;'), base.replace('<RznSoc>', '<RznSoc>a & b')]) {
      expect(canonicalFormsFromText(bad)).toBeNull()
      expect(() => signDte(bad, signer)).toThrow(SyntaxError)
    }
  })
})
