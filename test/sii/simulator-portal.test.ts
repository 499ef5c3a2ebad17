// The simulated SII portal's login by certificate (src/sii/simulator/portal-login.ts, rcv-service.ts) over real HTTP and
// mutual TLS on 127.0.0.1: the plain origin's 307 to the TLS listener, the listener's certificate (signed by the portal
// CA, naming 127.0.0.1 and localhost), the client certificates it accepts and refuses, the sessions' cap, their 30 idle
// minutes on the simulator's clock, the logout, and the tope_sesiones fault. docs/decisions/simulator.md "Portal y RCV".
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { FACADE_NAMESPACE, FACADE_OPS, PORTAL_PATHS, SESSION_CAP_TEXT, SESSION_INVALID_TEXT } from '../../src/sii/portal-protocol'
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/sii/simulator/server'
import { SimulatorStore } from '../../src/sii/simulator/store'
import { testClock, type TestClock } from '../support/clock'
import { makeCertificate, testCa } from '../support/pki'
import { tempDir } from '../support/server'
import { holder, login, REFERENCIA } from './simulator-portal-helpers'
import { SIM_START } from './simulator-helpers'

setDefaultTimeout(30_000)

const running: RunningSimulator[] = []
const dirs: string[] = []
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

interface Portal {
  readonly url: string
  readonly clock: TestClock
  readonly dataDir: string
}

async function portal(opts: Partial<SimulatorOptions> = {}): Promise<Portal> {
  const clock = testClock({ at: SIM_START })
  const dataDir = tempDir('timbre-portal-')
  dirs.push(dataDir)
  const sim = await startSimulator({ processingDelayMs: 0, clock: clock.now, dataDir, ...opts })
  running.push(sim)
  return { url: sim.url, clock, dataDir }
}

