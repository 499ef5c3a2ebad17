// The envelope's two ways to SetDTE's canonical form (src/xml/envelope.ts, docs/decisions/signing.md "Envelope fast
// path"): the string path (c14n.ts canonicalDteInSetDte over the stored DTE texts) must give xml-crypto's bytes, so
// buildEnvioDte and buildEnvioBoleta write the very envelope the DOM-only build writes; what the string path is not
// sure of (text outside its subset, a check of the envelope it cannot prove) goes to the DOM path, which decides.
import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { C14nCanonicalization, findAncestorNs } from 'xml-crypto'
import type { EmitirDte, TipoDte } from '../../../src/domain/emision'
import { TIPOS, type Envelope } from '../../../src/domain/tipos'
import { canonicalDteInSetDte, canonicalizeElement, scanCanonicalElement } from '../../../src/xml/c14n'
import { buildDteXml, tedDataFor, type EmpresaEmisora, type TedInput } from '../../../src/xml/dte-xml'
import {
  buildEnvelopeOnDom, buildEnvioBoleta, buildEnvioDte, canonicalSetDteFromText, envelopeBytes, SII_RUT, type Caratula, type EnvioInput,
} from '../../../src/xml/envelope'
import { childElements, fromLatin1Bytes, parseXml } from '../../../src/xml/latin1'
import { signDte } from '../../../src/xml/signature'
import { buildTed } from '../../../src/xml/ted'
import { dteFixtures, type DteFixture } from '../../support/fixtures'
import { makeCertificate, makeTestCaf } from '../../support/pki'
import { OFFICIAL_EXAMPLE_FILE, SCHEMAS } from '../../support/xml-tools'

const SII = 'http://www.sii.cl/SiiDte'
const XSI = 'http://www.w3.org/2001/XMLSchema-instance'
const DSIG = 'http://www.w3.org/2000/09/xmldsig#'
const EMISOR = '76543210-3'
const TMST = '2025-06-30T10:15:00'
const signer = makeCertificate({ rut: '07880442-4', keySlot: 4 }).signer
const caratula = (rutEmisor = EMISOR): Caratula => ({
  rutEmisor, rutEnvia: '7880442-4', rutReceptor: SII_RUT, fchResol: '2026-01-01', nroResol: 0, tmstFirmaEnv: '2026-01-10T10:11:13',
})
const EMPRESA: EmpresaEmisora = {
  rut: EMISOR, razon_social: 'Ferretería y Servicios Ñandú SpA', giro: 'Venta de "materiales" & artículos <de ferretería>',
  acteco: [466302], direccion: "Av. O'Higgins 1449, piso 3", comuna: 'Ñuñoa', ciudad: 'Santiago',
}

