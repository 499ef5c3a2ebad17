// The simulated SII's folio pages (timbraje) on the plain origin (src/sii/folios-protocol.ts; research §4.2;
// docs/decisions/simulator.md "Folios (timbraje)"): the request of a range, its grant, the CAF's download and
// re-download, the annulment. The session is the portal's (portal-login.ts, TOKEN cookie; a login whose referencia is
// of_solicita_folios comes back here). What the simulator grants, and each company's settings and blocks, live in
// folios-store.ts; the pages' HTML in folios-pages.ts. The faults corte_tras_otorgar and pagina_cambiada apply here.
import { santiagoDate } from '../../clock'
import { computeDv } from '../../domain/rut'
import { toLatin1Bytes } from '../../xml/latin1'
import { FOLIOS_ACEPTAR, FOLIOS_FIELDS as F, FOLIOS_PATHS, FOLIOS_TEXTS } from '../folios-protocol'
import { simulatedCafFile } from './caf-issuer'
import type { Route, SimulatorContext } from './channel'
import {
  anuladoPage, cifrasPage, confirmaPage, confirmarInicialPage, conNombresCambiados, tieneNombresCambiables, otorgadoPage, rechazoPage, solicitaPage, tipoPage, type EmpresaForm,
} from './folios-pages'
import { loginPage, SESSION_IDLE_MS } from './portal-login'
import { cookie } from './rcv-service'

const HTML_LATIN1 = 'text/html; charset=ISO-8859-1'

export const FOLIOS_ROUTES: readonly Route[] = [
  { method: 'GET', matches: (url) => url.pathname === FOLIOS_PATHS.solicita, answer: (ctx, req) => withSession(ctx, req, null, () => formPage(ctx, solicitaPage())) },
  ...([
    [FOLIOS_PATHS.solicitaDcto, solicitaDcto],
    [FOLIOS_PATHS.confirma, confirma],
    [FOLIOS_PATHS.genera, genera],
    [FOLIOS_PATHS.archivo, archivo],
    [FOLIOS_PATHS.anula, anula],
  ] as const).map(([path, step]): Route => ({
    method: 'POST',
    matches: (url) => url.pathname === path,
    answer: async (ctx, req) => withSession(ctx, req, readForm(new Uint8Array(await req.arrayBuffer())), step),
  })),
]

/** One step's inputs: the posted form, the session holder's RUT, the simulator's context. */
interface Paso {
  readonly ctx: SimulatorContext
  readonly form: ReadonlyMap<string, string>
  readonly titular: string
}

/** A live session (TOKEN cookie) runs the step; none, or one the sesion_expirada fault ends, gets the login page. */
function withSession(ctx: SimulatorContext, req: Request, form: ReadonlyMap<string, string> | null, step: (p: Paso) => Response): Response {
  const now = ctx.clock().getTime()
  const token = cookie(req, 'TOKEN')
  const sesion = token === null ? null : ctx.store.usePortalSesion(token, now, SESSION_IDLE_MS)
  if (token === null || sesion === null) return htmlLatin1(loginPage())
  if (ctx.store.takeFalla('sesion_expirada')) {
    ctx.store.endPortalSesion(token, now)
    return htmlLatin1(loginPage())
  }
  return step({ ctx, form: form ?? new Map(), titular: sesion.rut })
}

function htmlLatin1(html: string, status = 200): Response {
  return new Response(Buffer.from(toLatin1Bytes(html)), { status, headers: { 'content-type': HTML_LATIN1 } })
}

/**
 * A page with a form the client fills next: the pagina_cambiada fault renames its inputs. It is taken by the first
 * page that has one to rename (the type's figures onwards), not by the company form, which would stay the same.
 */
function formPage(ctx: SimulatorContext, html: string): Response {
  return htmlLatin1(tieneNombresCambiables(html) && ctx.store.takeFalla('pagina_cambiada') ? conNombresCambiados(html) : html)
}

function rechazo(ctx: SimulatorContext, paso: string, motivo: string, codigo: string | null = null): Response {
  ctx.log('sii_simulator.folios_rechazo', { paso, motivo, codigo })
  return htmlLatin1(rechazoPage(motivo, codigo))
}

// ------------------------------------------------------------------------------------------------ the steps

