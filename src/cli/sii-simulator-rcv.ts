// `timbre sii-simulator rcv add`, `… rcv falla` and `… reloj` (DESIGN §16 "Simulator"; docs/decisions/simulator.md
// "Portal y RCV"): what an operator or a test changes in the simulated SII's RCV through the simulator's store of the
// data dir, so a running simulator (`timbre serve --sii simulado`, `timbre sii-simulator --data-dir D`) sees it at its
// next request: rows of documents issued outside Timbre, the portal's faults, and the simulator's clock.
import { readFileSync } from 'node:fs'
import { santiagoInstant, santiagoTimestamp } from '../clock'
import { dataDirFrom } from '../config'
import { isPeriodoRcv, SECCIONES_COMPRAS, type SeccionCompras } from '../domain/rcv'
import { normalizeRut } from '../domain/rut'
import { OperatorError } from '../errors'
import { TIPOS_RCV } from '../sii/simulator/rcv-registers'
import { FALLAS_PORTAL, SimulatorStore, type FallaPortal, type RcvFilaRow } from '../sii/simulator/store'
import { DATA_DIR_FLAG, intFlag, requireFlag, UsageError, type Command, type ParsedArgs } from './command'

export const DATA_DIR_SIMULADOR = { '--data-dir': { takesValue: true, help: `${DATA_DIR_FLAG['--data-dir']!.help}; el mismo de timbre serve --sii simulado` } }

/** Opens the simulator's store of the data dir for one change (WAL and a busy timeout: safe beside a running simulator). */
export function withStore<T>(args: ParsedArgs, work: (store: SimulatorStore, dataDir: string) => T): T {
  const dataDir = dataDirFrom(args.flags)
  const store = new SimulatorStore(dataDir)
  try {
    return work(store, dataDir)
  } finally {
    store.close()
  }
}

function noPositionals(args: ParsedArgs, allowed = 0): void {
  if (args.positionals.length > allowed) throw new UsageError(`argumento inesperado "${args.positionals[allowed]}"`)
}

export const siiSimulatorRcvAdd: Command = {
  name: 'sii-simulator rcv add',
  summary: 'Agrega al RCV del simulador documentos emitidos fuera de Timbre (un archivo JSON con filas).',
  usage: 'timbre sii-simulator rcv add --rut R ARCHIVO.json [--data-dir D]',
  flags: {
    '--rut': { takesValue: true, help: 'RUT de la empresa en cuyo registro quedan las filas' },
    ...DATA_DIR_SIMULADOR,
  },
  async run(args) {
    noPositionals(args, 1)
    const rut = normalizeRut(requireFlag(args, '--rut'))
    if (rut === null) throw new UsageError(`--rut no es un RUT válido: "${args.flags['--rut']}"`)
    const path = args.positionals[0]
    if (path === undefined) throw new UsageError('falta el archivo JSON con las filas')
    let json: unknown
    try {
      json = JSON.parse(readFileSync(path, 'utf8'))
    } catch (err) {
      throw new OperatorError(`no se puede leer ${path} como JSON: ${err instanceof Error ? err.message : String(err)}`)
    }
    const read = readFilasRcv(json, rut, Date.now())
    if (!read.ok) {
      const shown = read.errors.slice(0, 10)
      const more = read.errors.length > shown.length ? ` (y ${read.errors.length - shown.length} errores más)` : ''
      throw new OperatorError(`${path}: no se agregó ninguna fila. ${shown.join('; ')}${more}`)
    }
    return withStore(args, (store, dataDir) => {
      store.insertRcvFilas(read.filas)
      return { rut, agregadas: read.filas.length, data_dir: dataDir }
    })
  },
}

