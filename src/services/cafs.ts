// CAF registration and queries (spec 4.2, DESIGN §8): every check of the file, the company and the range, the folio
// key sealed at rest.
import { isoTimestamp, santiagoDate } from '../clock'
import { findCafById, findOverlappingCaf, huecosDeCaf, insertCaf, listCafs as listRows } from '../db/caf-store'
import { findEmpresaById } from '../db/empresa-store'
import { setCafAlertArmed } from '../db/webhook-store'
import type { Db } from '../db/open'
import type { CafRow } from '../db/schema'
import { isTipoDte } from '../domain/emision'
import { cafVenceEl, foliosDisponibles, isCafActive, tramosDeCaf, type Rango, type Tramo } from '../domain/folios'
import { TimbreError } from '../errors'
import { IDK_AMBIENTE } from '../xml/authority-keys'
import type { TaskOutput } from '../workers/tasks'
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
  /** Last day its folios serve (FA + 180 days for 33, 43, 46, 56 and 61), or null. */
  readonly vence_el: string | null
  /** The annulment of its unused folios at the SII (DESIGN §17), or null while it has none. */
  readonly anulacion: {
    /** en_curso: closed to issuance while the SII is asked, or after an attempt whose outcome is unknown. */
    readonly estado: 'en_curso' | 'anulado'
    /** The ranges the SII annulled. */
    readonly rangos: Rango[]
    readonly motivo: string | null
    readonly anulado_at: string | null
  } | null
  /** The folio gap report: the range in stretches (usado, disponible, por_anular, en_anulacion, anulado). */
  readonly tramos: Tramo[]
}

/** The record of a CAF; `db` reads the folios below its next one that have no document (the gap report's holes). */
export function toCafRecord(db: Db, row: CafRow, now: Date): CafRecord {
  const today = santiagoDate(now)
  return {
    id: row.id,
    tipo_dte: row.tipo_dte,
    folio_desde: row.folio_desde,
    folio_hasta: row.folio_hasta,
    folios_disponibles: foliosDisponibles(row),
    ambiente: row.ambiente,
    fecha_autorizacion: row.fecha_autorizacion,
    is_active: isCafActive(row, today),
    created_at: row.created_at,
    vence_el: row.vence_el,
    anulacion: row.anulacion_estado === null
      ? null
      : { estado: row.anulacion_estado, rangos: row.folios_anulados ?? [], motivo: row.anulacion_motivo, anulado_at: row.anulado_at },
    tramos: tramosDeCaf(row, today, huecosDeCaf(db, row)),
  }
}

/** Expired or annulled with folios never used nor annulled (FAQ 6970): the housekeeping list (DESIGN §17). */
export function isPorAnular(record: CafRecord): boolean {
  return record.tramos.some((t) => t.estado === 'por_anular')
}

function invalidCaf(message: string): TimbreError {
  return new TimbreError('INVALID_CAF', { message })
}

/** IDK 900 (the simulator's authority) only off the real SII, or for the demo company (DESIGN §8). */
function acceptsSimulatedCafs(deps: Pick<Deps, 'config'>, isDemo: boolean): boolean {
  return deps.config.sii.kind !== 'sii' || isDemo
}

/** A CAF file read, verified and checked against its company: ready to store (storeCheckedCaf). */
export interface CheckedCaf {
  readonly empresaId: string
  readonly caf: TaskOutput<'read-caf'>
  readonly ambiente: 'certificacion' | 'produccion'
  readonly venceEl: string | null
}


/** Every check of POST /caf (spec 4.2): the file, its signature, the company, the type, the ambiente, the expiry. */
export async function checkCaf(deps: Pick<Deps, 'store' | 'config' | 'clock' | 'tasks'>, input: { empresaId: string; tipo_dte: number; caf_xml: string }): Promise<CheckedCaf> {
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
  return { empresaId, caf, ambiente, venceEl }
}

/** Stores a checked CAF inside the caller's transaction: a range that overlaps a registered one is CAF_RANGE_EXISTS. */
export function storeCheckedCaf(tx: Db, deps: Pick<Deps, 'vault'>, checked: CheckedCaf, now: Date): CafRow {
  const { empresaId, caf, ambiente, venceEl } = checked
  const overlap = findOverlappingCaf(tx, empresaId, caf.tipoDte, caf.folioDesde, caf.folioHasta)
  if (overlap)
    throw new TimbreError('CAF_RANGE_EXISTS', {
      context: { caf_id: overlap.id, folio_desde: overlap.folio_desde, folio_hasta: overlap.folio_hasta },
    })
  const id = Bun.randomUUIDv7()
  const sealedKey = Buffer.from(deps.vault.seal(caf.pkcs8, `caf:${id}`))
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
}

export async function registerCaf(deps: Pick<Deps, 'store' | 'vault' | 'config' | 'clock' | 'tasks'>, input: { empresaId: string; tipo_dte: number; caf_xml: string }): Promise<CafRecord> {
  const checked = await checkCaf(deps, input)
  const now = deps.clock.now()
  const row = deps.store.db.transaction((tx) => storeCheckedCaf(tx, deps, checked, now), { behavior: 'immediate' })
  return toCafRecord(deps.store.db, row, now)
}

export function getCaf(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; id: string }): CafRecord {
  const row = findCafById(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return toCafRecord(deps.store.db, row, deps.clock.now())
}

/** `GET /caf` (DESIGN §8, §17): `tipo_dte`, `is_active` and `por_anular` as they come in the query; an unknown type is VALIDATION_ERROR. */
export function listCafs(
  deps: Pick<Deps, 'store' | 'clock'>,
  query: { readonly empresaId: string; readonly tipo_dte?: string; readonly is_active?: string; readonly por_anular?: string; readonly afterId: string | null; readonly limit: number },
): CafRecord[] {
  const now = deps.clock.now()
  const tipoDte = query.tipo_dte === undefined ? undefined : Number(query.tipo_dte)
  if (tipoDte !== undefined && !isTipoDte(tipoDte))
    throw new TimbreError('VALIDATION_ERROR', { details: [{ field: 'tipo_dte', code: 'INVALID_VALUE', message: 'Tipo de DTE desconocido.' }] })
  const isActive = query.is_active === undefined ? undefined : query.is_active === 'true'
  if (query.por_anular === undefined) {
    return listRows(deps.store.db, query.empresaId, { tipoDte, isActive, afterId: query.afterId, limit: query.limit, today: santiagoDate(now) })
      .map((r) => toCafRecord(deps.store.db, r, now))
  }
  // The housekeeping list (DESIGN §17): whether folios remain to annul depends on the documents stored (the gap
  // report), so the filter runs over the company's CAFs here; a company has a few hundred at most.
  const porAnular = query.por_anular === 'true'
  return listRows(deps.store.db, query.empresaId, { tipoDte, isActive, afterId: query.afterId, limit: null, today: santiagoDate(now) })
    .map((r) => toCafRecord(deps.store.db, r, now))
    .filter((c) => isPorAnular(c) === porAnular)
    .slice(0, query.limit)
}