/** Steps 2, 3 and 4 share the address: ACEPTAR=Continuar, no ACEPTAR with a COD_DOCTO, ACEPTAR=Solicitar Numeración. */
function solicitaDcto(p: Paso): Response {
  const empresa = empresaDe(p)
  if ('rechazo' in empresa) return empresa.rechazo
  const aceptar = p.form.get(F.aceptar)
  if (aceptar !== undefined && sinAcentos(aceptar) === sinAcentos(FOLIOS_ACEPTAR.continuar)) return formPage(p.ctx, tipoPage(empresa))
  const tipo = tipoDe(p, empresa)
  if (typeof tipo !== 'number') return tipo
  const maxAutor = p.ctx.store.folios.maxAutor(empresa.rut, tipo) ?? 0
  if (aceptar === undefined) return formPage(p.ctx, cifrasPage(empresa, tipo, { maxAutor, foliosDisp: p.ctx.store.folios.disponibles(empresa.rut, tipo) }))
  if (sinAcentos(aceptar) !== sinAcentos(FOLIOS_ACEPTAR.solicitar)) return rechazo(p.ctx, 'solicitud', `botón desconocido: ${aceptar}`)
  const cantidad = cantidadDe(p, empresa, tipo, maxAutor)
  if (typeof cantidad !== 'number') return cantidad
  const afecto = p.form.get(F.afectoIva)
  if ((tipo === 39 || tipo === 41) && afecto !== undefined && afecto !== 'S' && afecto !== 'N') return rechazo(p.ctx, 'solicitud', 'AFECTO_IVA debe ser S o N')
  const siguiente = p.ctx.store.folios.siguienteFolio(empresa.rut, tipo)
  if (siguiente === null) return formPage(p.ctx, confirmarInicialPage(empresa, tipo, cantidad, 1))
  return formPage(p.ctx, confirmaPage({ ...empresa, tipo, folioIni: siguiente, folioFin: siguiente + cantidad - 1 }, p.titular))
}

/** The first timbraje's "Confirmar Folio Inicial": records FOLIO_INI, then the range to grant from it. */
function confirma(p: Paso): Response {
  const empresa = empresaDe(p)
  if ('rechazo' in empresa) return empresa.rechazo
  const tipo = tipoDe(p, empresa)
  if (typeof tipo !== 'number') return tipo
  if (!esBoton(p, FOLIOS_ACEPTAR.confirmarInicial)) return rechazo(p.ctx, 'confirma', 'falta Confirmar Folio Inicial')
  const cantidad = cantidadDe(p, empresa, tipo, p.ctx.store.folios.maxAutor(empresa.rut, tipo) ?? 0)
  if (typeof cantidad !== 'number') return cantidad
  const folioIni = entero(p.form.get(F.folioIni))
  if (folioIni === null) return rechazo(p.ctx, 'confirma', 'el folio inicial debe ser un entero positivo')
  if (!p.ctx.store.folios.confirmarInicial(empresa.rut, tipo, folioIni)) return rechazo(p.ctx, 'confirma', 'el folio inicial de este documento ya fue confirmado')
  p.ctx.log('sii_simulator.folios_inicial', { rut: empresa.rut, tipo, folio: folioIni })
  return formPage(p.ctx, confirmaPage({ ...empresa, tipo, folioIni, folioFin: folioIni + cantidad - 1 }, p.titular))
}

/** Obtener Folios: grants FOLIO_INI..FOLIO_FIN when FOLIO_INI is still the next folio (a repeated POST grants nothing). */
function genera(p: Paso): Response {
  const empresa = empresaDe(p)
  if ('rechazo' in empresa) return empresa.rechazo
  const tipo = tipoDe(p, empresa)
  if (typeof tipo !== 'number') return tipo
  if (!esBoton(p, FOLIOS_ACEPTAR.obtener)) return rechazo(p.ctx, 'genera', 'falta Obtener Folios')
  const folioIni = entero(p.form.get(F.folioIni))
  const folioFin = entero(p.form.get(F.folioFin))
  if (folioIni === null || folioFin === null || folioFin < folioIni) return rechazo(p.ctx, 'genera', 'el rango de folios no es válido')
  const cantidad = cantidadDe(p, empresa, tipo, p.ctx.store.folios.maxAutor(empresa.rut, tipo) ?? 0, folioFin - folioIni + 1)
  if (typeof cantidad !== 'number') return cantidad
  const now = p.ctx.clock()
  const fecha = santiagoDate(now)
  const caf = Buffer.from(simulatedCafFile({
    rut: empresa.rut, razonSocial: p.ctx.store.folios.ajustes(empresa.rut).razonSocial, tipoDte: tipo, folioDesde: folioIni, folioHasta: folioFin, fechaAutorizacion: fecha,
  })).toString('latin1')
  const otorgado = p.ctx.store.folios.otorgar({ rut_empresa: empresa.rut, tipo, folio_desde: folioIni, folio_hasta: folioFin, fecha, granted_at: now.getTime(), caf })
  if (otorgado === null) return rechazo(p.ctx, 'genera', `el folio ${folioIni} no es el siguiente por otorgar; si ya se otorgó, descargue el archivo nuevamente`)
  const isCorte = p.ctx.store.takeFalla('corte_tras_otorgar')
  p.ctx.log('sii_simulator.folios_otorgados', { rut: empresa.rut, tipo, desde: folioIni, hasta: folioFin, fecha, corte: isCorte })
  // The grant stands; only its answer is lost, as a connection cut after the SII committed it would leave it.
  if (isCorte) return new Response(null, { status: 503 })
  return formPage(p.ctx, otorgadoPage({ ...empresa, tipo, folioIni, folioFin }, fecha))
}