export const siiSimulatorRcvFalla: Command = {
  name: 'sii-simulator rcv falla',
  summary: 'Activa o quita una falla del portal del SII simulado (sesión expirada, tope de sesiones, descarga eterna, respuesta malformada, corte tras otorgar folios, página de folios cambiada).',
  usage: `timbre sii-simulator rcv falla [--tipo ${FALLAS_PORTAL.join('|')}] [--veces N] [--quitar] [--data-dir D]`,
  flags: {
    '--tipo': { takesValue: true, help: `la falla: ${FALLAS_PORTAL.join(', ')}; sin ella, lista las fallas activas` },
    '--veces': { takesValue: true, help: 'cuántas solicitudes la sufren; por defecto 1; 0: hasta quitarla' },
    '--quitar': { takesValue: false, help: 'quita la falla' },
    ...DATA_DIR_SIMULADOR,
  },
  async run(args) {
    noPositionals(args)
    const raw = args.flags['--tipo']
    if (raw === undefined) {
      if (args.flags['--veces'] !== undefined || args.flags['--quitar'] !== undefined) throw new UsageError('falta --tipo')
      return withStore(args, (store) => ({ fallas: store.fallas() }))
    }
    if (!(FALLAS_PORTAL as readonly string[]).includes(raw)) throw new UsageError(`--tipo: «${raw}» no es una falla; use ${FALLAS_PORTAL.join(', ')}`)
    const tipo = raw as FallaPortal
    if (args.flags['--quitar'] !== undefined) {
      if (args.flags['--veces'] !== undefined) throw new UsageError('--quitar no se combina con --veces')
      return withStore(args, (store) => ({ falla: tipo, quitada: store.removeFalla(tipo) }))
    }
    const veces = intFlag(args, '--veces') ?? 1
    return withStore(args, (store) => {
      store.setFalla(tipo, veces)
      return { falla: tipo, veces, hasta_quitarla: veces === 0 }
    })
  },
}

const UNIDADES_MS: Readonly<Record<string, number>> = { d: 24 * 60 * 60_000, h: 60 * 60_000, m: 60_000 }

export const siiSimulatorReloj: Command = {
  name: 'sii-simulator reloj',
  summary: 'Adelanta, muestra o reinicia el reloj del simulador del SII (los 8 días, las sesiones, las descargas lo siguen).',
  usage: 'timbre sii-simulator reloj (--avanzar 9d|12h|30m | --mostrar | --reiniciar) [--data-dir D]',
  flags: {
    '--avanzar': { takesValue: true, help: 'cuánto adelantarlo: un número y d (días), h (horas) o m (minutos)' },
    '--mostrar': { takesValue: false, help: 'muestra cuánto va adelantado' },
    '--reiniciar': { takesValue: false, help: 'lo vuelve a la hora de su reloj base (desfase 0)' },
    ...DATA_DIR_SIMULADOR,
  },
  async run(args) {
    noPositionals(args)
    const chosen = ['--avanzar', '--mostrar', '--reiniciar'].filter((f) => args.flags[f] !== undefined)
    if (chosen.length !== 1) throw new UsageError('use una de --avanzar, --mostrar o --reiniciar')
    const avanzar = args.flags['--avanzar']
    let deltaMs = 0
    if (avanzar !== undefined) {
      const m = /^(\d{1,6})([dhm])$/.exec(avanzar.trim())
      if (m === null) throw new UsageError(`--avanzar debe ser un número seguido de d, h o m (9d, 12h, 30m); se recibió "${avanzar}"`)
      deltaMs = Number(m[1]) * (UNIDADES_MS[m[2] ?? 'm'] ?? 0)
    }
    return withStore(args, (store) => {
      const offsetMs = args.flags['--reiniciar'] !== undefined ? 0 : store.clockOffsetMs() + deltaMs
      if (avanzar !== undefined || args.flags['--reiniciar'] !== undefined) store.setClockOffsetMs(offsetMs)
      return { desfase_ms: offsetMs, desfase: describeOffset(offsetMs), hora_simulador: santiagoTimestamp(new Date(Date.now() + offsetMs)) }
    })
  },
}

/** `9d 3h 0m`. */
function describeOffset(ms: number): string {
  const minutes = Math.floor(ms / 60_000)
  return `${Math.floor(minutes / 1440)}d ${Math.floor((minutes % 1440) / 60)}h ${minutes % 60}m`
}

export const SII_SIMULATOR_RCV_COMMANDS: readonly Command[] = [siiSimulatorRcvAdd, siiSimulatorRcvFalla, siiSimulatorReloj]

// ------------------------------------------------------------------------------------------------ the rows

const CAMPOS = [
  'registro', 'tipo', 'rut', 'razon_social', 'folio', 'fecha_emision', 'fecha_recepcion', 'monto_exento', 'monto_neto', 'monto_iva', 'monto_total', 'seccion',
] as const

export type FilasLeidas = { readonly ok: true; readonly filas: readonly RcvFilaRow[] } | { readonly ok: false; readonly errors: readonly string[] }

