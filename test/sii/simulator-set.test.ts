// `timbre sii-simulator set` (src/cli/sii-simulator-set.ts) run as the binary's entry point in a child process, recording
// into a data dir a simulator is serving from; then that simulator receiving a set envío over real HTTP (DTEUpload,
// getEstUp, getEstDte), its DTEs built by Timbre's own DTE builder from the cases of the printed set, stamped with a
// real CAF and signed. Decisions: docs/decisions/simulator.md "The set of tests".
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawn } from 'bun'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EmitirDte, Referencia } from '../../src/domain/emision'
import { decodeSetText, parseSetPruebas, type ArchivoSet, type CasoSet } from '../../src/domain/set-pruebas'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { casoKey, SimulatorStore } from '../../src/sii/simulator/store'
import { buildDteXml, tedDataFor, type EmpresaEmisora } from '../../src/xml/dte-xml'
import { signDte } from '../../src/xml/signature'
import { buildTed } from '../../src/xml/ted'
import { testClock } from '../support/clock'
import { tempDir } from '../support/server'
import { caf, dte, dteUpload, EMISOR, envioDte, estUp, field, fields, identity, SENDER, SIM_START, soap, soapToken } from './simulator-helpers'

const MAIN = join(import.meta.dir, '../../src/main.ts')
const FIXTURES = join(import.meta.dir, '../fixtures/sii/sets')
const OTRA_EMPRESA = '11111111-1'
const DIR = tempDir('timbre-simset-')
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

interface Run {
  readonly code: number
  readonly stdout: Uint8Array
  readonly stderr: string
}

/** `bun src/main.ts sii-simulator set …`, as the binary runs it; TIMBRE_DATA_DIR only when the test gives it. */
async function setCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<Run> {
  const { TIMBRE_DATA_DIR: _ignored, ...inherited } = process.env
  const child = spawn([process.execPath, MAIN, 'sii-simulator', 'set', ...args], { stdout: 'pipe', stderr: 'pipe', env: { ...inherited, ...env } })
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).arrayBuffer(), new Response(child.stderr).text(), child.exited])
  return { code, stdout: new Uint8Array(stdout), stderr }
}

function parsed(bytes: Uint8Array): ArchivoSet {
  const decoded = decodeSetText(bytes)
  if (!decoded.ok) throw new Error(decoded.error.message)
  const result = parseSetPruebas(decoded.text)
  if (!result.ok) throw new Error(JSON.stringify(result.errors))
  return result.value
}

/** The one JSON line the command logs on stderr. */
function summary(run: Run): { rut: string; origen: string; seed: number | null; data_dir: string; sets: { nombre: string; numero_atencion: number; casos: number }[] } {
  return JSON.parse(run.stderr.trim().split('\n').at(-1) ?? '{}')
}

const EMPRESA: EmpresaEmisora = {
  rut: EMISOR, razon_social: 'Comercializadora Ñandú Limitada', giro: 'Venta de artículos de ferretería', acteco: [475200],
  direccion: 'Av. Irarrázaval 1234', comuna: 'Ñuñoa', ciudad: 'Santiago',
}
const FECHA = '2026-03-02'

/** A factura 33 with the case's own items and `referencias`, built, stamped and signed as Timbre issues one. */
function facturaDelSet(caso: CasoSet, folio: number, referencias: readonly Referencia[]): string {
  const request: EmitirDte = {
    ...caso.documento,
    tipo_dte: 33,
    receptor: { rut: '76086428-5', razon_social: 'Ferretería Ñuble Limitada', giro: 'Comercio', direccion: 'Calle 1', comuna: 'Chillán', ciudad: 'Chillán' },
    fecha_emision: FECHA,
    referencias: [...referencias],
  }
  const input = { empresa: EMPRESA, folio, request, today: FECHA }
  const timestamp = `${FECHA}T10:11:12`
  const ted = buildTed({ ...tedDataFor(input), timestamp }, caf(33).caf)
  return signDte(buildDteXml({ ...input, ted, tmstFirma: timestamp }), identity().signer)
}

/** The first reference line of a set document (research §1.2 fact 1): TpoDocRef SET, RazonRef `CASO n-k`. */
const setRef = (razon: string): Referencia => ({ tipo_doc_ref: 'SET', folio_ref: 0, fecha_ref: FECHA, razon_ref: razon })

