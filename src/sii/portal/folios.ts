// The folio client (DESIGN §17; the pages: src/sii/folios-protocol.ts; the flow and its limits: docs/decisions/folios.md
// "The flow"): a CAF requested, granted and downloaded, a granted CAF downloaded again, unused folios annulled; each in
// ONE portal session opened with the company's certificate and always closed (session.ts), one session per company at
// a time across RCV and folios (keyed-mutex.ts companyPortalSessions). Every outcome is a value.
// The rule the whole module is written around: once the grant (`genera`) was POSTed, it is never POSTed again, in any
// path; whatever fails afterwards, or during it, returns the range as `otorgado` so the caller recovers by
// `redescargarCaf`, which asks only for the file.
import type { SiiTarget } from '../../config'
import { santiagoDay } from '../../domain/backups'
import { formatRut, parseRut, type Rut } from '../../domain/rut'
import { authorityKeys, SIMULATOR_IDK } from '../../xml/authority-keys'
import { parseCaf, verifyCaf, type Caf } from '../../xml/caf'
import type { SiiCompany, SiiCredentials } from '../client/client'
import { foliosOrigin, portalOrigins, type Ambiente, type HostTarget } from '../client/hosts'
import { decodeBody, snippet } from '../client/http'
import { FOLIOS_ACEPTAR, FOLIOS_FIELDS as F, FOLIOS_PATHS, FOLIOS_TEXTS } from '../folios-protocol'
import type { CookieJar } from './cookies'
import { PortalFailure } from './failure'
import { formFor, readFoliosPage, type FoliosPage, type PageForm } from './folios-pages'
import { companyPortalSessions, type KeyedMutex } from './keyed-mutex'
import { withCookies, withPortalSession, type PortalSession } from './session'
import { saysPhrase } from './text'
import { createPortalTransport, type PortalTransport } from './transport'

/** Why a folio operation failed; `mensaje` has the accountant's words for it. */
export type MotivoFallaFolios =
  /** The certificate's holder may not request folios for this company, or the type is not offered to it. */
  | 'no_autorizado'
  /** The SII refuses folios to a company with a pending F29 ("no puede solicitar"). */
  | 'f29_pendiente'
  /** More than MAX_AUTOR asked (LIBRUD-OFSF-DTE-3-1-02), or MAX_AUTOR is 0: nothing granted. */
  | 'excede_maximo'
  /** A page without the form, action or inputs the step expects: the SII changed its pages. `etapa` names the step. */
  | 'pagina_desconocida'
  /** The SII's generic refusal ("No ha sido posible completar su solicitud") for a reason Timbre does not tell apart. */
  | 'sii_rechazo'
  | 'login_rechazado'
  | 'tope_sesiones'
  /** A login page where a form was expected. */
  | 'sesion_expirada'
  | 'sin_conexion'
  /** An answer Timbre cannot accept: a file that is not this company's CAF for this range, a range not the one asked. */
  | 'respuesta_invalida'

/** The steps, in order (folios-protocol.ts, docs/decisions/folios.md "The flow"). */
export type EtapaFolios =
  | 'ingreso' | 'inicio' | 'empresa' | 'documento' | 'numeracion' | 'folio_inicial' | 'otorgamiento' | 'descarga' | 'anulacion'

/** A range the SII granted (or may have granted: the grant was POSTed and no answer came). */
export interface RangoOtorgado {
  readonly tipo: number
  readonly folioDesde: number
  readonly folioHasta: number
  /** `YYYY-MM-DD`: the grant page's FECHA, or Santiago's day of the POST when that page never came. */
  readonly fecha: string
}

export interface FoliosFalla {
  readonly kind: 'failed'
  readonly motivo: MotivoFallaFolios
  readonly mensaje: string
  readonly etapa: EtapaFolios
  /** Present once the grant was POSTed: never ask again; `redescargarCaf` with this range. */
  readonly otorgado?: RangoOtorgado
}

export type SolicitudCafOutcome =
  | (RangoOtorgado & {
      readonly kind: 'otorgado'
      /** The CAF file's bytes as the SII sent them (ISO-8859-1 XML). */
      readonly caf: Uint8Array
      readonly maxAutor: number
      /** What the caller asked for. */
      readonly cantidadPedida: number
      /** What was asked of the SII: the request capped at MAX_AUTOR. */
      readonly cantidadSolicitada: number
    })
  | FoliosFalla

