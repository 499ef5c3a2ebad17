// `serve --demo` (DESIGN §10): a ready-to-try company on an empty data dir, with a test certificate and simulator CAFs
// for every type, so the printed curl issues a real (simulated) invoice. The demo company is marked is_demo and never
// talks to the real SII.
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { listEmpresas as listRows } from '../db/empresa-store'
import { authenticateApiKey, createApiKey } from './api-keys'
import { createEmpresa, toEmpresaRecord, type EmpresaRecord } from './empresas'
import { TimbreError } from '../errors'
import { santiagoDate } from '../clock'
import { makeDemoPfx } from '../crypto/demo-certificate'
import { findActiveCertificado } from '../db/certificado-store'
import { foliosLeft, lastFolioHasta } from '../db/caf-store'
import { TIPOS_DTE } from '../domain/emision'
import { issueCaf, simulatorAuthorityKey } from '../sii/simulator/caf-issuer'
import { SIMULATOR_IDK } from '../xml/authority-keys'
import { registerCaf } from './cafs'
import { uploadCertificado } from './certificados'
import type { Deps } from './deps'

export const DEMO_RUT = '76543210-3'
export const DEMO_SIGNER_RUT = '11111111-1'
/** Each demo CAF authorises this many folios; a used-up type gets the next range on the next start. */
const DEMO_FOLIOS = 1000
/** The demo key is kept in clear beside the database so every `npm start` can print it; only the demo company's. */
export const DEMO_KEY_FILE = 'demo-api-key'

export type DemoOutcome =
  | { readonly kind: 'ready'; readonly empresa: EmpresaRecord; readonly apiKey: string; readonly created: boolean; readonly invoiceIdempotencyKey: string }
  | { readonly kind: 'skipped'; readonly reason: string }

/**
 * The Idempotency-Key of the demo's printed issuance curl: derived from the demo company's id (a UUIDv8 over SHA-256),
 * so it is the same at every start of the same data dir and running the printed command again never issues a second
 * invoice (within the keys' 24 h retention, spec 4.8).
 */
export function demoInvoiceKey(empresaId: string): string {
  const h = createHash('sha256').update(`timbre-demo-invoice:${empresaId}`).digest()
  h[6] = (h[6]! & 0x0f) | 0x80  // version 8: custom
  h[8] = (h[8]! & 0x3f) | 0x80  // RFC 4122 variant
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`
}

function storedDemoKey(deps: Pick<Deps, 'store' | 'clock'>, dataDir: string): string | null {
  const path = join(dataDir, DEMO_KEY_FILE)
  if (!existsSync(path)) return null
  const key = readFileSync(path, 'utf8').trim()
  try {
    authenticateApiKey(deps, { key })
    return key
  } catch (err) {
    if (err instanceof TimbreError) return null
    throw err
  }
}

/** Certificate and one active CAF per type, made only where missing (a restart keeps what exists). */
async function provisionDemo(deps: Pick<Deps, 'store' | 'vault' | 'config' | 'clock' | 'tasks'>, empresa: EmpresaRecord, now: Date): Promise<void> {
  if (!findActiveCertificado(deps.store.db, empresa.id)) {
    const pfx = makeDemoPfx({ rutFirmante: DEMO_SIGNER_RUT, nombre: 'USUARIO DEMO TIMBRE', password: 'demo', now, validDays: 365 })
    await uploadCertificado(deps, { empresaId: empresa.id, pfx, password: 'demo' })
  }
  const today = santiagoDate(now)
  for (const tipo of TIPOS_DTE) {
    if (foliosLeft(deps.store.db, empresa.id, tipo, today) > 0) continue
    const desde = lastFolioHasta(deps.store.db, empresa.id, tipo) + 1
    const xml = issueCaf({
      rut: empresa.rut,
      razonSocial: empresa.razon_social,
      tipoDte: tipo,
      folioDesde: desde,
      folioHasta: desde + DEMO_FOLIOS - 1,
      fechaAutorizacion: today,
      idk: SIMULATOR_IDK,
      authorityPrivateKey: simulatorAuthorityKey(),
    })
    await registerCaf(deps, { empresaId: empresa.id, tipo_dte: tipo, caf_xml: xml })
  }
}

/** Into `deps.config.dataDir`, beside the database, goes the demo key file. */
export async function ensureDemo(deps: Pick<Deps, 'store' | 'vault' | 'config' | 'clock' | 'tasks'>): Promise<DemoOutcome> {
  const now = deps.clock.now()
  const dataDir = deps.config.dataDir
  const rows = listRows(deps.store.db)
  const existing = rows.find((r) => r.is_demo)
  if (!existing && rows.length > 0)
    return { kind: 'skipped', reason: 'el directorio de datos ya tiene empresas reales; --demo solo actúa sobre uno vacío' }
  const empresa = existing
    ? toEmpresaRecord(existing)
    : createEmpresa(deps, {
        rut: DEMO_RUT,
        razon_social: 'Comercial Demostración SpA',
        giro: 'Venta al por menor de artículos de ferretería y materiales de construcción',
        acteco: [475200],
        direccion: 'Av. Providencia 1234, oficina 56',
        comuna: 'Providencia',
        ciudad: 'Santiago',
        ambiente: 'certificacion',
        fecha_resolucion: '2014-08-22',
        numero_resolucion: 0,
        is_demo: true,
      })
  await provisionDemo(deps, empresa, now)
  const kept = storedDemoKey(deps, dataDir)
  if (kept) return { kind: 'ready', empresa, apiKey: kept, created: !existing, invoiceIdempotencyKey: demoInvoiceKey(empresa.id) }
  const { key } = createApiKey(deps, { empresaId: empresa.id, write: true, nombre: 'demo' })
  const path = join(dataDir, DEMO_KEY_FILE)
  writeFileSync(path, `${key}\n`, { mode: 0o600 })
  chmodSync(path, 0o600)
  return { kind: 'ready', empresa, apiKey: key, created: !existing, invoiceIdempotencyKey: demoInvoiceKey(empresa.id) }
}
