// `timbre sii-simulator rcv add`, `rcv falla` and `reloj` (src/cli/sii-simulator-rcv.ts) run as the binary's entry point
// in child processes against the data dir a running simulator serves from; the simulator's data service, over real
// HTTP with a portal session, shows each change at its next request. docs/decisions/simulator.md "Portal y RCV".
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { spawn } from 'bun'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readDetalleRcv } from '../../src/domain/rcv'
import { FACADE_OPS, PORTAL_PATHS } from '../../src/sii/portal-protocol'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { testClock } from '../support/clock'
import { tempDir } from '../support/server'
import { SIM_START } from './simulator-helpers'
import { facade, holder, login } from './simulator-portal-helpers'

setDefaultTimeout(30_000)

const MAIN = join(import.meta.dir, '../../src/main.ts')
const EMPRESA = '76086428-5'
const DIR = tempDir('timbre-simrcv-cli-')
let sim: RunningSimulator

beforeAll(async () => {
  sim = await startSimulator({ processingDelayMs: 0, clock: testClock({ at: SIM_START }).now, dataDir: DIR })
})
afterAll(async () => {
  await sim.stop()
  rmSync(DIR, { recursive: true, force: true })
})

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

async function cli(args: readonly string[]): Promise<Run> {
  const { TIMBRE_DATA_DIR: _ignored, ...env } = process.env
  const child = spawn([process.execPath, MAIN, 'sii-simulator', ...args, '--data-dir', DIR], { stdout: 'pipe', stderr: 'pipe', env })
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { code, stdout, stderr }
}

function file(name: string, content: unknown): string {
  const path = join(DIR, name)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

/** The company's compras of one section, type 33, March 2026, in a fresh session (the clock may have moved past the last one). */
async function compras(estadoContab: string): Promise<{ codRespuesta: number; folios: number[]; raw: unknown }> {
  const token = (await login(sim.url, holder())).token ?? ''
  const res = await facade(sim.url, token, FACADE_OPS.detalleCompra, { rutEmisor: '76086428', dvEmisor: '5', ptributario: '202603', estadoContab, operacion: 'COMPRA', codTipoDoc: 33 })
  const text = await res.text()
  // Always closed, as the client does: the sessions of one holder are capped at three.
  await fetch(`${sim.url}${PORTAL_PATHS.logout}`, { headers: { Cookie: `TOKEN=${token}` } })
  let raw: unknown = text
  try {
    raw = JSON.parse(text)
  } catch {
    return { codRespuesta: -1, folios: [], raw }
  }
  const read = readDetalleRcv(raw)
  return { codRespuesta: (raw as { respEstado: { codRespuesta: number } }).respEstado.codRespuesta, folios: read.ok ? read.value.map((d) => d.folio) : [], raw }
}

const fila = (over: Record<string, unknown> = {}) => ({
  registro: 'compras', tipo: 33, rut: '11.111.111-1', razon_social: 'Proveedor Externo SpA', folio: 501, fecha_emision: '2026-03-01',
  fecha_recepcion: '2026-03-01T10:15:00', monto_exento: 0, monto_neto: 1000, monto_iva: 190, monto_total: 1190, ...over,
})

describe('rcv add', () => {
  test('an invalid row: exit 1, every problem named by row and field, nothing stored', async () => {
    const path = file('malas.json', [fila({ folio: 600 }), fila({ rut: '11111111-2', extra: 1 }), fila({ registro: 'ventas', seccion: 'registro', monto_total: -1 })])
    const r = await cli(['rcv', 'add', '--rut', EMPRESA, path])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    const message = JSON.parse(r.stderr.trim().split('\n').at(-1) ?? '{}').message as string
    expect(message).toContain('no se agregó ninguna fila')
    expect(message).toContain('fila 1, campo "extra": campo desconocido')
    expect(message).toContain('fila 1, campo "rut": no es un RUT válido')
    expect(message).toContain('fila 2, campo "monto_total"')
    expect(message).toContain('fila 2, campo "seccion": solo las compras tienen sección')
    expect(await compras('PENDIENTE')).toMatchObject({ codRespuesta: 3 })
  })

  test('valid rows are added and served by the running simulator, the section as given or by the 8 days', async () => {
    const path = file('buenas.json', [fila(), fila({ folio: 502, seccion: 'registro' }), fila({ registro: 'ventas', rut: '22222222-2', folio: 9 })])
    const r = await cli(['rcv', 'add', '--rut', EMPRESA, path])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ rut: EMPRESA, agregadas: 3, data_dir: DIR })
    expect((await compras('PENDIENTE')).folios).toEqual([501])
    expect((await compras('REGISTRO')).folios).toEqual([502])
  })

  test('usage errors exit 2', async () => {
    expect((await cli(['rcv', 'add', '--rut', EMPRESA])).code).toBe(2)
    expect((await cli(['rcv', 'add', '--rut', 'x', 'f.json'])).code).toBe(2)
    const notJson = await cli(['rcv', 'add', '--rut', EMPRESA, file('roto.json', '[{')])
    expect(notJson.code).toBe(1)
    expect(notJson.stderr).toContain('como JSON')
  })
})