const DIR = mkdtempSync(join(tmpdir(), 'timbre-envelope-fast-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

// ---- DTEs as issuance stores them: buildDteXml, a real TED where buildTed accepts the texts, signDte ----

const cafs = new Map<number, ReturnType<typeof makeTestCaf>['caf']>()
function cafFor(tipo: number) {
  let caf = cafs.get(tipo)
  if (caf === undefined) {
    caf = makeTestCaf({ tipoDte: tipo as TipoDte, folioDesde: 1, folioHasta: 1_000_000 }).caf
    cafs.set(tipo, caf)
  }
  return caf
}

const FIVE: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

/** The real TED, or one with its shape and escaping when buildTed refuses random texts (the envelope never reads it). */
function tedFor(data: TedInput, tipo: number): string {
  try {
    return buildTed({ ...data, timestamp: TMST }, cafFor(tipo))
  } catch (err) {
    if (!(err instanceof RangeError)) throw err
    const five = (s: string) => s.replace(/[&<>"']/g, (c) => FIVE[c]!)
    return `<TED version="1.0"><DD><RE>${data.rutEmisor}</RE><RSR>${five(data.razonSocialReceptor)}</RSR><IT1>${five(data.item1)}</IT1></DD><FRMT algoritmo="SHA1withRSA">AA==</FRMT></TED>`
  }
}

function unsignedDte(request: EmitirDte, today: string, folio: number, empresa = EMPRESA): string {
  const input = { empresa, folio, request, today }
  return buildDteXml({ ...input, ted: tedFor(tedDataFor(input), request.tipo_dte), tmstFirma: TMST })
}

const signedDte = (request: EmitirDte, today: string, folio: number, empresa = EMPRESA): string =>
  signDte(unsignedDte(request, today, folio, empresa), signer)

const FIXTURES = dteFixtures()
const envelopeOf = (f: DteFixture): Envelope => TIPOS[f.request.tipo_dte].envelope
const build = (root: Envelope, input: EnvioInput): string => (root === 'EnvioDTE' ? buildEnvioDte(input) : buildEnvioBoleta(input))

/** xml-crypto's inclusive C14N of SetDTE in the envelope's context: what the DOM path digests. */
function referenceSetDte(envelope: string): string {
  const doc = parseXml(envelope)
  return new C14nCanonicalization()
    .process(childElements(doc.documentElement)[0]!, { ancestorNamespaces: findAncestorNs(doc, '/*/*[1]'), defaultNsForPrefix: { ds: DSIG } })
    .toString()
}

/**
 * The envelope `build*` writes, after checking it is byte for byte the DOM-only build's and that the string path took
 * it (`expected` 'text') or left it to the DOM path ('dom'); on the string path, its canonical SetDTE is xml-crypto's.
 */
function bothWays(root: Envelope, input: EnvioInput, expected: 'text' | 'dom'): string {
  const built = build(root, input)
  expect(built).toBe(buildEnvelopeOnDom(root, input))
  const fromText = canonicalSetDteFromText(root, input)
  expect(fromText === null ? 'dom' : 'text').toBe(expected)
  if (fromText !== null) expect(fromText).toBe(referenceSetDte(built))
  return built
}

// ---- The referees: xmllint against the SII's XSD, xmlsec1 on the envelope's Signature (the last one) ----

let files = 0
function write(xml: string): string {
  const path = join(DIR, `e${++files}.xml`)
  writeFileSync(path, envelopeBytes(xml))
  return path
}

function xmllint(path: string, root: Envelope): { ok: boolean; output: string } {
  const xsd = root === 'EnvioDTE' ? 'EnvioDTE_v10.xsd' : 'EnvioBOLETA_v11.xsd'
  const run = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, xsd), path], { encoding: 'utf8' })
  return { ok: run.status === 0, output: run.stderr }
}

const ID_ATTRS = ['Documento', 'Liquidacion', 'Exportaciones', 'SetDTE'].flatMap((e) => ['--id-attr:ID', `${SII}:${e}`])

/** xmlsec1 on the `n`-th Signature in document order, in place; `last()` by default: the envelope's. */
function xmlsec1(path: string, n: number | 'last()' = 'last()'): { ok: boolean; output: string } {
  const run = spawnSync('xmlsec1', ['--verify', ...ID_ATTRS, '--node-xpath', `(//*[local-name()='Signature'])[${n}]`, path], { encoding: 'utf8' })
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
}

// ---- Tests ----

describe('every fixture type, as issuance writes it, takes the string path and gives the DOM path\'s envelope', () => {
  test.each<Envelope>(['EnvioDTE', 'EnvioBOLETA'])('%s of every fixture of its types: same bytes, schema-valid, xmlsec1 verifies it', (root) => {
    const dtes = FIXTURES.flatMap((f, i) => (envelopeOf(f) === root ? [signedDte(f.request, f.today, 100 + i)] : []))
    expect(dtes.length).toBeGreaterThan(root === 'EnvioDTE' ? 20 : 3)
    const envelope = bothWays(root, { dtes, caratula: caratula(), signer }, 'text')
    const path = write(envelope)
    const schema = xmllint(path, root)
    if (!schema.ok) throw new Error(schema.output)
    const check = xmlsec1(path)
    if (!check.ok) throw new Error(check.output)
    expect(xmlsec1(path, 1).ok).toBe(true)  // and a DTE's own signature, in place
  }, 30_000)
})

describe('texts with ñ, &amp;, quotes and the rest of Latin-1: the string path, the DOM path\'s bytes', () => {
  const base = FIXTURES.find((f) => f.request.tipo_dte === 33)!
  const boleta = FIXTURES.find((f) => f.request.tipo_dte === 39)!
  const latin1 = Array.from({ length: 224 }, (_, i) => String.fromCharCode(0x20 + i)).join('').replace('\u0085', '')
  const withText = (f: DteFixture, text: string): EmitirDte => ({
    ...f.request,
    receptor: { ...f.request.receptor, razon_social: text.slice(0, 100), giro: text.slice(0, 40), direccion: text.slice(0, 70) },
    detalle: [{ nombre: text.slice(0, 80), dsc_item: text, cantidad: 1, precio: 1000 }],
  })
  const TEXTS: ReadonlyArray<readonly [string, string]> = [
    ['ñ, tildes and the rest of Spanish', 'Ñandú Ñuñoa, Peñalolén, Concepción, Viña del Mar: ¿café? ¡sí!'],
    ['& < > " \' in names', `Ñandú & "Cía" <Ltda> 'Sur' ]]> &amp; written as text`],
    ['TAB and LF', '\tuno\n dos\n\ttres\n'],
    ['Latin-1 U+0020–U+00FF but U+0085, first half', latin1.slice(0, 112)],
    ['Latin-1 U+0020–U+00FF but U+0085, second half', latin1.slice(112)],
  ]

  test.each(TEXTS)('%s, in an EnvioDTE and an EnvioBOLETA', (_, text) => {
    const facturas = [signedDte(withText(base, text), base.today, 1), signedDte(base.request, base.today, 2)]
    expect(facturas[0]).toContain(text.includes('ñ') ? 'ñ' : '<Detalle>')
    bothWays('EnvioDTE', { dtes: facturas, caratula: caratula(), signer }, 'text')
    const boletas = [signedDte(withText(boleta, text), boleta.today, 1), signedDte(boleta.request, boleta.today, 2)]
    bothWays('EnvioBOLETA', { dtes: boletas, caratula: caratula(), signer }, 'text')
  })

  test('the envelope with every one of those texts verifies with xmlsec1 and validates', () => {
    const dtes = TEXTS.map(([, text], i) => signedDte(withText(base, text), base.today, 10 + i))
    const path = write(bothWays('EnvioDTE', { dtes, caratula: caratula(), signer }, 'text'))
    expect(xmllint(path, 'EnvioDTE').ok).toBe(true)
    expect(xmlsec1(path).ok).toBe(true)
  })
})

describe('property: envelopes of DTEs with random ISO-8859-1 texts are the DOM path\'s, byte for byte', () => {
  const char = fc.oneof(
    fc.constantFrom('&', '<', '>', '"', "'", '\t', '\n', '\r', 'ñ', 'á', 'Ñ', '°', '½', ' ', ']', ';', '#'),
    fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)),
  )
  const text = (maxLength: number) => fc.string({ unit: char, minLength: 1, maxLength })
  const casesFor = (root: Envelope) => fc.tuple(
    fc.constant(root),
    fc.array(
      fc.record({ fixture: fc.constantFrom(...FIXTURES.filter((f) => envelopeOf(f) === root)), razonSocial: text(60), nombre: text(60), dscItem: text(100), giroEmisor: text(60) }),
      { minLength: 1, maxLength: 4 },
    ),
  )

  test('1–4 DTEs per envelope, every fixture type, 150 envelopes', () => {
    let engaged = 0
    fc.assert(
      fc.property(fc.oneof(casesFor('EnvioDTE'), casesFor('EnvioBOLETA')), ([root, cases]) => {
        const dtes = cases.map((c, i) => {
          const request: EmitirDte = {
            ...c.fixture.request,
            receptor: { ...c.fixture.request.receptor, razon_social: c.razonSocial },
            detalle: c.fixture.request.detalle.map((l) => ({ ...l, nombre: c.nombre, dsc_item: c.dscItem })),
          }
          return signedDte(request, c.fixture.today, 1 + i, { ...EMPRESA, giro: c.giroEmisor })
        })
        const input = { dtes, caratula: caratula(), signer }
        const built = build(root, input)
        if (built !== buildEnvelopeOnDom(root, input)) throw new Error('the string path changed the envelope')
        const fromText = canonicalSetDteFromText(root, input)
        if (fromText !== null) {
          engaged++
          if (fromText !== referenceSetDte(built)) throw new Error('canonical SetDTE differs from xml-crypto\'s')
        } else if (!dtes.some((d) => d.includes('\u0085') || /&(?!(?:amp|lt|gt|quot|apos);)/.test(d))) {
          // The only DTEs the builder writes outside the subset (docs/decisions/signing.md "Fast path").
          throw new Error('the string path declined an envelope of builder-written DTEs in its subset')
        }
      }),
      { numRuns: 150 },
    )
    expect(engaged).toBeGreaterThan(40)
  }, 120_000)
})

