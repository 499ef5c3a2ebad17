// `timbre sii-simulator set` (DESIGN §15 "Simulator"): the simulated SII's "Generación de set de pruebas". Prints a new
// set text in the SII's 2026 layout (or, with --from, the text the real SII gave) and records its cases for the company
// in the simulator's store of the data dir, where the simulator checks the company's set envíos against them
// (docs/decisions/simulator.md "The set of tests"). The data dir is the one `timbre serve --sii simulado` uses.
import { readFileSync } from 'node:fs'
import { randomInt } from 'node:crypto'
import { dataDirFrom } from '../config'
import { decodeSetText, parseSetPruebas, type ArchivoSet, type SetError } from '../domain/set-pruebas'
import { normalizeRut } from '../domain/rut'
import { OperatorError } from '../errors'
import { stderrLogger } from '../log'
import { generateSetPruebas, setsOf, SETS_GENERABLES, type SetGenerable } from '../sii/simulator/set-generator'
import { SimulatorStore, type SetToRecord } from '../sii/simulator/store'
import { DATA_DIR_FLAG, intFlag, requireFlag, UsageError, type Command, type ParsedArgs } from './command'

export const siiSimulatorSet: Command = {
  name: 'sii-simulator set',
  summary: 'Genera un set de pruebas del SII (formato 2026) para una empresa y lo registra en el simulador.',
  usage: `timbre sii-simulator set --rut R [--sets ${SETS_GENERABLES.join(',')}] [--seed N] [--from ARCHIVO] [--data-dir D]`,
  flags: {
    '--rut': { takesValue: true, help: 'RUT de la empresa que se certifica' },
    '--sets': { takesValue: true, help: `sets, separados por comas; por defecto todos (${SETS_GENERABLES.join(',')})` },
    '--seed': { takesValue: true, help: 'semilla (0 a 4294967295): la misma da el mismo texto; por defecto una al azar, que se informa' },
    '--from': { takesValue: true, help: 'registra el archivo de set que entregó el SII, en vez de generar uno' },
    '--data-dir': { takesValue: true, help: `${DATA_DIR_FLAG['--data-dir']!.help}; el mismo de timbre serve --sii simulado` },
  },
  async run(args) {
    if (args.positionals.length > 0) throw new UsageError(`argumento inesperado "${args.positionals[0]}"`)
    const rut = normalizeRut(requireFlag(args, '--rut'))
    if (rut === null) throw new UsageError(`--rut no es un RUT válido: "${args.flags['--rut']}"`)
    const from = args.flags['--from']
    if (from !== undefined && (args.flags['--sets'] !== undefined || args.flags['--seed'] !== undefined)) {
      throw new UsageError('--from registra el set que entregó el SII tal como es: no se combina con --sets ni --seed')
    }
    const given = from === undefined ? null : readGivenSet(from)
    const sets = given === null ? chosenSets(args) : []
    const seed = given === null ? seedOf(args) : null
    const dataDir = dataDirFrom(args.flags)
    // The simulator's own file, WAL with a busy timeout (store.ts): safe while `serve --sii simulado` has it open.
    const store = new SimulatorStore(dataDir)
    try {
      const { bytes, archivo } = given ?? generated(store, sets, seed ?? 0)
      store.recordSets(rut, toRecord(archivo), Date.now())
      stderrLogger('info').info('sii_simulator.set', {
        rut, origen: given === null ? 'generado' : 'archivo', seed, data_dir: dataDir,
        sets: archivo.sets.map((s) => ({ nombre: s.nombre, numero_atencion: s.numeroAtencion, casos: s.casos.length })),
      })
      await writeStdout(bytes)
    } finally {
      store.close()
    }
    return ''
  },
}

function chosenSets(args: ParsedArgs): SetGenerable[] {
  const raw = args.flags['--sets']
  if (raw === undefined) return [...SETS_GENERABLES]
  const words = raw.split(',').map((w) => w.trim().toLowerCase()).filter((w) => w !== '')
  const unknown = words.filter((w) => !(SETS_GENERABLES as readonly string[]).includes(w))
  if (unknown.length > 0) throw new UsageError(`--sets: «${unknown.join(', ')}» no es un set; use ${SETS_GENERABLES.join(', ')}`)
  const chosen = words as SetGenerable[]
  if (setsOf(chosen).length === 0) throw new UsageError('--sets no nombra ningún set')
  return chosen
}

function seedOf(args: ParsedArgs): number {
  const seed = intFlag(args, '--seed')
  if (seed !== undefined && seed > 0xffffffff) throw new UsageError('--seed debe estar entre 0 y 4294967295')
  return seed ?? randomInt(0, 0xffffffff)
}

/** A new set under fresh números de atención, read back by the parser that reads the SII's files: one way to record both. */
function generated(store: SimulatorStore, sets: readonly SetGenerable[], seed: number): { bytes: Uint8Array; archivo: ArchivoSet } {
  const numeroAtencion = store.reserveNumerosAtencion(setsOf(sets).length)
  const { bytes } = generateSetPruebas({ seed, sets, numeroAtencion })
  const decoded = decodeSetText(bytes)
  const parsed = decoded.ok ? parseSetPruebas(decoded.text) : null
  if (parsed === null || !parsed.ok) throw new Error(`the generated set does not parse (seed ${seed}): a bug in set-generator.ts`)
  return { bytes, archivo: parsed.value }
}

/** The SII's file as given: its bytes are printed as they are, its cases recorded; one that does not parse is refused whole. */
function readGivenSet(path: string): { bytes: Uint8Array; archivo: ArchivoSet } {
  let bytes: Uint8Array
  try {
    bytes = new Uint8Array(readFileSync(path))
  } catch (err) {
    throw new OperatorError(`no se puede leer ${path}: ${err instanceof Error ? err.message : String(err)}`)
  }
  const decoded = decodeSetText(bytes)
  if (!decoded.ok) throw unreadable(path, [decoded.error])
  const parsed = parseSetPruebas(decoded.text)
  if (!parsed.ok) throw unreadable(path, parsed.errors)
  return { bytes, archivo: parsed.value }
}

/** Spanish, naming each line (the first five) as the parser reports it: `línea 12 «…»: Línea no reconocida en el caso.` */
function unreadable(path: string, errors: readonly SetError[]): OperatorError {
  const shown = errors.slice(0, 5).map((e) => `línea ${e.line} «${e.text}»: ${e.message.replace(/\.$/, '')}`)
  const more = errors.length > shown.length ? ` (y ${errors.length - shown.length} errores más)` : ''
  return new OperatorError(`${path} no es un set de pruebas del SII que se pueda leer; no se registró nada. ${shown.join('; ')}${more}`)
}

function toRecord(archivo: ArchivoSet): SetToRecord[] {
  return archivo.sets.map((s) => ({ nombre: s.nombre, numeroAtencion: s.numeroAtencion, casos: s.casos.map((c) => ({ caso: c.caso, tipo: c.tipoDte })) }))
}

/** stdout is exactly the set's ISO-8859-1 bytes (main.ts would print a string as UTF-8); resolved once they are handed over. */
function writeStdout(bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(bytes, (err) => (err ? reject(err) : resolve())))
}