describe('rcv falla and reloj on a running simulator', () => {
  test('respuesta_malformada once: the next data call is not JSON, the one after is; listing and --quitar', async () => {
    const on = await cli(['rcv', 'falla', '--tipo', 'respuesta_malformada'])
    expect(on.code).toBe(0)
    expect(JSON.parse(on.stdout)).toEqual({ falla: 'respuesta_malformada', veces: 1, hasta_quitarla: false })
    expect(JSON.parse((await cli(['rcv', 'falla'])).stdout)).toEqual({ fallas: [{ tipo: 'respuesta_malformada', veces: 1 }] })
    expect((await compras('PENDIENTE')).codRespuesta).toBe(-1)
    expect((await compras('PENDIENTE')).codRespuesta).toBe(0)
    await cli(['rcv', 'falla', '--tipo', 'sesion_expirada', '--veces', '0'])
    expect((await compras('PENDIENTE')).codRespuesta).toBe(99)
    expect((await compras('PENDIENTE')).codRespuesta).toBe(99)
    expect(JSON.parse((await cli(['rcv', 'falla', '--tipo', 'sesion_expirada', '--quitar'])).stdout)).toEqual({ falla: 'sesion_expirada', quitada: true })
    expect((await compras('PENDIENTE')).codRespuesta).toBe(0)
    expect((await cli(['rcv', 'falla', '--tipo', 'otra'])).code).toBe(2)
  })

  test('reloj --avanzar 9d moves the running simulator: the pendiente row is registro; --mostrar, --reiniciar', async () => {
    const moved = await cli(['reloj', '--avanzar', '9d'])
    expect(moved.code).toBe(0)
    expect(JSON.parse(moved.stdout)).toMatchObject({ desfase_ms: 9 * 86_400_000, desfase: '9d 0h 0m' })
    expect((await compras('PENDIENTE')).codRespuesta).toBe(3)
    expect((await compras('REGISTRO')).folios).toEqual([501, 502])
    await cli(['reloj', '--avanzar', '90m'])
    expect(JSON.parse((await cli(['reloj', '--mostrar'])).stdout)).toMatchObject({ desfase_ms: 9 * 86_400_000 + 90 * 60_000, desfase: '9d 1h 30m' })
    expect(JSON.parse((await cli(['reloj', '--reiniciar'])).stdout)).toMatchObject({ desfase_ms: 0 })
    expect((await compras('PENDIENTE')).folios).toEqual([501])
    expect((await cli(['reloj', '--avanzar', '9x'])).code).toBe(2)
    expect((await cli(['reloj'])).code).toBe(2)
  })
})
