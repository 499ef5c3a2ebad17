// Issue 17: issuances commit in groups (db/group-commit.ts). The server is made to kill itself with SIGKILL in the middle
// of a grouped commit (TIMBRE_FAULT_GROUP_COMMIT, a fault point that exists for this test): once with the group written
// and not committed, once committed and not answered. After a restart every answered 201 is stored with its folio, the
// group's unanswered issuances are either stored whole or not at all, retried keys give one document each, no folio is
// used twice and none is lost (the restarted server reuses the folios the crash left reserved), and SQLite is intact.
import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { createCompanyWithKey, ensureBinary, provisionOverHttp, startServe, type ServeProcess } from '../support/binary'
import { facturaSimple } from '../support/issuance'
import { tempDir } from '../support/server'

const RUT = '76086428-5'
let serve: ServeProcess | null = null
afterAll(async () => {
  if (serve && serve.proc.exitCode === null && serve.proc.signalCode === null) await serve.terminate()
})

async function crashInGroupCommit(phase: 'before' | 'after') {
  await ensureBinary()
  const dir = tempDir(`timbre-group-crash-${phase}-`)
  const key = createCompanyWithKey(dir, RUT, 'Ferretería Ñandú Ltda.')
  const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
  const args = ['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0']
  serve = await startServe(args, { TIMBRE_FAULT_GROUP_COMMIT: `${phase}:3` })
  expect(serve.lines.some((l) => l.event === 'fault.armed')).toBe(true)
  const url = serve.url
  await provisionOverHttp(url, key, { rut: RUT, razonSocial: 'Ferretería Ñandú Ltda.', folios: 5000 })

  // 48 clients with distinct keys until the server kills itself at its first commit of a group of 3 or more.
  const keys = Array.from({ length: 3000 }, () => crypto.randomUUID())
  const answered = new Map<string, { id: string; folio: number }>()
  let next = 0
  let dead = false
  const client = async () => {
    while (next < keys.length && !dead) {
      const k = keys[next++]!
      try {
        const res = await fetch(`${url}/api/v1/billing/dte`, { method: 'POST', headers: { ...h, 'Idempotency-Key': k }, body: JSON.stringify(facturaSimple({ metadata: { k }, auto_send: false })) })
        if (res.status === 201) answered.set(k, (await res.json()) as { id: string; folio: number })
      } catch {
        dead = true // the connection died with the process
      }
    }
  }
  await Promise.all([Promise.all(Array.from({ length: 48 }, client)), serve.proc.exited.then(() => (dead = true))])
  expect(serve.proc.signalCode).toBe('SIGKILL')
  const sent = keys.slice(0, next)
  expect(next).toBeLessThan(keys.length) // the fault fired: the burst did not run to its end

  // Before anything else touches it: what the crash left in the file.
  const left = new Database(join(dir, 'timbre.db'), { readonly: true })
  const storedKeys = new Set((left.query("SELECT json_extract(metadata, '$.k') AS k FROM dtes").all() as Array<{ k: string }>).map((r) => r.k))
  left.close()
  for (const k of answered.keys()) expect(storedKeys.has(k)).toBe(true)
  // `after`: the last group was committed and never answered, so the file holds at least 3 more than were answered.
  if (phase === 'after') expect(storedKeys.size).toBeGreaterThanOrEqual(answered.size + 3)

  serve = await startServe(args)
  const url2 = serve.url
  for (const [, dte] of answered) {
    const got = await fetch(`${url2}/api/v1/billing/dte/${dte.id}`, { headers: h })
    expect(got.status).toBe(200)
    expect(((await got.json()) as { folio: number }).folio).toBe(dte.folio)
  }
  // Every key sent is retried: answered and stored ones replay their document, the rest issue now.
  for (const k of sent) {
    const res = await fetch(`${url2}/api/v1/billing/dte`, { method: 'POST', headers: { ...h, 'Idempotency-Key': k }, body: JSON.stringify(facturaSimple({ metadata: { k }, auto_send: false })) })
    expect(res.status).toBe(201)
    const body = (await res.json()) as { id: string }
    expect(res.headers.get('x-idempotency-replay') === 'true').toBe(storedKeys.has(k))
    if (answered.has(k)) expect(body.id).toBe(answered.get(k)!.id)
  }
  expect(await serve.terminate()).toBe(0)
  serve = null

  const db = new Database(join(dir, 'timbre.db'), { readonly: true })
  const folios = (db.query('SELECT folio FROM dtes ORDER BY folio').all() as Array<{ folio: number }>).map((r) => r.folio)
  const keysStored = (db.query('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n
  const nextFolio = (db.query('SELECT next_folio FROM cafs').get() as { next_folio: number }).next_folio
  const integrity = db.query('PRAGMA integrity_check').get() as { integrity_check: string }
  db.close()
  expect(folios.length).toBe(sent.length)
  expect(keysStored).toBe(sent.length)
  expect(folios).toEqual(Array.from({ length: folios.length }, (_, i) => i + 1)) // none twice, none lost
  expect(nextFolio).toBe(folios.length + 1)
  expect(integrity.integrity_check).toBe('ok')
}

test('SIGKILL with a group written and not committed: nothing of it stored, every 201 kept, folios reused', () => crashInGroupCommit('before'), 180_000)
test('SIGKILL with a group committed and not answered: all of it stored, replayed on retry, every 201 kept', () => crashInGroupCommit('after'), 180_000)
