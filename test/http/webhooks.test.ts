// Spec 4.4 and §6 with DESIGN §7, §12: registration, signed delivery to real receivers on 127.0.0.1, retries on the
// schedule (time is an injected clock), cancellation, triggers, the delivery log, tenancy.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { santiagoDate } from '../../src/clock'
import { alertsJob } from '../../src/jobs/alerts'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { webhookDeliverJob } from '../../src/jobs/webhook-deliver'
import { verifySignature } from '../../src/webhooks/signature'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer, uploadCaf, uploadCertificate } from '../support/issuance'
import { exportPfx, makeCertificate } from '../support/pki'
import { startReceiver, type Receiver } from '../support/receiver'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const HOOKS = '/api/v1/billing/webhooks'
const MIN = 60_000
const clock = testClock()
const deliver = webhookDeliverJob(3_600_000)
let s: TestServer
let t: Tenant
let rx: Receiver

beforeAll(async () => {
  s = await startTestServer({ clock, flags: { '--webhook-allow-http': 'true', '--deliver-every': '1h', '--submit-every': '1h', '--track-every': '1h' }, env: { TIMBRE_CAF_LOW_STOCK: '3' } })
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { folios: 500 })
  rx = startReceiver()
})
afterAll(async () => {
  await rx.stop()
  await s.stop()
})

const register = (body: unknown, tenant = t) => s.request('POST', HOOKS, { headers: { 'X-Api-Key': tenant.writeKey }, body })
const run = () => deliver.runOnce(s.server.deps)
const deliveries = async (id: string, tenant = t) => (await s.request('GET', `${HOOKS}/${id}/deliveries`, { headers: { 'X-Api-Key': tenant.readKey } })).json

describe('registration', () => {
  test('201 with the full generated secret and Location; the list masks it to its last 4 characters', async () => {
    const res = await register({ url: rx.url, events: ['dte.created'] })
    expect(res.status).toBe(201)
    expect(res.json).toEqual({ id: expect.any(String), url: rx.url, events: ['dte.created'], secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/), is_active: true, created_at: expect.any(String) })
    expect(res.headers.get('location')).toBe(`${HOOKS}/${res.json.id}`)
    const list = await s.request('GET', HOOKS, { headers: { 'X-Api-Key': t.readKey } })
    const mine = list.json.find((w: { id: string }) => w.id === res.json.id)
    expect(mine.secret).toBe(`…${res.json.secret.slice(-4)}`)
    expect(JSON.stringify(list.json)).not.toContain(res.json.secret)
  })

  test.each([
    [{ url: 'no es url', events: ['dte.created'] }, 'url', 'INVALID_FORMAT'],
    [{ url: 'ftp://x.cl/h', events: ['dte.created'] }, 'url', 'INVALID_VALUE'],
    [{ url: 'https://u:p@x.cl/h', events: ['dte.created'] }, 'url', 'NOT_ALLOWED'],
    [{ url: 'https://x.cl/h', events: ['dte.borrado'] }, 'events.0', 'INVALID_VALUE'],
    [{ url: 'https://x.cl/h', events: [] }, 'events', 'TOO_FEW'],
    [{ url: 'https://x.cl/h', events: ['dte.created'], secret: 'corto' }, 'secret', 'TOO_FEW'],
    [{ events: ['dte.created'] }, 'url', 'REQUIRED'],
  ])('%j → 400 at %s (%s)', async (body, field, code) => {
    const res = await register(body)
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field, code }))
  })

  test('plain http:// is refused unless --webhook-allow-http', async () => {
    const strict = await startTestServer()
    try {
      const tenant = await strict.tenant(testRut())
      const res = await strict.request('POST', HOOKS, { headers: { 'X-Api-Key': tenant.writeKey }, body: { url: 'http://127.0.0.1:9/h', events: ['dte.created'] } })
      expect(res.status).toBe(400)
      expect(res.json.details).toEqual([expect.objectContaining({ field: 'url', code: 'INVALID_VALUE' })])
      expect((await strict.request('POST', HOOKS, { headers: { 'X-Api-Key': tenant.writeKey }, body: { url: 'https://hooks.example.cl/t', events: ['dte.created'] } })).status).toBe(201)
    } finally {
      await strict.stop()
    }
  })

  test('an http:// URL (without --webhook-allow-http) and an unknown event → 400 naming both (DESIGN §5), nothing registered', async () => {
    const strict = await startTestServer()
    try {
      const tenant = await strict.tenant(testRut())
      const res = await strict.request('POST', HOOKS, { headers: { 'X-Api-Key': tenant.writeKey }, body: { url: 'http://127.0.0.1:9/h', events: ['dte.created', 'dte.borrado'] } })
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('VALIDATION_ERROR')
      expect(res.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual(['events.1:INVALID_VALUE', 'url:INVALID_VALUE'])
      expect((await strict.request('GET', HOOKS, { headers: { 'X-Api-Key': tenant.readKey } })).json).toEqual([])
    } finally {
      await strict.stop()
    }
  })
})

