// The SII portal session (src/sii/portal/session.ts, transport.ts) against a real TLS server that asks for the client's
// certificate: the company's certificate is the one presented, the login follows 307 (POST kept) and 302 (GET)
// redirects collecting cookies, the cookies and the TOKEN reach the data service, logout always happens (after a
// refused login, a session cap, an outage), redirects stay on the SII's (or the origin's) hosts, one session per RUT
// at a time, and no log line carries the session or the key.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { openPfx } from '../../src/crypto/pfx'
import type { SiiCompany, SiiCredentials } from '../../src/sii/client/client'
import { portalOrigins } from '../../src/sii/client/hosts'
import { PORTAL_PATHS } from '../../src/sii/portal-protocol'
import { createRcvPortalClient, type RcvPortalClientOptions } from '../../src/sii/portal/rcv-client'
import { isAllowedRedirect } from '../../src/sii/portal/session'
import { exportPfx, makeCertificate } from '../support/pki'
import { CSESSIONID, newPortalState, rcvPortal, startFakePortal, TOKEN, type FakePortal, type Handler, type RcvPortalState } from './portal-server'

const identity = makeCertificate({ rut: '11111111-1', commonName: 'Titular Empresa', keySlot: 7, serial: '5a11' })
// The company's certificate as Timbre holds it: a PKCS#12 opened by crypto/pfx.ts.
const certificado = openPfx(exportPfx(identity, 'clave', '3des'), 'clave')
const creds: SiiCredentials = { certificateId: 'cert-1', rutFirmante: certificado.rutFirmante, signer: certificado.signer }
const company: SiiCompany = { rut: '76354771-K', ambiente: 'produccion', isDemo: false }
const companyDer = Buffer.from(certificado.signer.certificateDerBase64, 'base64')

let portal: FakePortal
let state: RcvPortalState
let logs: Array<{ event: string } & Record<string, unknown>>

beforeAll(async () => {
  portal = await startFakePortal(() => ({ status: 500 }))
})
afterAll(() => portal.stop())
beforeEach(() => {
  portal.seen.length = 0
  logs = []
  state = newPortalState({})
  portal.handler = rcvPortal(state, companyDer)
})

function client(extra: Partial<RcvPortalClientOptions> = {}) {
  return createRcvPortalClient({ target: { kind: 'origin', origin: portal.httpsOrigin }, log: (event, fields) => logs.push({ event, ...fields }), ...extra })
}

/** The portal, except for requests `override` answers. */
function spoiled(override: (req: Parameters<Handler>[0]) => ReturnType<Handler> | undefined): Handler {
  const normal = rcvPortal(state, companyDer)
  return (req) => override(req) ?? normal(req)
}

const logoutsSeen = () => portal.seen.filter((r) => r.path === PORTAL_PATHS.logout).length