describe('DTEs outside the subset: the whole SetDTE takes the DOM path, and the envelope still verifies', () => {
  const f = FIXTURES.find((x) => x.request.tipo_dte === 33)!
  const unsigned = unsignedDte(f.request, f.today, 77)
  const VARIANTS: ReadonlyArray<readonly [string, string]> = [
    ['indented by hand (blanks between every element)', unsigned.replace(/></g, '>\n  <').replace('>\n  <DTE', '>\n<DTE')],
    ['a comment inside Documento', unsigned.replace('<Encabezado>', '<!-- nota & "x" --><Encabezado>')],
    ['CDATA in a name', unsigned.replace(/<NmbItem>[^<]*<\/NmbItem>/, '<NmbItem><![CDATA[Tornillo <M6> & "tuerca"]]></NmbItem>')],
    ['numeric character references', unsigned.replace('<NmbItem>', '<NmbItem>&#209;&#xE1;&#62;&#38;')],
    ['single-quoted attributes', unsigned.replace('<TED version="1.0">', "<TED version='1.0'>")],
    ['a CR in a name', unsigned.replace('<NmbItem>', '<NmbItem>a\r\nb')],
    ['two attributes on an element', unsigned.replace('<TED version="1.0">', '<TED version="1.0" x="1">')],
  ]

  test.each(VARIANTS)('%s, between two DTEs in the subset', (_, xml) => {
    const dtes = [signedDte(f.request, f.today, 1), signDte(xml, signer), signedDte(f.request, f.today, 2)]
    const path = write(bothWays('EnvioDTE', { dtes, caratula: caratula(), signer }, 'dom'))
    expect(xmlsec1(path).ok).toBe(true)
    expect(xmlsec1(path, 2).ok).toBe(true)
  })

  test('the SII\'s own example DTE (no namespace declaration on DTE, tabs, CRLF)', () => {
    const example = fromLatin1Bytes(readFileSync(OFFICIAL_EXAMPLE_FILE))
    const dte = example.slice(example.indexOf('<DTE'), example.indexOf('</DTE>') + '</DTE>'.length)
    bothWays('EnvioDTE', { dtes: [dte], caratula: caratula('97975000-5'), signer }, 'dom')
  })
})

