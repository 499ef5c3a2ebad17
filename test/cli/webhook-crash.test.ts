// DESIGN §7: the event is written with the change it reports, so kill -9 between the commit and the delivery loses
// nothing: after a restart the receiver gets it.
import { afterAll, expect, test } from 'bun:test'
import { santiagoDate } from '../../src/clock'
import { verifySignature } from '../../src/webhooks/signature'
import { ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { facturaSimple, signer } from '../support/issuance'
import { exportPfx, makeTestCaf } from '../support/pki'
import { startReceiver } from '../support/receiver'
import { tempDir } from '../support/server'

const RUT = '76086428-5'
let serve: ServeProcess | null = null
const rx = startReceiver()
afterAll(async () => {
  if (serve && serve.proc.exitCode === null) await serve.terminate()
  await rx.stop()
})

test('kill -9 after a 201 and before its webhook went out: the restarted server delivers dte.created', async () => {
  await ensureBinary()
  const dir = tempDir('timbre-whcrash-')
  runBinary(['empresa', 'create', '--rut', RUT, '--razon-social', 'Ferretería Ñandú Ltda.', '--giro', 'Ferretería', '--acteco', '475200', '--direccion', 'Av. Matta 1020', '--comuna', 'Santiago', '--ciudad', 'Santiago', '--data-dir', dir])
  const key = runBinary(['apikey', 'create', '--empresa', RUT, '--write', '--data-dir', dir]).json().key as string
  const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
  // Deliveries every hour (the first run an hour after start): nothing goes out before the kill.
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--webhook-allow-http', '--deliver-every', '1h'])
  await fetch(`${serve.url}/api/v1/billing/empresa/certificado/pfx`, { method: 'POST', headers: h, body: JSON.stringify({ pfx_base64: Buffer.from(exportPfx(signer(), 'x', '3des')).toString('base64'), password: 'x' }) })
  const caf = makeTestCaf({ rut: RUT, razonSocial: 'Ferretería Ñandú Ltda.', tipoDte: 33, folioDesde: 1, folioHasta: 10, fechaAutorizacion: santiagoDate(new Date()) })
  await fetch(`${serve.url}/api/v1/billing/caf`, { method: 'POST', headers: h, body: JSON.stringify({ tipo_dte: 33, caf_xml: caf.xml }) })
  const hook = (await (await fetch(`${serve.url}/api/v1/billing/webhooks`, { method: 'POST', headers: h, body: JSON.stringify({ url: rx.url, events: ['dte.created'] }) })).json()) as { secret: string }
  const res = await fetch(`${serve.url}/api/v1/billing/dte`, { method: 'POST', headers: { ...h, 'Idempotency-Key': crypto.randomUUID() }, body: JSON.stringify(facturaSimple()) })
  expect(res.status).toBe(201)
  const dte = (await res.json()) as { id: string }
  serve.proc.kill('SIGKILL')
  await serve.proc.exited
  expect(rx.received).toHaveLength(0)

  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--webhook-allow-http', '--deliver-every', '1s'])
  const until = Date.now() + 15_000
  while (rx.received.length === 0 && Date.now() < until) await Bun.sleep(100)
  expect(rx.received).toHaveLength(1)
  const body = JSON.parse(rx.received[0]!.body)
  expect(body).toMatchObject({ type: 'dte.created', data: { dte: { id: dte.id } } })
  expect(verifySignature(hook.secret, rx.received[0]!.headers['timbre-signature']!, rx.received[0]!.body, Math.floor(Date.now() / 1000))).toBe(true)

  // The operator's CLI on the same data dir, while serve runs: the log, then a redelivery the server sends.
  const log = runBinary(['webhook', 'deliveries', '--empresa', RUT, '--data-dir', dir])
  expect(log.code).toBe(0)
  expect(log.json()).toEqual([expect.objectContaining({ event_id: body.id, event_type: 'dte.created', status: 'delivered', attempt: 1, status_code: 200 })])
  expect(runBinary(['webhook', 'deliveries', '--empresa', RUT, '--failed', '--data-dir', dir]).json()).toEqual([])
  const again = runBinary(['webhook', 'redeliver', '--event', body.id, '--data-dir', dir])
  expect(again.json()).toEqual({ event_id: body.id, requeued: 1 })
  const until2 = Date.now() + 15_000
  while (rx.received.length < 2 && Date.now() < until2) await Bun.sleep(100)
  expect(rx.received).toHaveLength(2)
  expect(rx.received[1]!.headers['timbre-event-id']).toBe(body.id)
  expect(runBinary(['webhook', 'redeliver', '--event', crypto.randomUUID(), '--data-dir', dir]).code).toBe(1)
}, 60_000)
