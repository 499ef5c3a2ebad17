// The delivery pass reads each company's due window (DESIGN §7, issue 18): its cost must not grow with the deliveries
// due, which a receiver down for a day under steady issuance counts in the 100 000s. Before, one window query ranked
// every due row of every company (row_number() over all of them): 88 000 due took 125-200 ms of the main thread per
// pass (the 200-cycle crash soak). The plan is read rather than timed: a seek per company into deliveries_due_empresa.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { dueOfEmpresaSql, findDueDeliveries } from '../../../src/db/webhook-store'
import { openDatabase, type Store } from '../../../src/db/open'
import { tempDir } from '../../support/server'

const BACKLOG = 20_000
let store: Store

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString()

function seed(): void {
  const db = store.sqlite
  for (const e of ['a', 'b', 'c'])
    db.run(
      `INSERT INTO empresas (id, rut, razon_social, giro, acteco, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion, created_at, updated_at) VALUES ('${e}', '${e}', 'R', 'G', '[1]', 'D', 'C', 'C', 'certificacion', '2020-01-01', 0, 'x', 'x')`,
    )
  const hook = db.prepare("INSERT INTO webhooks (id, empresa_id, url, events, secret_sealed, secret_last4, created_at, deleted_at) VALUES (?, ?, 'https://r.example/h', '[]', x'00', 'abcd', 'x', ?)")
  hook.run('wa', 'a', null)
  hook.run('wb', 'b', null)
  hook.run('wc', 'c', 'x') // deleted: its company has nothing to deliver
  const event = db.prepare("INSERT INTO events (id, empresa_id, type, body, created_at) VALUES (?, ?, 'dte.created', ?, 'x')")
  const delivery = db.prepare("INSERT INTO webhook_deliveries (id, empresa_id, webhook_id, event_id, event_type, status, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'dte.created', ?, ?, 'x', 'x')")
  const add = (empresa: string, webhook: string, n: number, status: string, second: number) => {
    event.run(`ev-${n}`, empresa, `{"n":${n}}`)
    delivery.run(`d-${String(n).padStart(6, '0')}`, empresa, webhook, `ev-${n}`, status, at(second))
  }
  db.transaction(() => {
    // A: a backlog, due from second 10 on; B: three due, its oldest at second 5, so B's lane comes first.
    for (let i = 0; i < BACKLOG; i++) add('a', 'wa', i, i % 10 === 0 ? 'delivered' : 'pending', 10 + i)
    for (let i = 0; i < 3; i++) add('b', 'wb', BACKLOG + i, 'pending', 5 + i * 100_000)
    add('c', 'wc', BACKLOG + 3, 'pending', 0)
  })()
}

beforeAll(() => {
  store = openDatabase(tempDir())
  seed()
  store.sqlite.run('ANALYZE')
})
afterAll(() => store.close())

test(`over ${BACKLOG} due deliveries: each company's oldest due first, at most the window, companies by their oldest`, () => {
  const due = findDueDeliveries(store.db, at(1_000_000), 50, 1000)
  const ids = due.map((d) => d.delivery.id)
  // B (oldest at second 5) first, all three; then A's 50 oldest pending ones, in due order; C's webhook is deleted.
  expect(ids.slice(0, 3)).toEqual([`d-0${BACKLOG}`, `d-0${BACKLOG + 1}`, `d-0${BACKLOG + 2}`])
  const a = due.slice(3)
  expect(a).toHaveLength(50)
  expect(a.every((d) => d.delivery.empresa_id === 'a' && d.delivery.status === 'pending')).toBe(true)
  expect(a.map((d) => d.delivery.id)).toEqual([...a.map((d) => d.delivery.id)].sort())
  expect(a[0]!.delivery.id).toBe('d-000001')
  expect(a[0]!.body).toBe('{"n":1}')
  // Only what is due at `now`: at second 12 A has d-000001 and d-000002 due (d-000000 was delivered), B one.
  expect(findDueDeliveries(store.db, at(12), 50, 1000).map((d) => d.delivery.id)).toEqual([`d-0${BACKLOG}`, 'd-000001', 'd-000002'])
  expect(findDueDeliveries(store.db, at(1_000_000), 50, 10)).toHaveLength(10)
})

test('one company\'s window is a seek into deliveries_due_empresa in due order: no scan, no sort', () => {
  const plan = (store.sqlite.query(`EXPLAIN QUERY PLAN ${dueOfEmpresaSql(store.db)}`).all() as Array<{ detail: string }>).map((r) => r.detail)
  expect(plan.some((d) => /SEARCH webhook_deliveries USING INDEX deliveries_due_empresa \(empresa_id=\? AND status=\? AND next_attempt_at<\?\)/.test(d))).toBe(true)
  expect(plan.some((d) => /TEMP B-TREE/.test(d))).toBe(false)
  expect(plan.some((d) => /^SCAN/.test(d))).toBe(false)
})
