import { describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TimbreError } from '../../../src/errors'
import { issueCaf } from '../../../src/sii/simulator/caf-issuer'
import { authorityKeys, SIMULATOR_IDK } from '../../../src/xml/authority-keys'
import { parseCaf, readCafElement, verifyCaf, verifyCafSignature } from '../../../src/xml/caf'
import { findElement, fromLatin1Bytes, parseXml, toLatin1Bytes } from '../../../src/xml/latin1'
import { makeTestCaf, simulatorCafAuthority, testCafAuthority } from '../../support/pki'
import { OFFICIAL_EXAMPLE_FILE, SII_FIXTURES } from '../../support/xml-tools'

const REPO = join(import.meta.dir, '../../..')
const OFFICIAL_EXAMPLE = fromLatin1Bytes(readFileSync(OFFICIAL_EXAMPLE_FILE))

function expectInvalidCaf(fn: () => unknown, reason: RegExp): void {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(TimbreError)
    expect((err as TimbreError).code).toBe('INVALID_CAF')
    expect((err as TimbreError).message).toMatch(reason)
    return
  }
  throw new Error('expected INVALID_CAF')
}

function officialCaf() {
  const caf = findElement(parseXml(OFFICIAL_EXAMPLE).documentElement, 'CAF')
  if (caf === null) throw new Error('no CAF in the official example')
  return readCafElement(caf)
}

describe('the SII official example (docs/sii-protocol.md §3.4 vector)', () => {
  test('its CAF/DA verifies with the SII key IDK 100, through readCafElement + verifyCafSignature', () => {
    const caf = officialCaf()
    expect(caf).toMatchObject({ rutEmisor: '97975000-5', razonSocial: 'RUT DE PRUEBA', tipoDte: 33, folioDesde: 1, folioHasta: 200, fechaAutorizacion: '2003-09-04', idk: 100 })
    expect(caf.daXml.startsWith('<DA><RE>97975000-5</RE><RS>RUT DE PRUEBA</RS><TD>33</TD><RNG><D>1</D><H>200</H></RNG>')).toBe(true)
    expect(() => verifyCafSignature(caf, authorityKeys({ allowSimulator: false }))).not.toThrow()
  })

  test('the same DA does not verify with the production key (IDK 300) put in IDK 100’s place', () => {
    const keys = authorityKeys({ allowSimulator: false })
    const wrong = new Map([[100, keys.get(300) ?? createPublicKey(generateKeyPairSync('rsa', { modulusLength: 512 }).publicKey)]])
    expectInvalidCaf(() => verifyCafSignature(officialCaf(), wrong), /FRMA/)
  })

  test('its RSAPK is the 512-bit e=3 key the SII issues', () => {
    expect(officialCaf().publicKey.asymmetricKeyDetails).toEqual({ modulusLength: 512, publicExponent: 3n })
  })
})