describe('timbre sii-simulator set, and the simulator checking a set envío against what it recorded', () => {
  const clock = testClock({ at: SIM_START })
  const dataDir = join(DIR, 'data')
  let sim: RunningSimulator
  beforeAll(async () => {
    // The simulator is serving from the data dir before the command writes to it: the command's writes must be safe
    // while the file is open (WAL, busy timeout), and the running simulator must see them without a restart.
    sim = await startSimulator({ dataDir, clock: clock.now, processingDelayMs: 0 })
  })
  afterAll(() => sim.stop())

  let antiguo: ArchivoSet
  let vigente: ArchivoSet
  let ajeno: ArchivoSet

  test('prints the set\'s ISO-8859-1 bytes on stdout, exactly, and a one-line JSON summary on stderr', async () => {
    const run = await setCli(['--rut', '76.543.210-3', '--sets', 'basico,libros', '--seed', '1', '--data-dir', dataDir])
    expect(run.code).toBe(0)
    antiguo = parsed(run.stdout)
    expect(antiguo.sets.map((s) => s.nombre)).toEqual(['BASICO', 'LIBRO DE VENTAS', 'LIBRO DE COMPRAS'])
    expect(new TextDecoder('latin1').decode(run.stdout.slice(0, 24))).toBe('INDICACIONES GENERALES:\r')
    expect(run.stdout.some((b) => b === 0xf1 || b === 0xf3)).toBe(true)  // ñ or ó as one byte, as the SII writes them
    expect(summary(run)).toMatchObject({
      rut: '76543210-3', origen: 'generado', seed: 1, data_dir: dataDir,
      sets: antiguo.sets.map((s) => ({ nombre: s.nombre, numero_atencion: s.numeroAtencion, casos: s.casos.length })),
    })
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
  })

  test('each run takes fresh, consecutive números de atención; the same seed gives the same cases under them', async () => {
    const ajenoRun = await setCli(['--rut', OTRA_EMPRESA, '--sets', 'basico', '--seed', '1', '--data-dir', dataDir])
    const vigenteRun = await setCli(['--rut', EMISOR, '--sets', 'basico', '--seed', '3', '--data-dir', dataDir])
    expect([ajenoRun.code, vigenteRun.code]).toEqual([0, 0])
    ajeno = parsed(ajenoRun.stdout)
    vigente = parsed(vigenteRun.stdout)
    const first = antiguo.sets[0]!.numeroAtencion
    expect([ajeno, vigente].map((a) => a.sets[0]!.numeroAtencion)).toEqual([first + 3, first + 4])
    const items = (a: ArchivoSet) => a.sets[0]!.casos.map((c) => c.documento.detalle.map((l) => l.nombre))
    expect(items(ajeno)).toEqual(items(antiguo))
    expect(items(vigente)).not.toEqual(items(antiguo))
  })

  test('the store holds every case with its set, número de atención and tipo, per company', () => {
    const store = new SimulatorStore(dataDir)
    try {
      const mine = store.setCasosOf(EMISOR)
      expect(mine.map((c) => c.caso)).toEqual([...antiguo.sets[0]!.casos, ...vigente.sets[0]!.casos].map((c) => c.caso))
      expect(mine.slice(0, 8).map((c) => [c.set_nombre, c.numero_atencion, c.tipo])).toEqual(
        antiguo.sets[0]!.casos.map((c) => ['BASICO', antiguo.sets[0]!.numeroAtencion, c.tipoDte]))
      expect(store.setCasosOf(OTRA_EMPRESA).map((c) => c.caso)).toEqual(ajeno.sets[0]!.casos.map((c) => c.caso))
    } finally {
      store.close()
    }
  })

  test('a set envío: the right case DOK; an unknown case, another company\'s case, a wrong tipo, no case named RCH with the reason; a case of an earlier set RPR; no SET reference DOK', async () => {
    const basico = vigente.sets[0]!
    const caso1 = basico.casos[0]!
    const notaDeCredito = basico.casos.find((c) => c.tipoDte === 61)!
    const documents = {
      bueno: facturaDelSet(caso1, 41, [setRef(`CASO ${caso1.caso}`)]),
      desconocido: facturaDelSet(caso1, 42, [setRef('CASO 999999-1')]),
      deOtraEmpresa: facturaDelSet(caso1, 43, [setRef(`CASO ${ajeno.sets[0]!.casos[0]!.caso}`)]),
      otroTipo: facturaDelSet(caso1, 44, [setRef(`CASO ${notaDeCredito.caso}`)]),
      sinCaso: facturaDelSet(caso1, 45, [setRef('SET BASICO')]),
      setAnterior: facturaDelSet(caso1, 46, [setRef(`CASO ${antiguo.sets[0]!.casos[0]!.caso}`)]),
      sinSet: dte({ folio: 47 }),
    }
    const token = await soapToken(sim.url)
    const up = await dteUpload(sim.url, token, envioDte(Object.values(documents)))
    expect(up.status).toBe('0')
    const answer = await estUp(sim.url, token, up.trackId ?? '')
    expect(field(answer.inner, 'ESTADO')).toBe('EPR')
    expect(['INFORMADOS', 'ACEPTADOS', 'RECHAZADOS', 'REPAROS'].map((n) => fields(answer.inner, n))).toEqual([['7'], ['3'], ['4'], ['1']])

    const status = async (folio: number, xml: string) => {
      const [rc, dc] = SENDER.split('-') as [string, string]
      const monto = /<MntTotal>(\d+)<\/MntTotal>/.exec(xml)?.[1] ?? ''
      const res = await soap(sim.url, 'QueryEstDte', 'getEstDte', {
        RutConsultante: rc, DvConsultante: dc, RutCompania: '76543210', DvCompania: '3', RutReceptor: '76086428', DvReceptor: '5',
        TipoDte: '33', FolioDte: String(folio), FechaEmisionDte: '02032026', MontoDte: monto, Token: token,
      })
      return { estado: field(res.inner, 'ESTADO'), glosaErr: field(res.inner, 'GLOSA_ERR') ?? '' }
    }
    expect(await status(41, documents.bueno)).toEqual({ estado: 'DOK', glosaErr: '' })
    expect(await status(47, documents.sinSet)).toEqual({ estado: 'DOK', glosaErr: '' })
    const desconocido = await status(42, documents.desconocido)
    expect(desconocido.estado).toBe('FAU')
    expect(desconocido.glosaErr).toStartWith('(SET-3-2) Caso no corresponde a un set de pruebas del contribuyente — DTE F42T33: CASO 999999-1 no es de un set de pruebas entregado a 76543210-3')
    expect((await status(43, documents.deOtraEmpresa)).glosaErr).toStartWith(`(SET-3-2) Caso no corresponde a un set de pruebas del contribuyente — DTE F43T33: CASO ${ajeno.sets[0]!.casos[0]!.caso} `)
    const otroTipo = await status(44, documents.otroTipo)
    expect(otroTipo.estado).toBe('FAU')
    expect(otroTipo.glosaErr).toBe(`(SET-3-3) Tipo de documento no corresponde al caso — DTE F44T33: el CASO ${notaDeCredito.caso} (SET BASICO) es de tipo 61, el documento es de tipo 33`)
    expect((await status(45, documents.sinCaso)).glosaErr).toBe('(SET-3-1) Referencia SET no indica un caso del set de pruebas — DTE F45T33: RazonRef «SET BASICO», se espera «CASO <n>-<k>»')
    const anterior = await status(46, documents.setAnterior)
    expect(anterior.estado).toBe('DOK')
    expect(anterior.glosaErr).toBe(
      `(SET-2-4) Caso de un set de pruebas anterior — DTE F46T33: el CASO ${antiguo.sets[0]!.casos[0]!.caso} es del SET BASICO N° ${antiguo.sets[0]!.numeroAtencion}; ` +
      `el SII evalúa el último set entregado, N° ${vigente.sets[0]!.numeroAtencion}`)
  })

  test('a set envío addressed to anyone but the SII (60803000-K) is refused at the carátula, RCT', async () => {
    const caso1 = vigente.sets[0]!.casos[0]!
    const token = await soapToken(sim.url)
    const up = await dteUpload(sim.url, token, envioDte([facturaDelSet(caso1, 48, [setRef(`CASO ${caso1.caso}`)])], { rutReceptor: '76086428-5' }))
    expect(up.status).toBe('0')
    const answer = await estUp(sim.url, token, up.trackId ?? '')
    expect(field(answer.inner, 'ESTADO')).toBe('RCT')
    expect(field(answer.inner, 'GLOSA')).toContain('(CRT-3-14) RutReceptor debe ser el SII')
  })
})