export type DescargaCafOutcome = (RangoOtorgado & { readonly kind: 'descargado'; readonly caf: Uint8Array }) | FoliosFalla

export type AnulacionOutcome =
  | { readonly kind: 'anulado'; readonly tipo: number; readonly folioDesde: number; readonly folioHasta: number }
  | FoliosFalla

export interface PedidoCaf {
  readonly tipo: number
  readonly cantidad: number
  /**
   * Called with the proposed range just before the grant is POSTed, so the caller records it durably first (a process
   * that dies during the grant then re-downloads instead of asking again). A throw stops the flow with nothing granted.
   */
  readonly antesDelOtorgamiento?: (rango: RangoOtorgado) => void | Promise<void>
  /**
   * On the type's first timbraje the SII asks for the initial folio: at least this one (the folio after the highest the
   * company already holds, from CAFs obtained elsewhere), never below the SII's proposal.
   */
  readonly folioInicialMinimo?: number
}

export interface FoliosPortalClient {
  solicitarCaf(company: SiiCompany, creds: SiiCredentials, pedido: PedidoCaf): Promise<SolicitudCafOutcome>
  redescargarCaf(company: SiiCompany, creds: SiiCredentials, rango: RangoOtorgado): Promise<DescargaCafOutcome>
  anularFolios(company: SiiCompany, creds: SiiCredentials, anulacion: { readonly tipo: number; readonly folioDesde: number; readonly folioHasta: number; readonly motivo: string }): Promise<AnulacionOutcome>
}

export interface FoliosPortalClientOptions {
  /** As the RCV client's: the composition root starts the simulator and passes its origin for `simulado`. */
  readonly target: SiiTarget | { readonly kind: 'origin'; readonly origin: string }
  /** Per HTTP request (DESIGN §6). */
  readonly timeoutMs?: number
  readonly maxAnswerBytes?: number
  readonly fetch?: typeof fetch
  /** Events and fields in English; never a cookie, a token or a key. */
  readonly log?: (event: string, fields: object) => void
  readonly now?: () => Date
  /** Default: the process's one lock per company, shared with the RCV client. */
  readonly sessions?: KeyedMutex
}

/** The annulment page's confirmation (brief of issue 30, "Timbre's reading"): the SII's wording is unconfirmed. */
export const FOLIOS_ANULADOS_TEXT = 'Folios anulados'

/** The SII's numbering is per type; the portal offers these (research §4.2). */
const TIPOS_CON_FOLIO = new Set([33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112])

class FoliosFailure extends Error {
  constructor(readonly motivo: MotivoFallaFolios, readonly mensaje: string, readonly detail: string) {
    super(`${motivo}: ${detail}`)
  }
}

interface InSession {
  readonly transport: PortalTransport
  readonly origin: string
  readonly cookies: CookieJar
  readonly rut: Rut
  readonly ambiente: Ambiente
  readonly target: HostTarget
  /** Where the flow is: a failure names this step; `otorgado` is set just before the grant is POSTed. */
  etapa: EtapaFolios
  otorgado?: RangoOtorgado
}

type Operation = 'solicitar' | 'redescargar' | 'anular'