describe('what the envelope checks refuse, the string path declines and the DOM path throws as before', () => {
  const f = FIXTURES.find((x) => x.request.tipo_dte === 33)!
  const one = signedDte(f.request, f.today, 5)
  const input = (dtes: readonly string[], rutEmisor = EMISOR): EnvioInput => ({ dtes, caratula: caratula(rutEmisor), signer })

  test.each<[string, EnvioInput, RegExp]>([
    ['the same DTE twice', input([one, one]), /dtes\[1\] has the ID "F5T33", already used/],
    ['a DTE of another issuer', input([one], '11111111-1'), /not issued by the Caratula's RutEmisor 11111111-1/],
    ['TipoDTE written 033', input([signDte(unsignedDte(f.request, f.today, 6).replace('<TipoDTE>33<', '<TipoDTE>033<'), signer)]), /has a TipoDTE other than/],
    ['an element after the Signature', input([one.replace('</Signature></DTE>', '</Signature><Otro/></DTE>')]), /is not signed/],
    ['no Signature', input([one.replace(/<Signature .*<\/Signature>/s, '')]), /is not signed/],
    ['a Signature in another namespace', input([one.replace(`<Signature xmlns="${DSIG}">`, '<Signature>')]), /is not signed/],
  ])('%s', (_, bad, message) => {
    expect(canonicalSetDteFromText('EnvioDTE', bad)).toBeNull()
    expect(() => buildEnvioDte(bad)).toThrow(message)
    expect(() => buildEnvelopeOnDom('EnvioDTE', bad)).toThrow(message)
  })

  test('SetDoc as a Documento ID collides with SetDTE\'s', () => {
    const clash = signDte(unsignedDte(f.request, f.today, 7).replace('ID="F7T33"', 'ID="SetDoc"'), signer)
    expect(canonicalSetDteFromText('EnvioDTE', input([clash]))).toBeNull()
    expect(() => buildEnvioDte(input([clash]))).toThrow(/has the ID "SetDoc", already used/)
  })
})

describe('canonicalDteInSetDte against xml-crypto, hand-picked shapes of <DTE>', () => {
  const DTE_NS = `xmlns="${SII}" xmlns:xsi="${XSI}"`
  const SIG = `<Signature xmlns="${DSIG}"><SignedInfo><CanonicalizationMethod Algorithm="x"/><Reference URI="#F1T33"><DigestValue>a&amp;b</DigestValue></Reference></SignedInfo>\n<SignatureValue>QUJD\nREVG</SignatureValue></Signature>`
  const DOC = '<Documento ID="F1T33"><Encabezado><IdDoc><TipoDTE>33</TipoDTE></IdDoc></Encabezado><A>&quot;x&quot; > y</A><B v="&gt;&apos;"/></Documento>'

  /** xml-crypto on the DTE as the only child of SetDTE under the envelope's root, cut back to the DTE element. */
  function reference(dte: string): string {
    const open = `<SetDTE xmlns="${SII}" xmlns:xsi="${XSI}" ID="SetDoc">`
    const whole = referenceSetDte(`<EnvioDTE ${DTE_NS} version="1.0"><SetDTE ID="SetDoc">${dte}</SetDTE></EnvioDTE>`)
    expect(whole.startsWith(open) && whole.endsWith('</SetDTE>')).toBe(true)
    return whole.slice(open.length, -'</SetDTE>'.length)
  }

  test.each<[string, string]>([
    ['as signDte writes it', `<DTE ${DTE_NS} version="1.0">${DOC}${SIG}</DTE>`],
    ['namespaces in another order, version first', `<DTE version="1.0" xmlns:xsi="${XSI}" xmlns="${SII}">${DOC}${SIG}</DTE>`],
    ['no version', `<DTE ${DTE_NS}>${DOC}${SIG}</DTE>`],
    ['blanks around and between the children', `<DTE ${DTE_NS} version="1.0">\n\t${DOC}\n  ${SIG} \n</DTE>`],
    ['blanks inside Signature', `<DTE ${DTE_NS}>${DOC}${SIG.replace('<SignedInfo>', '\n<SignedInfo>').replace('</Signature>', '\t</Signature>')}</DTE>`],
    ['an element between Documento and Signature', `<DTE ${DTE_NS}>${DOC}<Extra a="1"/>${SIG}</DTE>`],
    ['Liquidacion', `<DTE ${DTE_NS}>${DOC.replace(/Documento/g, 'Liquidacion')}${SIG}</DTE>`],
  ])('%s', (_, dte) => {
    const fast = canonicalDteInSetDte(dte)
    expect(fast).not.toBeNull()
    expect(fast?.canonical).toBe(reference(dte))
    expect(fast?.container).toMatch(/^<(Documento|Liquidacion) ID="F1T33"><Encabezado>.*<\/(Documento|Liquidacion)>$/s)
  })

  test.each<[string, string]>([
    ['no xmlns:xsi on DTE', `<DTE xmlns="${SII}">${DOC}${SIG}</DTE>`],
    ['no namespace on DTE at all', `<DTE version="1.0">${DOC}${SIG}</DTE>`],
    ['xsi:schemaLocation on DTE', `<DTE ${DTE_NS} xsi:schemaLocation="${SII} DTE_v10.xsd">${DOC}${SIG}</DTE>`],
    ['another version', `<DTE ${DTE_NS} version="2.0">${DOC}${SIG}</DTE>`],
    ['no Signature', `<DTE ${DTE_NS}>${DOC}</DTE>`],
    ['the Signature first', `<DTE ${DTE_NS}>${SIG}${DOC}</DTE>`],
    ['an element after the Signature', `<DTE ${DTE_NS}>${DOC}${SIG}<Extra/></DTE>`],
    ['a prefixed Signature', `<DTE ${DTE_NS} xmlns:ds="${DSIG}">${DOC}${SIG.replace(/<(\/?)Signature/g, '<$1ds:Signature')}</DTE>`],
    ['a Signature without its namespace', `<DTE ${DTE_NS}>${DOC}${SIG.replace(` xmlns="${DSIG}"`, '')}</DTE>`],
    ['a Signature with another attribute', `<DTE ${DTE_NS}>${DOC}${SIG.replace(`<Signature xmlns="${DSIG}">`, `<Signature xmlns="${DSIG}" Id="s">`)}</DTE>`],
    ['text directly in DTE', `<DTE ${DTE_NS}>${DOC}x${SIG}</DTE>`],
    ['text directly in Signature', `<DTE ${DTE_NS}>${DOC}${SIG.replace('</Signature>', 'x</Signature>')}</DTE>`],
    ['a comment in Signature', `<DTE ${DTE_NS}>${DOC}${SIG.replace('</Signature>', '<!-- c --></Signature>')}</DTE>`],
    ['a CR between children', `<DTE ${DTE_NS}>${DOC}\r\n${SIG}</DTE>`],
    ['anything after </DTE>', `<DTE ${DTE_NS}>${DOC}${SIG}</DTE>\n`],
    ['an XML declaration before it', `<?xml version="1.0"?><DTE ${DTE_NS}>${DOC}${SIG}</DTE>`],
    ['an unclosed Signature', `<DTE ${DTE_NS}>${DOC}${SIG.replace('</Signature>', '')}</DTE>`],
  ])('%s: null', (_, dte) => {
    expect(canonicalDteInSetDte(dte)).toBeNull()
  })
})

// ------------------------------------------------------------------------------------------------ the scanner
// canonicalDteInSetDte canonicalizes with scanCanonicalElement, which must answer exactly as canonicalizeElement (the
// function c14n.test.ts proves against xml-crypto) on every input: same canonical form, same end, same null.

describe('scanCanonicalElement answers as canonicalizeElement, on every input', () => {
  const same = (text: string, from: number, apex: string): boolean => Bun.deepEquals(scanCanonicalElement(text, from, apex), canonicalizeElement(text, from, apex))
  const APEX = ` xmlns="${SII}" xmlns:xsi="${XSI}"`

  test('every fixture DTE, signed: from each element start (Documento, Signature children, every leaf)', () => {
    let compared = 0
    for (const [i, f] of FIXTURES.entries()) {
      const dte = signedDte(f.request, f.today, 300 + i)
      for (const m of dte.matchAll(/<[A-Za-z]/g)) {
        expect(same(dte, m.index, m.index % 2 === 0 ? '' : APEX)).toBe(true)
        compared++
      }
      expect(scanCanonicalElement(dte, /^<\?xml[^>]*>\n?<DTE[^>]*>/.exec(dte)![0].length, '')).not.toBeNull()  // the signed element
    }
    expect(compared).toBeGreaterThan(3_000)
  })

  // Fragments of XML in and around the subset, glued at random: tags with and without attributes, empty tags,
  // references (the five, numeric, unknown, bare &), quotes, `]]>` whole and split, CR, TAB, LF, U+0085, a character
  // above U+00FF, comments, PIs, CDATA, names starting with xml in any case, misplaced spaces and slashes.
  const fragment = fc.oneof(
    fc.constantFrom(
      '<A>', '</A>', '<B>', '</B>', '<A/>', '<B x="1">', '<A x="">', '<A x="&gt;&apos;&amp;&lt;&quot;">', `<A x="a'>b">`, '<A x="a"b">',
      '<A x=\'1\'>', '<A  x="1">', '<A x="1" y="2">', '<A x="1" >', '<A />', '< A>', '</A >', '</ A>', '<xml>', '<XmlA>', '<xMl.b/>',
      '<A xml:lang="es">', '<A XMLx="1">', '<a.b-c_d>', '</a.b-c_d>', '<_1>', '</_1>', '<1A>', '<p:A>', '</p:A>', '<A x="a\tb">', '<A x="a\u0085">',
      '&amp;', '&lt;', '&gt;', '&quot;', '&apos;', '&#209;', '&#xD1;', '&nbsp;', '&', '&amp', '&;', '&ampx;',
      '"', "'", '>', ']]>', ']]', ']', ' ', '\t', '\n', '\r', '\r\n', '\u0085', '\u0084', '\u0086', 'ñ', 'ÿ', '€', '\u0001', '\u007f',
      '<!-- c -->', '<?pi x?>', '<![CDATA[x]]>', 'texto', '/', '=', '<', '</', '<A', '<A x="1"', '<A/',
    ),
    fc.string({ unit: fc.integer({ min: 0, max: 0x10f }).map((c) => String.fromCharCode(c)), maxLength: 3 }),
  )
  const soup = fc.tuple(fc.array(fragment, { maxLength: 12 }), fc.constantFrom('<A>', '<B x="&gt;">', '<A/>', '<Documento ID="F1T33">', ''), fc.boolean())

  test('property: random fragments after a start tag, 30 000 texts', () => {
    let answered = 0
    fc.assert(
      fc.property(soup, ([parts, head, withApex]) => {
        const text = `pre${head}${parts.join('')}`
        const fast = scanCanonicalElement(text, 3, withApex ? APEX : '')
        if (fast !== null) answered++
        return same(text, 3, withApex ? APEX : '')
      }),
      { numRuns: 30_000 },
    )
    expect(answered).toBeGreaterThan(1_000)  // not vacuous: plenty of them are elements in the subset
  }, 60_000)

  // Trees serialized as c14n.test.ts does, so nesting is deep and balanced far more often than in the soup.
  type Tree = { readonly kind: 'text'; readonly value: string; readonly style: 'named' | 'numeric' | 'raw' }
    | { readonly kind: 'element'; readonly name: string; readonly attrs: ReadonlyArray<readonly [string, string]>; readonly children: readonly Tree[] }
  const char = fc.oneof(fc.constantFrom('&', '<', '>', '"', "'", '\t', '\n', '\r', ']', 'ñ', '\u0085'), fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)))
  const name = fc.constantFrom('A', 'b', 'NmbItem', 'x.y', 'a-b', '_c', 'A1', 'xmlA', 'ID')
  const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record({ kind: fc.constant('text' as const), value: fc.string({ unit: char, maxLength: 12 }), style: fc.constantFrom('named' as const, 'named' as const, 'named' as const, 'numeric' as const, 'raw' as const) }),
      fc.record({
        kind: fc.constant('element' as const),
        name,
        attrs: fc.array(fc.tuple(name, fc.string({ unit: char, maxLength: 8 })), { maxLength: 2 }),
        children: fc.array(tie('node'), { maxLength: 4 }),
      }),
    ),
  })).node
  const escape = (value: string, style: 'named' | 'numeric' | 'raw'): string =>
    style === 'raw' ? value : style === 'numeric' ? value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`) : value.replace(/[&<>"']/g, (c) => FIVE[c]!)
  const serialize = (t: Tree): string => {
    if (t.kind === 'text') return escape(t.value, t.style)
    const attrs = t.attrs.map(([n, v]) => ` ${n}="${escape(v, 'named')}"`).join('')
    const inner = t.children.map(serialize).join('')
    return inner === '' ? `<${t.name}${attrs}/>` : `<${t.name}${attrs}>${inner}</${t.name}>`
  }

  test('property: random trees, 10 000 of them', () => {
    let answered = 0
    fc.assert(
      fc.property(tree, fc.boolean(), (t, withApex) => {
        const text = serialize(t)
        if (scanCanonicalElement(text, 0, withApex ? APEX : '') !== null) answered++
        return same(text, 0, withApex ? APEX : '')
      }),
      { numRuns: 10_000 },
    )
    expect(answered).toBeGreaterThan(500)
  }, 60_000)
})