/** The file's rows for company `rut`, every one checked; every problem named by row index and field, in Spanish. */
export function readFilasRcv(json: unknown, rut: string, addedAt: number): FilasLeidas {
  if (!Array.isArray(json)) return { ok: false, errors: ['el archivo debe ser una lista JSON de filas'] }
  if (json.length === 0) return { ok: false, errors: ['el archivo no trae filas'] }
  const errors: string[] = []
  const filas: RcvFilaRow[] = []
  json.forEach((raw: unknown, i) => {
    const fila = readFila(raw, (campo, mensaje) => errors.push(`fila ${i}${campo === '' ? '' : `, campo "${campo}"`}: ${mensaje}`), rut, addedAt)
    if (fila !== null) filas.push(fila)
  })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, filas }
}

function readFila(raw: unknown, error: (campo: string, mensaje: string) => void, rutEmpresa: string, addedAt: number): RcvFilaRow | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    error('', 'debe ser un objeto JSON')
    return null
  }
  const o = raw as Readonly<Record<string, unknown>>
  let count = 0
  const fail = (campo: string, mensaje: string): null => {
    count++
    error(campo, mensaje)
    return null
  }
  for (const key of Object.keys(o)) if (!(CAMPOS as readonly string[]).includes(key)) fail(key, 'campo desconocido')
  const registro = o.registro === 'compras' || o.registro === 'ventas' ? o.registro : fail('registro', 'debe ser "compras" o "ventas"')
  const tipo = typeof o.tipo === 'number' && TIPOS_RCV.includes(o.tipo) ? o.tipo : fail('tipo', `debe ser uno de ${TIPOS_RCV.join(', ')}`)
  const rut = typeof o.rut === 'string' ? normalizeRut(o.rut) : null
  if (rut === null) fail('rut', 'no es un RUT válido')
  const razonSocial = typeof o.razon_social === 'string' && o.razon_social.trim() !== '' && o.razon_social.length <= 100 ? o.razon_social.trim() : fail('razon_social', 'debe ser un texto de 1 a 100 caracteres')
  const folio = typeof o.folio === 'number' && Number.isSafeInteger(o.folio) && o.folio > 0 && o.folio <= 9_999_999_999 ? o.folio : fail('folio', 'debe ser un entero positivo de hasta 10 dígitos')
  const fechaEmision = typeof o.fecha_emision === 'string' && isFecha(o.fecha_emision) ? o.fecha_emision : fail('fecha_emision', 'debe ser una fecha aaaa-mm-dd desde 2017-08')
  const fechaRecepcion = o.fecha_recepcion === undefined
    ? fechaEmision === null ? null : `${fechaEmision}T12:00:00`
    : typeof o.fecha_recepcion === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(o.fecha_recepcion) && santiagoInstant(o.fecha_recepcion) !== null
      ? o.fecha_recepcion : fail('fecha_recepcion', 'debe ser una fecha y hora aaaa-mm-ddThh:mm:ss (hora de Santiago)')
  const monto = (campo: 'monto_exento' | 'monto_neto' | 'monto_iva' | 'monto_total', isRequired: boolean): number | null => {
    const v = o[campo]
    if (v === undefined && !isRequired) return 0
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : fail(campo, isRequired ? 'falta o no es un entero de pesos, 0 o más' : 'debe ser un entero de pesos, 0 o más')
  }
  const montos = { monto_exento: monto('monto_exento', false), monto_neto: monto('monto_neto', false), monto_iva: monto('monto_iva', false), monto_total: monto('monto_total', true) }
  let seccion: SeccionCompras | null = null
  if (o.seccion !== undefined) {
    if (registro === 'ventas') fail('seccion', 'solo las compras tienen sección')
    else if (typeof o.seccion === 'string' && (SECCIONES_COMPRAS as readonly string[]).includes(o.seccion)) seccion = o.seccion as SeccionCompras
    else fail('seccion', `debe ser una de ${SECCIONES_COMPRAS.join(', ')}`)
  }
  if (count > 0 || registro === null || tipo === null || rut === null || razonSocial === null || folio === null || fechaEmision === null || fechaRecepcion === null) return null
  if (montos.monto_exento === null || montos.monto_neto === null || montos.monto_iva === null || montos.monto_total === null) return null
  return {
    rut_empresa: rutEmpresa, registro, tipo, rut, razon_social: razonSocial, folio, fecha_emision: fechaEmision, fecha_recepcion: fechaRecepcion,
    monto_exento: montos.monto_exento, monto_neto: montos.monto_neto, monto_iva: montos.monto_iva, monto_total: montos.monto_total, seccion, added_at: addedAt,
  }
}

function isFecha(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false
  const d = new Date(`${text}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text && isPeriodoRcv(`${text.slice(0, 4)}${text.slice(5, 7)}`)
}