export function createFoliosPortalClient(opts: FoliosPortalClientOptions): FoliosPortalClient {
  if (opts.target.kind === 'simulado') throw new Error('createFoliosPortalClient: start the simulator and pass { kind: "origin", origin: its url }')
  const target: HostTarget = opts.target
  const origins = portalOrigins(target)
  const log = opts.log ?? (() => {})
  const now = opts.now ?? (() => new Date())
  const sessions = opts.sessions ?? companyPortalSessions

  /** One session for `work`, under the company's lock; failures become values carrying the step and any grant. */
  async function inSession<T extends { readonly kind: string }>(
    operation: Operation, company: SiiCompany, creds: SiiCredentials, fields: object, work: (ctx: InSession) => Promise<T>,
  ): Promise<T | FoliosFalla> {
    const rut = parseRut(company.rut)
    if (rut === null) throw new Error(`folios portal client: company RUT is not valid: ${company.rut}`)
    const logFields = { company_rut: formatRut(rut), operation, ...fields }
    return sessions.run(formatRut(rut), async () => {
      const transport = createPortalTransport({
        target, signer: creds.signer, timeoutMs: opts.timeoutMs ?? 30_000, fetch: opts.fetch ?? fetch,
        ...(opts.maxAnswerBytes === undefined ? {} : { maxAnswerBytes: opts.maxAnswerBytes }),
      })
      const origin = foliosOrigin(target, company.ambiente)
      let ctx: InSession | undefined
      try {
        const result = await withPortalSession(
          { transport, target, origins, nowMs: () => now().getTime(), log },
          `${origin}${FOLIOS_PATHS.solicita}`, logFields,
          async (session: PortalSession) => {
            ctx = { transport, origin, cookies: session.cookies, rut, ambiente: company.ambiente, target, etapa: 'inicio' }
            try {
              return await work(ctx)
            } catch (err) {
              // The SII's words may echo the session: they leave with its values blanked (cookies.ts redact).
              if (err instanceof FoliosFailure) throw new FoliosFailure(err.motivo, session.cookies.redact(err.mensaje), session.cookies.redact(err.detail))
              throw err
            }
          })
        const rango = 'folioDesde' in result && 'folioHasta' in result ? { folio_desde: result.folioDesde, folio_hasta: result.folioHasta } : {}
        log('sii.portal.folios', { ...logFields, outcome: result.kind, ...rango })
        return result
      } catch (err) {
        const failure = err instanceof FoliosFailure || err instanceof PortalFailure ? err : null
        if (failure === null) throw err
        const etapa = ctx?.etapa ?? 'ingreso'
        const otorgado = ctx?.otorgado
        log('sii.portal.folios', {
          ...logFields, outcome: 'failed', motivo: failure.motivo, etapa, reason: failure.detail,
          ...(otorgado === undefined ? {} : { otorgado_desde: otorgado.folioDesde, otorgado_hasta: otorgado.folioHasta, otorgado_fecha: otorgado.fecha }),
        })
        const mensaje = otorgado === undefined ? failure.mensaje
          : `${failure.mensaje} El SII ya otorgó (o pudo otorgar) los folios ${otorgado.folioDesde} a ${otorgado.folioHasta} del tipo ${otorgado.tipo}: no los solicite de nuevo; descargue otra vez el CAF de ese rango.`
        return { kind: 'failed', motivo: failure.motivo as MotivoFallaFolios, mensaje, etapa, ...(otorgado === undefined ? {} : { otorgado }) }
      }
    })
  }

  return {
    solicitarCaf(company, creds, pedido) {
      checkTipo(pedido.tipo)
      if (!Number.isSafeInteger(pedido.cantidad) || pedido.cantidad < 1) throw new Error(`folios portal client: cantidad must be a positive integer: ${pedido.cantidad}`)
      return inSession('solicitar', company, creds, { tipo: pedido.tipo, cantidad: pedido.cantidad }, (ctx) => solicitar(ctx, pedido, now, log))
    },
    redescargarCaf(company, creds, rango) {
      checkRango(rango)
      if (!/^\d{4}-\d{2}-\d{2}$/.test(rango.fecha)) throw new Error(`folios portal client: fecha must be YYYY-MM-DD: ${rango.fecha}`)
      return inSession('redescargar', company, creds, { tipo: rango.tipo, folio_desde: rango.folioDesde, folio_hasta: rango.folioHasta }, async (ctx) => {
        ctx.etapa = 'descarga'
        const caf = await descargar(ctx, rango, archivoFields(ctx.rut, rango))
        return { kind: 'descargado' as const, ...rango, fecha: caf.fecha, caf: caf.bytes }
      })
    },
    anularFolios(company, creds, anulacion) {
      checkRango(anulacion)
      const motivo = anulacion.motivo.trim()
      if (motivo === '' || motivo.length > 200) throw new Error('folios portal client: motivo must be 1 to 200 characters')
      return inSession('anular', company, creds, { tipo: anulacion.tipo, folio_desde: anulacion.folioDesde, folio_hasta: anulacion.folioHasta }, (ctx) => anular(ctx, { ...anulacion, motivo }))
    },
  }
}

