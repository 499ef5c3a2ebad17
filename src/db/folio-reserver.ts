// Folio reservations (issue 17, DESIGN §11). Issuance signs in a worker between taking a folio and storing its
// document, so the folio is reserved here, in the main thread, serially, and committed later with the document
// (`next_folio` only ever moves up to past the highest stored folio: caf-store.ts advanceNextFolio). Nothing leaves the
// process before the commit, so a folio reserved but never stored was never used: a failed signature or commit puts it
// back here (handed out again first), and after a crash, when this memory is gone, the restarted server finds those
// holes again just below `next_folio` and reuses them. No folio is used twice: the unique (empresa_id, tipo_dte, folio)
// index refuses a second document, and this is the only place that hands folios out.
import { and, asc, eq, gt, gte, isNull, lt, lte, or, sql } from 'drizzle-orm'
import { TimbreError } from '../errors'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { cafs, dtes, type CafRow } from './schema'

/**
 * How far below a CAF's next folio an unsettled folio may lie. Reservations past it wait (503) until the oldest settles,
 * which bounds where a restart must look for holes: the last WINDOW folios below `next_folio` (one index range read,
 * a few ms). At 1 000 DTE/s a signature stuck for its whole 10 s limit is 10 000 folios behind: well inside.
 */
export const HOLE_WINDOW = 65_536

interface CafFolios {
  readonly row: CafRow
  /** The next never-reserved folio. */
  next: number
  /** Folios given back (a failed signature or commit, or holes found after a restart), ascending: handed out first. */
  readonly free: number[]
  /** Reserved and not settled yet. */
  readonly pending: Set<number>
}

export interface Reservation {
  readonly caf: CafRow
  readonly folio: number
}

export class FolioReserver {
  /** `window`: HOLE_WINDOW; smaller only in tests. */
  constructor(private readonly window: number = HOLE_WINDOW) {}

  private readonly byCaf = new Map<string, CafFolios>()
  /** CAFs closed to issuance by an annulment in this process (the database's `anulacion_estado` says it across restarts). */
  private readonly closed = new Set<string>()
  /** (empresa, tipo) pairs whose spent CAFs were checked for holes since this process started. */
  private readonly recovered = new Set<string>()

  /** The lowest free folio of the oldest active CAF of the type, reserved; undefined when the type has none (DESIGN §8). */
  reserve(db: Db, empresaId: string, tipoDte: number, today: string): Reservation | undefined {
    const pair = `${empresaId}|${tipoDte}`
    if (!this.recovered.has(pair)) {
      for (const row of spentCafs(db, empresaId, tipoDte, today)) this.stateOf(db, row)
      this.recovered.add(pair)
    }
    for (const st of this.candidates(db, empresaId, tipoDte, today)) {
      const folio = this.take(st)
      if (folio !== undefined) return { caf: st.row, folio }
    }
    return undefined
  }

  /**
   * Closes a CAF to issuance before its unused folios are annulled (DESIGN §17) and answers the first folio never
   * handed out: the annulment runs from there to the end of the range. Reservations still signing lie below it and
   * commit or come back as holes; a closed CAF hands out neither.
   */
  close(db: Db, row: CafRow): number {
    this.closed.add(row.id)
    return Math.max(this.stateOf(db, row).next, row.next_folio)
  }

  /** Folios of the CAF reserved and not settled yet (still being signed): an annulment leaves them out. */
  pendingOf(cafId: string): ReadonlySet<number> {
    return new Set(this.byCaf.get(cafId)?.pending ?? [])
  }

  /** Opens a CAF closed by `close` again (its annulment failed before the SII could act on it). */
  reopen(cafId: string): void {
    this.closed.delete(cafId)
  }

  /** A reservation's end: stored (its document committed) or given back (nothing with it left the process). */
  settle(reservation: Reservation, stored: boolean): void {
    const st = this.byCaf.get(reservation.caf.id)
    if (st === undefined || !st.pending.delete(reservation.folio)) return
    if (!stored) insertSorted(st.free, reservation.folio)
  }

  /** Active CAFs in the database plus spent ones that still have folios given back here, oldest first. */
  private candidates(db: Db, empresaId: string, tipoDte: number, today: string): CafFolios[] {
    const active = activeCafs(db, empresaId, tipoDte, today).filter((row) => !this.closed.has(row.id)).map((row) => this.stateOf(db, row))
    const withFree = [...this.byCaf.values()].filter(
      (st) => st.free.length > 0 && !this.closed.has(st.row.id) && st.row.empresa_id === empresaId && st.row.tipo_dte === tipoDte && (st.row.vence_el === null || st.row.vence_el >= today),
    )
    if (withFree.length === 0) return active
    return [...new Set([...active, ...withFree])].sort((a, b) => (a.row.id < b.row.id ? -1 : 1))
  }

