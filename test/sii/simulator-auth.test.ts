// The simulator's seed → signed seed → token (docs/sii-protocol.md §6.3) over real HTTP, SOAP and boleta REST (§7.3), each bad case
// with the SII's code; the WSDLs and SOAP faults of the DTEWS services (§6.1–§6.2).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { parseXml } from '../../src/xml/latin1'
import { testClock } from '../support/clock'
import { makeCertificate, testCa } from '../support/pki'
import { field, identity, restToken, signGetToken, SIM_START, soap, soapToken } from './simulator-helpers'

const clock = testClock({ at: SIM_START })
let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ clock: clock.now })
})
afterAll(() => sim.stop())

async function seed(): Promise<string> {
  const answer = await soap(sim.url, 'CrSeed', 'getSeed')
  expect(field(answer.inner, 'ESTADO')).toBe('00')
  return field(answer.inner, 'SEMILLA') ?? ''
}

async function getToken(pszXml: string): Promise<{ estado: string | null; glosa: string | null; token: string | null }> {
  const answer = await soap(sim.url, 'GetTokenFromSeed', 'getToken', { pszXml })
  expect(answer.status).toBe(200)
  return { estado: field(answer.inner, 'ESTADO'), glosa: field(answer.inner, 'GLOSA'), token: field(answer.inner, 'TOKEN') }
}

describe('SOAP seed and token', () => {
  test('getSeed answers the Axis RPC shape with a 12-digit seed inside the escaped RESPUESTA (docs/sii-protocol.md §6.2)', async () => {
    const answer = await soap(sim.url, 'CrSeed', 'getSeed')
    expect(answer.status).toBe(200)
    expect(answer.text).toContain('<ns1:getSeedResponse soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/" xmlns:ns1="http://DefaultNamespace">')
    expect(answer.text).toContain('<getSeedReturn xsi:type="xsd:string">&lt;?xml version="1.0" encoding="UTF-8"?&gt;\n&lt;SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"&gt;')
    expect(answer.inner?.localName).toBe('RESPUESTA')
    expect(answer.inner?.namespaceURI).toBe('http://www.sii.cl/XMLSchema')
    expect(field(answer.inner, 'SEMILLA')).toMatch(/^\d{12}$/)
  })

  test('a seed signed by the certificate holder gives a token (ESTADO 00, "Token Creado")', async () => {
    const s = await seed()
    const answer = await getToken(signGetToken(s, identity().signer))
    expect(answer).toEqual({ estado: '00', glosa: 'Token Creado', token: expect.stringMatching(/^[A-Za-z0-9]{13}$/) })
  })

  test('the same seed twice: the second is 08 (one token per seed)', async () => {
    const s = await seed()
    expect((await getToken(signGetToken(s, identity().signer))).estado).toBe('00')
    const again = await getToken(signGetToken(s, identity().signer))
    expect(again).toMatchObject({ estado: '08', token: null })
    expect(again.glosa).toContain('SEED ya utilizado')
  })

  test('an unknown seed is 08 "NO Existe SEED"', async () => {
    const answer = await getToken(signGetToken('999999999999', identity().signer))
    expect(answer).toMatchObject({ estado: '08', token: null })
    expect(answer.glosa).toContain('NO Existe SEED')
  })

  test('a seed older than 2 minutes is 08 "TIME-OUT DEL SEED" (clock moved, no sleep)', async () => {
    const s = await seed()
    clock.advance(2 * 60_000 + 1)
    const answer = await getToken(signGetToken(s, identity().signer))
    expect(answer).toMatchObject({ estado: '08', token: null })
    expect(answer.glosa).toContain('TIME-OUT DEL SEED')
  })

  test('a seed used within 2 minutes still works', async () => {
    const s = await seed()
    clock.advance(119_000)
    expect((await getToken(signGetToken(s, identity().signer))).estado).toBe('00')
  })

  test('a tampered seed document is 05 (the signature no longer verifies)', async () => {
    const s = await seed()
    const signed = signGetToken(s, identity().signer).replace('</item>', '<Extra>1</Extra></item>')
    expect((await getToken(signed)).estado).toBe('05')
  })

  test('a signature by another key than the RSAKeyValue shown is 05', async () => {
    const s = await seed()
    const other = makeCertificate({ rut: '11111111-1', keySlot: 7, issuer: testCa() })
    // Signed by `other`, but KeyInfo shows identity()'s key and certificate: the RSAKeyValue does not verify it.
    expect((await getToken(signGetToken(s, other.signer, identity().signer))).estado).toBe('05')
  })

  test('an RSAKeyValue that is not the certificate\'s key is 21', async () => {
    const s = await seed()
    const other = makeCertificate({ rut: '11111111-1', keySlot: 7, issuer: testCa() })
    const mixed = { ...other.signer, certificateDerBase64: identity().signer.certificateDerBase64 }
    expect((await getToken(signGetToken(s, other.signer, mixed))).estado).toBe('21')
  })

  test('no Signature is 04, no Semilla is 06, not XML is 02, empty is 01', async () => {
    const s = await seed()
    expect((await getToken(`<?xml version="1.0"?><getToken><item><Semilla>${s}</Semilla></item></getToken>`)).estado).toBe('04')
    const noSeed = signGetToken(s, identity().signer).replace(/<item>.*<\/item>/, '<item></item>')
    expect((await getToken(noSeed)).estado).toBe('06')
    expect((await getToken('<getToken><item>')).estado).toBe('02')
    expect((await getToken('')).estado).toBe('01')
  })

  test('a certificate that names no RUT is -07', async () => {
    const s = await seed()
    const anonymous = makeCertificate({ rut: null, keySlot: 8, issuer: testCa() })
    expect((await getToken(signGetToken(s, anonymous.signer))).estado).toBe('-07')
  })

  test('a REST seed cannot buy a SOAP token (the channels are distinct, docs/sii-protocol.md §7.3)', async () => {
    const xml = await (await fetch(`${sim.url}/recursos/v1/boleta.electronica.semilla`)).text()
    const restSeed = parseXml(xml).getElementsByTagName('SEMILLA').item(0)?.textContent ?? ''
    expect((await getToken(signGetToken(restSeed, identity().signer))).estado).toBe('08')
  })
})

