// DESIGN §11: kill -9 the compiled server in the middle of a burst of issuances, restart it, and prove that every 201 is
// retrievable and valid, no folio is used twice or lost, and retried keys give one document each.
import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { verifyTed } from '../../src/xml/ted'
import { createCompanyWithKey, ensureBinary, provisionOverHttp, startServe, type ServeProcess } from '../support/binary'
import { facturaSimple } from '../support/issuance'
import { tempDir } from '../support/server'
import { xmlsec1Verifies } from '../support/xml-tools'

const RUT = '76086428-5'
let serve: ServeProcess | null = null
afterAll(async () => {
  if (serve && serve.proc.exitCode === null) await serve.terminate()
})

test('kill -9 during a burst loses nothing and duplicates nothing', async () => {
  await ensureBinary()
  const dir = tempDir('timbre-crash-')
  const key = createCompanyWithKey(dir, RUT, 'Ferretería Ñandú Ltda.')
  const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0'])
  const url = serve.url
  await provisionOverHttp(url, key, { rut: RUT, razonSocial: 'Ferretería Ñandú Ltda.', folios: 2000 })

  // The burst: 16 clients, distinct keys, until the process dies under them.
  const keys = Array.from({ length: 400 }, () => crypto.randomUUID())
  const answered = new Map<string, { id: string; folio: number }>()
  let next = 0
  let killed = false
  const client = async () => {
    while (next < keys.length && !killed) {
      const k = keys[next++]!
      try {
        const res = await fetch(`${url}/api/v1/billing/dte`, { method: 'POST', headers: { ...h, 'Idempotency-Key': k }, body: JSON.stringify(facturaSimple({ metadata: { k } })) })
        if (res.status === 201) {
          const body = (await res.json()) as { id: string; folio: number }
          answered.set(k, body)
        }
      } catch {
        // the connection died with the process
      }
    }
  }
  const clients = Array.from({ length: 16 }, client)
  while (answered.size < 60) await Bun.sleep(5)
  serve.proc.kill('SIGKILL')
  killed = true
  await serve.proc.exited
  await Promise.all(clients)
  const sent = keys.slice(0, next)

  // Restart on the same data dir.
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0'])
  const url2 = serve.url

  // Every 201 is there, with its folio, its XML valid and its TED verifying.
  for (const [, dte] of answered) {
    const got = await fetch(`${url2}/api/v1/billing/dte/${dte.id}`, { headers: h })
    expect(got.status).toBe(200)
    expect(((await got.json()) as { folio: number }).folio).toBe(dte.folio)
  }
  const sample = [...answered.values()].slice(-5)
  for (const dte of sample) {
    const bytes = new Uint8Array(await (await fetch(`${url2}/api/v1/billing/dte/${dte.id}/xml`, { headers: h })).arrayBuffer())
    expect(xmlsec1Verifies(bytes, 33)).toBe(true)
    expect(verifyTed(Buffer.from(bytes).toString('latin1'))).toBe(true)
  }

  // Retrying every key that was sent: the answered ones replay, the others issue now; one document per key.
  for (const k of sent) {
    const res = await fetch(`${url2}/api/v1/billing/dte`, { method: 'POST', headers: { ...h, 'Idempotency-Key': k }, body: JSON.stringify(facturaSimple({ metadata: { k } })) })
    expect(res.status).toBe(201)
    const body = (await res.json()) as { id: string }
    const before = answered.get(k)
    if (before) {
      expect(body.id).toBe(before.id)
      expect(res.headers.get('x-idempotency-replay')).toBe('true')
    }
  }
  expect(await serve.terminate()).toBe(0)
  serve = null

  const db = new Database(join(dir, 'timbre.db'), { readonly: true })
  const folios = (db.query('SELECT folio FROM dtes ORDER BY folio').all() as Array<{ folio: number }>).map((r) => r.folio)
  const keysStored = (db.query('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n
  const nextFolio = (db.query('SELECT next_folio FROM cafs').get() as { next_folio: number }).next_folio
  db.close()
  expect(folios.length).toBe(sent.length) // one document per key sent
  expect(keysStored).toBe(sent.length)
  expect(folios).toEqual(Array.from({ length: folios.length }, (_, i) => i + 1)) // no duplicate, no hole
  expect(nextFolio).toBe(folios.length + 1) // the ledger agrees: nothing consumed without its document
}, 120_000)
