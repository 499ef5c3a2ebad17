// What a company needs before it can issue through the API: a signing certificate and CAFs, uploaded over HTTP.
import { santiagoDate } from '../../src/clock'
import { TIPOS_DTE, type EmitirDte, type TipoDte } from '../../src/domain/emision'
import { exportPfx, makeCertificate, makeTestCaf, type TestIdentity } from './pki'
import { useTenant, type Tenant, type TestServer } from './server'

export const SIGNER_RUT = '7880442-4'

let signerIdentity: TestIdentity | null = null
/** One certificate for the whole run (RSA key generation is the slow part), valid for a year around now. */
export function signer(): TestIdentity {
  signerIdentity ??= makeCertificate({
    rut: SIGNER_RUT,
    commonName: 'JUAN PÉREZ SOTO',
    notBefore: new Date(Date.now() - 30 * 86_400_000),
    notAfter: new Date(Date.now() + 365 * 86_400_000),
    keySlot: 7,
  })
  return signerIdentity
}

export async function uploadCertificate(s: TestServer, tenant: Tenant, identity: TestIdentity = signer()): Promise<void> {
  const res = await s.request('POST', '/api/v1/billing/empresa/certificado/pfx', {
    headers: { 'X-Api-Key': tenant.writeKey },
    body: { pfx_base64: Buffer.from(exportPfx(identity, 'test', '3des')).toString('base64'), password: 'test' },
  })
  if (res.status !== 201) throw new Error(`certificate upload failed: ${res.status} ${res.text}`)
}

export async function uploadCaf(s: TestServer, tenant: Tenant, tipoDte: number, folioDesde: number, folioHasta: number): Promise<string> {
  const caf = makeTestCaf({
    rut: tenant.empresa.rut,
    razonSocial: tenant.empresa.razon_social,
    tipoDte,
    folioDesde,
    folioHasta,
    fechaAutorizacion: santiagoDate(new Date(Date.now() - 2 * 86_400_000)),
  })
  const res = await s.request('POST', '/api/v1/billing/caf', { headers: { 'X-Api-Key': tenant.writeKey }, body: { tipo_dte: tipoDte, caf_xml: caf.xml } })
  if (res.status !== 201) throw new Error(`CAF upload failed: ${res.status} ${res.text}`)
  return res.json.id as string
}

/** Certificate plus one CAF of `folios` folios for each of the 12 types. */
export async function provisionIssuer(s: TestServer, tenant: Tenant, opts: { folios?: number; tipos?: readonly TipoDte[] } = {}): Promise<void> {
  await uploadCertificate(s, tenant)
  for (const tipo of opts.tipos ?? TIPOS_DTE) await uploadCaf(s, tenant, tipo, 1, opts.folios ?? 100)
}

export function facturaSimple(overrides: Partial<EmitirDte> = {}): EmitirDte {
  return {
    tipo_dte: 33,
    receptor: {
      rut: '76.086.428-5',
      razon_social: 'Ferretería y Construcción Ñuble Limitada',
      giro: 'Venta de materiales de construcción',
      direccion: 'Av. Libertador Bernardo O’Higgins 1234',
      comuna: 'Chillán',
      ciudad: 'Chillán',
    },
    detalle: [
      { nombre: 'Martillo carpintero 16 oz', cantidad: 3, precio: 8990, unidad: 'UN' },
      { nombre: 'Clavos 2½" (caja 1 kg)', cantidad: 2, precio: 2490, descuento_pct: 10 },
    ],
    ...overrides,
  }
}

export async function issue(s: TestServer, tenant: Tenant, body: unknown, key: string = crypto.randomUUID()) {
  return s.request('POST', '/api/v1/billing/dte', { headers: { 'X-Api-Key': tenant.writeKey, 'Idempotency-Key': key }, body })
}

/** How many DTEs the tenant's company has issued (GET /dte `total_count`): a refused request must leave it as it was. */
export async function dteCount(s: TestServer, tenant: Tenant): Promise<number> {
  return (await s.request('GET', '/api/v1/billing/dte', { headers: { 'X-Api-Key': tenant.readKey } })).json.total_count as number
}

/** The stored signed XML of a DTE, its exact bytes (GET /dte/{id}/xml). */
export async function storedXml(s: TestServer, tenant: Tenant, id: string): Promise<Uint8Array> {
  return new Uint8Array(await (await fetch(`${s.url}/api/v1/billing/dte/${id}/xml`, { headers: { 'X-Api-Key': tenant.readKey } })).arrayBuffer())
}

/** useTenant, its company ready to issue (certificate and CAFs: provisionIssuer). */
export function useIssuer(ready: (s: TestServer, t: Tenant) => void, opts: Parameters<typeof provisionIssuer>[2] = {}): void {
  useTenant(ready, (s, t) => provisionIssuer(s, t, opts))
}