describe('issueCaf → parseCaf → verifyCaf', () => {
  test('a simulator CAF verifies with the simulator key, and exposes every field', () => {
    const { caf } = makeTestCaf({ rut: '76543210-3', tipoDte: 61, folioDesde: 10, folioHasta: 20, fechaAutorizacion: '2026-02-03' })
    expect(() => verifyCaf(caf, authorityKeys({ allowSimulator: true }))).not.toThrow()
    expect(caf).toMatchObject({
      rutEmisor: '76543210-3',
      razonSocial: 'Comercializadora Ñandú Limitada',
      tipoDte: 61,
      folioDesde: 10,
      folioHasta: 20,
      fechaAutorizacion: '2026-02-03',
      idk: SIMULATOR_IDK,
    })
    expect(caf.privateKey.type).toBe('private')
    expect(caf.publicKey.asymmetricKeyDetails).toEqual({ modulusLength: 512, publicExponent: 3n })
    expect(caf.rsaPubk?.equals(caf.publicKey)).toBe(true)
  })

  test('the file has the SII layout, and its bytes are ISO-8859-1 (Ñ is one byte, 0xD1)', () => {
    const { xml, bytes } = makeTestCaf()
    expect(xml).toStartWith('<?xml version="1.0"?>\n<AUTORIZACION>\n<CAF version="1.0">\n<DA>\n<RE>76543210-3</RE>\n<RS>Comercializadora Ñandú Limitada</RS>\n<TD>33</TD>\n<RNG><D>1</D><H>100</H></RNG>\n<FA>2026-01-05</FA>\n<RSAPK><M>')
    expect(xml).toMatch(/<\/M><E>Aw==<\/E><\/RSAPK>\n<IDK>900<\/IDK>\n<\/DA>\n<FRMA algoritmo="SHA1withRSA">[A-Za-z0-9+/=]+<\/FRMA>\n<\/CAF>\n<RSASK>-----BEGIN RSA PRIVATE KEY-----\n/)
    expect(xml).toContain('-----END RSA PRIVATE KEY-----\n</RSASK>\n\n<RSAPUBK>-----BEGIN PUBLIC KEY-----\n')
    expect(xml).toEndWith('-----END PUBLIC KEY-----\n</RSAPUBK>\n</AUTORIZACION>\n')
    expect(bytes.length).toBe(xml.length)
    expect(Array.from(bytes)).toContain(0xd1)
  })

  test('the TED text is the flat CAF element: no whitespace between tags, FRMA kept', () => {
    const { caf, xml } = makeTestCaf()
    const frma = /<FRMA algoritmo="SHA1withRSA">([^<]+)<\/FRMA>/.exec(xml)?.[1]
    expect(caf.cafXml).toMatch(/^<CAF version="1\.0"><DA><RE>76543210-3<\/RE><RS>Comercializadora Ñandú Limitada<\/RS><TD>33<\/TD><RNG><D>1<\/D><H>100<\/H><\/RNG><FA>2026-01-05<\/FA><RSAPK><M>[^<]+<\/M><E>Aw==<\/E><\/RSAPK><IDK>900<\/IDK><\/DA><FRMA algoritmo="SHA1withRSA">/)
    expect(caf.cafXml).toEndWith(`${frma}</FRMA></CAF>`)
    expect(caf.cafXml).toContain(caf.daXml)
  })

  test.each([
    ['raw text', (t: string, _b: Uint8Array) => t],
    ['ISO-8859-1 bytes', (_t: string, b: Uint8Array) => b],
    ['base64 text', (_t: string, b: Uint8Array) => Buffer.from(b).toString('base64')],
    ['base64 bytes, wrapped at 76', (_t: string, b: Uint8Array) => new TextEncoder().encode(Buffer.from(b).toString('base64').replace(/.{76}/g, '$&\n'))],
    ['UTF-8 bytes after a byte-order mark', (t: string, _b: Uint8Array) => new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(t)])],
    ['re-indented with tabs and CRLF', (t: string, _b: Uint8Array) => t.replace(/>\n</g, '>\r\n\t<')],
  ])('reads and verifies the same CAF given as %s', (_, encode) => {
    const { xml, bytes, caf: expected } = makeTestCaf()
    const caf = parseCaf(encode(xml, bytes))
    expect(caf.cafXml).toBe(expected.cafXml)
    expect(() => verifyCaf(caf, authorityKeys({ allowSimulator: true }))).not.toThrow()
  })

  test('UTF-8 bytes without a byte-order mark are read as ISO-8859-1 (DESIGN §8), so Ñ changes and FRMA fails', () => {
    const { xml } = makeTestCaf()
    expectInvalidCaf(() => verifyCaf(parseCaf(new TextEncoder().encode(xml)), authorityKeys({ allowSimulator: true })), /FRMA/)
  })

  test('RS is cut to 40 characters before escaping, and & " < > survive the round trip', () => {
    const { caf } = makeTestCaf({ razonSocial: 'Pérez & "Hijos" <Importadora> de Ñuble y del Maule Limitada' })
    expect(caf.razonSocial).toBe('Pérez & "Hijos" <Importadora> de Ñuble y')
    expect(caf.daXml).toContain('<RS>Pérez &amp; &quot;Hijos&quot; &lt;Importadora&gt; de Ñuble y</RS>')
    expect(() => verifyCaf(caf, authorityKeys({ allowSimulator: true }))).not.toThrow()
  })
})