// ------------------------------------------------------------------------------------------------ the flows

async function solicitar(
  ctx: InSession, pedido: PedidoCaf, now: () => Date, log: (event: string, fields: object) => void,
): Promise<SolicitudCafOutcome> {
  const empresa: Array<[string, string]> = [[F.rut, ctx.rut.body], [F.dv, ctx.rut.dv]]
  const tipo = String(pedido.tipo)

  // 1. The company's form.
  ctx.etapa = 'inicio'
  expectForm(ctx, await page(ctx, 'GET', FOLIOS_PATHS.solicita, null), FOLIOS_PATHS.solicitaDcto, [F.rut, F.dv])

  // 2. The company: the SII answers the types it may ask for, or that the certificate may not act for it.
  ctx.etapa = 'empresa'
  const tipos = expectForm(ctx, await page(ctx, 'POST', FOLIOS_PATHS.solicitaDcto, [...empresa, [F.aceptar, FOLIOS_ACEPTAR.continuar]]), FOLIOS_PATHS.solicitaDcto, [F.rut, F.dv], F.tipo)
  if (!(tipos.selects.get(F.tipo) ?? []).includes(tipo)) {
    throw new FoliosFailure('no_autorizado', `El SII no ofrece folios del tipo ${tipo} a la empresa ${formatRut(ctx.rut)}: revise que la empresa esté autorizada a emitir ese documento.`, `empresa: type ${tipo} not among the options`)
  }

  // 3. The type: its figures, MAX_AUTOR among them. Skipping this step fails the first timbraje (CODIGO_SIN_TIPO).
  ctx.etapa = 'documento'
  const figuras = expectForm(ctx, await page(ctx, 'POST', FOLIOS_PATHS.solicitaDcto, [...empresa, [F.tipo, tipo]]), FOLIOS_PATHS.solicitaDcto, [F.rut, F.dv, F.maxAutor, F.cantidad])
  const maxAutor = entero(figuras.inputs.get(F.maxAutor))
  if (maxAutor === null) throw desconocida(ctx, `${F.maxAutor} no es un número («${snippet(figuras.inputs.get(F.maxAutor) ?? '', 20)}»)`)
  if (maxAutor < 1) {
    throw new FoliosFailure('excede_maximo', `El SII no autoriza folios del tipo ${tipo} a la empresa por ahora (máximo autorizado: ${maxAutor}). No se otorgó ningún folio.`, `documento: MAX_AUTOR ${maxAutor}`)
  }
  const cantidadSolicitada = Math.min(pedido.cantidad, maxAutor)

  // 4. The request, capped at MAX_AUTOR (over it the SII refuses with LIBRUD-OFSF-DTE-3-1-02).
  ctx.etapa = 'numeracion'
  const afecto = figuras.inputs.get(F.afectoIva)
  const solicitud: Array<[string, string]> = [
    ...empresa, [F.tipo, tipo], [F.cantidad, String(cantidadSolicitada)],
    // Boletas only: the page's own choice, else afecta for 39 and exenta for 41.
    ...(afecto === undefined ? [] : [[F.afectoIva, afecto !== '' ? afecto : pedido.tipo === 41 ? 'N' : 'S'] as [string, string]]),
    [F.aceptar, FOLIOS_ACEPTAR.solicitar],
  ]
  let propuesta = await page(ctx, 'POST', FOLIOS_PATHS.solicitaDcto, solicitud)
  // The type's first timbraje asks to confirm the first folio: the SII's proposal is confirmed as it stands.
  const inicial = formFor(propuesta, FOLIOS_PATHS.confirma)
  if (formFor(propuesta, FOLIOS_PATHS.genera) === undefined && inicial !== undefined && inicial.inputs.has(F.folioIni)) {
    ctx.etapa = 'folio_inicial'
    const inputs = new Map(inicial.inputs)
    const propuesto = entero(inputs.get(F.folioIni))
    if (pedido.folioInicialMinimo !== undefined && propuesto !== null && propuesto < pedido.folioInicialMinimo) inputs.set(F.folioIni, String(pedido.folioInicialMinimo))
    propuesta = await page(ctx, 'POST', FOLIOS_PATHS.confirma, [...inputs.entries(), [F.aceptar, FOLIOS_ACEPTAR.confirmarInicial]])
  }
  const GENERA = [F.rut, F.dv, F.tipo, F.folioIni, F.folioFin, F.nomUsu, F.cantidad] as const
  const confirma = expectForm(ctx, propuesta, FOLIOS_PATHS.genera, GENERA)
  const desde = entero(confirma.inputs.get(F.folioIni))
  const hasta = entero(confirma.inputs.get(F.folioFin))
  if (desde === null || hasta === null || desde < 1 || hasta < desde) throw desconocida(ctx, `el rango propuesto no se entiende (${F.folioIni} «${confirma.inputs.get(F.folioIni)}», ${F.folioFin} «${confirma.inputs.get(F.folioFin)}»)`)
  // Nothing is granted yet: a proposal for another company or type, or for more than asked, is refused before it
  // becomes a grant. Fewer is taken (research §4.3: the SII may grant fewer); the outcome's range says how many.
  if (confirma.inputs.get(F.rut) !== ctx.rut.body || confirma.inputs.get(F.tipo) !== tipo || hasta - desde + 1 > cantidadSolicitada) {
    throw invalida('numeracion', `el SII propuso los folios ${desde} a ${hasta} del tipo ${confirma.inputs.get(F.tipo) ?? '?'} para el RUT ${confirma.inputs.get(F.rut) ?? '?'}, no hasta ${cantidadSolicitada} folios del tipo ${tipo} de la empresa`)
  }

  // 5. The grant: POSTed once. From here every failure carries `otorgado`.
  ctx.etapa = 'otorgamiento'
  const propuesto: RangoOtorgado = { tipo: pedido.tipo, folioDesde: desde, folioHasta: hasta, fecha: santiagoDay(now()) }
  await pedido.antesDelOtorgamiento?.(propuesto)
  ctx.otorgado = propuesto
  log('sii.portal.folios.grant', { company_rut: formatRut(ctx.rut), tipo: pedido.tipo, folio_desde: desde, folio_hasta: hasta })
  const otorgamiento = await page(ctx, 'POST', FOLIOS_PATHS.genera, [...GENERA.map((name): [string, string] => [name, confirma.inputs.get(name) ?? '']), [F.aceptar, FOLIOS_ACEPTAR.obtener]])
  const archivo = expectForm(ctx, otorgamiento, FOLIOS_PATHS.archivo, [F.rut, F.dv, F.tipo, F.folioIni, F.folioFin, F.fecha])
  const fecha = archivo.inputs.get(F.fecha) ?? ''
  const otorgadoDesde = entero(archivo.inputs.get(F.folioIni))
  const otorgadoHasta = entero(archivo.inputs.get(F.folioFin))
  if (otorgadoDesde !== null && otorgadoHasta !== null && /^\d{4}-\d{2}-\d{2}$/.test(fecha)) {
    // The grant page is the SII's word on what it granted: recovery asks for that.
    ctx.otorgado = { tipo: pedido.tipo, folioDesde: otorgadoDesde, folioHasta: otorgadoHasta, fecha }
  } else {
    throw desconocida(ctx, `el rango o la fecha otorgados no se entienden (${F.folioIni} «${archivo.inputs.get(F.folioIni)}», ${F.folioFin} «${archivo.inputs.get(F.folioFin)}», ${F.fecha} «${snippet(fecha, 20)}»)`)
  }
  if (otorgadoDesde !== desde || otorgadoHasta !== hasta) throw invalida('otorgamiento', `el SII otorgó los folios ${otorgadoDesde} a ${otorgadoHasta}, no los ${desde} a ${hasta} propuestos`)

  // 6. The file.
  ctx.etapa = 'descarga'
  const caf = await descargar(ctx, ctx.otorgado, [
    ...[F.rut, F.dv, F.tipo, F.folioIni, F.folioFin, F.fecha].map((name): [string, string] => [name, archivo.inputs.get(name) ?? '']),
    [F.aceptar, FOLIOS_ACEPTAR.descargar],
  ])
  return {
    kind: 'otorgado', caf: caf.bytes, tipo: pedido.tipo, folioDesde: desde, folioHasta: hasta, fecha: caf.fecha, maxAutor,
    cantidadPedida: pedido.cantidad, cantidadSolicitada,
  }
}

