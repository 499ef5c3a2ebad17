// Helpers of the simulator tests (test/sii/simulator*.test.ts): the instant their clocks start at, SOAP and REST calls over real
// HTTP, a getToken signer of their own (xml-crypto's SignedXml, independent of the client's src/xml/seed-signature.ts,
// so a bug in one does not hide in the other), and small schema-valid DTEs with real TEDs and signatures.
import { SignedXml } from 'xml-crypto'
import { buildEnvioBoleta, buildEnvioDte, envelopeBytes, SII_RUT, type Caratula } from '../../src/xml/envelope'
import { childElements, parseXml, textOf } from '../../src/xml/latin1'
import type { Signer } from '../../src/domain/signer'
import { signDte } from '../../src/xml/signature'
import { buildTed } from '../../src/xml/ted'
import type { Caf } from '../../src/xml/caf'
import { makeCertificate, makeTestCaf, testCa, type TestCaf, type TestIdentity } from '../support/pki'

export const EMISOR = '76543210-3'
/** The signer of every test envelope: RUT 7880442-4 in its certificate (as the SII example's, leading zero and all). */
export const SENDER = '7880442-4'

let identityCache: TestIdentity | undefined
export function identity(): TestIdentity {
  identityCache ??= makeCertificate({ rut: '07880442-4', issuer: testCa() })
  return identityCache
}

/** Where the simulator tests' clocks stand still until the test moves them: `testClock({ at: SIM_START })`. */
export const SIM_START = new Date('2026-03-02T15:00:00Z')

const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315'
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'

