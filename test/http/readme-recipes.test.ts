// Issue 13 item 10: the README's recipes run on the machine it promises (Node.js and npm, plus curl), as written,
// and its numbers are the server's.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SETTINGS } from '../../src/config'
import { provisionIssuer } from '../support/issuance'
import { ROOT } from '../support/binary'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const shellBlocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)

let s: TestServer
let t: Tenant

beforeAll(async () => {
  // The configured default, whatever it is: the README must name the burst it gives.
  s = await startTestServer({ flags: { '--rate-limit': SETTINGS.rateLimit.default } })
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { folios: 10, tipos: [33] })
})
afterAll(() => s.stop())

describe('README', () => {
  test('its shell recipes use nothing a Node.js and npm machine lacks (no jq, no uuidgen)', () => {
    expect(shellBlocks.length).toBeGreaterThan(2)
    for (const block of shellBlocks) expect(block).not.toMatch(/\b(jq|uuidgen)\b/)
  })

  test('the recipe that issues to a cliente with a producto works as written', async () => {
    const auth = { 'X-Api-Key': t.writeKey }
    expect((await s.request('POST', '/api/v1/billing/clientes', { headers: auth, body: { rut: '76.086.428-5', razon_social: 'Ferretería Ñuble Ltda.', giro: 'Ferretería', direccion: 'Calle 1', comuna: 'Chillán', ciudad: 'Chillán' } })).status).toBe(201)
    expect((await s.request('POST', '/api/v1/billing/productos', { headers: auth, body: { codigo: 'MART-16', nombre: 'Martillo 16 oz', precio_unitario: 8990 } })).status).toBe(201)
    const recipe = shellBlocks.find((b) => b.includes('/clientes/search'))!
    const script = recipe.replaceAll('http://127.0.0.1:8080', s.url).replace(/^export KEY=.*$/m, '')
    // Asynchronous: the server answering the recipe runs in this process.
    const run = Bun.spawn(['bash', '-c', script], { env: { PATH: process.env.PATH ?? '', KEY: t.writeKey }, stdout: 'pipe', stderr: 'pipe' })
    await run.exited
    expect(await new Response(run.stderr).text()).toBe('')
    expect(await new Response(run.stdout).text()).toStartWith('201 ')
    const list = await s.request('GET', '/api/v1/billing/dte', { headers: auth })
    expect(list.json.items[0].detalle).toEqual([{ nombre: 'Martillo 16 oz', precio: 8990, unidad: 'UN', cantidad: 2 }])
  })

  test('the burst it names is the X-RateLimit-Limit the server sends at the default rate', async () => {
    const res = await s.request('GET', '/api/v1/billing/empresa', { headers: { 'X-Api-Key': t.readKey } })
    const limit = res.headers.get('x-ratelimit-limit')
    expect(limit).toBe(String(2 * Number(SETTINGS.rateLimit.default)))
    expect(README).toContain(`(${limit} por defecto)`)
  })

  test('options given to npm start after -- reach serve: the start script ends with the serve command', () => {
    const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
    expect(start).toMatch(/\.\/dist\/timbre serve [^&;|]*$/)
    expect(README).toContain('npm start -- --port')
  })
})
