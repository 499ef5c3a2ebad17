// Console webhooks (DESIGN §7, §14) against a real server, a real SQLite file, the delivery job running on its own
// schedule and a real receiver on 127.0.0.1: what the console registers, pings, redelivers and deletes is what the
// API then answers.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { formatDateTime } from '../../src/console/forms'
import { EVENT_TYPES } from '../../src/domain/events'
import { verifySignature } from '../../src/webhooks/signature'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { startReceiver, type Receiver } from '../support/receiver'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const HOOKS = '/api/v1/billing/webhooks'
let s: TestServer
let t: Tenant
let rx: Receiver
let c: ConsoleClient

beforeAll(async () => {
  // The server's own delivery job runs every second (the scheduler's finest period); tests wait for the receiver and the
  // log the way an operator waits for the page.
  s = await startTestServer({ flags: { '--webhook-allow-http': 'true', '--deliver-every': '1s' } })
  t = await s.tenant(testRut())
  rx = startReceiver()
  c = await consoleLogin(s, t.writeKey)
})
afterAll(async () => {
  await rx.stop()
  await s.stop()
})

const apiList = async (tenant = t) => (await s.request('GET', HOOKS, { headers: { 'X-Api-Key': tenant.readKey } })).json as Array<{ id: string; url: string; events: string[]; secret: string }>
const apiDeliveries = async (id: string) => (await s.request('GET', `${HOOKS}/${id}/deliveries`, { headers: { 'X-Api-Key': t.readKey } })).json.data as Array<Record<string, any>>

function registration(url: string, events: readonly string[], secret?: string): FormData {
  const form = new FormData()
  form.set('url', url)
  for (const e of events) form.append('events', e)
  if (secret !== undefined) form.set('secret', secret)
  return form
}

/** The webhook a received ping was for (its data names it), or null for any other event. */
function pingOf(body: string): string | null {
  const event = JSON.parse(body) as { type: string; data: { webhook_id?: string } }
  return event.type === 'ping' ? (event.data.webhook_id ?? null) : null
}

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const got = await probe()
    if (got) return got
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

/** Registers through the console and reads the new webhook's id from the API. */
async function registerThroughConsole(url: string, events: readonly string[]): Promise<{ id: string; secret: string; html: string }> {
  const before = new Set((await apiList()).map((w) => w.id))
  const page = await c.post('/console/webhooks', registration(url, events))
  expect(page.status).toBe(200)
  const secret = /id="secreto-webhook"[^>]*>(whsec_[A-Za-z0-9_-]{43})</.exec(page.html)?.[1]
  expect(secret).toBeDefined()
  const created = (await apiList()).find((w) => !before.has(w.id))!
  return { id: created.id, secret: secret!, html: page.html }
}

