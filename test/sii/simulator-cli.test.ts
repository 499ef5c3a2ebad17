// `timbre sii-simulator` and `timbre sii-simulator caf` (src/cli/sii-simulator.ts). main.ts registers them; until then
// these tests run the Command objects as main.ts does: `run(parseArgs(argv, flags))`, the long-running one in a child.
import { afterAll, describe, expect, test } from 'bun:test'
import { spawn } from 'bun'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs, UsageError } from '../../src/cli/command'
import { siiSimulator, siiSimulatorCaf } from '../../src/cli/sii-simulator'
import { authorityKeys } from '../../src/xml/authority-keys'
import { parseCaf, verifyCaf } from '../../src/xml/caf'
import { tempDir } from '../support/server'
import { field, soap } from './simulator-helpers'

const DIR = tempDir('timbre-simcli-')
afterAll(() => rmSync(DIR, { recursive: true, force: true }))
const BUN = process.execPath

async function caf(argv: string[]): Promise<unknown> {
  return siiSimulatorCaf.run(parseArgs(argv, siiSimulatorCaf.flags))
}

describe('sii-simulator caf', () => {
  test('prints a CAF signed by the simulator authority (IDK 900) that Timbre accepts against the simulated SII', async () => {
    const xml = await caf(['--rut', '76.543.210-3', '--tipo', '33', '--desde', '1', '--hasta', '50', '--razon-social', 'ACME SpA', '--fecha', '2026-03-01'])
    expect(typeof xml).toBe('string')
    const parsed = parseCaf(xml as string)
    expect(parsed).toMatchObject({ rutEmisor: '76543210-3', tipoDte: 33, folioDesde: 1, folioHasta: 50, idk: 900, razonSocial: 'ACME SpA', fechaAutorizacion: '2026-03-01' })
    expect(() => verifyCaf(parsed, authorityKeys({ allowSimulator: true }))).not.toThrow()
    expect(() => verifyCaf(parsed, authorityKeys({ allowSimulator: false }))).toThrow()
  })

  test.each([
    [['--tipo', '33', '--desde', '1', '--hasta', '2'], 'falta --rut'],
    [['--rut', '76543210-4', '--tipo', '33', '--desde', '1', '--hasta', '2'], 'RUT válido'],
    [['--rut', '76543210-3', '--tipo', '99', '--desde', '1', '--hasta', '2'], '--tipo'],
    [['--rut', '76543210-3', '--tipo', '33', '--desde', '5', '--hasta', '2'], 'desde'],
    [['--rut', '76543210-3', '--tipo', '33', '--desde', '1', '--hasta', '2', '--fecha', '1/3/2026'], '--fecha'],
  ])('%j is a usage error (%s)', async (argv, message) => {
    const err = await caf(argv).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toContain(message)
  })

  test('a razón social with ñ is written as ISO-8859-1 bytes, as CAF files are (docs/sii-protocol.md §3.3)', async () => {
    const script = join(DIR, 'caf.ts')
    writeFileSync(script, `import { parseArgs } from '${join(import.meta.dir, '../../src/cli/command')}'\n` +
      `import { siiSimulatorCaf as c } from '${join(import.meta.dir, '../../src/cli/sii-simulator')}'\n` +
      `const v = await c.run(parseArgs(['--rut', '76543210-3', '--tipo', '39', '--desde', '1', '--hasta', '9', '--razon-social', 'Ñandú Ltda'], c.flags))\n` +
      'if (v !== "") process.stdout.write(String(v))\n')
    const child = spawn([BUN, script], { stdout: 'pipe', stderr: 'pipe' })
    const bytes = new Uint8Array(await new Response(child.stdout).arrayBuffer())
    expect(await child.exited).toBe(0)
    expect(bytes.includes(0xd1)).toBe(true)  // Ñ in Latin-1
    expect(parseCaf(bytes).razonSocial).toBe('Ñandú Ltda')
  })
})

/** `timbre sii-simulator --data-dir <dataDir>` in a child process, once its start line is out. */
async function startSimulatorChild(dataDir: string): Promise<{ child: ReturnType<typeof spawn>; url: string | undefined }> {
  const script = join(DIR, `serve-${Bun.randomUUIDv7()}.ts`)
  writeFileSync(script, `import { parseArgs } from '${join(import.meta.dir, '../../src/cli/command')}'\n` +
    `import { siiSimulator as c } from '${join(import.meta.dir, '../../src/cli/sii-simulator')}'\n` +
    `await c.run(parseArgs(['--port', '0', '--data-dir', '${dataDir}'], c.flags))\n`)
  const child = spawn([BUN, script], { stdout: 'pipe', stderr: 'pipe' })
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader()
  let out = ''
  while (!out.includes('sii_simulator.started')) {
    const { value, done } = await reader.read()
    if (done) break
    out += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  const line = JSON.parse(out.split('\n').find((l) => l.includes('sii_simulator.started')) ?? '{}') as { url?: string }
  return { child, url: line.url }
}

describe('sii-simulator', () => {
  test('logs a JSON line with its URL, answers the SII protocol there, and stops on SIGTERM', async () => {
    const { child, url } = await startSimulatorChild(join(DIR, 'data'))
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const answer = await soap(url ?? '', 'CrSeed', 'getSeed')
    expect(field(answer.inner, 'ESTADO')).toBe('00')
    child.kill('SIGTERM')
    expect(await child.exited).toBe(0)
    expect(await Bun.file(join(DIR, 'data', 'sii-simulator.db')).exists()).toBe(true)
  })

  test('what it answered survives SIGKILL (WAL, synchronous NORMAL): seeds go on from the last one given, none handed out twice', async () => {
    const dataDir = join(DIR, 'killed')
    const seedOf = async (url: string | undefined) => field((await soap(url ?? '', 'CrSeed', 'getSeed')).inner, 'SEMILLA')
    const first = await startSimulatorChild(dataDir)
    const given = [await seedOf(first.url), await seedOf(first.url), await seedOf(first.url)]
    first.child.kill('SIGKILL')
    await first.child.exited
    const second = await startSimulatorChild(dataDir)
    try {
      expect(Number(await seedOf(second.url))).toBe(Number(given[2]) + 1)
    } finally {
      second.child.kill('SIGTERM')
      await second.child.exited
    }
  })

  test('fault rates outside 0..1 are usage errors', async () => {
    const err = await siiSimulator.run(parseArgs(['--fault-rate', '1.5'], siiSimulator.flags)).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
  })
})
