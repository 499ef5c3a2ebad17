// A fake of the SII's folio pages (src/sii/folios-protocol.ts, the contract of issue 30) for the folio client's tests,
// behind the fake portal's login by certificate (portal-server.ts rcvPortal serves the login, the session cookies and
// autTermino). Pages in ISO-8859-1 as the SII's, forms parsed as a browser on such a page posts them (Latin-1 bytes,
// percent-encoded). Each test spoils one answer or flips one flag. Independent of the simulator on purpose: the
// client is tested against the contract, the simulator against the same contract elsewhere.
import { FOLIOS_ACEPTAR, FOLIOS_FIELDS as F, FOLIOS_PATHS, FOLIOS_TEXTS } from '../../src/sii/folios-protocol'
import { simulatedCafFile } from '../../src/sii/simulator/caf-issuer'
import { rcvPortal, TOKEN, type Handler, type RcvPortalState, type Reply, type SeenRequest } from './portal-server'

export interface Grant {
  readonly tipo: number
  readonly desde: number
  readonly hasta: number
  readonly fecha: string
}

export interface FoliosPortalState {
  readonly rut: string
  readonly dv: string
  maxAutor: number
  autorizado: boolean
  f29Pendiente: boolean
  /** Types whose next request is their first timbraje (the page asks to confirm the initial folio). */
  readonly primerTimbraje: Set<number>
  readonly siguiente: Map<number, number>
  readonly grants: Grant[]
  /** POSTs that reached `genera`: the client must never send a second for one request. */
  generaPosts: number
  fecha: string
  /** Overrides one answer of the folio pages; undefined keeps the portal's own. */
  spoil?: (req: SeenRequest, form: URLSearchParams) => Reply | undefined
  /** The CAF file of a grant; default the simulator authority's CAF of exactly that grant. */
  archivo?: (g: Grant) => Uint8Array
}

export function newFoliosState(): FoliosPortalState {
  return {
    rut: '76354771', dv: 'K', maxAutor: 100, autorizado: true, f29Pendiente: false, primerTimbraje: new Set(),
    siguiente: new Map([[33, 101], [61, 11]]), grants: [], generaPosts: 0, fecha: '2026-11-27',
  }
}

/** A form body as an ISO-8859-1 page's form arrives: `%F3` is ó. */
export function parseLatin1Form(body: string): URLSearchParams {
  const out = new URLSearchParams()
  for (const pair of body === '' ? [] : body.split('&')) {
    const [k = '', v = ''] = pair.split('=')
    const decode = (s: string) => Buffer.from(s.replace(/\+/g, ' ').replace(/%([0-9A-F]{2})|([^%])/gi, (_, hex?: string, ch?: string) => hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : ch ?? ''), 'latin1').toString('latin1')
    out.append(decode(k), decode(v))
  }
  return out
}

export const html = (body: string, status = 200): Reply => ({
  status, headers: [['Content-Type', 'text/html; charset=ISO-8859-1']], body: Buffer.from(`<html><head><title>SII</title></head><body>${body}</body></html>`, 'latin1'),
})

const hidden = (name: string, value: string | number) => `<input type="hidden" name="${name}" value="${value}">`
const text = (name: string, value: string | number = '') => `<INPUT TYPE=text NAME=${name} VALUE="${value}" size=10>`
const submit = (value: string) => `<input type="submit" name="ACEPTAR" value="${value.replace('ó', '&oacute;')}">`
const form = (action: string, inner: string) => `<form method="post" action="${action}">${inner}</form>`

export const refusalPage = (why: string) => html(`<h2>${FOLIOS_TEXTS.noPosible.replace('ó', '&oacute;')}</h2><p>${why}</p>`)
export const loginPage = html(`<form action="/cgi_AUT2000/CAutInicio.cgi"><a href="/IngresoCertificado.html">Ingresar con certificado</a></form>`)

