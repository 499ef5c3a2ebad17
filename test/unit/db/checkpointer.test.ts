// db/checkpointer.ts (issue 17): WAL checkpoints run in a worker with its own connection, the request thread's
// autocheckpoint is only a distant backstop, and what the worker copies is the committed data.
import { expect, test } from 'bun:test'
import { BACKSTOP_PAGES, startCheckpointer } from '../../../src/db/checkpointer'
import { openDatabase } from '../../../src/db/open'
import { tempDir } from '../../support/server'

test('commits on the request thread are checkpointed by the worker, not by the committing connection', async () => {
  const store = openDatabase(tempDir('timbre-checkpoint-'))
  const checkpointer = startCheckpointer(store, { everyMs: 20 })
  expect(store.sqlite.query('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: BACKSTOP_PAGES })
  store.sqlite.run('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)')
  const insert = store.sqlite.prepare('INSERT INTO t (body) VALUES (?)')
  for (let i = 0; i < 300; i++) insert.run(Buffer.alloc(4096, i % 256)) // 300 commits, each its own WAL frames
  const until = Date.now() + 5000
  while (checkpointer.stats().framesCopied < 300 && Date.now() < until) await Bun.sleep(20)
  expect(checkpointer.stats().framesCopied).toBeGreaterThanOrEqual(300)
  expect(checkpointer.stats().failures).toBe(0)
  // Everything committed is in the database file already: a checkpoint now finds nothing left to copy.
  await Bun.sleep(60)
  const now = store.sqlite.query('PRAGMA wal_checkpoint(PASSIVE)').get() as { busy: number; log: number; checkpointed: number }
  expect(now.checkpointed).toBe(now.log)
  await checkpointer.stop()
  expect(store.sqlite.query('SELECT count(*) AS n, sum(length(body)) AS bytes FROM t').get()).toEqual({ n: 300, bytes: 300 * 4096 })
  store.close()
})
