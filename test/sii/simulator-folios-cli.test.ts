// `timbre sii-simulator folios` and the folio faults of `sii-simulator rcv falla` (src/cli/sii-simulator-folios.ts) run
// as the binary's entry point in child processes against the data dir a running simulator serves from; the folio pages,
// over real HTTP after the mTLS login, show each change at their next request. docs/decisions/simulator.md "Folios (timbraje)".
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { spawn } from 'bun'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { FOLIOS_ACEPTAR, FOLIOS_FIELDS as F, FOLIOS_HOSTS, FOLIOS_PATHS, FOLIOS_TEXTS } from '../../src/sii/folios-protocol'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { testClock } from '../support/clock'
import { tempDir } from '../support/server'
import { SIM_START } from './simulator-helpers'
import { holder, login } from './simulator-portal-helpers'

setDefaultTimeout(30_000)

const MAIN = join(import.meta.dir, '../../src/main.ts')
const DIR = tempDir('timbre-simfolios-cli-')
const EMPRESA = { [F.rut]: '76086428', [F.dv]: '5' }
let sim: RunningSimulator
let token = ''

beforeAll(async () => {
  sim = await startSimulator({ processingDelayMs: 0, clock: testClock({ at: SIM_START }).now, dataDir: DIR })
  token = (await login(sim.url, holder(), undefined, `${FOLIOS_HOSTS.certificacion}${FOLIOS_PATHS.solicita}`)).token ?? ''
})
afterAll(async () => {
  await sim.stop()
  rmSync(DIR, { recursive: true, force: true })
})

async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string; json: Record<string, unknown> | null }> {
  const { TIMBRE_DATA_DIR: _ignored, ...env } = process.env
  const child = spawn([process.execPath, MAIN, 'sii-simulator', ...args, '--data-dir', DIR], { stdout: 'pipe', stderr: 'pipe', env })
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  let json: Record<string, unknown> | null = null
  try {
    json = JSON.parse(stdout) as Record<string, unknown>
  } catch {
    // Not JSON: the test says what it expected.
  }
  return { code, stdout, stderr, json }
}

async function pagina(path: string, fields: Readonly<Record<string, string>>): Promise<string> {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', Cookie: `TOKEN=${token}` },
    body: new URLSearchParams(fields).toString(),
  })
  return Buffer.from(await res.arrayBuffer()).toString('latin1')
}

const cifras = () => pagina(FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.tipo]: '33' })

describe('sii-simulator folios', () => {
  test('shows the defaults; --max-autor, --no-autorizado, --f29-pendiente and --quitar-bloqueos change what the running simulator answers', async () => {
    const shown = await cli(['folios', '--rut', '76.086.428-5'])
    expect(shown.code).toBe(0)
    expect(shown.json).toMatchObject({ rut: '76086428-5', no_autorizado: false, f29_pendiente: false, otorgamientos: 0, cambiado: false })
    expect((shown.json?.max_autor as Record<string, number>)['33']).toBe(500)
    expect((shown.json?.max_autor as Record<string, number>)['41']).toBe(10_000)

    const set = await cli(['folios', '--rut', '76086428-5', '--max-autor', '33=40,52=7'])
    expect(set.json).toMatchObject({ cambiado: true, max_autor: { 33: 40, 52: 7, 34: 500 } })
    expect(await cifras()).toContain(`name="${F.maxAutor}" value="40"`)

    expect((await cli(['folios', '--rut', '76086428-5', '--f29-pendiente'])).json).toMatchObject({ f29_pendiente: true, no_autorizado: false })
    expect(await cifras()).toContain(FOLIOS_TEXTS.noPuede)
    expect((await cli(['folios', '--rut', '76086428-5', '--no-autorizado'])).json).toMatchObject({ f29_pendiente: true, no_autorizado: true })
    expect(await pagina(FOLIOS_PATHS.solicitaDcto, { ...EMPRESA, [F.aceptar]: FOLIOS_ACEPTAR.continuar })).toContain(FOLIOS_TEXTS.noAutorizado)
    // 0 is the SII authorising none of the type; `defecto` puts it back to the default.
    expect((await cli(['folios', '--rut', '76086428-5', '--quitar-bloqueos', '--max-autor', '33=0'])).json).toMatchObject({ f29_pendiente: false, no_autorizado: false, max_autor: { 33: 0, 52: 7 } })
    expect(await cifras()).toContain(`name="${F.maxAutor}" value="0"`)
    expect((await cli(['folios', '--rut', '76086428-5', '--max-autor', '33=defecto'])).json).toMatchObject({ cambiado: true, max_autor: { 33: 500, 52: 7 } })
    expect(await cifras()).toContain(`name="${F.maxAutor}" value="500"`)
  })

  test('--otorgados lists the grants; the folio faults switch on through rcv falla', async () => {
    const falla = await cli(['rcv', 'falla', '--tipo', 'pagina_cambiada'])
    expect(falla.code).toBe(0)
    expect(await cifras()).toContain('name="MAXIMO"')
    expect(await cifras()).toContain(`name="${F.maxAutor}"`)

    await pagina(FOLIOS_PATHS.confirma, { ...EMPRESA, [F.tipo]: '33', [F.cantidad]: '10', [F.folioIni]: '1', [F.aceptar]: FOLIOS_ACEPTAR.confirmarInicial })
    expect((await cli(['rcv', 'falla', '--tipo', 'corte_tras_otorgar'])).code).toBe(0)
    const res = await fetch(`${sim.url}${FOLIOS_PATHS.genera}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', Cookie: `TOKEN=${token}` },
      body: new URLSearchParams({ ...EMPRESA, [F.tipo]: '33', [F.folioIni]: '1', [F.folioFin]: '10', [F.cantidad]: '10', [F.aceptar]: FOLIOS_ACEPTAR.obtener }).toString(),
    })
    expect(res.status).toBe(503)
    const listed = await cli(['folios', '--rut', '76086428-5', '--otorgados'])
    expect(listed.json).toMatchObject({ otorgamientos: 1, otorgados: [{ tipo: 33, desde: 1, hasta: 10, fecha: '2026-03-02' }], folios_disponibles: { 33: 10 } })
  })

  test('bad input is a usage error (exit 2) and changes nothing', async () => {
    for (const args of [['folios'], ['folios', '--rut', '1-1'], ['folios', '--rut', '76086428-5', '--max-autor', '99=5'], ['folios', '--rut', '76086428-5', '--max-autor', '33'], ['folios', '--rut', '76086428-5', '--max-autor', '33=nada'], ['folios', '--rut', '76086428-5', '--quitar-bloqueos', '--f29-pendiente']]) {
      const r = await cli(args)
      expect(r.code).toBe(2)
    }
    expect((await cli(['folios', '--rut', '76086428-5'])).json).toMatchObject({ f29_pendiente: false, max_autor: { 33: 500 } })
    const help = await cli(['folios', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--max-autor')
  })
})
