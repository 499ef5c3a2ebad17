// The company's signing certificate (spec 2.14, DESIGN §8): uploaded as PKCS#12, private key sealed at rest,
// opened on demand for signing and cached in memory as a KeyObject.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto'
import { isoTimestamp, santiagoDate } from '../clock'
import { assertUsable } from '../domain/signer'
import type { Signer } from '../domain/signer'
import { signerMaterial, type SignerMaterial } from '../workers/signing-keys'
import { findActiveCertificado, findLatestCertificado, insertActiveCertificado } from '../db/certificado-store'
import type { CertificadoRow } from '../db/schema'
import { normalizeRut } from '../domain/rut'
import { TimbreError } from '../errors'
import type { Deps } from './deps'

/** Spec 2.14. */
export interface CertificadoStatus {
  readonly has_certificado: boolean
  readonly rut_firmante: string | null
  readonly fecha_vencimiento: string | null
  readonly dias_para_vencimiento: number | null
  readonly is_active: boolean
  readonly uploaded_at: string | null
  /** Extension (issue 27): the holder as the certificate names it (subject CN). */
  readonly titular: string | null
  /** Extension: the certification authority that issued it (issuer CN, else O); null when its DER cannot say. */
  readonly emisor_certificado: string | null
  /** Extension: the first day it signs (notBefore), a date in Santiago as `fecha_vencimiento` is. */
  readonly fecha_inicio_vigencia: string | null
}

const DAY_MS = 86_400_000

export function toCertificadoStatus(row: CertificadoRow, now: Date): CertificadoStatus {
  const notAfter = new Date(row.not_after)
  return {
    has_certificado: true,
    rut_firmante: row.rut_firmante,
    fecha_vencimiento: santiagoDate(notAfter),
    // Whole days left, negative once expired (DESIGN §8: expired included, dias_para_vencimiento <= 0).
    dias_para_vencimiento: Math.floor((notAfter.getTime() - now.getTime()) / DAY_MS),
    is_active: row.is_active && notAfter.getTime() > now.getTime(),
    uploaded_at: row.uploaded_at,
    titular: row.subject_cn || null,
    emisor_certificado: issuerNameOf(row.certificate_der),
    fecha_inicio_vigencia: santiagoDate(new Date(row.not_before)),
  }
}

/**
 * The issuing authority's name, read from the stored certificate (kept in clear: it is public) rather than a column,
 * so certificates loaded before this field existed show it too, with no migration. Its CN names the CA
 * ("E-CERTCHILE CA FIRMA ELECTRONICA SIMPLE"); an issuer without a CN is named by its O.
 */
function issuerNameOf(der: Uint8Array): string | null {
  let issuer: string
  try {
    issuer = new X509Certificate(der).issuer
  } catch {
    return null
  }
  const attrs = new Map<string, string>()
  for (const line of issuer.split('\n')) {
    const eq = line.indexOf('=')
    if (eq > 0 && !attrs.has(line.slice(0, eq))) attrs.set(line.slice(0, eq), unescapeDnValue(line.slice(eq + 1)))
  }
  return attrs.get('CN') || attrs.get('O') || null
}

/**
 * A name attribute as a person reads it: X509Certificate escapes RFC 4514's specials (`Acepta\, CA \"Clase 3\"`) and
 * may write bytes as `\HH` (UTF-8); both are undone, so the page shows `Acepta, CA "Clase 3"`.
 */
