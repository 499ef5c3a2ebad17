// `timbre sii-simulator intercambio` (src/cli/sii-simulator-intercambio.ts) run as a subprocess through main.ts: the
// simulator's set de intercambio on stdout, as the SII's site hands it out (88888888-8, Caratula to the company, one
// DTE for it and one for another RUT). Checked by the referees (xmllint with the SII's EnvioDTE_v10.xsd, xmlsec1 on
// every signature) and by Timbre's own checks of a received envelope.
import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { authorityKeys } from '../../src/xml/authority-keys'
import { fromLatin1Bytes } from '../../src/xml/latin1'
import { checkReceivedEnvio } from '../../src/xml/received-envio'
import { SCHEMAS } from '../support/xml-tools'

const DIR = mkdtempSync(join(tmpdir(), 'timbre-siminter-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))
const MAIN = join(import.meta.dir, '../../src/main.ts')
const RUT = '76086428-5'

function timbre(...args: string[]): { code: number; stdout: Uint8Array; stderr: string } {
  const run = Bun.spawnSync([process.execPath, MAIN, ...args], { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  return { code: run.exitCode, stdout: new Uint8Array(run.stdout), stderr: run.stderr.toString() }
}

let n = 0
function file(bytes: Uint8Array): string {
  const path = join(DIR, `e${++n}.xml`)
  writeFileSync(path, bytes)
  return path
}

/** The número de atención, folios and amounts: what the seed decides. */
function numbers(xml: string): string[] {
  return [...xml.matchAll(/<(?:NmbItem|Folio|MntTotal)>([^<]+)</g)].map((m) => m[1]!)
}

describe('timbre sii-simulator intercambio', () => {
  const run = timbre('sii-simulator', 'intercambio', '--rut', '76.086.428-5', '--seed', '42')
  const xml = fromLatin1Bytes(run.stdout)

  test('exits 0 and prints an ISO-8859-1 EnvioDTE from 88888888-8 addressed to the company', () => {
    expect(run.code).toBe(0)
    expect(xml).toStartWith('<?xml version="1.0" encoding="ISO-8859-1"?>')
    expect(xml).toContain(`<RutEmisor>88888888-8</RutEmisor><RutEnvia>88888888-8</RutEnvia><RutReceptor>${RUT}</RutReceptor>`)
    expect([...xml.matchAll(/<RUTRecep>([^<]+)<\/RUTRecep>/g)].map((m) => m[1])).toEqual([RUT, '69507000-4'])
    expect([...xml.matchAll(/<TipoDTE>(\d+)<\/TipoDTE>/g)].map((m) => m[1])).toEqual(['33', '33'])
    expect(xml).toMatch(/<NmbItem>SET INTERCAMBIO NUMERO \d{7}<\/NmbItem>/)
  })

  test('xmllint: valid against the SII\'s EnvioDTE_v10.xsd', () => {
    const lint = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, 'EnvioDTE_v10.xsd'), file(run.stdout)], { encoding: 'latin1' })
    expect(lint.stderr).toContain('validates')
    expect(lint.status).toBe(0)
  })

  test('xmlsec1 verifies the envelope\'s signature and each DTE\'s', () => {
    const path = file(run.stdout)
    const verify = (nth: number) =>
      spawnSync('xmlsec1', ['--verify', '--id-attr:ID', 'http://www.sii.cl/SiiDte:SetDTE', '--id-attr:ID', 'http://www.sii.cl/SiiDte:Documento',
        '--node-xpath', `(//*[local-name()='Signature'])[${nth}]`, path]).status
    expect([1, 2, 3].map(verify)).toEqual([0, 0, 0])
  })

  test('Timbre\'s checks where simulated CAFs count: every check passes for the company\'s DTE, the other is refused for its RUT', async () => {
    const checked = await checkReceivedEnvio(run.stdout, { rutEmpresa: RUT, authorityKeys: authorityKeys({ allowSimulator: true }), isDuplicate: () => false })
    expect(checked.estadoRecepEnv).toBe(0)
    expect(checked.documentos.map((d) => d.estadoRecepDte)).toEqual([0, 3])
    expect(checked.documentos[0]!.checks.every((c) => c.ok)).toBe(true)
    expect(checked.documentos[1]!.checks.filter((c) => !c.ok).map((c) => c.check)).toEqual(['receptor'])
  })

  test('against the real SII\'s keys its CAF (IDK 900) does not verify: a simulated set never passes for a real one', async () => {
    const checked = await checkReceivedEnvio(run.stdout, { rutEmpresa: RUT, authorityKeys: authorityKeys({ allowSimulator: false }), isDuplicate: () => false })
    expect(checked.documentos.map((d) => d.checks.find((c) => c.check === 'caf')?.ok)).toEqual([false, false])
  })

  test('the same seed gives the same número, folios and amounts; another seed, others', () => {
    const again = fromLatin1Bytes(timbre('sii-simulator', 'intercambio', '--rut', RUT, '--seed', '42').stdout)
    const other = fromLatin1Bytes(timbre('sii-simulator', 'intercambio', '--rut', RUT, '--seed', '43').stdout)
    expect(numbers(again)).toEqual(numbers(xml))
    expect(numbers(other)).not.toEqual(numbers(xml))
    const folios = [...xml.matchAll(/<Folio>(\d+)<\/Folio>/g)].map((m) => Number(m[1]))
    expect(folios[1]).toBe(folios[0]! + 1)
  })

  test('--otro-rut addresses the second DTE', () => {
    const out = fromLatin1Bytes(timbre('sii-simulator', 'intercambio', '--rut', RUT, '--otro-rut', '77626554-3', '--seed', '1').stdout)
    expect([...out.matchAll(/<RUTRecep>([^<]+)<\/RUTRecep>/g)].map((m) => m[1])).toEqual([RUT, '77626554-3'])
  })

  test('--help describes the flags and exits 0', () => {
    const help = timbre('sii-simulator', 'intercambio', '--help')
    expect(help.code).toBe(0)
    const out = new TextDecoder().decode(help.stdout)
    for (const flag of ['--rut', '--otro-rut', '--seed']) expect(out).toContain(flag)
  })

  test.each([
    [[], 'falta --rut'],
    [['--rut', '76086428-4'], '--rut no es un RUT válido'],
    [['--rut', RUT, '--otro-rut', 'x'], '--otro-rut no es un RUT válido'],
    [['--rut', RUT, '--otro-rut', '76.086.428-5'], 'distinto'],
    [['--rut', RUT, '--seed', '-3'], '--seed debe ser un entero'],
  ])('%j: usage error, exit 2, nothing on stdout', (args, message) => {
    const bad = timbre('sii-simulator', 'intercambio', ...args)
    expect(bad.code).toBe(2)
    expect(bad.stdout.length).toBe(0)
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: 'USAGE', message: expect.stringContaining(message) })
  })
})
