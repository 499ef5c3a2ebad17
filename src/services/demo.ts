// `serve --demo` (DESIGN §10): a ready-to-try company on an empty data dir. The demo company is marked is_demo and never
// talks to the real SII. Later issues add its certificate and simulator CAFs here.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { listEmpresas as listRows } from '../db/empresa-store'
import type { Store } from '../db/open'
import { authenticateApiKey, createApiKey } from './api-keys'
import { createEmpresa, toEmpresaRecord, type EmpresaRecord } from './empresas'
import { TimbreError } from '../errors'

export const DEMO_RUT = '76543210-3'
/** The demo key is kept in clear beside the database so every `npm start` can print it; only the demo company's. */
export const DEMO_KEY_FILE = 'demo-api-key'

export type DemoOutcome =
  | { readonly kind: 'ready'; readonly empresa: EmpresaRecord; readonly apiKey: string; readonly created: boolean }
  | { readonly kind: 'skipped'; readonly reason: string }

function storedDemoKey(store: Store, dataDir: string, now: Date): string | null {
  const path = join(dataDir, DEMO_KEY_FILE)
  if (!existsSync(path)) return null
  const key = readFileSync(path, 'utf8').trim()
  try {
    authenticateApiKey(store, key, now)
    return key
  } catch (err) {
    if (err instanceof TimbreError) return null
    throw err
  }
}

export function ensureDemo(store: Store, dataDir: string, now: Date): DemoOutcome {
  const rows = listRows(store.db)
  const existing = rows.find((r) => r.is_demo)
  if (!existing && rows.length > 0)
    return { kind: 'skipped', reason: 'el directorio de datos ya tiene empresas reales; --demo solo actúa sobre uno vacío' }
  const empresa = existing
    ? toEmpresaRecord(existing)
    : createEmpresa(
        store,
        {
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
        },
        now,
      )
  const kept = storedDemoKey(store, dataDir, now)
  if (kept) return { kind: 'ready', empresa, apiKey: kept, created: !existing }
  const { key } = createApiKey(store, { empresaId: empresa.id, write: true, nombre: 'demo', now })
  const path = join(dataDir, DEMO_KEY_FILE)
  writeFileSync(path, `${key}\n`, { mode: 0o600 })
  chmodSync(path, 0o600)
  return { kind: 'ready', empresa, apiKey: key, created: !existing }
}