describe('registering', () => {
  test('the form offers every event the API accepts, as a group of checkboxes with a legend', async () => {
    const page = await c.get('/console/webhooks')
    expect(page.status).toBe(200)
    expect(page.html).toMatch(/<fieldset[^>]*id="f-events"[^>]*><legend>Eventos/)
    for (const e of EVENT_TYPES) expect(page.html).toContain(`type="checkbox" id="f-events-${e.replace('.', '-')}" name="events" value="${e}"`)
    expect(page.html).toContain('<label for="f-url"')
    expect(page.html).toContain('name="secret"')
  })

  test('the secret is shown once; the API lists the webhook with it masked; the page never shows it again', async () => {
    const { id, secret, html } = await registerThroughConsole(rx.url, ['dte.created', 'caf.low_stock'])
    expect(html).toContain('no se vuelve a mostrar')
    const listed = (await apiList()).find((w) => w.id === id)!
    expect(listed).toMatchObject({ url: rx.url, events: ['dte.created', 'caf.low_stock'], secret: `…${secret.slice(-4)}` })
    const again = await c.get('/console/webhooks')
    expect(again.html).toContain(rx.url)
    expect(again.html).toContain(`…${secret.slice(-4)}`)
    expect(again.html).not.toContain(secret)
    expect((await c.get(`/console/webhooks/${id}`)).html).not.toContain(secret)
  })

  test('a chosen secret is shown once like a generated one, and is the key the receiver verifies the ping with', async () => {
    const secret = 'un secreto propio de prueba 123'
    const page = await c.post('/console/webhooks', registration(rx.url, ['dte.accepted'], secret))
    expect(page.status).toBe(200)
    expect(page.html).toContain(`id="secreto-webhook">${secret}<`)
    const hook = (await apiList()).find((w) => w.secret === '… 123')!
    const before = rx.received.length
    await c.post(`/console/webhooks/${hook.id}/probar`, {})
    const got = await until('the ping at the receiver', async () => rx.received.slice(before).find((r) => pingOf(r.body) === hook.id))
    expect(verifySignature(secret, got.headers['timbre-signature']!, got.body, Math.floor(Date.now() / 1000))).toBe(true)
  })

  test('a bad URL shows its error beside url, keeps what was typed, and registers nothing', async () => {
    const before = (await apiList()).length
    const page = await c.post('/console/webhooks', registration('ftp://x.cl/h', ['dte.created']))
    expect(page.status).toBe(400)
    expect(page.html).toMatch(/id="f-url-error"[^>]*>[^<]*http/)
    expect(page.html).toContain('aria-invalid="true"')
    expect(page.html).toContain('value="ftp://x.cl/h"')
    // The checkbox chosen stays chosen.
    expect(page.html).toMatch(/id="f-events-dte-created" name="events" value="dte.created" checked/)
    expect((await apiList()).length).toBe(before)
  })

  test('no event, no URL and a short secret: each error beside its field, as the API names them', async () => {
    const before = (await apiList()).length
    const form = registration('', [], 'corto')
    const page = await c.post('/console/webhooks', form)
    expect(page.status).toBe(400)
    expect(page.html).toContain('id="f-events-error"')
    expect(page.html).toMatch(/id="f-url-error"[^>]*>Campo requerido/)
    expect(page.html).toMatch(/id="f-secret-error"[^>]*>Requiere al menos 16 caracteres/)
    expect(page.html).not.toContain('corto')
    expect((await apiList()).length).toBe(before)
  })
})

describe('the limit of 20 webhooks', () => {
  test('the 21st registration shows the limit and what to do on the form (422), keeps what was typed and registers nothing', async () => {
    const other = await s.tenant(testRut())
    const console2 = await consoleLogin(s, other.writeKey)
    for (let i = 0; i < 20; i++) {
      const res = await s.request('POST', HOOKS, { headers: { 'X-Api-Key': other.writeKey }, body: { url: `${rx.url}/h${i}`, events: ['dte.created'] } })
      expect(res.status).toBe(201)
    }
    const page = await console2.post('/console/webhooks', registration(`${rx.url}/veintiuno`, ['dte.accepted']))
    expect(page.status).toBe(422)
    expect(page.html).toContain('role="alert"')
    expect(page.html).toContain('máximo de webhooks registrados (20)')
    expect(page.html).toContain('Elimine en esta página un webhook que ya no use')
    expect(page.html).toContain(`value="${rx.url}/veintiuno"`)
    expect((await apiList(other)).length).toBe(20)
  })
})

