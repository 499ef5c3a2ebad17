// DESIGN §10 (issue 12 item 7): the demo company never talks to the real SII. `serve --demo` with any SII target
// sends the demo's documents to the in-process simulator, and the banner says so.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ensureBinary, startServe } from '../support/binary'
import { tempDir } from '../support/server'

// Stands in for the SII the config names: every request that reaches it is a demo document that leaked.
const reached: string[] = []
let sii: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  await ensureBinary()
  sii = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      reached.push(`${request.method} ${new URL(request.url).pathname}`)
      return new Response('no', { status: 503 })
    },
  })
})
afterAll(() => sii.stop(true))

test('serve --demo with another SII target: the demo invoice is accepted by the in-process simulator, the target sees nothing', async () => {
  const p = await startServe(['--data-dir', tempDir('timbre-demo-sii-'), '--demo', '--sii', `http://127.0.0.1:${sii.port}`, '--submit-every', '1s', '--track-every', '1s'])
  try {
    const deadline = Date.now() + 10_000
    while (!p.stderr().includes('-X POST') && Date.now() < deadline) await Bun.sleep(20)
    expect(p.stderr()).toContain('la empresa demo usa siempre el simulador del SII en proceso, nunca el SII real')
    expect(p.stderr()).toContain(`origen http://127.0.0.1:${sii.port}`)
    const issueLine = p.stderr().split('\n').find((l) => l.includes('-X POST'))!.trim()
    const issued = JSON.parse(Bun.spawnSync(['bash', '-c', issueLine]).stdout.toString()) as { id: string; estado: string }
    expect(issued.estado).toBe('firmado')
    const key = /X-Api-Key: (timbre_[\w-]+)/.exec(issueLine)![1]!
    let estado = ''
    const until = Date.now() + 30_000
    while (estado !== 'aceptado' && Date.now() < until) {
      await Bun.sleep(250)
      const res = await fetch(`${p.url}/api/v1/billing/dte/${issued.id}`, { headers: { 'X-Api-Key': key } })
      estado = ((await res.json()) as { estado: string }).estado
    }
    expect(estado).toBe('aceptado')
    expect(reached).toEqual([])
    // GET /ready speaks of the configured SII: the demo's simulator answering does not make it look healthy.
    const ready = (await (await fetch(`${p.url}/ready`)).json()) as { sii: { last_ok_at: string | null } }
    expect(ready.sii.last_ok_at).toBeNull()
  } finally {
    expect(await p.terminate()).toBe(0)
  }
}, 60_000)
