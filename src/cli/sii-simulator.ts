// `timbre sii-simulator` (the SII simulator on its own, long-running like serve) and `timbre sii-simulator caf`
// (a CAF signed by the simulator's authority, IDK 900): DESIGN §3, §9; issue 6 "Simulator".
import { santiagoDate, systemClock } from '../clock'
import { isTipoDte } from '../domain/emision'
import { normalizeRut } from '../domain/rut'
import { absolutePath } from '../config'
import { createLogger } from '../log'
import { simulatedCafFile } from '../sii/simulator/caf-issuer'
import { startSimulator } from '../sii/simulator/server'
import { intFlag, requireFlag, UsageError, type Command, type ParsedArgs } from './command'

/** Default port of the standalone simulator: beside Timbre's 8080, easy to point `--sii http://127.0.0.1:8090` at. */
export const DEFAULT_SIMULATOR_PORT = 8090

function rate(args: ParsedArgs, name: string): number {
  const raw = args.flags[name]
  if (raw === undefined) return 0
  const value = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) throw new UsageError(`${name} debe ser un número entre 0 y 1, se recibió "${raw}"`)
  return value
}

export const siiSimulator: Command = {
  name: 'sii-simulator',
  summary: 'Inicia el simulador del SII (rutas y mensajes reales: DTEWS, DTEUpload, API REST de boletas).',
  usage: 'timbre sii-simulator [--port N] [--host H] [--data-dir D] [--fault-rate X] [--hang-rate X] [--html-rate X]',
  flags: {
    '--port': { takesValue: true, help: `puerto (0: uno libre); por defecto ${DEFAULT_SIMULATOR_PORT}` },
    '--host': { takesValue: true, help: 'interfaz; por defecto 127.0.0.1' },
    '--data-dir': { takesValue: true, help: 'guarda su estado en D/sii-simulator.db; sin ella, en memoria' },
    '--fault-rate': { takesValue: true, help: 'fracción de solicitudes respondidas con HTTP 503 (0 a 1)' },
    '--hang-rate': { takesValue: true, help: 'fracción de solicitudes que no responden a tiempo (0 a 1)' },
    '--html-rate': { takesValue: true, help: 'fracción respondida con una página HTML de mantención y HTTP 200 (0 a 1)' },
    '--hang-ms': { takesValue: true, help: 'cuánto se demora una respuesta colgada; por defecto 45000' },
    '--delay-ms': { takesValue: true, help: 'tiempo de procesamiento de un envío hasta su estado final; por defecto 3000' },
  },
  isLongRunning: true,
  async run(args) {
    const log = createLogger('info')
    const faults = { errorRate: rate(args, '--fault-rate'), hangRate: rate(args, '--hang-rate'), htmlRate: rate(args, '--html-rate'), hangMs: intFlag(args, '--hang-ms') }
    if (faults.errorRate + faults.hangRate + faults.htmlRate > 1) throw new UsageError('--fault-rate + --hang-rate + --html-rate no pueden sumar más de 1')
    const simulator = await startSimulator({
      port: intFlag(args, '--port') ?? DEFAULT_SIMULATOR_PORT,
      hostname: args.flags['--host'] ?? '127.0.0.1',
      dataDir: args.flags['--data-dir'] !== undefined ? absolutePath(args.flags['--data-dir']) : null,
      faults,
      processingDelayMs: intFlag(args, '--delay-ms'),
      log: (event, fields) => log.info(event, fields as Record<string, unknown>),
    })
    const onSignal = (signal: string): void => {
      log.info('sii_simulator.signal', { signal })
      void simulator.stop().then(() => process.exit(0))
    }
    process.once('SIGTERM', () => onSignal('SIGTERM'))
    process.once('SIGINT', () => onSignal('SIGINT'))
    return undefined
  },
}

export const siiSimulatorCaf: Command = {
  name: 'sii-simulator caf',
  summary: 'Imprime un CAF firmado por la autoridad del simulador (IDK 900), solo válido contra el SII simulado.',
  usage: 'timbre sii-simulator caf --rut R --tipo T --desde N --hasta N [--razon-social S] [--fecha AAAA-MM-DD]',
  flags: {
    '--rut': { takesValue: true, help: 'RUT de la empresa' },
    '--tipo': { takesValue: true, help: 'tipo de documento (33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112)' },
    '--desde': { takesValue: true, help: 'primer folio' },
    '--hasta': { takesValue: true, help: 'último folio' },
    '--razon-social': { takesValue: true, help: 'razón social (RS, cortada a 40 caracteres); por defecto EMPRESA DE PRUEBA' },
    '--fecha': { takesValue: true, help: 'fecha de autorización FA; por defecto hoy (America/Santiago)' },
  },
  async run(args) {
    const rut = normalizeRut(requireFlag(args, '--rut'))
    if (rut === null) throw new UsageError(`--rut no es un RUT válido: "${args.flags['--rut']}"`)
    const tipo = intFlag(args, '--tipo')
    if (!isTipoDte(tipo)) throw new UsageError(`--tipo no es un tipo de documento que Timbre emita: "${args.flags['--tipo'] ?? ''}"`)
    const desde = intFlag(args, '--desde') ?? 0
    const hasta = intFlag(args, '--hasta') ?? 0
    requireFlag(args, '--desde')
    requireFlag(args, '--hasta')
    if (desde < 1 || hasta < desde) throw new UsageError('--desde y --hasta deben cumplir 1 ≤ desde ≤ hasta')
    const fecha = args.flags['--fecha'] ?? santiagoDate(systemClock.now())
    if (!/^\d{4}-\d{2}-\d{2}$/.test(fecha) || Number.isNaN(Date.parse(`${fecha}T00:00:00Z`))) throw new UsageError(`--fecha debe ser AAAA-MM-DD: "${fecha}"`)
    const razonSocial = args.flags['--razon-social'] ?? 'EMPRESA DE PRUEBA'
    if (!/^[\u0000-\u00ff]*$/.test(razonSocial) || razonSocial.trim() === '') throw new UsageError('--razon-social debe tener texto ISO-8859-1')
    const file = simulatedCafFile({ rut, razonSocial, tipoDte: tipo, folioDesde: desde, folioHasta: hasta, fechaAutorizacion: fecha })
    // main.ts prints a returned string as UTF-8, which is the file's Latin-1 bytes only when they are ASCII.
    if (file.every((b) => b < 0x80)) return Buffer.from(file).toString('latin1')
    process.stdout.write(file)
    return ''
  },
}