function archivoFields(rut: Rut, rango: RangoOtorgado): Array<[string, string]> {
  return [
    [F.rut, rut.body], [F.dv, rut.dv], [F.tipo, String(rango.tipo)], [F.folioIni, String(rango.folioDesde)],
    [F.folioFin, String(rango.folioHasta)], [F.fecha, rango.fecha], [F.aceptar, FOLIOS_ACEPTAR.descargar],
  ]
}

/** 6. POST `archivo`: the CAF of exactly `rango`, checked before it is handed back. Repeatable: it consumes nothing. */
async function descargar(ctx: InSession, rango: Omit<RangoOtorgado, 'fecha'>, fields: Array<[string, string]>): Promise<{ bytes: Uint8Array; fecha: string }> {
  const reply = await send(ctx, 'POST', FOLIOS_PATHS.archivo, fields)
  const text = decodeBody(reply.bytes, reply.headers.get('content-type') ?? '')
  // The body decides, not the Content-Type: a refusal is an HTML page, the file an XML document.
  if (!/<AUTORIZACION[\s>]/.test(text)) {
    const refused = await pageOf(ctx, reply.status, text)
    throw refusal(ctx, refused) ?? desconocida(ctx, `la respuesta no es un CAF ni una página conocida («${snippet(refused.text, 80)}»)`)
  }
  let caf: Caf
  try {
    caf = parseCaf(reply.bytes)
    verifyCaf(caf, authorityKeys({ allowSimulator: ctx.target.kind === 'origin' }))
  } catch (err) {
    throw invalida('descarga', `el archivo no es un CAF válido (${err instanceof Error ? err.message : String(err)})`)
  }
  const re = parseRut(caf.rutEmisor)
  const idks = idksFor(ctx)
  const problems = [
    re === null || formatRut(re) !== formatRut(ctx.rut) ? `es de la empresa ${caf.rutEmisor}` : '',
    caf.tipoDte !== rango.tipo ? `es del tipo ${caf.tipoDte}` : '',
    caf.folioDesde !== rango.folioDesde || caf.folioHasta !== rango.folioHasta ? `autoriza los folios ${caf.folioDesde} a ${caf.folioHasta}` : '',
    idks.includes(caf.idk) ? '' : `está firmado con la llave IDK ${caf.idk}, no la del ambiente de ${ctx.ambiente} (${idks.join(' o ')})`,
  ].filter((p) => p !== '')
  if (problems.length > 0) {
    throw invalida('descarga', `el CAF recibido no corresponde a lo otorgado (empresa ${formatRut(ctx.rut)}, tipo ${rango.tipo}, folios ${rango.folioDesde} a ${rango.folioHasta}): ${problems.join('; ')}`)
  }
  return { bytes: reply.bytes, fecha: caf.fechaAutorizacion }
}

