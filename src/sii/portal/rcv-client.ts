// The RCV portal client (types.ts RcvPortalClient): for one company and period, one portal session opened with the
// company's certificate, the whole RCV read (rcv-read.ts), the session closed whatever happened (session.ts), one
// session per company RUT at a time in this process, and every failure returned as a value with the accountant's
// words. How each step behaves and why: docs/decisions/rcv.md "How the data service is read".
import type { SiiTarget } from '../../config'
import { isPeriodoRcv } from '../../domain/rcv'
import { formatRut, parseRut, type Rut } from '../../domain/rut'
import type { SiiCompany, SiiCredentials } from '../client/client'
import { portalOrigins, type HostTarget } from '../client/hosts'
import { PORTAL_PATHS } from '../portal-protocol'
import { PortalFailure } from './failure'
import { companyPortalSessions } from './keyed-mutex'
import { readRcvInSession } from './rcv-read'
import { withPortalSession } from './session'
import { createPortalTransport } from './transport'
import type { RcvPortalClient, RcvReadOutcome } from './types'

export interface RcvPortalClientOptions {
  /** As the SII client's: `simulado` is not accepted here, the composition root starts the simulator and passes its origin. */
  readonly target: SiiTarget | { readonly kind: 'origin'; readonly origin: string }
  /** Per HTTP request (DESIGN §6: every SII call times out after 30 s). */
  readonly timeoutMs?: number
  /** Answers past this many bytes are refused unread (transport.ts MAX_ANSWER_BYTES); for tests. */
  readonly maxAnswerBytes?: number
  /** A document type with more documents than this in its summary comes by the deferred download (default 1000). */
  readonly diferidaDesde?: number
  /** Between two looks at a deferred download's state (default 2 s). */
  readonly diferidaPollMs?: number
  /** How long a deferred download may take before the read fails (default 10 min). */
  readonly diferidaTimeoutMs?: number
  readonly fetch?: typeof fetch
  /** Events and fields in English; never a cookie, a token or a key. */
  readonly log?: (event: string, fields: object) => void
  readonly sleep?: (ms: number) => Promise<void>
}

export function createRcvPortalClient(opts: RcvPortalClientOptions): RcvPortalClient {
  const target = hostTarget(opts.target)
  const origins = portalOrigins(target)
  const log = opts.log ?? (() => {})
  const settings = {
    diferidaDesde: opts.diferidaDesde ?? 1000,
    diferidaPollMs: opts.diferidaPollMs ?? 2000,
    diferidaTimeoutMs: opts.diferidaTimeoutMs ?? 10 * 60_000,
    sleep: opts.sleep ?? ((ms: number) => Bun.sleep(ms)),
    nowMs: () => Date.now(),
  }
  // Shared with the folio requests (folios.ts): the SII's cap on sessions counts both.
  const sessions = companyPortalSessions

  async function read(company: SiiCompany, rut: Rut, creds: SiiCredentials, periodo: string): Promise<RcvReadOutcome> {
    const fields = { company_rut: company.rut, periodo }
    const logWith = (event: string, extra: object) => log(event, { ...fields, ...extra })
    const transport = createPortalTransport({ target, signer: creds.signer, timeoutMs: opts.timeoutMs ?? 30_000, fetch: opts.fetch ?? fetch, ...(opts.maxAnswerBytes === undefined ? {} : { maxAnswerBytes: opts.maxAnswerBytes }) })
    const deps = { transport, target, origins, nowMs: settings.nowMs, log }
    // The login sends the browser back to the RCV's app (research §2.2); on an origin target, the origin's copy of it.
    const referencia = `${origins.rcv}${PORTAL_PATHS.rcvHome}`
    try {
      const leido = await withPortalSession(deps, referencia, fields, (session) => readRcvInSession({
        facade: { transport, rcvOrigin: origins.rcv, session, newTransactionId: () => crypto.randomUUID() },
        settings, rutEmisor: rut.body, dvEmisor: rut.dv, periodo, log: logWith,
      }))
      logWith('sii.portal.rcv', { outcome: 'ok', diferidas: leido.diferidas })
      return { kind: 'ok', ...leido }
    } catch (err) {
      if (!(err instanceof PortalFailure)) throw err
      logWith('sii.portal.rcv', { outcome: 'failed', motivo: err.motivo, reason: err.detail })
      return { kind: 'failed', motivo: err.motivo, mensaje: err.mensaje }
    }
  }

  return {
    async leerRcv(company, creds, periodo) {
      // A caller's bug, not an SII outcome: the job passes a company's canonical RUT and a period it validated.
      const rut = parseRut(company.rut)
      if (rut === null) throw new Error(`RCV portal client: company RUT is not valid: ${company.rut}`)
      if (!isPeriodoRcv(periodo)) throw new Error(`RCV portal client: periodo is not a YYYYMM of the RCV: ${periodo}`)
      // Keyed by the RUT's canonical form, so `76.354.771-k` and `76354771-K` wait for each other.
      return sessions.run(formatRut(rut), () => read(company, rut, creds, periodo))
    },
  }
}

function hostTarget(target: RcvPortalClientOptions['target']): HostTarget {
  if (target.kind === 'simulado') throw new Error('createRcvPortalClient: start the simulator and pass { kind: "origin", origin: its url }')
  return target
}
