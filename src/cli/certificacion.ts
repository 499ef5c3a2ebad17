// `timbre certificacion …` (DESIGN §15 "CLI"): the certification flow from the terminal, through the running server's
// own API. Issuing needs the server's folio reservations, worker pool and SII jobs, so the command does not open a
// second writer on the data dir: it mints a short token for the company with the instance key (as `timbre token issue`
// does) and calls the local `timbre serve` over loopback, which answers exactly as the API does.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { OperatorError } from '../errors'
import { DATA_DIR_FLAG, intFlag, requireFlag, UsageError, type Command, type FlagSpec, type ParsedArgs } from './command'
import { callLocalApi, type LocalApiAnswer } from './local-api'

const API = '/api/v1/billing/certificacion'
/** Issuing a whole set and sending it waits for the SII's upload answers: minutes, not seconds, on a slow day. */
const TIMEOUT_MS = 10 * 60 * 1000

const COMMON: Readonly<Record<string, FlagSpec>> = {
  '--empresa': { takesValue: true, help: 'RUT o id de la empresa (en ambiente certificacion)' },
  '--url': { takesValue: true, help: 'origen del servidor en marcha; por defecto http://TIMBRE_HOST:TIMBRE_PORT' },
  ...DATA_DIR_FLAG,
}

/** Every command of this file calls the running server's /certificacion operations with the company's short token. */
function callApi(args: ParsedArgs, method: 'GET' | 'POST', path: string, body?: unknown): Promise<LocalApiAnswer> {
  return callLocalApi(args, { path: `${API}${path}`, sub: 'timbre certificacion', timeoutMs: TIMEOUT_MS, log: 'certificacion.request' }, method, body)
}

function fileArg(args: ParsedArgs, what: string): Uint8Array {
  const path = args.positionals[0]
  if (path === undefined) throw new UsageError(`falta el archivo ${what}`)
  try {
    return readFileSync(path)
  } catch {
    throw new OperatorError(`no se pudo leer ${path}`)
  }
}

export const certificacionEstado: Command = {
  name: 'certificacion estado',
  summary: 'Estado de la certificación ante el SII: etapas con el siguiente paso, casos con sus folios, envíos y libros.',
  usage: 'timbre certificacion estado --empresa RUT|ID',
  flags: COMMON,
  async run(args) {
    return (await callApi(args, 'GET', '')).body
  },
}

export const certificacionSet: Command = {
  name: 'certificacion set',
  summary: 'Carga el set de pruebas que entregó el SII (SIISetDePruebas….txt) tal como se descargó.',
  usage: 'timbre certificacion set ARCHIVO --empresa RUT|ID [--reemplazar]',
  flags: { ...COMMON, '--reemplazar': { takesValue: false, help: 'reemplaza un set cuyos casos ya se emitieron (se emiten de nuevo, con folios nuevos)' } },
  async run(args) {
    const bytes = fileArg(args, 'del set')
    const query = args.flags['--reemplazar'] === 'true' ? '?reemplazar=true' : ''
    return (await callApi(args, 'POST', `/set${query}`, { archivo_base64: Buffer.from(bytes).toString('base64') })).body
  },
}

export const certificacionEmitir: Command = {
  name: 'certificacion emitir',
  summary: 'Emite cada caso del set una sola vez, con la referencia SET, y envía un EnvioDTE por set al SII.',
  usage: 'timbre certificacion emitir --empresa RUT|ID [--no-enviar] [--tpo-cambio N] [--reemitir]',
  flags: {
    ...COMMON,
    '--no-enviar': { takesValue: false, help: 'solo emite; no envía al SII' },
    '--tpo-cambio': { takesValue: true, help: 'tipo de cambio de la moneda de los sets de exportación' },
    '--reemitir': { takesValue: false, help: 'reemite con folios nuevos los casos rechazados o con reparos' },
  },
  async run(args) {
    const raw = args.flags['--tpo-cambio']
    const tpoCambio = raw === undefined ? undefined : Number(raw.replace(',', '.'))
    if (tpoCambio !== undefined && !(Number.isFinite(tpoCambio) && tpoCambio > 0)) throw new UsageError(`--tpo-cambio debe ser un número positivo, se recibió "${raw}"`)
    return (await callApi(args, 'POST', '/set/emitir', {
      enviar: args.flags['--no-enviar'] !== 'true',
      reemitir: args.flags['--reemitir'] === 'true',
      ...(tpoCambio !== undefined ? { tpo_cambio: tpoCambio } : {}),
    })).body
  },
}

