// `timbre caf …` (DESIGN §17, issue 30): folios from the SII from the terminal. Requests and annulments are worked by
// the running server's folios job (it holds the company's certificate, its one portal session per company and the
// folio reservations), so these commands call it through the local API as the company and follow the request to its
// end, with one JSON progress line per poll on stderr.
import type { CafRecord } from '../services/cafs'
import type { CafSolicitudRecord, FoliosAutomaticosRecord } from '../services/caf-solicitudes'
import { OperatorError } from '../errors'
import { DATA_DIR_FLAG, intFlag, requireFlag, UsageError, type Command, type FlagSpec, type ParsedArgs } from './command'
import { callLocalApi, empresaIdOf } from './local-api'

const API = '/api/v1/billing'
/**
 * A request normally ends within seconds; after a failure past the grant the server re-downloads with waits that grow
 * to an hour. The command stops following it after this long: the request goes on in the server.
 */
const WAIT_MS = 10 * 60_000
const POLL_MS = 1000
const SUB = 'timbre caf'

const EMPRESA_FLAG: Readonly<Record<string, FlagSpec>> = { '--empresa': { takesValue: true, help: 'RUT o id de la empresa' } }
const SERVER_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--url': { takesValue: true, help: 'origen del servidor en marcha; por defecto http://TIMBRE_HOST:TIMBRE_PORT' },
  ...DATA_DIR_FLAG,
}
const NO_ESPERAR_FLAG: Readonly<Record<string, FlagSpec>> = {
  '--no-esperar': { takesValue: false, help: 'solo deja la solicitud en el servidor; no espera su resultado' },
}

function noPositionals(args: ParsedArgs): void {
  if (args.positionals.length > 0) throw new UsageError(`argumento inesperado "${args.positionals[0]}"`)
}

const isSet = (args: ParsedArgs, flag: string) => args.flags[flag] !== undefined

/** One call of the running server's API as the company `empresaId`. */
async function api<T>(args: ParsedArgs, empresaId: string, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
  return (await callLocalApi(args, { path: `${API}${path}`, sub: SUB, timeoutMs: 60_000, log: 'caf.request', empresaId }, method, body)).body as T
}

/**
 * Polls the request until it is `final` or `fallido`. `otorgado` is not final: the SII granted the range and the
 * server re-downloads it (never asks for it again), so the command keeps waiting and says why.
 */
async function follow(args: ParsedArgs, empresaId: string, asked: CafSolicitudRecord, final: CafSolicitudRecord['estado']): Promise<CafSolicitudRecord> {
  const deadline = Date.now() + WAIT_MS
  let last = asked
  while (last.estado !== final && last.estado !== 'fallido') {
    if (Date.now() > deadline) {
      throw new OperatorError(
        `la solicitud ${asked.id} no terminó en ${WAIT_MS / 60_000} minutos (estado ${last.estado}${last.proximo_intento_at ? `, próximo intento ${last.proximo_intento_at}` : ''}); ` +
          `sigue en el servidor: vea su resultado con timbre caf solicitudes --empresa ${args.flags['--empresa']} o GET /caf/solicitudes/${asked.id}`,
      )
    }
    await Bun.sleep(POLL_MS)
    last = await callLocalApi(args, { path: `${API}/caf/solicitudes/${asked.id}`, sub: SUB, timeoutMs: 60_000, log: 'caf.poll', empresaId }, 'GET').then((a) => a.body as CafSolicitudRecord)
    process.stderr.write(`${JSON.stringify({
      msg: 'caf.progress', solicitud_id: last.id, estado: last.estado,
      ...(last.estado === 'otorgado' ? { folio_desde: last.folio_desde, folio_hasta: last.folio_hasta, intentos: last.intentos, motivo: last.falla?.motivo, proximo_intento_at: last.proximo_intento_at } : {}),
    })}\n`)
  }
  if (last.estado === 'fallido') {
    const falla = last.falla
    throw new OperatorError(`la ${last.operacion === 'anulacion' ? 'anulación' : 'solicitud'} ${last.id} falló (${falla?.motivo ?? 'desconocido'}${falla?.etapa ? `, etapa ${falla.etapa}` : ''}): ${falla?.mensaje ?? ''}`)
  }
  return last
}

function tipoOf(args: ParsedArgs): number {
  requireFlag(args, '--tipo')
  return intFlag(args, '--tipo')!
}

