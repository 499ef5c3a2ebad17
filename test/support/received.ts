// Documents a supplier sends: a second company of the same test server issues to the receiver (real CAF under the
// simulator's IDK 900, real certificate), its DTE goes to the SII simulator and is accepted there when a test needs
// the SII to know it, and the supplier's signed DTEs are wrapped in an EnvioDTE addressed to the receiver, signed by
// the supplier's certificate: the file a receiver finds in its mailbox.
import { santiagoTimestamp } from '../../src/clock'
import type { EmitirDte } from '../../src/domain/emision'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { buildEnvioDte, envelopeBytes } from '../../src/xml/envelope'
import type { TestClock } from './clock'
import { facturaSimple, issue, provisionIssuer, signer, SIGNER_RUT, storedXml } from './issuance'
import type { TestIdentity } from './pki'
import { testRut, type Tenant, type TestServer } from './server'

export const API = '/api/v1/billing'

/** A supplier company on the same server, ready to issue 33, 34, 43, 52, 56 and 61. */
export async function supplier(s: TestServer, razonSocial = 'Proveedora Andina SpA'): Promise<Tenant> {
  const t = await s.tenant(testRut(), razonSocial)
  await provisionIssuer(s, t, { tipos: [33, 34, 43, 52, 56, 61] })
  return t
}

/** A factura from `from` to the company of `to` (receptor.rut = its RUT); overrides change the request. */
export function facturaPara(to: Tenant, overrides: Partial<EmitirDte> = {}): EmitirDte {
  const base = facturaSimple()
  return { ...base, receptor: { ...base.receptor, rut: to.empresa.rut, razon_social: to.empresa.razon_social }, ...overrides }
}

export interface IssuedToReceiver {
  readonly id: string
  readonly folio: number
  readonly tipoDte: number
  /** The stored signed `<DTE>`, exact bytes. */
  readonly xml: Uint8Array
}

/** Issues `request` as `from` and returns the signed DTE. */
export async function issueFrom(s: TestServer, from: Tenant, request: EmitirDte): Promise<IssuedToReceiver> {
  const res = await issue(s, from, request)
  if (res.status !== 201) throw new Error(`supplier issuance failed: ${res.status} ${res.text}`)
  return { id: res.json.id, folio: res.json.folio, tipoDte: res.json.tipo_dte, xml: await storedXml(s, from, res.json.id) }
}

const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)

/**
 * Runs the SII jobs, moving the clock (shared with the simulator), until each of `ids` of `from` is aceptado: the
 * SII then holds the documents and RegistroReclamoDTE answers about them. Throws if one ends otherwise.
 */
export async function acceptedBySii(s: TestServer, clock: TestClock, from: Tenant, ids: readonly string[], rounds = 40): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    const estados = await Promise.all(ids.map(async (id) => (await s.request('GET', `${API}/dte/${id}`, { headers: { 'X-Api-Key': from.readKey } })).json.estado as string))
    if (estados.every((e) => e === 'aceptado')) return
    const other = estados.find((e) => e === 'rechazado' || e === 'con_reparos')
    if (other) throw new Error(`supplier DTE ended ${other}`)
    clock.advance(20_000)
  }
  throw new Error('supplier DTEs did not reach aceptado')
}

export interface EnvioOptions {
  /** Caratula RutReceptor; the receiver's RUT. */
  readonly rutReceptor: string
  /** Caratula RutEmisor; the supplier's RUT. */
  readonly rutEmisor: string
  /** Who signs the envelope (its certificate's RUT is RutEnvia); the issuing tests' certificate by default. */
  readonly identity?: TestIdentity
  readonly rutEnvia?: string
  readonly at?: Date
}

/** The EnvioDTE a supplier mails: `dtes` verbatim, Caratula addressed to the receiver, signed (ISO-8859-1 bytes). */
export function envioDte(dtes: readonly Uint8Array[], opts: EnvioOptions): Uint8Array {
  const identity = opts.identity ?? signer()
  return envelopeBytes(
    buildEnvioDte({
      dtes: dtes.map((d) => Buffer.from(d).toString('latin1')),
      caratula: {
        rutEmisor: opts.rutEmisor,
        rutEnvia: opts.rutEnvia ?? SIGNER_RUT,
        rutReceptor: opts.rutReceptor,
        fchResol: '2014-08-22',
        nroResol: 0,
        tmstFirmaEnv: santiagoTimestamp(opts.at ?? new Date()),
      },
      signer: identity.signer,
    }),
  )
}

/** The EnvioDTE of `from`'s documents addressed to `to`. */
export function envioFor(from: Tenant, to: Tenant, dtes: readonly Uint8Array[]): Uint8Array {
  return envioDte(dtes, { rutEmisor: from.empresa.rut, rutReceptor: to.empresa.rut })
}

/** POST /recibidos/importar with the file's exact bytes as JSON `xml_base64`. */
export function importar(s: TestServer, to: Tenant, bytes: Uint8Array) {
  return s.request('POST', `${API}/recibidos/importar`, { headers: { 'X-Api-Key': to.writeKey }, body: { xml_base64: Buffer.from(bytes).toString('base64') } })
}