describe('verifyCaf refuses', () => {
  const keys = authorityKeys({ allowSimulator: true })

  test.each([
    ['a changed folio range', (x: string) => x.replace('<H>100</H>', '<H>900</H>')],
    ['a changed razón social (one byte)', (x: string) => x.replace('Ñandú', 'Ñandu')],
    ['a changed tipo', (x: string) => x.replace('<TD>33</TD>', '<TD>34</TD>')],
    ['a changed date', (x: string) => x.replace('<FA>2026-01-05</FA>', '<FA>2026-01-06</FA>')],
  ])('%s in DA (FRMA no longer verifies)', (_, spoil) => {
    const { xml } = makeTestCaf()
    expectInvalidCaf(() => verifyCaf(parseCaf(spoil(xml)), keys), /FRMA/)
  })

  test('RSASK that is not the private half of RSAPK', () => {
    const a = makeTestCaf()
    const b = makeTestCaf()
    const swapped = a.xml.replace(/<RSASK>[\s\S]*<\/RSASK>/, /<RSASK>[\s\S]*<\/RSASK>/.exec(b.xml)?.[0] ?? '')
    expectInvalidCaf(() => verifyCaf(parseCaf(swapped), keys), /RSASK/)
  })

  test('RSAPUBK that is not RSAPK', () => {
    const a = makeTestCaf()
    const b = makeTestCaf()
    const swapped = a.xml.replace(/<RSAPUBK>[\s\S]*<\/RSAPUBK>/, /<RSAPUBK>[\s\S]*<\/RSAPUBK>/.exec(b.xml)?.[0] ?? '')
    expectInvalidCaf(() => verifyCaf(parseCaf(swapped), keys), /RSAPUBK/)
  })

  test('a CAF signed by another authority under the same IDK (the wrong key for that IDK)', () => {
    const { caf } = makeTestCaf({ authority: testCafAuthority() })  // a fresh key posing as IDK 100
    expectInvalidCaf(() => verifyCaf(caf, keys), /FRMA/)
    expect(() => verifyCaf(caf, testCafAuthority().keys)).not.toThrow()
  })

  test('a simulator CAF (IDK 900) when the simulator is not allowed: a simulated CAF never passes for a real one', () => {
    const { caf } = makeTestCaf()
    expectInvalidCaf(() => verifyCaf(caf, authorityKeys({ allowSimulator: false })), /IDK 900/)
  })

  test('an IDK nobody knows', () => {
    const authority = simulatorCafAuthority()
    const { caf } = makeTestCaf({ authority: { ...authority, idk: 555 } })
    expectInvalidCaf(() => verifyCaf(caf, keys), /IDK 555/)
  })
})

describe('parseCaf refuses', () => {
  const { xml } = makeTestCaf()
  test.each([
    ['an empty file', '', /no es XML ni base64/],
    ['plain text', 'esto no es un CAF', /no es un CAF/],
    ['base64 of something else', Buffer.from('hola mundo').toString('base64'), /no contiene XML/],
    ['truncated XML', xml.slice(0, 200), /no es XML válido/],
    ['another root', '<?xml version="1.0"?><EnvioDTE/>', /AUTORIZACION como raíz/],
    ['no CAF element', '<AUTORIZACION><RSASK>x</RSASK></AUTORIZACION>', /AUTORIZACION\/CAF/],
    ['no RSASK', xml.replace(/<RSASK>[\s\S]*<\/RSASK>/, ''), /RSASK/],
    ['an unreadable RSASK', xml.replace(/<RSASK>[\s\S]*<\/RSASK>/, '<RSASK>-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----</RSASK>'), /RSASK/],
    ['a DSA CAF (DSAPK)', xml.replace(/<RSAPK>.*<\/RSAPK>/, '<DSAPK><P>AA==</P><Q>AA==</Q><G>AA==</G><Y>AA==</Y></DSAPK>'), /RSAPK/],
    ['D greater than H', xml.replace('<RNG><D>1</D><H>100</H></RNG>', '<RNG><D>101</D><H>100</H></RNG>'), /rango de folios/],
    ['folio 0', xml.replace('<D>1</D>', '<D>0</D>'), /rango de folios/],
    ['a non-numeric TD', xml.replace('<TD>33</TD>', '<TD>treinta</TD>'), /TD/],
    ['a RUT with dots', xml.replace('<RE>76543210-3</RE>', '<RE>76.543.210-3</RE>'), /RE/],
    ['a missing IDK', xml.replace(/<IDK>\d+<\/IDK>/, ''), /IDK/],
    ['a bare & in RS', xml.replace('Ñandú', 'Ñandú & Co'), /no es XML válido/],
  ])('%s', (_, input, reason) => {
    expectInvalidCaf(() => parseCaf(input), reason)
  })
})

