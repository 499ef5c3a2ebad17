// `timbre rcv …` (DESIGN §16, issue 29): the month's close from the terminal. `sincronizar` asks the running server to
// read a period of the SII's RCV (the server holds the company's certificate, its jobs and its one SII session per
// company) and follows it to its end; `estado` is the administrator's month table, one row per company (or the one
// `--empresa` names), read from the data dir.
import { systemClock } from '../clock'
import { OperatorError } from '../errors'
import { mesDeEmpresas } from '../services/cierre-mes'
import { resolveEmpresa } from '../services/empresas'
import { checkPeriodo, type EstadoRcvRecord } from '../services/rcv'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, requireFlag, UsageError, type Command, type ParsedArgs } from './command'
import { callLocalApi, empresaIdOf } from './local-api'

const API = '/api/v1/billing/rcv'
/** A sync with deferred downloads may take minutes; the SII's own limit on one is ten (services/rcv.ts). */
const WAIT_MS = 25 * 60 * 1000
const POLL_MS = 1000

function periodoOf(args: ParsedArgs): string {
  const periodo = requireFlag(args, '--periodo')
  try {
    return checkPeriodo(periodo, systemClock.now(), '--periodo')
  } catch {
    throw new UsageError(`--periodo debe ser AAAAMM, desde 201708 y no futuro: "${periodo}"`)
  }
}

export const rcvSincronizar: Command = {
  name: 'rcv sincronizar',
  summary: 'Lee del portal del SII el RCV de un período (con el certificado de la empresa) y espera el resultado.',
  usage: 'timbre rcv sincronizar --empresa RUT|ID --periodo AAAAMM [--no-esperar] [--url URL]',
  flags: {
    '--empresa': { takesValue: true, help: 'RUT o id de la empresa' },
    '--periodo': { takesValue: true, help: 'período tributario AAAAMM' },
    '--no-esperar': { takesValue: false, help: 'solo pide la lectura; no espera su resultado' },
    '--url': { takesValue: true, help: 'origen del servidor en marcha; por defecto http://TIMBRE_HOST:TIMBRE_PORT' },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const periodo = periodoOf(args)
    const empresaId = await empresaIdOf(args)
    const call = (method: 'GET' | 'POST', path: string) =>
      callLocalApi(args, { path: `${API}/${periodo}${path}`, sub: 'timbre rcv', timeoutMs: 60_000, log: 'rcv.request', empresaId }, method)
    const asked = (await call('POST', '/sincronizar')).body as EstadoRcvRecord
    if (args.flags['--no-esperar'] === 'true') return asked
    const deadline = Date.now() + WAIT_MS
    let last = asked
    // Done when the state is final and its attempt started after the request (not the previous sync's outcome).
    while (Date.now() < deadline) {
      await Bun.sleep(POLL_MS)
      last = (await callLocalApi(args, { path: `${API}/${periodo}`, sub: 'timbre rcv', timeoutMs: 60_000, log: 'rcv.poll', empresaId }, 'GET')).body as EstadoRcvRecord
      process.stderr.write(`${JSON.stringify({ msg: 'rcv.progress', periodo, estado: last.estado })}\n`)
      if ((last.estado === 'sincronizado' || last.estado === 'fallido') && last.ultimo_intento_at !== null && asked.solicitado_at !== null && last.ultimo_intento_at >= asked.solicitado_at) break
    }
    if (last.estado === 'fallido') throw new OperatorError(`la lectura del RCV ${periodo} falló (${last.falla?.motivo}): ${last.falla?.mensaje}; la última copia buena se mantiene`)
    if (last.estado !== 'sincronizado') throw new OperatorError(`la lectura del RCV ${periodo} no terminó en ${WAIT_MS / 60_000} minutos (estado ${last.estado})`)
    return last
  },
}

export const rcvEstado: Command = {
  name: 'rcv estado',
  summary: 'El cierre del mes de cada empresa (o de una): copia del RCV, hallazgos, pendientes de aceptación, débito, crédito e IVA a pagar.',
  usage: 'timbre rcv estado --periodo AAAAMM [--empresa RUT|ID]',
  flags: {
    '--periodo': { takesValue: true, help: 'período tributario AAAAMM' },
    '--empresa': { takesValue: true, help: 'solo esta empresa (RUT o id); sin ella, todas las de la instancia' },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const periodo = periodoOf(args)
    const ref = args.flags['--empresa']
    return withAdminStore(args, (deps) => {
      const empresas = ref === undefined ? undefined : [resolveEmpresa(deps, { ref })]
      return { periodo, empresas: mesDeEmpresas(deps, { periodo, ...(empresas ? { empresas } : {}) }) }
    })
  },
}

export const RCV_COMMANDS: readonly Command[] = [rcvSincronizar, rcvEstado]