/** The CAF of a granted range, as often as asked: the same file each time, nothing consumed. FECHA is not checked (the client sends today's). */
function archivo(p: Paso): Response {
  const empresa = empresaDe(p)
  if ('rechazo' in empresa) return empresa.rechazo
  const tipo = tipoDe(p, empresa, false)
  if (typeof tipo !== 'number') return tipo
  if (!esBoton(p, FOLIOS_ACEPTAR.descargar)) return rechazo(p.ctx, 'archivo', 'falta AQUI')
  const folioIni = entero(p.form.get(F.folioIni))
  const folioFin = entero(p.form.get(F.folioFin))
  const otorgado = folioIni === null || folioFin === null ? null : p.ctx.store.folios.findOtorgado(empresa.rut, tipo, folioIni, folioFin)
  if (otorgado === null) return rechazo(p.ctx, 'archivo', 'el rango de folios no fue otorgado a la empresa')
  p.ctx.log('sii_simulator.folios_archivo', { rut: empresa.rut, tipo, desde: otorgado.folio_desde, hasta: otorgado.folio_hasta })
  return new Response(Buffer.from(otorgado.caf, 'latin1'), {
    status: 200,
    headers: {
      'content-type': 'application/xml; charset=ISO-8859-1',
      'content-disposition': `attachment; filename="FoliosSII${empresa.rutEmp}${tipo}${otorgado.folio_desde}${otorgado.fecha.replaceAll('-', '')}.xml"`,
    },
  })
}

/** Timbre's reading of the annulment: one form with the range and MOTIVO; only unused folios of one grant. */
function anula(p: Paso): Response {
  const empresa = empresaDe(p)
  if ('rechazo' in empresa) return empresa.rechazo
  const tipo = tipoDe(p, empresa, false)
  if (typeof tipo !== 'number') return tipo
  if (!esBoton(p, FOLIOS_ACEPTAR.anular)) return rechazo(p.ctx, 'anula', 'falta Anular')
  const folioIni = entero(p.form.get(F.folioIni))
  const folioFin = entero(p.form.get(F.folioFin))
  const motivo = (p.form.get(F.motivo) ?? '').trim()
  if (folioIni === null || folioFin === null || folioFin < folioIni) return rechazo(p.ctx, 'anula', 'el rango de folios no es válido')
  if (motivo === '') return rechazo(p.ctx, 'anula', 'falta el motivo de la anulación')
  const result = p.ctx.store.folios.anular(empresa.rut, tipo, folioIni, folioFin, motivo.slice(0, 200), p.ctx.clock().getTime())
  if (result === 'fuera_de_lo_otorgado') return rechazo(p.ctx, 'anula', 'el rango de folios no fue otorgado a la empresa')
  if (result === 'con_folios_usados') return rechazo(p.ctx, 'anula', 'el rango incluye folios ya usados o anulados')
  p.ctx.log('sii_simulator.folios_anulados', { rut: empresa.rut, tipo, desde: folioIni, hasta: folioFin })
  return htmlLatin1(anuladoPage({ ...empresa, tipo, folioIni, folioFin }))
}

// ------------------------------------------------------------------------------------------------ the checks

interface Empresa extends EmpresaForm {
  /** Canonical, 12345678-K. */
  readonly rut: string
}

