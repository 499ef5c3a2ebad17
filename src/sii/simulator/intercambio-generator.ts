// The simulator's set de intercambio (DESIGN §15 "Simulator": `timbre sii-simulator intercambio --rut R`): a signed
// EnvioDTE from the SII's test issuer 88888888-8, shaped as the SII's own 2026 file (research §1.2 stage 3): Caratula
// RutReceptor = the company in certification, two facturas (33), one to the company and one to another RUT (by
// default 69507000-4 "RUT DE PRUEBA PORTAL", the SII's own), each with one line "SET INTERCAMBIO NUMERO <n>".
// Built as Timbre builds its own DTEs (xml/dte-xml.ts, ted.ts, signature.ts, envelope.ts), so it is valid where the
// SII's is not: its CAF comes from the simulator's authority (IDK 900, caf-issuer.ts) and holds both folios, and its
// TEDs verify. The signer is a certificate made here whose holder RUT is 88888888-8 (crypto/demo-certificate.ts).
import { santiagoDate, santiagoTimestamp } from '../../clock'
import { makeDemoPfx } from '../../crypto/demo-certificate'
import { openPfx } from '../../crypto/pfx'
import { OTRO_RUT_INTERCAMBIO, RUT_EMISOR_INTERCAMBIO } from '../../domain/certificacion-intercambio'
import type { EmitirDte } from '../../domain/emision'
import { normalizeRut } from '../../domain/rut'
import { SIMULATOR_IDK } from '../../xml/authority-keys'
import { parseCaf } from '../../xml/caf'
import { buildDteXml, tedDataFor, type EmpresaEmisora } from '../../xml/dte-xml'
import { buildEnvioDte, envelopeBytes } from '../../xml/envelope'
import { signDte } from '../../xml/signature'
import { buildTed } from '../../xml/ted'
import { issueCaf, simulatorAuthorityKey } from './caf-issuer'

/** The SII's test issuer as its 2026 file describes it (RznSoc, GiroEmis, DirOrigen, FchResol 2003-05-16, NroResol 0). */
const EMISOR_SII: EmpresaEmisora = {
  rut: RUT_EMISOR_INTERCAMBIO,
  razon_social: 'EMPRESA DE PRUEBA',
  giro: 'Informatica',
  acteco: [1],
  direccion: 'Teatinos 120',
  comuna: 'Santiago',
  ciudad: 'Santiago',
  fecha_resolucion: '2003-05-16',
  numero_resolucion: 0,
}

/** The other receiver's name as the SII's file gives it (its RUT: OTRO_RUT_INTERCAMBIO). */
const OTRO_RAZON_SOCIAL = 'RUT DE PRUEBA PORTAL'
/** The SII's file names the company by its razón social; the simulator knows only its RUT. */
const RAZON_SOCIAL_RECEPTOR = 'EMPRESA EN CERTIFICACION'

export interface IntercambioEnvelopeInput {
  /** The company in certification (any spelling of a valid RUT). */
  readonly rutReceptor: string
  /** The RUT of the second DTE; OTRO_RUT_INTERCAMBIO by default. Must differ from rutReceptor. */
  readonly otroRut?: string
  /** Same seed, same número, folios and amounts (keys and signatures are new every time). */
  readonly seed: number
  readonly now: Date
}

/** The signed EnvioDTE as ISO-8859-1 bytes. Throws RangeError on an invalid RUT, or two equal ones. */
export function generateIntercambioEnvelope(input: IntercambioEnvelopeInput): Uint8Array {
  const rutReceptor = normalizeRut(input.rutReceptor)
  const otroRut = normalizeRut(input.otroRut ?? OTRO_RUT_INTERCAMBIO)
  if (rutReceptor === null) throw new RangeError(`generateIntercambioEnvelope: rutReceptor "${input.rutReceptor}" is not a valid RUT`)
  if (otroRut === null || otroRut === rutReceptor) throw new RangeError(`generateIntercambioEnvelope: otroRut "${input.otroRut}" must be a valid RUT other than rutReceptor`)
  const random = seeded(input.seed)
  const numero = 1_000_000 + Math.floor(random() * 9_000_000)
  const folio = 1 + Math.floor(random() * 90_000)
  const today = santiagoDate(input.now)
  const timestamp = santiagoTimestamp(input.now)
  const caf = parseCaf(issueCaf({
    rut: EMISOR_SII.rut, razonSocial: EMISOR_SII.razon_social, tipoDte: 33, folioDesde: folio, folioHasta: folio + 99,
    fechaAutorizacion: today, idk: SIMULATOR_IDK, authorityPrivateKey: simulatorAuthorityKey(),
  }))
  const password = 'sii-simulado'
  const certificado = openPfx(makeDemoPfx({ rutFirmante: EMISOR_SII.rut, nombre: 'SII SIMULADO SET DE INTERCAMBIO', password, now: input.now, validDays: 30 }), password)
  const receptores = [[rutReceptor, RAZON_SOCIAL_RECEPTOR], [otroRut, OTRO_RAZON_SOCIAL]] as const
  const dtes = receptores.map(([rut, razonSocial], i) => {
    const request = factura(rut, razonSocial, `SET INTERCAMBIO NUMERO ${numero}`, 1000 + Math.floor(random() * 4000))
    const dte = { empresa: EMISOR_SII, folio: folio + i, request, today }
    const ted = buildTed({ ...tedDataFor(dte), timestamp }, caf)
    return signDte(buildDteXml({ ...dte, ted, tmstFirma: timestamp }), certificado.signer)
  })
  return envelopeBytes(buildEnvioDte({
    dtes,
    caratula: {
      rutEmisor: EMISOR_SII.rut, rutEnvia: certificado.rutFirmante, rutReceptor,
      fchResol: EMISOR_SII.fecha_resolucion!, nroResol: EMISOR_SII.numero_resolucion!, tmstFirmaEnv: timestamp,
    },
    signer: certificado.signer,
  }))
}

/** One factura of two units, as the SII's lines are (QtyItem 2). */
function factura(rut: string, razonSocial: string, item: string, precio: number): EmitirDte {
  return {
    tipo_dte: 33,
    receptor: { rut, razon_social: razonSocial, giro: 'Comercial', direccion: 'Santiago', comuna: 'Santiago', ciudad: 'Santiago' },
    detalle: [{ nombre: item, cantidad: 2, precio }],
  }
}

/** mulberry32: a small seeded generator, so a seed gives the same envelope numbers on every machine. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