export const cafSolicitar: Command = {
  name: 'caf solicitar',
  summary: 'Pide un CAF al SII con el certificado de la empresa (a través del servidor en marcha) y espera a que quede registrado.',
  usage: 'timbre caf solicitar --empresa RUT|ID --tipo T [--cantidad N] [--no-esperar] [--url URL] [--data-dir D]',
  flags: {
    ...EMPRESA_FLAG,
    '--tipo': { takesValue: true, help: 'tipo de DTE (33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112)' },
    '--cantidad': { takesValue: true, help: 'folios a pedir; se limitan al máximo que el SII autoriza hoy; sin ella, ese máximo' },
    ...NO_ESPERAR_FLAG,
    ...SERVER_FLAGS,
  },
  async run(args) {
    noPositionals(args)
    const tipo = tipoOf(args)
    const cantidad = intFlag(args, '--cantidad')
    const empresaId = await empresaIdOf(args)
    const asked = await api<CafSolicitudRecord>(args, empresaId, 'POST', '/caf/solicitar', { tipo_dte: tipo, ...(cantidad === undefined ? {} : { cantidad }) })
    if (isSet(args, '--no-esperar')) return { solicitud: asked }
    const solicitud = await follow(args, empresaId, asked, 'descargado')
    const caf = await api<CafRecord>(args, empresaId, 'GET', `/caf/${solicitud.caf_id}`)
    return { solicitud, caf }
  },
}

const ESTADOS = ['en_curso', 'otorgado', 'descargado', 'anulado', 'fallido']

export const cafSolicitudes: Command = {
  name: 'caf solicitudes',
  summary: 'Historial de solicitudes y anulaciones de folios en el SII de una empresa, más recientes primero.',
  usage: 'timbre caf solicitudes --empresa RUT|ID [--estado E] [--tipo T] [--limit N] [--cursor C] [--url URL] [--data-dir D]',
  flags: {
    ...EMPRESA_FLAG,
    '--estado': { takesValue: true, help: `solo las de este estado: ${ESTADOS.join(', ')}` },
    '--tipo': { takesValue: true, help: 'solo las de este tipo de DTE' },
    '--limit': { takesValue: true, help: 'cuántas (1 a 100; por defecto 20)' },
    '--cursor': { takesValue: true, help: 'la página siguiente: el next_cursor de la respuesta anterior' },
    ...SERVER_FLAGS,
  },
  async run(args) {
    noPositionals(args)
    const estado = args.flags['--estado']
    if (estado !== undefined && !ESTADOS.includes(estado)) throw new UsageError(`--estado debe ser uno de ${ESTADOS.join(', ')}: "${estado}"`)
    const tipo = intFlag(args, '--tipo')
    const limit = intFlag(args, '--limit')
    const query = new URLSearchParams({
      ...(estado === undefined ? {} : { estado }),
      ...(tipo === undefined ? {} : { tipo_dte: String(tipo) }),
      ...(limit === undefined ? {} : { limit: String(limit) }),
      ...(args.flags['--cursor'] === undefined ? {} : { cursor: args.flags['--cursor'] }),
    }).toString()
    return api(args, await empresaIdOf(args), 'GET', `/caf/solicitudes${query ? `?${query}` : ''}`)
  },
}

export const cafAnular: Command = {
  name: 'caf anular',
  summary: 'Anula en el SII los folios sin usar de un CAF y espera el resultado; con --pendientes, lista los CAF vencidos que deben anularse.',
  usage: 'timbre caf anular --empresa RUT|ID (--caf ID --motivo TEXTO [--no-esperar] | --pendientes) [--url URL] [--data-dir D]',
  flags: {
    ...EMPRESA_FLAG,
    '--caf': { takesValue: true, help: 'id del CAF cuyos folios sin usar se anulan' },
    '--motivo': { takesValue: true, help: 'motivo de la anulación, como lo pide el SII' },
    '--pendientes': { takesValue: false, help: 'solo lista los CAF vencidos con folios sin usar (no anula nada)' },
    ...NO_ESPERAR_FLAG,
    ...SERVER_FLAGS,
  },
  async run(args) {
    noPositionals(args)
    if (isSet(args, '--caf') === isSet(args, '--pendientes')) throw new UsageError('indique exactamente una de --caf o --pendientes')
    if (isSet(args, '--pendientes')) {
      if (isSet(args, '--motivo') || isSet(args, '--no-esperar')) throw new UsageError('--pendientes no se combina con --motivo ni --no-esperar')
      return api(args, await empresaIdOf(args), 'GET', '/caf?por_anular=true&limit=100')
    }
    const cafId = requireFlag(args, '--caf')
    const motivo = requireFlag(args, '--motivo')
    const empresaId = await empresaIdOf(args)
    const asked = await api<CafSolicitudRecord>(args, empresaId, 'POST', `/caf/${encodeURIComponent(cafId)}/anular`, { motivo })
    if (isSet(args, '--no-esperar')) return { solicitud: asked }
    const solicitud = await follow(args, empresaId, asked, 'anulado')
    return { solicitud, caf: await api<CafRecord>(args, empresaId, 'GET', `/caf/${encodeURIComponent(cafId)}`) }
  },
}