describe('login by certificate', () => {
  test('the company\'s certificate is presented on every https request, and the login → redirects → cookies → data service → logout sequence holds', async () => {
    const outcome = await client().leerRcv(company, creds, '202610')
    expect(outcome.kind).toBe('ok')
    // Every request went over TLS carrying exactly the company's certificate (DER as the signer holds it).
    expect(portal.seen.length).toBeGreaterThan(5)
    for (const req of portal.seen) expect(req.peerCertificate?.equals(companyDer)).toBe(true)
    const referencia = `${portal.httpsOrigin}${PORTAL_PATHS.rcvHome}`
    const [first, second, third, ...rest] = portal.seen
    expect([first?.method, first?.target, first?.body]).toEqual(['POST', `${PORTAL_PATHS.login}?${referencia}`, new URLSearchParams({ referencia }).toString()])
    expect(first?.headers['content-type']).toBe('application/x-www-form-urlencoded')
    // 307 repeats the POST with its body; the cookie the first hop set goes along.
    expect([second?.method, second?.path, second?.body, second?.headers.cookie]).toEqual(['POST', '/cgi_AUT2000/CAutInicio2.cgi', first?.body, `CSESSIONID=${CSESSIONID}`])
    // 302 becomes a GET, with the session's cookies.
    expect([third?.method, third?.path, third?.body]).toEqual(['GET', PORTAL_PATHS.rcvHome, ''])
    expect(third?.headers.cookie).toContain(`TOKEN=${TOKEN}`)
    const data = rest.slice(0, -1)
    expect(data.map((r) => `${r.method} ${r.path}`)).toEqual(Array(5).fill(`POST ${PORTAL_PATHS.facade}getResumen`))
    for (const r of data) {
      expect(r.headers.cookie).toBe(`CSESSIONID=${CSESSIONID}; TOKEN=${TOKEN}; NETSCAPE_LIVEWIRE.x=1`)
      expect(JSON.parse(r.body).metaData.conversationId).toBe(TOKEN)
    }
    const last = rest.at(-1)
    expect([last?.method, last?.path, last?.headers.cookie]).toEqual(['GET', PORTAL_PATHS.logout, `CSESSIONID=${CSESSIONID}; TOKEN=${TOKEN}; NETSCAPE_LIVEWIRE.x=1`])
    expect([state.logins, state.logouts, state.open]).toEqual([1, 1, 0])
  })

  test('another certificate than the company\'s is refused by the portal: login_rechazado, and logout still happens', async () => {
    const other = makeCertificate({ rut: '22222222-2', keySlot: 8, serial: '5a12' })
    const outcome = await client().leerRcv(company, { ...creds, signer: other.signer }, '202610')
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'login_rechazado' })
    expect(portal.seen[0]?.peerCertificate?.equals(other.certificateDer)).toBe(true)
    expect(logoutsSeen()).toBe(1)
    expect(state.facade).toHaveLength(0)
  })

  test('a login that ends on a page with no TOKEN cookie is login_rechazado, with the accountant\'s words', async () => {
    portal.handler = spoiled((req) => (req.path === '/cgi_AUT2000/CAutInicio2.cgi'
      ? { status: 200, headers: [['Set-Cookie', 'CSESSIONID=x; Path=/']], body: '<html>Ingrese su RUT y clave</html>' } : undefined))
    const outcome = await client().leerRcv(company, creds, '202610')
    expect(outcome.kind === 'failed' && outcome.motivo).toBe('login_rechazado')
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('certificado')
    expect(logoutsSeen()).toBe(1)
  })

  test('a TOKEN the portal sets and then deletes (Max-Age=0) is no session', async () => {
    portal.handler = spoiled((req) => (req.path === PORTAL_PATHS.rcvHome
      ? { status: 200, headers: [['Set-Cookie', 'TOKEN=; Max-Age=0; Path=/']], body: '<html>Sesión cerrada</html>' } : undefined))
    expect(await client().leerRcv(company, creds, '202610')).toMatchObject({ kind: 'failed', motivo: 'login_rechazado' })
    expect(portal.seen.at(-1)?.headers.cookie).not.toContain('TOKEN')
  })

  test('the session cap page (accents as HTML entities, Latin-1) is tope_sesiones', async () => {
    const page = Buffer.from('<html><body>Usted ha superado el N&uacute;mero M&Aacute;XIMO de  sesiones autenticadas. Cierre alguna.</body></html>', 'latin1')
    portal.handler = spoiled((req) => (req.path === '/cgi_AUT2000/CAutInicio2.cgi'
      ? { status: 200, headers: [['Content-Type', 'text/html; charset=ISO-8859-1']], body: page } : undefined))
    const outcome = await client().leerRcv(company, creds, '202610')
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'tope_sesiones' })
    expect(logoutsSeen()).toBe(1)
  })

  test('the cap page in plain Spanish with accents is recognised too', async () => {
    portal.handler = spoiled((req) => (req.path === '/cgi_AUT2000/CAutInicio2.cgi'
      ? { status: 200, headers: [['Content-Type', 'text/html; charset=utf-8']], body: '<p>Se alcanzó el número máximo de sesiones</p>' } : undefined))
    expect(await client().leerRcv(company, creds, '202610')).toMatchObject({ kind: 'failed', motivo: 'tope_sesiones' })
  })

  test('a 503 at the login is sin_conexion; logout is still tried', async () => {
    portal.handler = spoiled((req) => (req.path === PORTAL_PATHS.login ? { status: 503, body: 'Service Unavailable' } : undefined))
    expect(await client().leerRcv(company, creds, '202610')).toMatchObject({ kind: 'failed', motivo: 'sin_conexion' })
    expect(logoutsSeen()).toBe(1)
  })
})

describe('redirects', () => {
  test('an origin target may move the login from http to https on another port of its own host', async () => {
    portal.handler = spoiled((req) => (req.scheme === 'http' && req.path === PORTAL_PATHS.login
      ? { status: 307, headers: [['Location', `${portal.httpsOrigin}${req.target}`]] } : undefined))
    const outcome = await createRcvPortalClient({ target: { kind: 'origin', origin: portal.httpOrigin } }).leerRcv(company, creds, '202610')
    expect(outcome.kind).toBe('ok')
    expect(portal.seen.slice(0, 2).map((r) => `${r.scheme} ${r.method} ${r.path}`)).toEqual([`http POST ${PORTAL_PATHS.login}`, `https POST ${PORTAL_PATHS.login}`])
    expect(portal.seen[1]?.peerCertificate?.equals(companyDer)).toBe(true)
  })

  test.each([
    ['another host', 'https://evil.example/robar'],
    ['another name of the same machine', 'https://localhost:1/cgi_AUT2000/CAutInicio2.cgi'],
    ['another scheme', 'ftp://127.0.0.1/x'],
  ])('a redirect to %s is not followed: respuesta_invalida, and logout happens', async (_name, location) => {
    portal.handler = spoiled((req) => (req.path === PORTAL_PATHS.login ? { status: 302, headers: [['Location', location]] } : undefined))
    const outcome = await client().leerRcv(company, creds, '202610')
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida' })
    expect(portal.seen.map((r) => r.path)).toEqual([PORTAL_PATHS.login, PORTAL_PATHS.logout])
  })

  test('more than 10 redirects is respuesta_invalida', async () => {
    let hops = 0
    portal.handler = spoiled((req) => (req.path.startsWith('/loop') || req.path === PORTAL_PATHS.login
      ? { status: 302, headers: [['Location', `/loop/${++hops}`]] } : undefined))
    const outcome = await client().leerRcv(company, creds, '202610')
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('más de 10 redirecciones')
    expect(hops).toBe(11)
  })

  test('the real SII\'s portal hosts, or the origin for all three', () => {
    expect(portalOrigins({ kind: 'sii' })).toEqual({ login: 'https://herculesr.sii.cl', logout: 'https://zeusr.sii.cl', rcv: 'https://www4.sii.cl' })
    expect(portalOrigins({ kind: 'origin', origin: 'http://127.0.0.1:9000/' })).toEqual({ login: 'http://127.0.0.1:9000', logout: 'http://127.0.0.1:9000', rcv: 'http://127.0.0.1:9000' })
  })

  test.each([
    ['https://www4.sii.cl/consdcvinternetui/', true],
    ['https://herculesr.sii.cl:443/cgi_AUT2000/x', true],
    ['http://www4.sii.cl/', false],
    ['https://sii.cl.evil.example/', false],
    ['https://evilsii.cl/', false],
  ])('the real SII: a redirect to %s is allowed: %p', (url, allowed) => {
    expect(isAllowedRedirect({ kind: 'sii' }, new URL(url))).toBe(allowed)
  })
})