export const certificacionSimulacion: Command = {
  name: 'certificacion simulacion',
  summary: 'Simulación: emite entre 20 y 100 documentos representativos de la empresa y los envía en un EnvioDTE.',
  usage: 'timbre certificacion simulacion --empresa RUT|ID --cantidad N',
  flags: { ...COMMON, '--cantidad': { takesValue: true, help: 'cuántos documentos, de 20 a 100' } },
  async run(args) {
    requireFlag(args, '--cantidad')
    return (await callApi(args, 'POST', '/simulacion', { cantidad: intFlag(args, '--cantidad') })).body
  },
}

export const certificacionIntercambio: Command = {
  name: 'certificacion intercambio',
  summary: 'Intercambio: escribe en DIR las tres respuestas firmadas al EnvioDTE de prueba del SII.',
  usage: 'timbre certificacion intercambio ARCHIVO --out DIR --empresa RUT|ID',
  flags: { ...COMMON, '--out': { takesValue: true, help: 'directorio donde se escriben 1_RecepcionDTE.xml, 2_EnvioRecibos.xml y 3_ResultadoDTE.xml' } },
  async run(args) {
    const out = requireFlag(args, '--out')
    const bytes = fileArg(args, 'de intercambio del SII')
    const form = new FormData()
    form.set('archivo', new Blob([new Uint8Array(bytes)]), basename(args.positionals[0]!))
    const answer = await callApi(args, 'POST', '/intercambio?formato=json', form)
    const { informe, zip_base64 } = answer.body as { informe: unknown; zip_base64: string }
    mkdirSync(out, { recursive: true })
    const { unzipSync } = await import('fflate')
    const files = unzipSync(new Uint8Array(Buffer.from(zip_base64, 'base64')))
    for (const [name, content] of Object.entries(files)) writeFileSync(join(out, name), content)
    return { archivos: Object.keys(files).map((name) => join(out, name)), informe }
  },
}

export const certificacionLibros: Command = {
  name: 'certificacion libros',
  summary: 'Escribe en DIR los libros firmados que pide el set (ventas, compras, guías); con --enviar, además los envía al SII.',
  usage: 'timbre certificacion libros --out DIR --empresa RUT|ID [--enviar]',
  flags: {
    ...COMMON,
    '--out': { takesValue: true, help: 'directorio donde se escriben Libro_ventas.xml, Libro_compras.xml y Libro_guias.xml' },
    '--enviar': { takesValue: false, help: 'envía los libros al SII y los sigue hasta su respuesta' },
  },
  async run(args) {
    const out = requireFlag(args, '--out')
    const estado = (await callApi(args, 'GET', '')).body as { sets: Array<{ nombre: string }> }
    const tipos = (['ventas', 'compras', 'guias'] as const).filter((t) => estado.sets.some((s) => s.nombre === `LIBRO DE ${t.toUpperCase()}`))
    if (tipos.length === 0) throw new OperatorError('el set cargado no pide libros')
    mkdirSync(out, { recursive: true })
    const archivos: string[] = []
    for (const tipo of tipos) {
      const libro = await callApi(args, 'GET', `/libros/${tipo}`)
      const path = join(out, `Libro_${tipo}.xml`)
      writeFileSync(path, libro.bytes)
      archivos.push(path)
    }
    const enviado = args.flags['--enviar'] === 'true' ? (await callApi(args, 'POST', '/libros/enviar')).body : undefined
    return { archivos, ...(enviado ? { estado: enviado } : {}) }
  },
}

export const certificacionMuestras: Command = {
  name: 'certificacion muestras',
  summary: 'Escribe el zip de muestras de impresión: un PDF por documento del set y de la simulación, más las copias cedibles.',
  usage: 'timbre certificacion muestras --out ARCHIVO.zip --empresa RUT|ID',
  flags: { ...COMMON, '--out': { takesValue: true, help: 'archivo zip que se escribe' } },
  async run(args) {
    const out = requireFlag(args, '--out')
    const zip = await callApi(args, 'GET', '/muestras')
    writeFileSync(out, zip.bytes)
    const { unzipSync } = await import('fflate')
    return { archivo: out, bytes: zip.bytes.length, pdfs: Object.keys(unzipSync(zip.bytes)).length }
  },
}

export const CERTIFICACION_COMMANDS: readonly Command[] = [
  certificacionEstado, certificacionSet, certificacionEmitir, certificacionSimulacion, certificacionIntercambio, certificacionLibros, certificacionMuestras,
]