  private take(st: CafFolios): number | undefined {
    let folio = st.free.shift()
    if (folio === undefined) {
      if (st.next > st.row.folio_hasta) return undefined
      if (st.next - lowest(st) >= this.window)
        throw new TimbreError('SERVICE_UNAVAILABLE', { message: 'Hay demasiados documentos en proceso de firma para este tipo; reintente en unos segundos.' })
      folio = st.next++
    }
    st.pending.add(folio)
    return folio
  }

  /** The CAF's in-memory state, made on first sight from its row and the holes just below its next folio. */
  private stateOf(db: Db, row: CafRow): CafFolios {
    const known = this.byCaf.get(row.id)
    if (known) return known
    const st: CafFolios = { row, next: row.next_folio, free: holesBelow(db, row, this.window), pending: new Set() }
    this.byCaf.set(row.id, st)
    return st
  }
}

function lowest(st: CafFolios): number {
  let min = st.free[0] ?? st.next
  for (const f of st.pending) if (f < min) min = f
  return min
}

function insertSorted(list: number[], value: number): void {
  let i = list.length
  while (i > 0 && list[i - 1]! > value) i--
  list.splice(i, 0, value)
}

/** Folios of the last HOLE_WINDOW below `next_folio` with no stored document: reserved when a previous run stopped. */
function holesBelow(db: Db, row: CafRow, window: number): number[] {
  const from = Math.max(row.folio_desde, row.next_folio - window)
  if (from >= row.next_folio) return []
  const stored = db
    .select({ folio: dtes.folio })
    .from(dtes)
    .where(and(eq(dtes.empresa_id, row.empresa_id), eq(dtes.tipo_dte, row.tipo_dte), gte(dtes.folio, from), lt(dtes.folio, row.next_folio)))
    .all()
  if (stored.length === row.next_folio - from) return []
  const seen = new Set(stored.map((r) => r.folio))
  const holes: number[] = []
  for (let f = from; f < row.next_folio; f++) if (!seen.has(f)) holes.push(f)
  return holes
}

const notExpired = (today: string) => or(isNull(cafs.vence_el), gte(cafs.vence_el, today))

// Both run for every issuance: prepared once per connection (db/prepared.ts).
const statements = preparedStatements((db) => ({
  active: db
    .select()
    .from(cafs)
    .where(
      and(
        eq(cafs.empresa_id, sql.placeholder('empresaId')),
        eq(cafs.tipo_dte, sql.placeholder('tipoDte')),
        lte(cafs.next_folio, cafs.folio_hasta),
        or(isNull(cafs.vence_el), gte(cafs.vence_el, sql.placeholder('today'))),
        isNull(cafs.anulacion_estado),
      ),
    )
    .orderBy(asc(cafs.id))
    .prepare(),
  advance: db
    .update(cafs)
    .set({ next_folio: sql`max(${cafs.next_folio}, ${sql.placeholder('after')})` })
    .where(eq(cafs.id, sql.placeholder('cafId')))
    .prepare(),
}))

function activeCafs(db: Db, empresaId: string, tipoDte: number, today: string): CafRow[] {
  return statements(db).active.all({ empresaId, tipoDte, today })
}

function spentCafs(db: Db, empresaId: string, tipoDte: number, today: string): CafRow[] {
  return db
    .select()
    .from(cafs)
    .where(and(eq(cafs.empresa_id, empresaId), eq(cafs.tipo_dte, tipoDte), gt(cafs.next_folio, cafs.folio_hasta), notExpired(today), isNull(cafs.anulacion_estado)))
    .all()
}

/** Stores a folio's use: `next_folio` moves past it unless it already has (documents commit out of folio order). */
export function advanceNextFolio(db: Db, cafId: string, folio: number): void {
  statements(db).advance.run({ cafId, after: folio + 1 })
}

const reservers = new WeakMap<Db, FolioReserver>()

/** The one reserver of this connection: folios are handed out by one place per process (the serve lock: one per data dir). */
export function folioReserverOf(db: Db): FolioReserver {
  let reserver = reservers.get(db)
  if (!reserver) reservers.set(db, (reserver = new FolioReserver()))
  return reserver
}
