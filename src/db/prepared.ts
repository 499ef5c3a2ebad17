// Statements of the request path, prepared once per connection (issue 17). Drizzle renders a query's SQL and SQLite
// prepares it again on every call, and under load that cost the main thread more than running the queries did.
import type { Db } from './open'

/**
 * What a Db and its transactions share: Drizzle's session, one per connection. A transaction handle (and a savepoint's)
 * is a new object over the same session, so statements prepared once run inside whatever transaction that connection
 * has open, and roll back with it (test/unit/db/prepared.test.ts). `session` is a Drizzle internal: the version is pinned
 * (docs/stack-notes.md), and the test above fails loudly if it moves.
 */
function connectionOf(db: Db): object {
  const session = (db as unknown as { readonly session?: object }).session
  if (typeof session !== 'object' || session === null) throw new Error('drizzle database without a session')
  return session
}

/**
 * `prepare(db)` runs once per connection, on the first call; later calls, with the Db or with any transaction over it,
 * get the same statements. Build them with `sql.placeholder` for every value that varies; an insert must not rely on a
 * `$defaultFn`, which would run once, at prepare time. The statements live as long as the Db does: after
 * `store.close()` SQLite lets go of the file once they are collected, as with Drizzle's own one-shot statements.
 */
export function preparedStatements<T>(prepare: (db: Db) => T): (db: Db) => T {
  const byConnection = new WeakMap<object, T>()
  return (db) => {
    const connection = connectionOf(db)
    let statements = byConnection.get(connection)
    if (statements === undefined) {
      statements = prepare(db)
      byConnection.set(connection, statements)
    }
    return statements
  }
}
