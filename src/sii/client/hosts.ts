// Where each SII call goes. The real SII splits its services over hosts by environment (docs/sii-protocol.md §6.1, §7.3); an
// origin from `--sii` (DESIGN §2) takes every call, with the SII's own paths, so the simulator needs one port only.
import { FOLIOS_HOSTS } from '../folios-protocol'
import { PORTAL_HOSTS } from '../portal-protocol'
import { REGISTRO_RECLAMO_PATH } from '../registro-reclamo-protocol'

export type Ambiente = 'certificacion' | 'produccion'

export interface SiiOrigins {
  /** DTEWS SOAP services: CrSeed, GetTokenFromSeed, QueryEstUp, QueryEstDte (§6.1). */
  readonly soap: string
  /** `/cgi_dte/UPL/DTEUpload` (§6.4). */
  readonly upload: string
  /** Boleta REST resources: semilla, token, envelope status, consulta (§7.3). Its tokens are keyed on this origin. */
  readonly boletaApi: string
  /** Boleta envío: pangal/rahue only; [3P] the envío path on apicert/api answers "Acceso Denegado" (§7.3). */
  readonly boletaEnvio: string
}

const SII_ORIGINS: Readonly<Record<Ambiente, SiiOrigins>> = {
  certificacion: {
    soap: 'https://maullin.sii.cl',
    upload: 'https://maullin.sii.cl',
    boletaApi: 'https://apicert.sii.cl',
    boletaEnvio: 'https://pangal.sii.cl',
  },
  produccion: {
    soap: 'https://palena.sii.cl',
    upload: 'https://palena.sii.cl',
    boletaApi: 'https://api.sii.cl',
    boletaEnvio: 'https://rahue.sii.cl',
  },
}

/** The SII's paths, identical on every host and on the simulator (§6.1, §6.4, §7.3). */
export const PATHS = {
  crSeed: '/DTEWS/CrSeed.jws',
  getTokenFromSeed: '/DTEWS/GetTokenFromSeed.jws',
  queryEstUp: '/DTEWS/QueryEstUp.jws',
  queryEstDte: '/DTEWS/QueryEstDte.jws',
  dteUpload: '/cgi_dte/UPL/DTEUpload',
  boletaSemilla: '/recursos/v1/boleta.electronica.semilla',
  boletaToken: '/recursos/v1/boleta.electronica.token',
  boletaEnvio: '/recursos/v1/boleta.electronica.envio',
  /** `/{rut}-{dv}-{trackid}` is appended (§7.3 item 4). */
  boletaEnvioEstado: '/recursos/v1/boleta.electronica.envio',
  /** `/{rut}-{dv}-{tipo}-{folio}/estado` is appended (§7.3 item 5). */
  boletaConsulta: '/recursos/v1/boleta.electronica',
} as const

export type HostTarget = { readonly kind: 'sii' } | { readonly kind: 'origin'; readonly origin: string }

/** The origins for one company: by its ambiente on the real SII, or the one configured origin for every service. */
export function originsFor(target: HostTarget, ambiente: Ambiente): SiiOrigins {
  if (target.kind === 'sii') return SII_ORIGINS[ambiente]
  const origin = target.origin.replace(/\/+$/, '')
  return { soap: origin, upload: origin, boletaApi: origin, boletaEnvio: origin }
}

/**
 * RegistroReclamoDTE (docs/sii-protocol.md §6.7) lives on its own hosts, ws2 for certificación and ws1 for producción,
 * and its path names the ambiente too. An origin target (the simulator) serves both paths, so the company's ambiente
 * still picks the path.
 */
const REGISTRO_RECLAMO_ORIGIN: Readonly<Record<Ambiente, string>> = { certificacion: 'https://ws2.sii.cl', produccion: 'https://ws1.sii.cl' }

export interface RegistroReclamoEndpoint {
  /** The service URL the SOAP requests are posted to. */
  readonly url: string
  /** The DTEWS origin whose seed/token the service takes in `Cookie: TOKEN=` (§6.7). */
  readonly tokenOrigin: string
}

/**
 * Where a company's RegistroReclamoDTE calls go, and which DTEWS issues their token. [LIB] LibreDTE found in 2021
 * (libredte-lib-core issue #72, reproduced by its maintainer) that the certificación service refuses a maullin token
 * and takes a palena one, and since then gets the token from producción whatever the ambiente; Timbre does the same.
 */
export function registroReclamoEndpoint(target: HostTarget, ambiente: Ambiente): RegistroReclamoEndpoint {
  const path = REGISTRO_RECLAMO_PATH[ambiente]
  if (target.kind === 'sii') return { url: REGISTRO_RECLAMO_ORIGIN[ambiente] + path, tokenOrigin: SII_ORIGINS.produccion.soap }
  const one = target.origin.replace(/\/+$/, '')
  return { url: one + path, tokenOrigin: one }
}

/** The SII portal's hosts (src/sii/portal/): login by certificate, logout, and the RCV's data service. */
export interface PortalOrigins {
  readonly login: string
  readonly logout: string
  readonly rcv: string
}

/**
 * Where the portal calls go. The real SII has one portal for both ambientes (the RCV is producción's only: research
 * §2.2), so only the target decides; an origin target (the simulator) serves the three with the SII's paths.
 */
export function portalOrigins(target: HostTarget): PortalOrigins {
  if (target.kind === 'sii') return PORTAL_HOSTS
  const origin = target.origin.replace(/\/+$/, '')
  return { login: origin, logout: origin, rcv: origin }
}

/**
 * Where a company's folio pages are (src/sii/folios-protocol.ts): the ambiente's host on the real SII (maullin for
 * certificación, palena for producción), the origin for an origin target. The login and logout stay on the portal's
 * hosts (`portalOrigins`).
 */
export function foliosOrigin(target: HostTarget, ambiente: Ambiente): string {
  if (target.kind === 'sii') return FOLIOS_HOSTS[ambiente]
  return target.origin.replace(/\/+$/, '')
}