describe('logout', () => {
  test('a logout the portal fails (500) or never answers does not change the outcome, and is logged', async () => {
    portal.handler = spoiled((req) => (req.path === PORTAL_PATHS.logout ? { status: 500, body: 'Error 500' } : undefined))
    expect((await client().leerRcv(company, creds, '202610')).kind).toBe('ok')
    expect(logs.find((l) => l.event === 'sii.portal.logout')).toMatchObject({ outcome: 'failed', reason: 'HTTP 500', company_rut: '76354771-K', periodo: '202610' })
    portal.handler = spoiled((req) => (req.path === PORTAL_PATHS.logout ? { status: 200, hang: true } : undefined))
    expect((await client({ timeoutMs: 400 }).leerRcv(company, creds, '202610')).kind).toBe('ok')
    expect(logs.filter((l) => l.event === 'sii.portal.logout').at(-1)).toMatchObject({ outcome: 'failed', reason: 'timeout after 400 ms' })
  })
})

describe('one session per company', () => {
  /** Slows every data answer, so that reads in parallel would overlap. */
  function slowPortal(): void {
    const normal = rcvPortal(state, companyDer)
    portal.handler = async (req) => {
      if (req.path.startsWith(PORTAL_PATHS.facade)) await Bun.sleep(40)
      return normal(req)
    }
  }

  test('two reads for the same RUT run one after the other, each in its own session', async () => {
    slowPortal()
    const c = client()
    const outcomes = await Promise.all([c.leerRcv(company, creds, '202610'), c.leerRcv({ ...company, rut: '76.354.771-k' }, creds, '202609')])
    expect(outcomes.map((o) => o.kind)).toEqual(['ok', 'ok'])
    expect([state.logins, state.logouts, state.maxOpen]).toEqual([2, 2, 1])
  })

  test('reads for two companies run side by side', async () => {
    slowPortal()
    const c = client()
    await Promise.all([c.leerRcv(company, creds, '202610'), c.leerRcv({ ...company, rut: '12345678-5' }, creds, '202610')])
    expect([state.logins, state.logouts, state.maxOpen]).toEqual([2, 2, 2])
  })

  test('a read after a failed one for the same RUT is not blocked by it', async () => {
    portal.handler = spoiled((req) => (req.path === PORTAL_PATHS.login ? { status: 503 } : undefined))
    const c = client()
    const first = c.leerRcv(company, creds, '202610')
    const second = c.leerRcv(company, creds, '202610')
    expect((await first).kind).toBe('failed')
    portal.handler = rcvPortal(state, companyDer)
    expect((await second).kind).toBe('ok')
  })
})

test('no log line carries the session\'s cookies, the TOKEN or the private key; every line names the company and the period', async () => {
  await client().leerRcv(company, creds, '202610')
  portal.handler = spoiled((req) => (req.path.endsWith('getResumen') ? { status: 200, body: `{"respEstado": {"codRespuesta": 2, "msgeRespuesta": "x"}, "TOKEN": "${TOKEN}"` } : undefined))
  await client().leerRcv(company, creds, '202610')
  const text = JSON.stringify(logs)
  const keyPem = certificado.signer.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  expect(text).not.toContain(TOKEN)
  expect(text).not.toContain(CSESSIONID)
  expect(text).not.toContain(keyPem.split('\n')[1] ?? 'unreachable')
  expect(logs.map((l) => l.event)).toContain('sii.portal.login')
  for (const l of logs) expect([l.company_rut, l.periodo]).toEqual(['76354771-K', '202610'])
})