describe('ping, deliveries and redelivery', () => {
  test('"probar" sends a signed ping the receiver gets; the page lists it with its attempt; polling stops once delivered', async () => {
    const { id } = await registerThroughConsole(rx.url, ['dte.rejected'])
    const before = rx.received.length
    const res = await c.post(`/console/webhooks/${id}/probar`, {})
    expect(res.status).toBe(303)
    expect(res.location).toBe(`/console/webhooks/${id}?aviso=prueba`)
    const got = await until('the ping at the receiver', async () => rx.received.slice(before).find((r) => pingOf(r.body) === id))
    expect(got.headers['timbre-event-type']).toBe('ping')
    expect(got.headers['timbre-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    const [delivery] = await until('the delivery to be logged', async () => {
      const log = await apiDeliveries(id)
      return log[0]?.status === 'delivered' ? log : null
    })
    expect(delivery).toMatchObject({ event_type: 'ping', attempt: 1, status_code: 200 })

    const page = await c.get(`/console/webhooks/${id}?aviso=prueba`)
    expect(page.status).toBe(200)
    expect(page.html).toContain('Evento de prueba (ping)')
    const row = new RegExp(`<tr id="entrega-${delivery!.id}">.*?</tr>`).exec(page.html)?.[0] ?? ''
    expect(row).toContain('<code>ping</code>')
    expect(row).toContain('Entregada')
    expect(row).toContain('<td class="num">1</td>')
    expect(row).toContain('HTTP 200')
    expect(row).toContain(`action="/console/webhooks/${id}/entregas/${delivery!.id}/reenviar"`)
    // Nothing pending: the region is there, live, but no longer polls.
    expect(page.html).toMatch(/<div id="entregas" aria-live="polite">/)
    const fragment = await c.get(`/console/webhooks/${id}/entregas`)
    expect(fragment.status).toBe(200)
    expect(fragment.html).not.toContain('<html')
    expect(fragment.html).toContain(delivery!.id)
    expect(fragment.html).not.toContain('hx-trigger')
  })

  test('"Reenviar" queues the delivery again: the receiver gets it a second time, with the same event id, and the attempt count grows', async () => {
    const { id } = await registerThroughConsole(rx.url, ['dte.repaired'])
    await c.post(`/console/webhooks/${id}/probar`, {})
    const [first] = await until('the ping to be delivered', async () => {
      const log = await apiDeliveries(id)
      return log[0]?.status === 'delivered' ? log : null
    })
    const before = rx.received.length
    const res = await c.post(`/console/webhooks/${id}/entregas/${first!.id}/reenviar`, {})
    expect(res.status).toBe(303)
    expect(res.location).toBe(`/console/webhooks/${id}?aviso=reenviado`)
    const again = await until('the redelivery at the receiver', async () => rx.received.slice(before).find((r) => r.headers['timbre-event-id'] === first!.event_id))
    expect(again).toBeDefined()
    const [second] = await until('the second attempt to be logged', async () => {
      const log = await apiDeliveries(id)
      return log[0]?.attempt === 2 && log[0]?.status === 'delivered' ? log : null
    })
    expect(second!.id).toBe(first!.id)
    const page = await c.get(`/console/webhooks/${id}?aviso=reenviado`)
    expect(page.html).toContain('Entrega en cola para reenviarse ahora.')
    const row = new RegExp(`<tr id="entrega-${first!.id}">.*?</tr>`).exec(page.html)?.[0] ?? ''
    expect(row).toContain('<td class="num">2</td>')
  })

  test('a failing receiver leaves the delivery retrying: status code, next retry and the region polling every 3 s', async () => {
    const failing = startReceiver()
    try {
      const { id } = await registerThroughConsole(failing.url, ['dte.created'])
      failing.script(500)
      await c.post(`/console/webhooks/${id}/probar`, {})
      const [pending] = await until('the failed first attempt', async () => {
        const log = await apiDeliveries(id)
        return log[0]?.attempt === 1 ? log : null
      })
      expect(pending).toMatchObject({ status: 'pending', status_code: 500 })
      expect(typeof pending!.next_retry_at).toBe('string')
      const page = await c.get(`/console/webhooks/${id}`)
      const row = new RegExp(`<tr id="entrega-${pending!.id}">.*?</tr>`).exec(page.html)?.[0] ?? ''
      expect(row).toContain('Reintentando')
      expect(row).toContain('HTTP 500')
      // The log's class http_status says no more than the status does: not shown beside it.
      expect(row).not.toContain('http_status')
      expect(row).toContain(`<td>${formatDateTime(pending!.next_retry_at)}</td>`)
      for (const html of [page.html, (await c.get(`/console/webhooks/${id}/entregas`)).html]) {
        expect(html).toContain(`<div id="entregas" aria-live="polite" hx-get="/console/webhooks/${id}/entregas" hx-trigger="every 3s" hx-swap="outerHTML">`)
      }
    } finally {
      await failing.stop()
    }
  })
})

describe('the error class in words', () => {
  test('a receiver that refuses the connection: no status, and "conexión rechazada" with the class as its title', async () => {
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const url = `http://127.0.0.1:${closed.port}/h`
    closed.stop(true)
    const { id } = await registerThroughConsole(url, ['dte.created'])
    await c.post(`/console/webhooks/${id}/probar`, {})
    const [attempted] = await until('the refused first attempt', async () => {
      const log = await apiDeliveries(id)
      return log[0]?.attempt === 1 ? log : null
    })
    expect(attempted).toMatchObject({ status_code: null, error: 'connection_refused' })
    const row = new RegExp(`<tr id="entrega-${attempted!.id}">.*?</tr>`).exec((await c.get(`/console/webhooks/${id}`)).html)?.[0] ?? ''
    expect(row).toContain('Sin respuesta')
    expect(row).toContain('<span class="muted" title="connection_refused">conexión rechazada</span>')
  })
})