describe('--from: a set text the SII gave', () => {
  test('stdout is the file byte for byte; its cases are recorded for the company, under the SII\'s own número de atención', async () => {
    const dataDir = join(DIR, 'from')
    const file = join(FIXTURES, '001-basico.txt')
    const run = await setCli(['--rut', EMISOR, '--from', file, '--data-dir', dataDir])
    expect(run.code).toBe(0)
    expect(run.stdout).toEqual(new Uint8Array(await Bun.file(file).arrayBuffer()))
    expect(summary(run)).toMatchObject({ origen: 'archivo', seed: null, sets: [{ nombre: 'BASICO', numero_atencion: 414175, casos: 8 }] })
    const store = new SimulatorStore(dataDir)
    try {
      expect(store.setCasosOf(EMISOR).map((c) => [c.caso, c.tipo])).toEqual(
        ([[1, 33], [2, 33], [3, 33], [4, 33], [5, 61], [6, 61], [7, 61], [8, 56]] as const).map(([k, tipo]) => [`414175-${k}`, tipo]))
      // A RazonRef that writes the number with a leading zero names the same case.
      expect(store.findSetCaso(EMISOR, casoKey('0414175', '01'))).toMatchObject({ set_nombre: 'BASICO', tipo: 33, numero_atencion_vigente: 414175 })
    } finally {
      store.close()
    }
  })

  test('a file that does not parse is refused with the line it stops at, in Spanish; nothing printed, nothing recorded', async () => {
    const dataDir = join(DIR, 'bad')
    const file = join(DIR, 'roto.txt')
    writeFileSync(file, Buffer.from('SET BASICO - NUMERO DE ATENCION: 77\r\n\r\nCASO 77-1\r\n==============\r\nDOCUMENTO\tFACTURA ELECTRONICA\r\nESTO NO ES DEL SII\r\n', 'latin1'))
    const run = await setCli(['--rut', EMISOR, '--from', file, '--data-dir', dataDir])
    expect(run.code).toBe(1)
    expect(run.stdout).toHaveLength(0)
    const error = JSON.parse(run.stderr.trim()) as { code: string; message: string }
    expect(error.code).toBe('ERROR')
    expect(error.message).toContain('no es un set de pruebas del SII que se pueda leer; no se registró nada')
    expect(error.message).toContain('línea 6 «ESTO NO ES DEL SII»: Línea no reconocida en el caso')
    expect(await Bun.file(join(dataDir, 'sii-simulator.db')).exists()).toBe(false)
  })
})

