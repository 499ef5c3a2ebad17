// CAF registration and queries (spec 4.2, DESIGN §8): every check of the file, the company and the range, the folio
// key sealed at rest.
import { isoTimestamp, santiagoDate } from '../clock'
import { findCafById, findOverlappingCaf, insertCaf, listCafs as listRows } from '../db/caf-store'
import { findEmpresaById } from '../db/empresa-store'
import { setCafAlertArmed } from '../db/webhook-store'
import type { CafRow } from '../db/schema'
import { isTipoDte } from '../domain/emision'
import { cafVenceEl, foliosDisponibles, isCafActive } from '../domain/folios'
import { TimbreError } from '../errors'
import { IDK_AMBIENTE } from '../xml/authority-keys'
import type { Deps } from './deps'

/** Spec 2.12. */
export interface CafRecord {
  readonly id: string
  readonly tipo_dte: number
  readonly folio_desde: number
  readonly folio_hasta: number
  readonly folios_disponibles: number
  readonly ambiente: 'certificacion' | 'produccion'
  readonly fecha_autorizacion: string
  readonly is_active: boolean
  readonly created_at: string
}

export function toCafRecord(row: CafRow, now: Date): CafRecord {
  return {
    id: row.id,
    tipo_dte: row.tipo_dte,
    folio_desde: row.folio_desde,
    folio_hasta: row.folio_hasta,
    folios_disponibles: foliosDisponibles(row),
    ambiente: row.ambiente,
    fecha_autorizacion: row.fecha_autorizacion,
    is_active: isCafActive(row, santiagoDate(now)),
    created_at: row.created_at,
  }
}

function invalidCaf(message: string): TimbreError {
  return new TimbreError('INVALID_CAF', { message })
}

/** IDK 900 (the simulator's authority) only off the real SII, or for the demo company (DESIGN §8). */
function acceptsSimulatedCafs(deps: Pick<Deps, 'config'>, isDemo: boolean): boolean {
  return deps.config.sii.kind !== 'sii' || isDemo
}

export async function registerCaf(deps: Pick<Deps, 'store' | 'vault' | 'config' | 'clock' | 'tasks'>, input: { empresaId: string; tipo_dte: number; caf_xml: string }): Promise<CafRecord> {
  const { empresaId } = input
  const empresa = findEmpresaById(deps.store.db, empresaId)
  if (!empresa) throw new Error(`empresa ${empresaId} of a valid credential is missing`)
  // Parsed and verified (FRMA, RSASK ↔ RSAPK) in a worker: a large CAF file is not parsed on the event loop (issue 17).
  const caf = await deps.tasks.run('read-caf', { cafXml: input.caf_xml, allowSimulator: acceptsSimulatedCafs(deps, empresa.is_demo) })
  const now = deps.clock.now()
  if (caf.rutEmisor !== empresa.rut) throw invalidCaf(`El CAF es del RUT ${caf.rutEmisor}; la empresa es ${empresa.rut}.`)
  if (caf.tipoDte !== input.tipo_dte) throw invalidCaf(`El CAF es de tipo ${caf.tipoDte}, no de tipo ${input.tipo_dte}.`)
  const ambiente = IDK_AMBIENTE[caf.idk]
  if (ambiente !== empresa.ambiente) throw invalidCaf(`El CAF es de ${ambiente ?? `IDK ${caf.idk}`}; la empresa opera en ${empresa.ambiente}.`)
  const venceEl = cafVenceEl(caf.tipoDte, caf.fechaAutorizacion)
  if (venceEl !== null && santiagoDate(now) > venceEl)
    throw invalidCaf(`El CAF venció el ${venceEl}: los folios de tipo ${caf.tipoDte} sirven 180 días desde su autorización (${caf.fechaAutorizacion}).`)
  const id = Bun.randomUUIDv7()
  const sealedKey = Buffer.from(deps.vault.seal(caf.pkcs8, `caf:${id}`))
  const row = deps.store.db.transaction(
    (tx) => {
      const overlap = findOverlappingCaf(tx, empresaId, caf.tipoDte, caf.folioDesde, caf.folioHasta)
      if (overlap)
        throw new TimbreError('CAF_RANGE_EXISTS', {
          context: { caf_id: overlap.id, folio_desde: overlap.folio_desde, folio_hasta: overlap.folio_hasta },
        })
      // A new CAF re-arms caf.low_stock for its type (DESIGN §7).
      setCafAlertArmed(tx, empresaId, caf.tipoDte, true)
      return insertCaf(tx, {
        id,
        empresa_id: empresaId,
        tipo_dte: caf.tipoDte,
        folio_desde: caf.folioDesde,
        folio_hasta: caf.folioHasta,
        next_folio: caf.folioDesde,
        fecha_autorizacion: caf.fechaAutorizacion,
        vence_el: venceEl,
        idk: caf.idk,
        ambiente,
        caf_xml: caf.cafXml,
        private_key_sealed: sealedKey,
        created_at: isoTimestamp(now),
      })
    },
    { behavior: 'immediate' },
  )
  return toCafRecord(row, now)
}

export function getCaf(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; id: string }): CafRecord {
  const row = findCafById(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return toCafRecord(row, deps.clock.now())
}

/** `GET /caf` (DESIGN §8): `tipo_dte` and `is_active` as they come in the query; an unknown type is VALIDATION_ERROR. */
export function listCafs(
  deps: Pick<Deps, 'store' | 'clock'>,
  query: { readonly empresaId: string; readonly tipo_dte?: string; readonly is_active?: string; readonly afterId: string | null; readonly limit: number },
): CafRecord[] {
  const now = deps.clock.now()
  const tipoDte = query.tipo_dte === undefined ? undefined : Number(query.tipo_dte)
  if (tipoDte !== undefined && !isTipoDte(tipoDte))
    throw new TimbreError('VALIDATION_ERROR', { details: [{ field: 'tipo_dte', code: 'INVALID_VALUE', message: 'Tipo de DTE desconocido.' }] })
  const isActive = query.is_active === undefined ? undefined : query.is_active === 'true'
  return listRows(deps.store.db, query.empresaId, { tipoDte, isActive, afterId: query.afterId, limit: query.limit, today: santiagoDate(now) }).map((r) => toCafRecord(r, now))
}
