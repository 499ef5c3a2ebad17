// db/prepared.ts (issue 17): statements prepared once per connection run inside the transaction open on it, with the Db
// or with the transaction handle, and roll back with that transaction or savepoint like any other write.
import { afterEach, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { findEmpresaById, insertEmpresa } from '../../../src/db/empresa-store'
import { findIdempotencyKey, insertIdempotencyKey } from '../../../src/db/idempotency-store'
import { openDatabase, type Db, type Store } from '../../../src/db/open'
import { preparedStatements } from '../../../src/db/prepared'
import { empresas, type IdempotencyRow } from '../../../src/db/schema'
import { insertEventWithDeliveries, insertWebhook, isCafAlertArmed, setCafAlertArmed } from '../../../src/db/webhook-store'
import { tempDir } from '../../support/server'

const opened: Store[] = []
afterEach(() => {
  for (const store of opened.splice(0)) store.close()
})

function freshStore(dir = tempDir('timbre-prepared-')): Store {
  const store = openDatabase(dir)
  opened.push(store)
  return store
}

function seedEmpresa(db: Db, id = Bun.randomUUIDv7()): string {
  insertEmpresa(db, {
    id,
    rut: `${id.slice(-8)}-k`,
    razon_social: 'R',
    giro: 'G',
    acteco: [1],
    direccion: 'D',
    comuna: 'C',
    ciudad: 'C',
    ambiente: 'certificacion',
    fecha_resolucion: '2020-01-01',
    numero_resolucion: 0,
    created_at: 'x',
    updated_at: 'x',
  })
  return id
}

function answer(empresaId: string, key: string): IdempotencyRow {
  return { empresa_id: empresaId, key, request_hash: 'h', response_status: 201, response_body: '{}', location: null, created_at: '2026-11-24T00:00:00.000Z' }
}

class Abort extends Error {}

test('a write through a prepared statement rolls back with the transaction it ran in', () => {
  const { db } = freshStore()
  const empresaId = seedEmpresa(db)
  expect(() =>
    db.transaction(
      (tx) => {
        insertIdempotencyKey(tx, answer(empresaId, 'k1'))
        // Visible inside, to the transaction handle and to the Db alike: one connection.
        expect(findIdempotencyKey(tx, empresaId, 'k1')?.key).toBe('k1')
        expect(findIdempotencyKey(db, empresaId, 'k1')?.key).toBe('k1')
        throw new Abort()
      },
      { behavior: 'immediate' },
    ),
  ).toThrow(Abort)
  expect(findIdempotencyKey(db, empresaId, 'k1')).toBeUndefined()
})

test('a savepoint that fails takes back only its own prepared writes; the rest of the group commits', () => {
  const { db, sqlite } = freshStore()
  const empresaId = seedEmpresa(db)
  db.transaction(
    (tx) => {
      tx.transaction((sp) => insertIdempotencyKey(sp as unknown as Db, answer(empresaId, 'kept')))
      expect(() =>
        tx.transaction((sp) => {
          insertIdempotencyKey(sp as unknown as Db, answer(empresaId, 'lost'))
          insertEventWithDeliveries(sp as unknown as Db, { id: 'ev-lost', empresa_id: empresaId, type: 'dte.created', body: '{}', created_at: 'x' })
          throw new Abort()
        }),
      ).toThrow(Abort)
    },
    { behavior: 'immediate' },
  )
  expect(findIdempotencyKey(db, empresaId, 'kept')?.key).toBe('kept')
  expect(findIdempotencyKey(db, empresaId, 'lost')).toBeUndefined()
  expect(sqlite.query('SELECT count(*) AS n FROM events').get()).toEqual({ n: 0 })
})

test('statements first prepared inside a transaction that then rolled back still serve the Db afterwards', () => {
  const { db } = freshStore()
  const empresaId = seedEmpresa(db)
  expect(() =>
    db.transaction((tx) => {
      expect(isCafAlertArmed(tx, empresaId, 33)).toBe(true)
      setCafAlertArmed(tx, empresaId, 33, false)
      expect(isCafAlertArmed(tx, empresaId, 33)).toBe(false)
      throw new Abort()
    }),
  ).toThrow(Abort)
  expect(isCafAlertArmed(db, empresaId, 33)).toBe(true)
  setCafAlertArmed(db, empresaId, 33, false)
  expect(isCafAlertArmed(db, empresaId, 33)).toBe(false)
})

test('statements are prepared once per connection, shared by its transactions, never across connections', () => {
  let prepared = 0
  const countOf = preparedStatements((db) => {
    prepared++
    return db.select({ n: sql<number>`count(*)` }).from(empresas).prepare()
  })
  const dir = tempDir('timbre-prepared-')
  const a = freshStore(dir)
  const b = freshStore(dir)
  const first = countOf(a.db)
  expect(a.db.transaction((tx) => countOf(tx))).toBe(first)
  expect(prepared).toBe(1)
  expect(countOf(b.db)).not.toBe(first)
  expect(prepared).toBe(2)
  // Each connection reads through its own statement: b sees what a committed.
  seedEmpresa(a.db)
  expect(countOf(b.db).get()).toEqual({ n: 1 })
})

test('rows come back decoded as the unprepared queries gave them (JSON, booleans, null)', () => {
  const { db } = freshStore()
  const empresaId = seedEmpresa(db)
  expect(findEmpresaById(db, empresaId)).toMatchObject({ id: empresaId, acteco: [1], is_demo: false, inbound_email: null })
  expect(findEmpresaById(db, 'nope')).toBeUndefined()
  const hook = insertWebhook(db, { id: 'w1', empresa_id: empresaId, url: 'https://x.test', events: ['dte.created'], secret_sealed: Buffer.from([1]), secret_last4: 'abcd', created_at: 'x' })
  expect(hook.events).toEqual(['dte.created'])
  expect(insertEventWithDeliveries(db, { id: 'ev1', empresa_id: empresaId, type: 'dte.created', body: '{}', created_at: '2026-11-24T00:00:00.000Z' })).toBe(1)
  expect(insertEventWithDeliveries(db, { id: 'ev2', empresa_id: empresaId, type: 'dte.accepted', body: '{}', created_at: '2026-11-24T00:00:00.000Z' })).toBe(0)
})