describe('delivery', () => {
  test('dte.created: signed POST with the headers of DESIGN §7; the signature verifies with the secret', async () => {
    const hook = await register({ url: rx.url, events: ['dte.created'], secret: 'un secreto de prueba muy largo' })
    const before = rx.received.length
    const dte = await issue(s, t, facturaSimple())
    await run()
    const got = rx.received.slice(before).filter((r) => JSON.parse(r.body).data?.dte?.id === dte.json.id)
    expect(got.length).toBeGreaterThanOrEqual(1)
    const r = got.find((g) => verifySignature('un secreto de prueba muy largo', g.headers['timbre-signature']!, g.body, Math.floor(clock.now().getTime() / 1000)))!
    expect(r).toBeDefined()
    const body = JSON.parse(r.body)
    expect(r.headers['content-type']).toBe('application/json')
    expect(r.headers['user-agent']).toMatch(/^Timbre\//)
    expect(r.headers['timbre-event-type']).toBe('dte.created')
    expect(r.headers['timbre-event-id']).toBe(body.id)
    expect(body).toEqual({
      id: expect.any(String),
      type: 'dte.created',
      created_at: expect.any(String),
      empresa_id: t.empresa.id,
      data: { dte: expect.objectContaining({ id: dte.json.id, tipo_dte: 33, folio: dte.json.folio, estado: 'firmado', monto_total: dte.json.monto_total, rut_receptor: '76086428-5', tracking: expect.any(Object), sii_status: null }) },
    })
    expect(verifySignature('otro secreto cualquiera 123', r.headers['timbre-signature']!, r.body, Math.floor(clock.now().getTime() / 1000))).toBe(false)
    // Both subscriptions got the same event id (DESIGN §12).
    const ids = new Set(got.map((g) => JSON.parse(g.body).id))
    expect(ids.size).toBe(1)
    const log = await deliveries(hook.json.id)
    expect(log.data[0]).toMatchObject({ event_type: 'dte.created', attempt: 1, status: 'delivered', status_code: 200, next_retry_at: null })
  })

  test('a receiver that fails then succeeds gets the retries at 1 min and 5 min; the log shows them', async () => {
    const fail = startReceiver()
    try {
      const hook = await register({ url: fail.url, events: ['dte.created'] })
      fail.script(500, 503)
      await issue(s, t, facturaSimple())
      await run()
      expect(fail.received).toHaveLength(1)
      let log = (await deliveries(hook.json.id)).data[0]
      expect(log).toMatchObject({ attempt: 1, status: 'pending', status_code: 500, error: 'http_status' })
      expect(Date.parse(log.next_retry_at) - clock.now().getTime()).toBeGreaterThan(55_000)
      clock.advance(30_000)
      await run()
      expect(fail.received).toHaveLength(1) // not yet
      clock.advance(31_000)
      await run()
      expect(fail.received).toHaveLength(2)
      clock.advance(5 * MIN + 1000)
      await run()
      expect(fail.received).toHaveLength(3)
      log = (await deliveries(hook.json.id)).data[0]
      expect(log).toMatchObject({ attempt: 3, status: 'delivered', status_code: 200 })
      expect(new Set(fail.received.map((r) => r.headers['timbre-event-id'])).size).toBe(1)
    } finally {
      await fail.stop()
    }
  })

  test('after the 8th failure the delivery is failed; a redirect counts as a failure', async () => {
    const bad = startReceiver()
    try {
      const hook = await register({ url: bad.url, events: ['dte.created'] })
      bad.script(302, 500, 500, 500, 500, 500, 500, 500, 500)
      await issue(s, t, facturaSimple())
      for (let i = 0; i < 9; i++) {
        await run()
        clock.advance(11 * 60 * MIN)
      }
      expect(bad.received).toHaveLength(8)
      const log = (await deliveries(hook.json.id)).data[0]
      expect(log).toMatchObject({ attempt: 8, status: 'failed', next_retry_at: null })
      expect(bad.received.length).toBe(8)
      // Redeliver queues it again at once (202) and it goes out with the same event id.
      const again = await s.request('POST', `${HOOKS}/${hook.json.id}/deliveries/${log.id}/redeliver`, { headers: { 'X-Api-Key': t.writeKey } })
      expect(again.status).toBe(202)
      await run()
      expect(bad.received).toHaveLength(9)
      expect(bad.received[8]!.headers['timbre-event-id']).toBe(bad.received[0]!.headers['timbre-event-id'])
    } finally {
      await bad.stop()
    }
  })

  test('a slow receiver (over 10 s) times out without holding a fast one back', async () => {
    const slow = startReceiver()
    const fast = startReceiver()
    try {
      await register({ url: slow.url, events: ['dte.created'] })
      await register({ url: fast.url, events: ['dte.created'] })
      slow.script(12_000)
      await issue(s, t, facturaSimple())
      const started = Date.now()
      const running = run()
      while (fast.received.length === 0 && Date.now() - started < 5000) await Bun.sleep(20)
      expect(fast.received).toHaveLength(1)
      expect(Date.now() - started).toBeLessThan(5000)
      await running
    } finally {
      await slow.stop()
      await fast.stop()
    }
  }, 30_000)

  test('DELETE cancels pending deliveries at once; a second DELETE is 404', async () => {
    const gone = startReceiver()
    try {
      const hook = await register({ url: gone.url, events: ['dte.created'] })
      await issue(s, t, facturaSimple())
      const del = await s.request('DELETE', `${HOOKS}/${hook.json.id}`, { headers: { 'X-Api-Key': t.writeKey } })
      expect(del.status).toBe(200)
      expect(del.json).toEqual({ status: 'deleted' })
      await run()
      expect(gone.received).toHaveLength(0)
      expect((await s.request('DELETE', `${HOOKS}/${hook.json.id}`, { headers: { 'X-Api-Key': t.writeKey } })).status).toBe(404)
      expect((await s.request('GET', HOOKS, { headers: { 'X-Api-Key': t.readKey } })).json.map((w: { id: string }) => w.id)).not.toContain(hook.json.id)
    } finally {
      await gone.stop()
    }
  })

  test('POST /webhooks/{id}/test sends a signed ping to that webhook only', async () => {
    const ping = startReceiver()
    try {
      const hook = await register({ url: ping.url, events: ['caf.low_stock'] })
      const res = await s.request('POST', `${HOOKS}/${hook.json.id}/test`, { headers: { 'X-Api-Key': t.writeKey } })
      expect(res.status).toBe(202)
      await run()
      expect(ping.received).toHaveLength(1)
      expect(JSON.parse(ping.received[0]!.body)).toMatchObject({ id: res.json.event_id, type: 'ping' })
      expect(verifySignature(hook.json.secret, ping.received[0]!.headers['timbre-signature']!, ping.received[0]!.body, Math.floor(clock.now().getTime() / 1000))).toBe(true)
    } finally {
      await ping.stop()
    }
  })

  test("another company's webhook is 404 for delete, deliveries, redeliver and test", async () => {
    const other = await s.tenant(testRut())
    const hook = await register({ url: rx.url, events: ['dte.created'] })
    for (const [method, path] of [
      ['DELETE', `${HOOKS}/${hook.json.id}`],
      ['GET', `${HOOKS}/${hook.json.id}/deliveries`],
      ['POST', `${HOOKS}/${hook.json.id}/test`],
      ['POST', `${HOOKS}/${hook.json.id}/deliveries/${crypto.randomUUID()}/redeliver`],
      ['DELETE', `${HOOKS}/no-es-uuid`],
    ] as const)
      expect((await s.request(method, path, { headers: { 'X-Api-Key': other.writeKey } })).status).toBe(404)
    expect((await s.request('GET', HOOKS, { headers: { 'X-Api-Key': other.readKey } })).json).toEqual([])
  })
})

describe('triggers', () => {
  test('dte.accepted, dte.rejected and dte.repaired when the SII decides', async () => {
    const finals = startReceiver()
    try {
      await register({ url: finals.url, events: ['dte.accepted', 'dte.rejected', 'dte.repaired'] })
      const recep = (rut: string) => ({ rut, razon_social: 'Receptor', giro: 'Giro', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago' })
      const ok = await issue(s, t, facturaSimple({ receptor: recep('76086428-5') }))
      const no = await issue(s, t, facturaSimple({ receptor: recep('88888888-8') }))
      const rep = await issue(s, t, facturaSimple({ receptor: recep('77777777-7') }))
      const submit = siiSubmitJob(3_600_000)
      const track = siiTrackJob(3_600_000)
      // Until these three DTEs have their events: DTEs of earlier tests may reach a final state in the same rounds.
      const mine = new Set([ok.json.id, no.json.id, rep.json.id])
      const decided = () => new Set(finals.received.map((r) => JSON.parse(r.body).data.dte.id).filter((id: string) => mine.has(id))).size
      for (let i = 0; i < 30 && decided() < 3; i++) {
        await submit.runOnce(s.server.deps)
        await track.runOnce(s.server.deps)
        await run()
        clock.advance(10_000)
      }
      const byDte = new Map(finals.received.map((r) => [JSON.parse(r.body).data.dte.id, JSON.parse(r.body)]))
      expect(byDte.get(ok.json.id)).toMatchObject({ type: 'dte.accepted', data: { dte: { estado: 'aceptado' } } })
      expect(byDte.get(no.json.id)).toMatchObject({ type: 'dte.rejected', data: { dte: { estado: 'rechazado', tracking: { rechazados: 1 } } } })
      expect(byDte.get(rep.json.id)).toMatchObject({ type: 'dte.repaired', data: { dte: { estado: 'con_reparos' } } })
      expect(byDte.get(ok.json.id).data.dte.sii_status).toMatchObject({ estado_sii: 'DOK' })
    } finally {
      await finals.stop()
    }
  }, 60_000)

  test('caf.low_stock fires once per crossing of TIMBRE_CAF_LOW_STOCK; a new CAF re-arms it', async () => {
    const low = startReceiver()
    try {
      const tenant = await s.tenant(testRut())
      await uploadCertificate(s, tenant)
      await register({ url: low.url, events: ['caf.low_stock'] }, tenant)
      const cafId = await uploadCaf(s, tenant, 34, 1, 5)
      const exenta = { tipo_dte: 34, receptor: { rut: '76086428-5', razon_social: 'Cliente', giro: 'Giro', direccion: 'Calle', comuna: 'Santiago', ciudad: 'Santiago' }, detalle: [{ nombre: 'Asesoría', cantidad: 1, precio: 10000 }] }
      await issue(s, tenant, exenta) // 4 left
      await run()
      expect(low.received).toHaveLength(0)
      await issue(s, tenant, exenta) // 3 left: crossing
      await issue(s, tenant, exenta) // 2 left: same crossing, no second event
      await run()
      expect(low.received).toHaveLength(1)
      expect(JSON.parse(low.received[0]!.body).data).toEqual({ tipo_dte: 34, folios_disponibles: 3, umbral: 3, caf_id: cafId })
      await uploadCaf(s, tenant, 34, 6, 7) // re-armed: 4 left
      await issue(s, tenant, exenta) // 3 left: a new crossing
      await run()
      expect(low.received).toHaveLength(2)
      expect(JSON.parse(low.received[1]!.body).data).toMatchObject({ tipo_dte: 34, folios_disponibles: 3 })
    } finally {
      await low.stop()
    }
  })

  test('certificado.expiring at 30, 15, 7, 3 and 1 days left, once each', async () => {
    const exp = startReceiver()
    const base = clock.offsetMs
    try {
      const tenant = await s.tenant(testRut())
      await register({ url: exp.url, events: ['certificado.expiring'] }, tenant)
      const identity = makeCertificate({ rut: '11111111-1', notBefore: new Date(clock.now().getTime() - 10 * 86_400_000), notAfter: new Date(clock.now().getTime() + 20 * 86_400_000 + 3_600_000), keySlot: 12 })
      await s.request('POST', '/api/v1/billing/empresa/certificado/pfx', { headers: { 'X-Api-Key': tenant.writeKey }, body: { pfx_base64: Buffer.from(exportPfx(identity, 'x', '3des')).toString('base64'), password: 'x' } })
      const days: number[] = []
      for (let day = 0; day < 22; day++) {
        alertsJob.runOnce(s.server.deps)
        alertsJob.runOnce(s.server.deps) // a second run the same day adds nothing
        await run()
        clock.advance(86_400_000)
      }
      for (const r of exp.received) {
        const body = JSON.parse(r.body)
        expect(body.type).toBe('certificado.expiring')
        expect(body.data).toMatchObject({ rut_firmante: '11111111-1', fecha_vencimiento: santiagoDate(identity.forgeCertificate.validity.notAfter) })
        days.push(body.data.dias_para_vencimiento)
      }
      expect(days).toEqual([20, 15, 7, 3, 1])
    } finally {
      clock.offsetMs = base
      await exp.stop()
    }
  })
})