/** IDK 100 signs certificación's CAFs, 300 producción's (docs/sii-protocol.md §3.3); the simulator's 900 on an origin target. */
function idksFor(ctx: InSession): number[] {
  const sii = ctx.ambiente === 'certificacion' ? 100 : 300
  return ctx.target.kind === 'origin' ? [sii, SIMULATOR_IDK] : [sii]
}

/** 7. POST `anula` (Timbre's reading of the annulment, folios-protocol.ts). */
async function anular(
  ctx: InSession, a: { readonly tipo: number; readonly folioDesde: number; readonly folioHasta: number; readonly motivo: string },
): Promise<AnulacionOutcome> {
  ctx.etapa = 'anulacion'
  const answer = await page(ctx, 'POST', FOLIOS_PATHS.anula, [
    [F.rut, ctx.rut.body], [F.dv, ctx.rut.dv], [F.tipo, String(a.tipo)], [F.folioIni, String(a.folioDesde)],
    [F.folioFin, String(a.folioHasta)], [F.motivo, a.motivo], [F.aceptar, FOLIOS_ACEPTAR.anular],
  ])
  const numeros = new Set(answer.text.match(/\d+/g) ?? [])
  if (saysPhrase(answer.text, FOLIOS_ANULADOS_TEXT) && numeros.has(String(a.folioDesde)) && numeros.has(String(a.folioHasta))) {
    return { kind: 'anulado', tipo: a.tipo, folioDesde: a.folioDesde, folioHasta: a.folioHasta }
  }
  throw refusal(ctx, answer) ?? desconocida(ctx, `no dice «${FOLIOS_ANULADOS_TEXT}» con los folios ${a.folioDesde} a ${a.folioHasta}`)
}