describe('deleting, tenancy and read-only', () => {
  test('"Eliminar" removes the webhook from the API list and redirects with a notice', async () => {
    const { id } = await registerThroughConsole(rx.url, ['certificado.expiring'])
    const page = await c.get(`/console/webhooks/${id}`)
    expect(page.html).toMatch(new RegExp(`<form method="post" action="/console/webhooks/${id}/eliminar" data-confirm="[^"]+">`))
    const res = await c.post(`/console/webhooks/${id}/eliminar`, {})
    expect(res.status).toBe(303)
    expect(res.location).toBe('/console/webhooks?aviso=eliminado')
    expect((await apiList()).map((w) => w.id)).not.toContain(id)
    expect((await c.get('/console/webhooks?aviso=eliminado')).html).toContain('Webhook eliminado')
    expect((await c.get(`/console/webhooks/${id}`)).status).toBe(404)
    expect((await c.post(`/console/webhooks/${id}/eliminar`, {})).status).toBe(404)
  })

  test("another company's webhook is 404 on every screen and action, and stays untouched", async () => {
    const other = await s.tenant(testRut(), 'Otra Empresa SpA')
    const theirs = await s.request('POST', HOOKS, { headers: { 'X-Api-Key': other.writeKey }, body: { url: rx.url, events: ['dte.created'] } })
    expect(theirs.status).toBe(201)
    const id = theirs.json.id as string
    const ping = await s.request('POST', `${HOOKS}/${id}/test`, { headers: { 'X-Api-Key': other.writeKey } })
    expect(ping.status).toBe(202)
    const [delivery] = await until('their ping to be logged', async () => {
      const log = (await s.request('GET', `${HOOKS}/${id}/deliveries`, { headers: { 'X-Api-Key': other.readKey } })).json.data
      return log.length > 0 ? log : null
    })
    expect((await c.get(`/console/webhooks/${id}`)).status).toBe(404)
    expect((await c.get(`/console/webhooks/${id}/entregas`)).status).toBe(404)
    expect((await c.post(`/console/webhooks/${id}/probar`, {})).status).toBe(404)
    expect((await c.post(`/console/webhooks/${id}/entregas/${delivery.id}/reenviar`, {})).status).toBe(404)
    expect((await c.post(`/console/webhooks/${id}/eliminar`, {})).status).toBe(404)
    expect((await c.get('/console/webhooks/no-es-uuid')).status).toBe(404)
    expect((await c.get('/console/webhooks')).html).not.toContain(id)
    expect((await apiList(other)).map((w) => w.id)).toEqual([id])
  })

  test('a read-only key sees the webhooks and deliveries without any form; its POSTs are 403 and change nothing', async () => {
    const { id } = await registerThroughConsole(rx.url, ['recibido.created'])
    await c.post(`/console/webhooks/${id}/probar`, {})
    const [delivery] = await until('the ping to be logged', async () => {
      const log = await apiDeliveries(id)
      return log.length > 0 ? log : null
    })
    const ro = await consoleLogin(s, t.readKey)
    const list = await ro.get('/console/webhooks')
    expect(list.status).toBe(200)
    expect(list.html).toContain(`/console/webhooks/${id}`)
    expect(list.html).not.toContain('action="/console/webhooks"')
    expect(list.html).not.toContain('name="events"')
    const page = await ro.get(`/console/webhooks/${id}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain(delivery!.id)
    expect(page.html).not.toContain('/probar')
    expect(page.html).not.toContain('/eliminar')
    expect(page.html).not.toContain('/reenviar')
    const before = (await apiList()).length
    expect((await ro.post('/console/webhooks', registration(rx.url, ['dte.created']))).status).toBe(403)
    expect((await ro.post(`/console/webhooks/${id}/eliminar`, {})).status).toBe(403)
    expect((await ro.post(`/console/webhooks/${id}/probar`, {})).status).toBe(403)
    expect((await apiList()).length).toBe(before)
  })
})
