// `timbre sii-simulator intercambio` (DESIGN §15 "Simulator"): prints the simulator's set de intercambio for a company,
// the signed EnvioDTE from 88888888-8 that `POST /certificacion/intercambio` answers, so the stage can be rehearsed
// without the SII's site. sii/simulator/intercambio-generator.ts builds it.
import { systemClock } from '../clock'
import { OTRO_RUT_INTERCAMBIO } from '../domain/certificacion-intercambio'
import { normalizeRut } from '../domain/rut'
import { intFlag, requireFlag, UsageError, type Command } from './command'

export const siiSimulatorIntercambio: Command = {
  name: 'sii-simulator intercambio',
  summary: 'Imprime un set de intercambio firmado como el del SII (emisor 88888888-8): un DTE para la empresa y otro para otro RUT.',
  usage: 'timbre sii-simulator intercambio --rut R [--otro-rut X] [--seed N] > set-intercambio.xml',
  flags: {
    '--rut': { takesValue: true, help: 'RUT de la empresa en certificación (receptor del envío y del primer DTE)' },
    '--otro-rut': { takesValue: true, help: `RUT receptor del segundo DTE; por defecto ${OTRO_RUT_INTERCAMBIO}, el RUT de prueba del SII` },
    '--seed': { takesValue: true, help: 'semilla: la misma da el mismo número de atención, folios y montos; por defecto una al azar' },
  },
  async run(args) {
    const rut = normalizeRut(requireFlag(args, '--rut'))
    if (rut === null) throw new UsageError(`--rut no es un RUT válido: "${args.flags['--rut']}"`)
    const otroRut = normalizeRut(args.flags['--otro-rut'] ?? OTRO_RUT_INTERCAMBIO)
    if (otroRut === null) throw new UsageError(`--otro-rut no es un RUT válido: "${args.flags['--otro-rut']}"`)
    if (otroRut === rut) throw new UsageError('--otro-rut debe ser distinto de --rut')
    const seed = intFlag(args, '--seed') ?? Math.floor(Math.random() * 2 ** 32)
    // Loaded here, not at start: every command (serve too) loads this file, and the builders, xml-crypto and forge
    // stay out of their memory unless an envelope is made (docs/decisions/performance.md, lazy loading).
    const { generateIntercambioEnvelope } = await import('../sii/simulator/intercambio-generator')
    const xml = generateIntercambioEnvelope({ rutReceptor: rut, otroRut, seed, now: systemClock.now() })
    // main.ts prints a returned string as UTF-8, which is the file's ISO-8859-1 bytes only when they are ASCII.
    if (xml.every((b) => b < 0x80)) return Buffer.from(xml).toString('latin1')
    process.stdout.write(xml)
    return ''
  },
}