describe('boleta REST seed and token', () => {
  test('semilla is an XML RESPUESTA with ESTADO 00; the signed seed POSTed as XML gives a TOKEN', async () => {
    const res = await fetch(`${sim.url}/recursos/v1/boleta.electronica.semilla`, { headers: { Accept: 'application/xml' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/xml')
    const doc = parseXml(await res.text()).documentElement
    expect(field(doc, 'ESTADO')).toBe('00')
    const s = field(doc, 'SEMILLA') ?? ''
    const tokenRes = await fetch(`${sim.url}/recursos/v1/boleta.electronica.token`, { method: 'POST', body: signGetToken(s, identity().signer), headers: { 'content-type': 'application/xml' } })
    const tokenDoc = parseXml(await tokenRes.text()).documentElement
    expect(field(tokenDoc, 'ESTADO')).toBe('00')
    expect(field(tokenDoc, 'TOKEN')).toMatch(/^[A-Za-z0-9]{13}$/)
  })

  test('a REST token is not a SOAP token and the other way round', async () => {
    const rest = await restToken(sim.url)
    const soapTok = await soapToken(sim.url)
    const estUp = await soap(sim.url, 'QueryEstUp', 'getEstUp', { RutCompania: '76543210', DvCompania: '3', TrackId: '1', Token: rest })
    expect(field(estUp.inner, 'ESTADO')).toBe('003')
    const res = await fetch(`${sim.url}/recursos/v1/boleta.electronica.envio/76543210-3-1`, { headers: { Cookie: `TOKEN=${soapTok}` } })
    expect(res.status).toBe(401)
  })
})

describe('DTEWS plumbing', () => {
  test.each([
    ['CrSeed', 'getSeed', ''],
    ['GetTokenFromSeed', 'getToken', 'parameterOrder="pszXml"'],
    ['QueryEstUp', 'getEstUp', 'parameterOrder="RutCompania DvCompania TrackId Token"'],
    ['QueryEstDte', 'getEstDte', 'parameterOrder="RutConsultante DvConsultante RutCompania DvCompania RutReceptor DvReceptor TipoDte FolioDte FechaEmisionDte MontoDte Token"'],
  ])('GET %s.jws?WSDL describes %s, RPC style, at this origin', async (service, operation, order) => {
    const res = await fetch(`${sim.url}/DTEWS/${service}.jws?WSDL`)
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(parseXml(text).documentElement.localName).toBe('definitions')
    expect(text).toContain(`<wsdl:operation name="${operation}"${order ? ` ${order}` : ''}>`)
    expect(text).toContain('style="rpc"')
    expect(text).toContain(`location="${sim.url}/DTEWS/${service}.jws"`)
  })

  test('an operation the service does not offer is a SOAP Fault with HTTP 500, as Axis answers', async () => {
    const answer = await soap(sim.url, 'CrSeed', 'getToken', { pszXml: 'x' })
    expect(answer.status).toBe(500)
    expect(answer.text).toContain('<soapenv:Fault>')
  })

  test('the operation element may be in any namespace (the server dispatches on its local name)', async () => {
    const body = '<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>' +
      '<getSeed xmlns="https://maullin.sii.cl/DTEWS/CrSeed.jws"/></soapenv:Body></soapenv:Envelope>'
    const res = await fetch(`${sim.url}/DTEWS/CrSeed.jws`, { method: 'POST', body, headers: { 'content-type': 'text/xml; charset=utf-8', SOAPAction: '' } })
    const text = await res.text()
    expect(res.status).toBe(200)
    expect(text).toContain('xmlns:ns1="https://maullin.sii.cl/DTEWS/CrSeed.jws"')
    expect(text).toContain('SEMILLA')
  })

  test('unknown paths are 404', async () => {
    expect((await fetch(`${sim.url}/DTEWS/Nada.jws`, { method: 'POST' })).status).toBe(404)
  })
})