describe('data dir and usage', () => {
  test('--help says what it does and takes; timbre --help lists it', async () => {
    const help = Bun.spawnSync([process.execPath, MAIN, 'sii-simulator', 'set', '--help'])
    expect(help.exitCode).toBe(0)
    expect(help.stdout.toString()).toContain('Uso: timbre sii-simulator set --rut R [--sets basico,exenta,guia,compra,exportacion1,exportacion2,libros] [--seed N] [--from ARCHIVO] [--data-dir D]')
    expect(Bun.spawnSync([process.execPath, MAIN, '--help']).stdout.toString()).toContain('sii-simulator set')
  })

  test('without --data-dir it records where serve keeps its data: TIMBRE_DATA_DIR', async () => {
    const dataDir = join(DIR, 'env')
    const run = await setCli(['--rut', EMISOR, '--sets', 'guia', '--seed', '9'], { TIMBRE_DATA_DIR: dataDir })
    expect(run.code).toBe(0)
    expect(summary(run).data_dir).toBe(dataDir)
    const store = new SimulatorStore(dataDir)
    try {
      expect(store.setCasosOf(EMISOR).map((c) => c.tipo)).toEqual([52, 52, 52])
    } finally {
      store.close()
    }
  })

  test.each([
    [['--sets', 'basico'], 'falta --rut'],
    [['--rut', '76543210-4'], 'RUT válido'],
    [['--rut', EMISOR, '--sets', 'basico,boletas'], '«boletas» no es un set'],
    [['--rut', EMISOR, '--seed', '4294967296'], '--seed'],
    [['--rut', EMISOR, '--from', 'x.txt', '--seed', '1'], 'no se combina'],
  ])('%j is a usage error, exit 2 (%s)', async (args, message) => {
    const run = await setCli([...args, '--data-dir', join(DIR, 'usage')])
    expect(run.code).toBe(2)
    expect(run.stdout).toHaveLength(0)
    expect(JSON.parse(run.stderr.trim())).toMatchObject({ code: 'USAGE', message: expect.stringContaining(message) })
  })
})