describe('authorityKeys', () => {
  test('SII keys 100 and 300 always; the simulator’s 900 only when allowed', () => {
    expect([...authorityKeys({ allowSimulator: false }).keys()]).toEqual([100, 300])
    expect([...authorityKeys({ allowSimulator: true }).keys()]).toEqual([100, 300, 900])
  })

  test('the embedded certificates are byte-for-byte the SII files, and their keys are what openssl reads', () => {
    for (const idk of [100, 300]) {
      const embedded = readFileSync(join(REPO, `src/xml/authority/idk-${idk}.cer`))
      const original = readFileSync(join(SII_FIXTURES, `sii-certs/idk-${idk}.cer`))
      expect(createHash('sha256').update(embedded).digest('hex')).toBe(createHash('sha256').update(original).digest('hex'))
      const opensslPem = spawnSync('openssl', ['x509', '-noout', '-pubkey'], { input: original, encoding: 'utf8' }).stdout
      expect(authorityKeys({ allowSimulator: false }).get(idk)?.equals(createPublicKey(opensslPem))).toBe(true)
    }
  })

  test('the simulator public key is the pair of the committed authority key', () => {
    expect(authorityKeys({ allowSimulator: true }).get(900)?.equals(simulatorCafAuthority().publicKey)).toBe(true)
  })

  test('the keys are embedded: a compiled binary run from another directory has all three, and the simulator’s private key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'timbre-keys-'))
    try {
      const entry = join(dir, 'probe.ts')
      const keysFile = JSON.stringify(join(REPO, 'src/xml/authority-keys'))
      const issuerFile = JSON.stringify(join(REPO, 'src/sii/simulator/caf-issuer'))
      writeFileSync(
        entry,
        `import { authorityKeys } from ${keysFile}\nimport { simulatorAuthorityKey } from ${issuerFile}\n` +
          `const k = authorityKeys({ allowSimulator: true })\n` +
          `console.log([...k].map(([i, v]) => \`\${i}:\${v.asymmetricKeyDetails?.modulusLength}\`).join(','), simulatorAuthorityKey().type)\n`,
      )
      const build = spawnSync(process.execPath, ['build', '--compile', entry, '--outfile', join(dir, 'probe')], { encoding: 'utf8' })
      expect(build.stderr).not.toContain('error')
      expect(build.status).toBe(0)
      const run = spawnSync(join(dir, 'probe'), [], { cwd: tmpdir(), encoding: 'utf8' })
      expect(run.stdout.trim()).toBe('100:512,300:512,900:1024 private')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('issueCaf input checks', () => {
  const base = { rut: '76543210-3', razonSocial: 'X', tipoDte: 33, folioDesde: 1, folioHasta: 2, fechaAutorizacion: '2026-01-01', idk: 900, authorityPrivateKey: simulatorCafAuthority().privateKey }
  test.each([
    ['a RUT with dots', { rut: '76.543.210-3' }],
    ['D > H', { folioDesde: 3 }],
    ['a razón social outside ISO-8859-1', { razonSocial: 'Café €' }],
    ['a bad date', { fechaAutorizacion: '05-01-2026' }],
  ])('refuses %s', (_, change) => {
    expect(() => issueCaf({ ...base, ...change })).toThrow(RangeError)
  })

  test('the CAF text encodes to the bytes parseCaf reads', () => {
    expect(() => verifyCaf(parseCaf(toLatin1Bytes(issueCaf(base))), authorityKeys({ allowSimulator: true }))).not.toThrow()
  })
})
