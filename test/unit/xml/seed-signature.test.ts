import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { childElements, parseXml, textOf } from '../../../src/xml/latin1'
import { signSeed } from '../../../src/xml/seed-signature'
import { verifyXmlSignatures } from '../../../src/xml/signature'
import { makeCertificate, testCa } from '../../support/pki'

const DIR = mkdtempSync(join(tmpdir(), 'timbre-seed-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const DSIG = 'http://www.w3.org/2000/09/xmldsig#'
let seq = 0

function xmlsec1(xml: string): { ok: boolean; out: string } {
  const file = join(DIR, `seed-${++seq}.xml`)
  writeFileSync(file, xml)
  // URI="" references the whole document: no --id-attr needed; the key comes from KeyValue (docs/sii-protocol.md §4.1).
  const run = spawnSync('xmlsec1', ['--verify', file], { encoding: 'utf8' })
  return { ok: run.status === 0, out: `${run.stdout}${run.stderr}` }
}

describe('signSeed: the getToken document of docs/sii-protocol.md §6.3', () => {
  const signed = signSeed('000000000078', identity.signer)

  test('xmlsec1 verifies it with the key in its KeyInfo', () => {
    const { ok, out } = xmlsec1(signed)
    expect(out).toContain('OK')
    expect(ok).toBe(true)
  })

  test('xml-crypto (verifyXmlSignatures) verifies it too, and the certificate holds the KeyValue key', () => {
    expect(verifyXmlSignatures(signed)).toEqual([{ uri: '', isValid: true }])
  })

  test('shape: getToken > item > Semilla, then Signature last; Reference URI="" with the enveloped transform only', () => {
    expect(signed.startsWith('<?xml version="1.0"?>\n<getToken><item><Semilla>000000000078</Semilla></item><Signature xmlns="http://www.w3.org/2000/09/xmldsig#">')).toBe(true)
    const root = parseXml(signed).documentElement
    expect(childElements(root).map((e) => e.localName)).toEqual(['item', 'Signature'])
    const sig = childElements(root)[1] as Element
    const attr = (name: string) => Array.from(sig.getElementsByTagNameNS(DSIG, name)).map((e) => e.getAttribute('Algorithm') ?? e.getAttribute('URI'))
    expect(attr('CanonicalizationMethod')).toEqual(['http://www.w3.org/TR/2001/REC-xml-c14n-20010315'])
    expect(attr('SignatureMethod')).toEqual(['http://www.w3.org/2000/09/xmldsig#rsa-sha1'])
    expect(attr('Reference')).toEqual([''])
    expect(attr('Transform')).toEqual(['http://www.w3.org/2000/09/xmldsig#enveloped-signature'])
    expect(attr('DigestMethod')).toEqual(['http://www.w3.org/2000/09/xmldsig#sha1'])
    const keyInfo = sig.getElementsByTagNameNS(DSIG, 'KeyInfo').item(0) as Element
    expect(childElements(keyInfo).map((e) => e.localName)).toEqual(['KeyValue', 'X509Data'])
    const cert = textOf(sig.getElementsByTagNameNS(DSIG, 'X509Certificate').item(0) as Element).replace(/\s/g, '')
    expect(cert).toBe(identity.signer.certificateDerBase64)
  })

  test('the digest is SHA-1 of the inclusive C14N of the document without its Signature', () => {
    const expected = createHash('sha1').update('<getToken><item><Semilla>000000000078</Semilla></item></getToken>').digest('base64')
    expect(signed).toContain(`<DigestValue>${expected}</DigestValue>`)
  })

  test('no CR anywhere (docs/sii-protocol.md §4.1)', () => {
    expect(signed.includes('\r')).toBe(false)
  })

  test('tampering with the seed breaks the signature (xmlsec1 and xml-crypto agree)', () => {
    const tampered = signed.replace('<Semilla>000000000078</Semilla>', '<Semilla>000000000079</Semilla>')
    expect(xmlsec1(tampered).ok).toBe(false)
    expect(verifyXmlSignatures(tampered)[0]?.isValid).toBe(false)
  })

  test('leading zeros are kept: the seed is signed as the SII wrote it', () => {
    expect(signSeed('000000000001', identity.signer)).toContain('<Semilla>000000000001</Semilla>')
  })

  test.each(['', '12a', '<x/>', '1 2'])('refuses a seed that is not digits: %p', (seed) => {
    expect(() => signSeed(seed, identity.signer)).toThrow('digits')
  })
})