/** RUT_EMP and DV_EMP: a valid RUT, of a company that has not barred the holder (`no_autorizado`, for every page). */
function empresaDe(p: Paso): Empresa | { readonly rechazo: Response } {
  const cuerpo = (p.form.get(F.rut) ?? '').trim()
  const dv = (p.form.get(F.dv) ?? '').trim().toUpperCase()
  if (!/^\d{1,8}$/.test(cuerpo) || Number(cuerpo) === 0 || computeDv(String(Number(cuerpo))) !== dv) return { rechazo: rechazo(p.ctx, 'empresa', 'el RUT de la empresa no es válido') }
  const rut = `${Number(cuerpo)}-${dv}`
  const ajustes = p.ctx.store.folios.ajustes(rut)
  if (ajustes.noAutorizado) return { rechazo: rechazo(p.ctx, 'empresa', `el usuario ${p.titular} ${FOLIOS_TEXTS.noAutorizado} para solicitar timbraje de la empresa ${rut}`) }
  return { rut, rutEmp: String(Number(cuerpo)), dvEmp: dv }
}

/** COD_DOCTO, a type the simulator grants; with `isBlocking`, a pending F29 refuses it (downloads and annulments of what was granted go on). */
function tipoDe(p: Paso, empresa: Empresa, isBlocking = true): number | Response {
  const tipo = entero(p.form.get(F.tipo))
  if (tipo === null || p.ctx.store.folios.maxAutor(empresa.rut, tipo) === null) return rechazo(p.ctx, 'tipo', 'el tipo de documento no es válido')
  if (isBlocking && p.ctx.store.folios.ajustes(empresa.rut).f29Pendiente) {
    return rechazo(p.ctx, 'tipo', `el contribuyente ${FOLIOS_TEXTS.noPuede} timbraje: tiene declaraciones F29 pendientes`)
  }
  return tipo
}

/** CANT_DOCTOS (or the range's size), 1 to MAX_AUTOR; over it, the SII's LIBRUD-OFSF-DTE-3-1-02. */
function cantidadDe(p: Paso, empresa: Empresa, tipo: number, maxAutor: number, rango?: number): number | Response {
  const cantidad = rango ?? entero(p.form.get(F.cantidad))
  if (cantidad === null) return rechazo(p.ctx, 'cantidad', 'la cantidad de documentos debe ser un entero positivo')
  const declarada = entero(p.form.get(F.cantidad))
  if (rango !== undefined && declarada !== null && declarada !== rango) return rechazo(p.ctx, 'cantidad', 'la cantidad no coincide con el rango de folios')
  if (cantidad > maxAutor) {
    p.ctx.log('sii_simulator.folios_excede', { rut: empresa.rut, tipo, cantidad, max_autor: maxAutor })
    return rechazo(p.ctx, 'cantidad', `la cantidad solicitada (${cantidad}) ${FOLIOS_TEXTS.excede} el máximo autorizado (${maxAutor})`, FOLIOS_TEXTS.codigoExcede)
  }
  return cantidad
}

function esBoton(p: Paso, boton: string): boolean {
  const aceptar = p.form.get(F.aceptar)
  return aceptar !== undefined && sinAcentos(aceptar) === sinAcentos(boton)
}

/** A positive integer of up to 10 digits, else null. */
function entero(text: string | undefined): number | null {
  const t = (text ?? '').trim()
  return /^\d{1,10}$/.test(t) && Number(t) > 0 ? Number(t) : null
}

function sinAcentos(text: string): string {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').trim().toLowerCase()
}

/**
 * A form body (application/x-www-form-urlencoded), its escapes read as UTF-8 when they are valid UTF-8 and as
 * ISO-8859-1 otherwise: a browser on the SII's ISO-8859-1 pages sends `Numeraci%F3n`, a fetch client `Numeraci%C3%B3n`.
 */
export function readForm(body: Uint8Array): ReadonlyMap<string, string> {
  const fields = new Map<string, string>()
  for (const pair of Buffer.from(body).toString('latin1').split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq))
    if (!fields.has(name)) fields.set(name, decodeComponent(eq < 0 ? '' : pair.slice(eq + 1)))
  }
  return fields
}

const UTF8 = new TextDecoder('utf-8', { fatal: true })

function decodeComponent(text: string): string {
  const bytes: number[] = []
  const plain = text.replaceAll('+', ' ')
  for (let i = 0; i < plain.length; i++) {
    const hex = plain.slice(i + 1, i + 3)
    if (plain[i] === '%' && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16))
      i += 2
    } else {
      bytes.push(plain.charCodeAt(i) & 0xff)
    }
  }
  const raw = Uint8Array.from(bytes)
  try {
    return UTF8.decode(raw)
  } catch {
    return Buffer.from(raw).toString('latin1')
  }
}