/** `33,39` → [33, 39]; the server checks that each is a type. */
function readTipos(text: string): number[] {
  const tipos = text.split(',').map((t) => t.trim())
  if (tipos.some((t) => !/^\d{1,3}$/.test(t))) throw new UsageError(`--tipos debe ser una lista de tipos separados por comas (33,39): "${text}"`)
  return tipos.map(Number)
}

/** `--umbral N` or `instancia` (null: the instance's TIMBRE_CAF_LOW_STOCK). */
function readUmbral(text: string): number | null {
  if (text === 'instancia') return null
  if (!/^\d+$/.test(text)) throw new UsageError(`--umbral debe ser un entero o «instancia»: "${text}"`)
  return Number(text)
}

const CAMBIOS = ['--activar', '--desactivar', '--tipos', '--cantidad', '--umbral', '--dias']

export const cafAutomatico: Command = {
  name: 'caf automatico',
  summary: 'Muestra o cambia el modo de folios automáticos de una empresa: el servidor pide un CAF cuando quedan pocos folios o vencen pronto.',
  usage: 'timbre caf automatico --empresa RUT|ID [--activar | --desactivar] [--tipos 33,39] [--cantidad N] [--umbral N|instancia] [--dias N] [--url URL] [--data-dir D]',
  flags: {
    ...EMPRESA_FLAG,
    '--activar': { takesValue: false, help: 'activa el modo automático' },
    '--desactivar': { takesValue: false, help: 'lo desactiva (la configuración se conserva)' },
    '--tipos': { takesValue: true, help: 'tipos de DTE cuyos folios se piden solos, separados por comas' },
    '--cantidad': { takesValue: true, help: 'folios por solicitud (limitados al máximo del SII)' },
    '--umbral': { takesValue: true, help: 'folios libres con los que se pide otro CAF; «instancia» sigue TIMBRE_CAF_LOW_STOCK' },
    '--dias': { takesValue: true, help: 'los folios que vencen dentro de estos días no cuentan como libres (por defecto 15)' },
    ...SERVER_FLAGS,
  },
  async run(args) {
    noPositionals(args)
    if (isSet(args, '--activar') && isSet(args, '--desactivar')) throw new UsageError('--activar no se combina con --desactivar')
    const tipos = args.flags['--tipos'] === undefined ? undefined : readTipos(args.flags['--tipos'])
    const cantidad = intFlag(args, '--cantidad')
    const umbral = args.flags['--umbral'] === undefined ? undefined : readUmbral(args.flags['--umbral'])
    const dias = intFlag(args, '--dias')
    const empresaId = await empresaIdOf(args)
    const actual = await api<FoliosAutomaticosRecord>(args, empresaId, 'GET', '/empresa/folios-automaticos')
    if (!CAMBIOS.some((flag) => isSet(args, flag))) return actual
    // The server takes the whole setting: the flags given over the current one.
    const nuevaCantidad = cantidad ?? actual.cantidad
    if (nuevaCantidad === null) throw new UsageError('indique --cantidad: la empresa aún no tiene una cantidad de folios por solicitud')
    return api<FoliosAutomaticosRecord>(args, empresaId, 'PUT', '/empresa/folios-automaticos', {
      activo: isSet(args, '--activar') ? true : isSet(args, '--desactivar') ? false : actual.activo,
      tipos: tipos ?? actual.tipos,
      cantidad: nuevaCantidad,
      umbral: umbral === undefined ? actual.umbral : umbral,
      dias_antes_de_vencer: dias ?? actual.dias_antes_de_vencer,
    })
  },
}

export const CAF_COMMANDS: readonly Command[] = [cafSolicitar, cafSolicitudes, cafAnular, cafAutomatico]