/** A getResumen of the Registro de Ventas with the session's cookies and conversationId. */
async function resumen(base: string, token: string, conversationId = token): Promise<{ codRespuesta: number; msgeRespuesta: string }> {
  const res = await fetch(`${base}${PORTAL_PATHS.facade}${FACADE_OPS.resumen}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Cookie: `TOKEN=${token}; CSESSIONID=${token}` },
    body: JSON.stringify({
      metaData: { namespace: `${FACADE_NAMESPACE}${FACADE_OPS.resumen}`, conversationId, transactionId: crypto.randomUUID(), page: null },
      data: { rutEmisor: '76086428', dvEmisor: '5', ptributario: '202603', estadoContab: '', operacion: 'VENTA', codTipoDoc: 0 },
    }),
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { respEstado: { codRespuesta: number; msgeRespuesta: string } }).respEstado
}

const logout = (base: string, token: string) => fetch(`${base}${PORTAL_PATHS.logout}`, { headers: { Cookie: `TOKEN=${token}; CSESSIONID=${token}` } })

describe('the login by certificate', () => {
  test('the plain origin sends the login to the TLS listener, same hostname and query; its certificate is the portal CA\'s for 127.0.0.1 and localhost', async () => {
    const p = await portal()
    const first = await fetch(`${p.url}${PORTAL_PATHS.login}?${REFERENCIA}`, { method: 'POST', redirect: 'manual', body: 'referencia=x' })
    expect(first.status).toBe(307)
    const location = new URL(first.headers.get('location') ?? '')
    expect(location.protocol).toBe('https:')
    expect(location.hostname).toBe('127.0.0.1')
    expect(location.port).not.toBe(String(new URL(p.url).port))
    expect(`${location.pathname}${location.search}`).toBe(`${PORTAL_PATHS.login}?${REFERENCIA}`)
    // Verified against the portal CA, by IP and by name (the request's Host keeps its own name in the 307).
    expect((await login(p.url, holder())).status).toBe(302)
    const byName = await login(p.url.replace('127.0.0.1', 'localhost'), holder())
    expect(byName.status).toBe(302)
    expect(byName.location).toStartWith('http://localhost:')
    // Without the CA the client refuses the listener: nothing but the portal CA vouches for it.
    await expect(fetch(location.href, { method: 'POST', body: '' })).rejects.toThrow()
  })

  test('a holder\'s certificate opens a session: TOKEN and CSESSIONID alike, 302 to the referencia on the plain origin, which answers', async () => {
    const p = await portal()
    const ok = await login(p.url, holder())
    expect(ok.status).toBe(302)
    expect(ok.location).toBe(`${p.url}${PORTAL_PATHS.rcvHome}`)
    expect(ok.token).toMatch(/^[0-9A-F]{32}$/)
    expect(ok.cookies).toEqual([`TOKEN=${ok.token}; Path=/`, `CSESSIONID=${ok.token}; Path=/`])
    const home = await fetch(ok.location ?? '')
    expect(home.status).toBe(200)
    expect(await home.text()).toContain('Registro de Compras y Ventas')
    // The session serves the data service (nothing received: no data, code 3).
    expect((await resumen(p.url, ok.token ?? '')).codRespuesta).toBe(3)
  })

  test.each([
    ['no certificate', () => null],
    ['a certificate naming no RUT', () => makeCertificate({ rut: null, commonName: 'Sin RUT', issuer: testCa(), keySlot: 3, serial: '03' })],
    ['an expired certificate (on the simulator\'s clock)', () => makeCertificate({ rut: '07880442-4', issuer: testCa(), notAfter: new Date(SIM_START.getTime() - 1000), keySlot: 4, serial: '04' })],
    ['a certificate not yet valid', () => makeCertificate({ rut: '07880442-4', issuer: testCa(), notBefore: new Date(SIM_START.getTime() + 86_400_000), keySlot: 5, serial: '05' })],
  ])('%s: 200 with the IngresoCertificado page and no cookie', async (_name, identity) => {
    const p = await portal()
    const r = await login(p.url, identity())
    expect(r.status).toBe(200)
    expect(r.body).toContain('IngresoCertificado')
    expect(r.cookies).toEqual([])
  })
})

describe('sessions', () => {
  test('three open sessions per RUT: the fourth login gets the cap page and no cookie; a logout frees one', async () => {
    const p = await portal()
    const tokens: string[] = []
    for (let i = 0; i < 3; i++) tokens.push((await login(p.url, holder())).token ?? '')
    expect(new Set(tokens).size).toBe(3)
    const capped = await login(p.url, holder())
    expect(capped.status).toBe(200)
    expect(capped.body).toContain(SESSION_CAP_TEXT)
    expect(capped.cookies).toEqual([])
    // Another holder is not capped by this one's sessions.
    expect((await login(p.url, makeCertificate({ rut: '11111111-1', issuer: testCa(), keySlot: 6, serial: '06' }))).status).toBe(302)
    const out = await logout(p.url, tokens[0] ?? '')
    expect(out.status).toBe(200)
    expect((await resumen(p.url, tokens[0] ?? '')).msgeRespuesta).toBe(SESSION_INVALID_TEXT)
    expect((await login(p.url, holder())).status).toBe(302)
  })

  test('the cap is an option; sessions idle past 30 minutes of simulator clock neither serve nor count', async () => {
    const p = await portal({ portalSessionCap: 1 })
    const first = (await login(p.url, holder())).token ?? ''
    expect((await login(p.url, holder())).body).toContain(SESSION_CAP_TEXT)
    p.clock.advance(29 * 60_000)
    expect((await resumen(p.url, first)).codRespuesta).toBe(3)  // used: its 30 minutes start again
    p.clock.advance(30 * 60_000 + 1000)
    expect(await resumen(p.url, first)).toMatchObject({ codRespuesta: 99, msgeRespuesta: SESSION_INVALID_TEXT })
    expect((await login(p.url, holder())).status).toBe(302)
  })

  test('the data service wants conversationId equal to the TOKEN cookie, and a session the simulator opened', async () => {
    const p = await portal()
    const token = (await login(p.url, holder())).token ?? ''
    expect((await resumen(p.url, token, 'OTRO')).codRespuesta).toBe(99)
    expect((await resumen(p.url, 'INVENTADO')).msgeRespuesta).toBe(SESSION_INVALID_TEXT)
    expect((await resumen(p.url, token)).codRespuesta).toBe(3)
  })

  test('the tope_sesiones fault in the store: the next login gets the cap page, the one after a session', async () => {
    const p = await portal()
    const store = new SimulatorStore(p.dataDir)
    store.setFalla('tope_sesiones', 1)
    store.close()
    expect((await login(p.url, holder())).body).toContain(SESSION_CAP_TEXT)
    expect((await login(p.url, holder())).status).toBe(302)
  })

  test('the clock offset in the store moves a running simulator: a session idles out after `reloj` moves 31 minutes', async () => {
    const p = await portal()
    const token = (await login(p.url, holder())).token ?? ''
    const store = new SimulatorStore(p.dataDir)
    store.setClockOffsetMs(31 * 60_000)
    store.close()
    expect((await resumen(p.url, token)).codRespuesta).toBe(99)
  })
})

describe('the TLS listener holds nothing for ever', () => {
  test('a client that connects and never finishes the handshake does not hold stop', async () => {
    const sim = await startSimulator({ processingDelayMs: 0, dataDir: null })
    const first = await fetch(`${sim.url}${PORTAL_PATHS.login}?${REFERENCIA}`, { method: 'POST', redirect: 'manual', body: `referencia=${encodeURIComponent(REFERENCIA)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const port = Number(new URL(first.headers.get('location') ?? '').port)
    const { connect } = await import('node:net')
    const idle = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => idle.once('connect', () => resolve()))
    const started = Date.now()
    await sim.stop()
    expect(Date.now() - started).toBeLessThan(3000)
    expect(idle.destroyed || (await new Promise<boolean>((resolve) => idle.once('close', () => resolve(true))))).toBe(true)
  })
})