function unescapeDnValue(value: string): string {
  const bytes: number[] = []
  const chars = Array.from(value)
  for (let i = 0; i < chars.length; i++) {
    const hex = chars[i] === '\\' ? `${chars[i + 1] ?? ''}${chars[i + 2] ?? ''}` : ''
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16))
      i += 2
    } else {
      if (chars[i] === '\\' && i + 1 < chars.length) i += 1
      bytes.push(...Buffer.from(chars[i]!, 'utf8'))
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

export async function uploadCertificado(deps: Pick<Deps, 'store' | 'vault' | 'clock' | 'tasks'>, input: { empresaId: string; pfx: Uint8Array; password: string }): Promise<CertificadoStatus> {
  const { empresaId } = input
  // Opened in a worker: node-forge's key derivation takes seconds for files exported with many iterations (issue 17).
  const cert = await deps.tasks.run('open-pfx', { pfx: input.pfx, password: input.password })
  const now = deps.clock.now()
  assertUsable(cert, now)
  const rut = normalizeRut(cert.rutFirmante)
  if (!rut) throw new TimbreError('INVALID_CERTIFICATE', { message: `El RUT del titular del certificado (${cert.rutFirmante}) no es válido.` })
  const id = Bun.randomUUIDv7()
  const pkcs8 = cert.pkcs8
  const row = deps.store.db.transaction(
    (tx) =>
      insertActiveCertificado(tx, {
        id,
        empresa_id: empresaId,
        rut_firmante: rut,
        subject_cn: cert.subjectCn,
        serial_number: cert.serialNumber,
        not_before: isoTimestamp(cert.notBefore),
        not_after: isoTimestamp(cert.notAfter),
        certificate_der: Buffer.from(cert.certificateDerBase64, 'base64'),
        private_key_sealed: Buffer.from(deps.vault.seal(pkcs8, `certificado:${id}`)),
        is_active: true,
        uploaded_at: isoTimestamp(now),
      }),
    { behavior: 'immediate' },
  )
  return toCertificadoStatus(row, now)
}

/** The latest certificate, expired included; 404 CERTIFICATE_NOT_FOUND only if none was ever loaded (DESIGN §8). */
export function getCertificadoStatus(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string }): CertificadoStatus {
  const row = findLatestCertificado(deps.store.db, input.empresaId)
  if (!row) throw new TimbreError('CERTIFICATE_NOT_FOUND')
  return toCertificadoStatus(row, deps.clock.now())
}

export interface ActiveCertificado {
  readonly id: string
  readonly rutFirmante: string
  readonly signer: Signer
  /** The same identity in the form a worker task takes (workers/signing-keys.ts). */
  readonly material: SignerMaterial
}

// Opened from the vault once per certificate and kept: the KeyObject for signing here, the DER for the workers.
const opened = new Map<string, { signer: Signer; material: SignerMaterial }>()

function openedOf(deps: Pick<Deps, 'vault'>, row: CertificadoRow): { signer: Signer; material: SignerMaterial } {
  const cached = opened.get(row.id)
  if (cached) return cached
  const pkcs8 = deps.vault.open(row.private_key_sealed, `certificado:${row.id}`)
  const privateKey: KeyObject = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' })
  const jwk = privateKey.export({ format: 'jwk' })
  const signer: Signer = {
    privateKey,
    certificateDerBase64: Buffer.from(row.certificate_der).toString('base64'),
    modulusBase64: Buffer.from(String(jwk.n), 'base64url').toString('base64'),
    exponentBase64: Buffer.from(String(jwk.e), 'base64url').toString('base64'),
  }
  const entry = { signer, material: signerMaterial(row.id, signer, new Uint8Array(pkcs8)) }
  opened.set(row.id, entry)
  return entry
}

/**
 * What issuance and submission sign with; 422 CERTIFICATE_REQUIRED without an active, unexpired one (DESIGN §8). A step
 * of issueDte, submitDte and trackDte, not a use case: `now` is the instant the use case read from its clock.
 */
export function openActiveCertificado(deps: Pick<Deps, 'store' | 'vault'>, input: { empresaId: string; now: Date }): ActiveCertificado {
  const { now } = input
  const row = findActiveCertificado(deps.store.db, input.empresaId)
  if (!row || new Date(row.not_after).getTime() <= now.getTime() || new Date(row.not_before).getTime() > now.getTime())
    throw new TimbreError('CERTIFICATE_REQUIRED')
  const { signer, material } = openedOf(deps, row)
  return { id: row.id, rutFirmante: row.rut_firmante, signer, material }
}