/** The folio pages in front of `rcv`'s login by certificate. */
export function foliosPortal(state: FoliosPortalState, rcv: RcvPortalState, companyDer: Buffer): Handler {
  const login = rcvPortal(rcv, companyDer)
  const empresa = () => hidden(F.rut, state.rut) + hidden(F.dv, state.dv)
  const genera = (tipo: number, desde: number, cant: number) => form(FOLIOS_PATHS.genera,
    empresa() + hidden(F.tipo, tipo) + hidden(F.folioIni, desde) + hidden(F.folioFin, desde + cant - 1) + hidden(F.nomUsu, 'TITULAR EMPRESA') + hidden(F.cantidad, cant) + submit(FOLIOS_ACEPTAR.obtener))
  return (req) => {
    if (!Object.values(FOLIOS_PATHS).includes(req.path as never)) return login(req)
    const body = parseLatin1Form(req.body)
    if (req.path === FOLIOS_PATHS.genera) state.generaPosts++
    const spoiled = state.spoil?.(req, body)
    if (spoiled !== undefined) return spoiled
    if (!(req.headers.cookie ?? '').includes(`TOKEN=${TOKEN}`)) return loginPage
    const tipo = Number(body.get(F.tipo))
    const aceptar = body.get(F.aceptar)
    switch (req.path) {
      case FOLIOS_PATHS.solicita:
        return html(`<p>Solicitud de folios</p>${form(FOLIOS_PATHS.solicitaDcto, text(F.rut) + text(F.dv) + submit(FOLIOS_ACEPTAR.continuar))}`)
      case FOLIOS_PATHS.solicitaDcto: {
        if (body.get(F.rut) !== state.rut || body.get(F.dv) !== state.dv) return refusalPage('RUT no corresponde')
        if (aceptar === FOLIOS_ACEPTAR.continuar) {
          if (!state.autorizado) return refusalPage(`El usuario ${FOLIOS_TEXTS.noAutorizado} para operar por la empresa.`)
          return html(form(FOLIOS_PATHS.solicitaDcto, empresa() + '<select name="COD_DOCTO"><option value="33">Factura Electr&oacute;nica<option value="61">Nota de Cr&eacute;dito</select>'))
        }
        if (aceptar === undefined || aceptar === null) {
          if (state.f29Pendiente) return refusalPage(`El contribuyente ${FOLIOS_TEXTS.noPuede} folios: tiene declaraciones F29 pendientes.`)
          return html(form(FOLIOS_PATHS.solicitaDcto, empresa() + hidden(F.tipo, tipo) + hidden(F.maxAutor, state.maxAutor) + hidden(F.foliosDisp, 0) + hidden(F.factor, '1.0') +
            hidden(F.conCredito, 0) + hidden(F.conAjuste, 0) + text(F.cantidad) + submit(FOLIOS_ACEPTAR.solicitar)))
        }
        if (aceptar === FOLIOS_ACEPTAR.solicitar) {
          const cant = Number(body.get(F.cantidad))
          if (!(cant >= 1) || cant > state.maxAutor) return refusalPage(`${FOLIOS_TEXTS.codigoExcede}: la cantidad solicitada excede el m&aacute;ximo autorizado.`)
          const desde = state.siguiente.get(tipo) ?? 1
          if (state.primerTimbraje.has(tipo)) {
            return html(`<p>${FOLIOS_TEXTS.confirmarInicial}</p>${form(FOLIOS_PATHS.confirma, empresa() + hidden(F.tipo, tipo) + hidden(F.cantidad, cant) + text(F.folioIni, desde) + submit(FOLIOS_ACEPTAR.confirmarInicial))}`)
          }
          return html(genera(tipo, desde, cant))
        }
        return html('<p>?</p>', 400)
      }
      case FOLIOS_PATHS.confirma:
        if (aceptar !== FOLIOS_ACEPTAR.confirmarInicial) return html('<p>?</p>', 400)
        state.primerTimbraje.delete(tipo)
        state.siguiente.set(tipo, Number(body.get(F.folioIni)))
        return html(genera(tipo, Number(body.get(F.folioIni)), Number(body.get(F.cantidad))))
      case FOLIOS_PATHS.genera: {
        if (aceptar !== FOLIOS_ACEPTAR.obtener) return html('<p>?</p>', 400)
        const g: Grant = { tipo, desde: Number(body.get(F.folioIni)), hasta: Number(body.get(F.folioFin)), fecha: state.fecha }
        state.grants.push(g)
        state.siguiente.set(tipo, g.hasta + 1)
        return html(`<p>Folios otorgados. Descargue el archivo</p>${form(FOLIOS_PATHS.archivo, empresa() + hidden(F.tipo, tipo) + hidden(F.folioIni, g.desde) + hidden(F.folioFin, g.hasta) + hidden(F.fecha, g.fecha) + submit(FOLIOS_ACEPTAR.descargar))}`)
      }
      case FOLIOS_PATHS.archivo: {
        const g = state.grants.find((x) => x.tipo === tipo && x.desde === Number(body.get(F.folioIni)) && x.hasta === Number(body.get(F.folioFin)))
        if (g === undefined || aceptar !== FOLIOS_ACEPTAR.descargar) return refusalPage('El rango de folios no fue autorizado a la empresa.')
        const caf = state.archivo?.(g) ?? simulatedCafFile({ rut: `${state.rut}-${state.dv}`, razonSocial: 'Comercial Ñandú Limitada', tipoDte: g.tipo, folioDesde: g.desde, folioHasta: g.hasta, fechaAutorizacion: g.fecha })
        return { status: 200, headers: [['Content-Type', 'application/xml; charset=ISO-8859-1']], body: caf }
      }
      case FOLIOS_PATHS.anula: {
        const desde = Number(body.get(F.folioIni))
        const hasta = Number(body.get(F.folioFin))
        if (aceptar !== FOLIOS_ACEPTAR.anular || !state.grants.some((g) => g.tipo === tipo && g.desde <= desde && hasta <= g.hasta)) return refusalPage('Los folios no pertenecen a la empresa.')
        return html(`<h3>Folios anulados</h3><table><tr><td>${tipo}</td><td>${desde}</td><td>${hasta}</td></tr></table>`)
      }
    }
    return { status: 404, body: 'no' }
  }
}