// ------------------------------------------------------------------------------------------------ one page

type Answered = { readonly status: number; readonly headers: Headers; readonly bytes: Uint8Array }

/** One request of the session: an answer, or a failure for no answer, a 5xx, or a redirect (the login's, mostly). */
async function send(ctx: InSession, method: 'GET' | 'POST', path: string, fields: Array<[string, string]> | null): Promise<Answered> {
  const reply = await ctx.transport.send({
    method, url: `${ctx.origin}${path}`,
    headers: withCookies(ctx.cookies, fields === null ? {} : { 'Content-Type': 'application/x-www-form-urlencoded' }),
    ...(fields === null ? {} : { body: formBody(fields) }),
  })
  const where = `${ctx.etapa} (${path})`
  if (reply.kind === 'failure') {
    if (reply.tooLarge) throw invalida(ctx.etapa, 'la página es demasiado grande')
    throw new FoliosFailure('sin_conexion', `No hubo respuesta del portal del SII en la etapa «${ctx.etapa}»: ${reply.reason}.`, `${where}: ${reply.reason}`)
  }
  if (reply.status >= 500) throw new FoliosFailure('sin_conexion', `El portal del SII falló en la etapa «${ctx.etapa}» (HTTP ${reply.status}).`, `${where}: HTTP ${reply.status}`)
  if (reply.status >= 300 && reply.status < 400) {
    const location = reply.headers.get('location') ?? ''
    if (FOLIOS_TEXTS.login.some((t) => location.includes(t)) || location.includes('CAutInicio')) throw expirada(ctx)
    throw desconocida(ctx, `una redirección (HTTP ${reply.status}) en lugar de la página`)
  }
  return reply
}

async function page(ctx: InSession, method: 'GET' | 'POST', path: string, fields: Array<[string, string]> | null): Promise<FoliosPage> {
  const reply = await send(ctx, method, path, fields)
  return pageOf(ctx, reply.status, decodeBody(reply.bytes, reply.headers.get('content-type') ?? ''))
}

async function pageOf(ctx: InSession, status: number, html: string): Promise<FoliosPage> {
  if (status >= 400) {
    const read = await readFoliosPage(html)
    throw refusal(ctx, read) ?? desconocida(ctx, `HTTP ${status} («${snippet(read.text, 80)}»)`)
  }
  return readFoliosPage(html)
}

/**
 * The step's form: action `path`, every input of `inputs`, and the select `select`. A page without it is a refusal the
 * SII's texts name, the login (the session ended), or a page Timbre does not know: `pagina_desconocida` with the step.
 */
function expectForm(ctx: InSession, p: FoliosPage, path: string, inputs: readonly string[], select?: string): PageForm {
  const form = formFor(p, path)
  const missing = form === undefined ? [] : [...inputs.filter((name) => !form.inputs.has(name)), ...(select === undefined || form.selects.has(select) ? [] : [select])]
  if (form !== undefined && missing.length === 0) return form
  throw refusal(ctx, p) ?? desconocida(ctx, form === undefined ? `no tiene el formulario hacia ${path}` : `al formulario hacia ${path} le falta ${missing.join(', ')}`)
}

