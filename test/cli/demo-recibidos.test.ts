// DESIGN §13 "Simulator": `serve --demo` gives the demo company two received supplier invoices that pass every check,
// and that the simulated SII knows: their reception date comes back, and accepting one is registered.
import { afterAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureBinary, startServe, type ServeProcess } from '../support/binary'
import { tempDir } from '../support/server'

let serve: ServeProcess | null = null
afterAll(async () => {
  if (serve && serve.proc.exitCode === null) await serve.terminate()
})

test('serve --demo: two supplier invoices received, checked, known to the simulated SII, and ACD registered', async () => {
  await ensureBinary()
  const dir = tempDir('timbre-demo-recibidos-')
  serve = await startServe(['--data-dir', dir, '--demo', '--inbox-every', '1s'])
  // The banner (and the key file) come right after the server starts.
  const banner = Date.now() + 15_000
  while (!serve.stderr().includes('API key') && Date.now() < banner) await Bun.sleep(20)
  const key = readFileSync(join(dir, 'demo-api-key'), 'utf8').trim()
  const get = async (path: string) => (await (await fetch(`${serve!.url}/api/v1/billing${path}`, { headers: { 'X-Api-Key': key } })).json()) as any

  type Item = { id: string; rut_emisor: string; tipo_dte: number; estado: string; plazo: string | null; checks: Array<{ ok: boolean }> }
  let items: Item[] = []
  const deadline = Date.now() + 30_000
  while (!(items.length === 2 && items.every((i) => i.plazo !== null)) && Date.now() < deadline) {
    await Bun.sleep(250)
    items = ((await get('/recibidos')).items ?? []) as Item[]
  }
  expect(items).toHaveLength(2)
  for (const item of items) {
    expect(item).toMatchObject({ rut_emisor: '77777666-5', tipo_dte: 33, estado: 'recibido' })
    expect(item.checks.every((c) => c.ok)).toBe(true)
    // The simulator received them: the plazo is its reception date + 8 days.
    expect(item.plazo).not.toBeNull()
  }
  const res = await fetch(`${serve.url}/api/v1/billing/recibidos/${items[0]!.id}/acciones`, {
    method: 'POST',
    headers: { 'X-Api-Key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ accion: 'ACD' }),
  })
  const body = (await res.json()) as { estado: string; acciones: Array<{ accion: string; estado: string }> }
  expect(res.status).toBe(200)
  expect(body.estado).toBe('aceptado')
  expect(body.acciones).toEqual([expect.objectContaining({ accion: 'ACD', estado: 'registrada' })])
}, 60_000)