/** The manual's signed getToken (docs/sii-protocol.md §6.3): enveloped signature, URI="", KeyValue then X509Data. */
export function signGetToken(seed: string, signer: Signer, keyInfoSigner: Signer = signer): string {
  const xml = `<getToken><item><Semilla>${seed}</Semilla></item></getToken>`
  const sig = new SignedXml({
    privateKey: signer.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    canonicalizationAlgorithm: C14N,
    signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
    getKeyInfoContent: () =>
      `<KeyValue><RSAKeyValue><Modulus>${keyInfoSigner.modulusBase64}</Modulus><Exponent>${keyInfoSigner.exponentBase64}</Exponent></RSAKeyValue></KeyValue>` +
      `<X509Data><X509Certificate>${keyInfoSigner.certificateDerBase64}</X509Certificate></X509Data>`,
  })
  sig.addReference({ xpath: '/*', transforms: [ENVELOPED], digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1', isEmptyUri: true })
  sig.computeSignature(xml, { location: { reference: '/*', action: 'append' } })
  return `<?xml version="1.0"?>\n${sig.getSignedXml()}`
}

// ---- SOAP over HTTP ----

export interface SoapAnswer {
  readonly status: number
  readonly text: string
  /** The `SII:RESPUESTA` inside `…Return`, parsed; null when the answer is not one. */
  readonly inner: Element | null
  readonly innerText: string
}

export async function soap(base: string, service: string, operation: string, params: Readonly<Record<string, string>> = {}): Promise<SoapAnswer> {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" ' +
    'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>' +
    `<m:${operation} xmlns:m="http://DefaultNamespace" soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">` +
    Object.entries(params).map(([k, v]) => `<${k} xsi:type="xsd:string">${escape(v)}</${k}>`).join('') +
    `</m:${operation}></soapenv:Body></soapenv:Envelope>`
  const res = await fetch(`${base}/DTEWS/${service}.jws`, { method: 'POST', body, headers: { 'content-type': 'text/xml; charset=utf-8', SOAPAction: '' } })
  const text = await res.text()
  let inner: Element | null = null
  let innerText = ''
  try {
    const ret = findLocal(parseXml(text).documentElement, `${operation}Return`)
    innerText = ret === null ? '' : textOf(ret)
    inner = innerText === '' ? null : parseXml(innerText.trim()).documentElement
  } catch {
    inner = null
  }
  return { status: res.status, text, inner, innerText }
}

/** Text of the first element named `name` under RESP_HDR or RESP_BODY (children are unprefixed, docs/sii-protocol.md §6.2). */
export function field(inner: Element | null, name: string): string | null {
  const el = inner === null ? null : findLocal(inner, name)
  return el === null ? null : textOf(el)
}

/** All values of a repeated field, in order (getEstUp's per-type groups, docs/sii-protocol.md §6.5). */
export function fields(inner: Element | null, name: string): string[] {
  const out: string[] = []
  const walk = (e: Element): void => {
    if (e.localName === name) out.push(textOf(e))
    for (const c of childElements(e)) walk(c)
  }
  if (inner !== null) walk(inner)
  return out
}

function findLocal(root: Element, name: string): Element | null {
  if (root.localName === name) return root
  for (const c of childElements(root)) {
    const found = findLocal(c, name)
    if (found !== null) return found
  }
  return null
}

function escape(v: string): string {
  return v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** seed → signed seed → token over SOAP. */
export async function soapToken(base: string, signer: Signer = identity().signer): Promise<string> {
  const seed = field((await soap(base, 'CrSeed', 'getSeed')).inner, 'SEMILLA') ?? ''
  const token = field((await soap(base, 'GetTokenFromSeed', 'getToken', { pszXml: signGetToken(seed, signer) })).inner, 'TOKEN')
  if (token === null) throw new Error('no token')
  return token
}

/** seed → signed seed → token over the boleta REST API (docs/sii-protocol.md §7.3 items 1–2). */
export async function restToken(base: string, signer: Signer = identity().signer): Promise<string> {
  const seedXml = await (await fetch(`${base}/recursos/v1/boleta.electronica.semilla`, { headers: { Accept: 'application/xml' } })).text()
  const seed = field(parseXml(seedXml).documentElement, 'SEMILLA') ?? ''
  const res = await fetch(`${base}/recursos/v1/boleta.electronica.token`, { method: 'POST', body: signGetToken(seed, signer), headers: { 'content-type': 'application/xml' } })
  const token = field(parseXml(await res.text()).documentElement, 'TOKEN')
  if (token === null) throw new Error('no REST token')
  return token
}

// ---- Uploads ----

export function uploadForm(envelope: Uint8Array, sender = SENDER, company = EMISOR): FormData {
  const [rs, ds] = sender.split('-') as [string, string]
  const [rc, dc] = company.split('-') as [string, string]
  const form = new FormData()
  form.append('rutSender', rs)
  form.append('dvSender', ds)
  form.append('rutCompany', rc)
  form.append('dvCompany', dc)
  form.append('archivo', new Blob([new Uint8Array(envelope)], { type: 'text/xml' }), 'envio.xml')
  return form
}

export interface Recepcion {
  readonly status: string
  readonly trackId: string | null
  readonly text: string
}

export async function dteUpload(base: string, token: string | null, envelope: Uint8Array, sender = SENDER, company = EMISOR): Promise<Recepcion> {
  const headers: Record<string, string> = { 'User-Agent': 'Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)' }
  if (token !== null) headers.Cookie = `TOKEN=${token}`
  const res = await fetch(`${base}/cgi_dte/UPL/DTEUpload`, { method: 'POST', body: uploadForm(envelope, sender, company), headers })
  const text = await res.text()
  const root = parseXml(text.trim()).documentElement
  return { status: field(root, 'STATUS') ?? '', trackId: field(root, 'TRACKID'), text }
}

export async function estUp(base: string, token: string, trackId: string, company = EMISOR): Promise<SoapAnswer> {
  const [rut, dv] = company.split('-') as [string, string]
  return soap(base, 'QueryEstUp', 'getEstUp', { RutCompania: rut, DvCompania: dv, TrackId: trackId, Token: token })
}

// ---- DTEs and envelopes ----

const cafs = new Map<string, TestCaf>()
/** One simulator-signed CAF per type (folios 1–100), memoized. */
export function caf(tipo: 33 | 61 | 39 | 41): TestCaf {
  let c = cafs.get(String(tipo))
  if (c === undefined) {
    c = makeTestCaf({ tipoDte: tipo })
    cafs.set(String(tipo), c)
  }
  return c
}

export interface DteOptions {
  readonly tipo?: 33 | 39
  readonly folio: number
  readonly receptor?: string
  readonly monto?: number
  /** Stamps with this CAF (default: the type's memoized one); the folio may lie outside it. */
  readonly caf?: Caf
  readonly fechaEmision?: string
}

/** A small schema-valid factura 33 or boleta 39 with a real TED and signature, as `signDte` stores it. */
export function dte(o: DteOptions): string {
  const tipo = o.tipo ?? 33
  const receptor = o.receptor ?? (tipo === 39 ? '66666666-6' : '76086428-5')
  const fecha = o.fechaEmision ?? '2026-03-02'
  const neto = o.monto ?? 1000
  const iva = Math.round(neto * 0.19)
  const total = neto + iva
  const useCaf = o.caf ?? caf(tipo).caf
  const ted = buildTedLoose({ tipo, folio: o.folio, fecha, receptor, total, caf: useCaf })
  const isBoleta = tipo === 39
  const emisor = isBoleta
    ? `<Emisor><RUTEmisor>${EMISOR}</RUTEmisor><RznSocEmisor>Comercializadora Ñandú Limitada</RznSocEmisor><GiroEmisor>Venta de café</GiroEmisor></Emisor>`
    : `<Emisor><RUTEmisor>${EMISOR}</RUTEmisor><RznSoc>Comercializadora Ñandú Limitada</RznSoc><GiroEmis>Venta de café</GiroEmis><Acteco>620100</Acteco><DirOrigen>Av. Irarrázaval 1234</DirOrigen><CmnaOrigen>Ñuñoa</CmnaOrigen></Emisor>`
  const receptorXml = isBoleta
    ? `<Receptor><RUTRecep>${receptor}</RUTRecep></Receptor>`
    : `<Receptor><RUTRecep>${receptor}</RUTRecep><RznSocRecep>Cliente &amp; Cía</RznSocRecep><GiroRecep>Comercio</GiroRecep><DirRecep>Calle 1</DirRecep><CmnaRecep>Santiago</CmnaRecep></Receptor>`
  const totales = isBoleta
    ? `<Totales><MntNeto>${neto}</MntNeto><IVA>${iva}</IVA><MntTotal>${total}</MntTotal></Totales>`
    : `<Totales><MntNeto>${neto}</MntNeto><TasaIVA>19</TasaIVA><IVA>${iva}</IVA><MntTotal>${total}</MntTotal></Totales>`
  const precio = isBoleta ? total : neto
  const detalle = `<Detalle><NroLinDet>1</NroLinDet><NmbItem>Café molido</NmbItem><QtyItem>1</QtyItem><PrcItem>${precio}</PrcItem><MontoItem>${precio}</MontoItem></Detalle>`
  const unsigned =
    `<?xml version="1.0" encoding="ISO-8859-1"?>\n<DTE version="1.0"><Documento ID="F${o.folio}T${tipo}"><Encabezado><IdDoc><TipoDTE>${tipo}</TipoDTE>` +
    `<Folio>${o.folio}</Folio><FchEmis>${fecha}</FchEmis>${isBoleta ? '<IndServicio>3</IndServicio>' : ''}</IdDoc>${emisor}${receptorXml}${totales}</Encabezado>` +
    `${detalle}${ted}<TmstFirma>${fecha}T10:11:12</TmstFirma></Documento></DTE>\n`
  return signDte(unsigned, identity().signer)
}

/** buildTed checks the folio against the CAF; a test that wants a folio outside its CAF stamps with a widened copy. */
function buildTedLoose(p: { tipo: number; folio: number; fecha: string; receptor: string; total: number; caf: Caf }): string {
  const caf = p.folio < p.caf.folioDesde || p.folio > p.caf.folioHasta ? { ...p.caf, folioDesde: p.folio, folioHasta: p.folio } : p.caf
  return buildTed({
    rutEmisor: EMISOR, tipoDte: p.tipo, folio: p.folio, fechaEmision: p.fecha, rutReceptor: p.receptor,
    razonSocialReceptor: p.tipo === 39 ? p.receptor : 'Cliente & Cía', montoTotal: p.total, item1: 'Café molido', timestamp: `${p.fecha}T10:11:12`,
  }, caf)
}

export const CARATULA: Caratula = {
  rutEmisor: EMISOR, rutEnvia: SENDER, rutReceptor: SII_RUT, fchResol: '2026-01-01', nroResol: 0, tmstFirmaEnv: '2026-03-02T10:11:13',
}

/** An EnvioDTE's bytes, signed by the test identity (docs/sii-protocol.md §5). */
export function envioDte(dtes: readonly string[], caratula: Partial<Caratula> = {}, signer: Signer = identity().signer): Uint8Array {
  return envelopeBytes(buildEnvioDte({ dtes, caratula: { ...CARATULA, ...caratula }, signer }))
}

export function envioBoleta(dtes: readonly string[], caratula: Partial<Caratula> = {}): Uint8Array {
  return envelopeBytes(buildEnvioBoleta({ dtes, caratula: { ...CARATULA, ...caratula }, signer: identity().signer }))
}