/** What a page without the expected form says, in the order that tells them apart; null for a page none of them names. */
function refusal(ctx: InSession, p: FoliosPage): FoliosFailure | null {
  const dice = (t: string) => saysPhrase(p.text, t)
  const palabras = snippet(p.text, 200)
  if (FOLIOS_TEXTS.login.some((t) => p.html.includes(t))) return expirada(ctx)
  if (dice(FOLIOS_TEXTS.noAutorizado)) {
    return new FoliosFailure('no_autorizado', `El SII indica que el certificado no está autorizado para solicitar folios de la empresa ${formatRut(ctx.rut)}: el titular del certificado debe estar autorizado para timbrar documentos de la empresa en el sitio del SII. Palabras del SII: «${palabras}»`, `${ctx.etapa}: not authorised`)
  }
  if (dice(FOLIOS_TEXTS.codigoExcede) || (dice(FOLIOS_TEXTS.noPosible) && dice(FOLIOS_TEXTS.excede))) {
    return new FoliosFailure('excede_maximo', `El SII rechazó la cantidad pedida: excede el máximo que autoriza a la empresa. No se otorgó ningún folio. Palabras del SII: «${palabras}»`, `${ctx.etapa}: over MAX_AUTOR`)
  }
  if (dice(FOLIOS_TEXTS.noPuede) && /\bF-?\s?29\b/i.test(p.text)) {
    return new FoliosFailure('f29_pendiente', `El SII no permite solicitar folios a la empresa mientras tenga declaraciones F29 pendientes. Regularice el F29 en el SII y vuelva a solicitar. Palabras del SII: «${palabras}»`, `${ctx.etapa}: F29 pending`)
  }
  if (dice(FOLIOS_TEXTS.noPosible) || dice(FOLIOS_TEXTS.noPuede)) {
    return new FoliosFailure('sii_rechazo', `El SII no completó la solicitud (etapa «${ctx.etapa}»). Palabras del SII: «${palabras}»`, `${ctx.etapa}: refused: ${palabras}`)
  }
  return null
}

function expirada(ctx: InSession): FoliosFailure {
  return new FoliosFailure('sesion_expirada', `La sesión en el SII terminó en la etapa «${ctx.etapa}». Vuelva a intentarlo; si se repite, revise que nadie más use el certificado de la empresa en el sitio del SII al mismo tiempo.`, `${ctx.etapa}: login page instead of the step's page`)
}

function desconocida(ctx: InSession, reason: string): FoliosFailure {
  return new FoliosFailure('pagina_desconocida', `El portal del SII mostró en la etapa «${ctx.etapa}» una página que Timbre no reconoce: ${reason}. Puede que el SII haya cambiado su sitio.`, `${ctx.etapa}: unknown page: ${reason}`)
}

function invalida(etapa: EtapaFolios, reason: string): FoliosFailure {
  return new FoliosFailure('respuesta_invalida', `El portal del SII respondió algo que Timbre no puede aceptar (etapa «${etapa}»): ${reason}.`, `${etapa}: ${reason}`)
}

/**
 * The form as a browser sends it from an ISO-8859-1 page: each character as its Latin-1 byte, percent-encoded
 * ("Solicitar Numeración" → `Solicitar+Numeraci%F3n`); a character past Latin-1 as the numeric reference browsers send.
 */
export function formBody(fields: ReadonlyArray<readonly [string, string]>): string {
  const encode = (s: string): string => [...s].map((ch): string => {
    const code = ch.codePointAt(0) ?? 0
    if (/^[A-Za-z0-9*\-._]$/.test(ch)) return ch
    if (ch === ' ') return '+'
    if (code <= 0xff) return `%${code.toString(16).toUpperCase().padStart(2, '0')}`
    return encode(`&#${code};`)
  }).join('')
  return fields.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')
}

function entero(value: string | undefined): number | null {
  const v = (value ?? '').trim()
  return /^\d{1,9}$/.test(v) ? Number(v) : null
}

function checkTipo(tipo: number): void {
  if (!TIPOS_CON_FOLIO.has(tipo)) throw new Error(`folios portal client: not a document type with folios: ${tipo}`)
}

function checkRango(r: { readonly tipo: number; readonly folioDesde: number; readonly folioHasta: number }): void {
  checkTipo(r.tipo)
  if (!Number.isSafeInteger(r.folioDesde) || !Number.isSafeInteger(r.folioHasta) || r.folioDesde < 1 || r.folioHasta < r.folioDesde) {
    throw new Error(`folios portal client: not a folio range: ${r.folioDesde}-${r.folioHasta}`)
  }
}
