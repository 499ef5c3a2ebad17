// Folio ranges (DESIGN §8): which CAFs expire, and the arithmetic of what is left. Pure.

/** Types whose CAF folios expire 6 months after authorisation (SII Res. Ex. 11/2019, DESIGN §8: FA + 180 days). */
export const TIPOS_CON_VENCIMIENTO: ReadonlySet<number> = new Set([33, 43, 46, 56, 61])
export const CAF_VIGENCIA_DIAS = 180

/** Last date (YYYY-MM-DD) a CAF's folios may be used, or null when they do not expire. */
export function cafVenceEl(tipoDte: number, fechaAutorizacion: string): string | null {
  if (!TIPOS_CON_VENCIMIENTO.has(tipoDte)) return null
  return addDays(fechaAutorizacion, CAF_VIGENCIA_DIAS)
}

/** Folios never handed out; none once the CAF's annulment started (DESIGN §17). */
export function foliosDisponibles(caf: { readonly next_folio: number; readonly folio_hasta: number; readonly anulacion_estado?: string | null }): number {
  if (caf.anulacion_estado != null) return 0
  return Math.max(0, caf.folio_hasta - caf.next_folio + 1)
}

type CafStock = { readonly next_folio: number; readonly folio_hasta: number; readonly vence_el: string | null; readonly anulacion_estado?: string | null }

/** Active while it has free folios and, for expiring types, until its last day (DESIGN §8). `today` in Santiago. */
export function isCafActive(caf: CafStock, today: string): boolean {
  return foliosDisponibles(caf) > 0 && (caf.vence_el === null || today <= caf.vence_el)
}

/** `YYYY-MM-DD` plus `days`. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

/**
 * Free folios that will still serve `dias` days from `today`: what automatic mode weighs against its threshold (DESIGN
 * §17). A CAF about to expire does not count, so one rule asks for a CAF both when the stock runs low and when it is
 * about to expire; once the new CAF arrives its folios count and the rule is quiet, though the old one still serves first.
 */
export function foliosUtiles(cafs: readonly CafStock[], today: string, dias: number): number {
  const horizon = addDays(today, dias)
  return cafs.filter((c) => isCafActive(c, today) && (c.vence_el === null || c.vence_el > horizon)).reduce((n, c) => n + foliosDisponibles(c), 0)
}

/** The stretches of a CAF's range, in order: the folio gap report (DESIGN §17). */
export type EstadoTramo =
  /** Folios of stored documents. */
  | 'usado'
  /** Never used, and the CAF still hands them out (a hole below the next folio is handed out again first). */
  | 'disponible'
  /** Never used and no longer handed out (the CAF expired, or was annulled and these were left): to annul (FAQ 6970). */
  | 'por_anular'
  /** Never used, in a CAF closed for an annulment that is running or whose outcome is unknown. */
  | 'en_anulacion'
  | 'anulado'

export interface Rango {
  readonly desde: number
  readonly hasta: number
}

export interface Tramo extends Rango {
  readonly estado: EstadoTramo
}

type CafRango = CafStock & { readonly folio_desde: number; readonly folios_anulados?: readonly Rango[] | null }

/**
 * The range in stretches. `huecos` are the folios below `next_folio` with no stored document (a crash's, or given back
 * by a failed signature); without them every folio below `next_folio` is used. Computed over the points where the state
 * can change, not folio by folio: a CAF of 100 000 folios is a handful of stretches.
 */
export function tramosDeCaf(caf: CafRango, today: string, huecos: readonly number[] = []): Tramo[] {
  const anulados = caf.folios_anulados ?? []
  const end = caf.folio_hasta + 1
  const cuts = new Set<number>([caf.folio_desde, end, Math.min(Math.max(caf.next_folio, caf.folio_desde), end)])
  for (const r of anulados) cuts.add(r.desde).add(r.hasta + 1)
  for (const h of huecos) cuts.add(h).add(h + 1)
  const points = [...cuts].filter((p) => p >= caf.folio_desde && p <= end).sort((a, b) => a - b)
  const huecoSet = new Set(huecos)
  const expired = caf.vence_el !== null && today > caf.vence_el
  const estadoOf = (folio: number): EstadoTramo => {
    if (anulados.some((r) => folio >= r.desde && folio <= r.hasta)) return 'anulado'
    if (folio < caf.next_folio && !huecoSet.has(folio)) return 'usado'
    if (caf.anulacion_estado === 'en_curso') return 'en_anulacion'
    if (caf.anulacion_estado === 'anulado' || expired) return 'por_anular'
    return 'disponible'
  }
  const tramos: Tramo[] = []
  for (let k = 0; k + 1 < points.length; k++) {
    const desde = points[k]!
    const hasta = points[k + 1]! - 1
    const estado = estadoOf(desde)
    const last = tramos.at(-1)
    if (last && last.estado === estado && last.hasta + 1 === desde) tramos[tramos.length - 1] = { desde: last.desde, hasta, estado }
    else tramos.push({ desde, hasta, estado })
  }
  return tramos
}

/** Folios never used nor annulled, as ranges: what an annulment asks the SII to annul. */
export function rangosSinUsar(caf: CafRango, today: string, huecos: readonly number[] = []): Rango[] {
  return tramosDeCaf(caf, today, huecos)
    .filter((t) => t.estado !== 'usado' && t.estado !== 'anulado')
    .map(({ desde, hasta }) => ({ desde, hasta }))
}

/** The ranges without `folios` (those still being signed, say), split where needed. */
export function quitarFolios(rangos: readonly Rango[], folios: ReadonlySet<number>): Rango[] {
  const out: Rango[] = []
  for (const r of rangos) {
    const inside = [...folios].filter((f) => f >= r.desde && f <= r.hasta).sort((a, b) => a - b)
    let from = r.desde
    for (const f of inside) {
      if (f > from) out.push({ desde: from, hasta: f - 1 })
      from = f + 1
    }
    if (from <= r.hasta) out.push({ desde: from, hasta: r.hasta })
  }
  return out
}

/** Ranges in order, adjacent ones joined. */
export function unirRangos(rangos: readonly Rango[]): Rango[] {
  const out: Rango[] = []
  for (const r of [...rangos].sort((a, b) => a.desde - b.desde)) {
    const last = out.at(-1)
    if (last && r.desde <= last.hasta + 1) out[out.length - 1] = { desde: last.desde, hasta: Math.max(last.hasta, r.hasta) }
    else out.push({ desde: r.desde, hasta: r.hasta })
  }
  return out
}

export function rangesOverlap(a: { readonly desde: number; readonly hasta: number }, b: { readonly desde: number; readonly hasta: number }): boolean {
  return a.desde <= b.hasta && b.desde <= a.hasta
}
