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

/** The stretches of a CAF's range, in order: what the folio gap report shows (DESIGN §17). */
export type EstadoTramo =
  /** Folios of stored documents. */
  | 'usado'
  | 'disponible'
  /** Expired unused: to annul at the SII (FAQ 6970). */
  | 'por_anular'
  | 'en_anulacion'
  | 'anulado'
  /** Unused and outside the annulled range (given back by a failed signature just before the annulment). */
  | 'sin_usar'

export function tramosDeCaf(
  caf: CafStock & { readonly folio_desde: number; readonly anulado_desde?: number | null; readonly anulado_hasta?: number | null },
  today: string,
): Array<{ readonly desde: number; readonly hasta: number; readonly estado: EstadoTramo }> {
  const tramos: Array<{ desde: number; hasta: number; estado: EstadoTramo }> = []
  const push = (desde: number, hasta: number, estado: EstadoTramo) => {
    if (hasta >= desde) tramos.push({ desde, hasta, estado })
  }
  const libreDesde = Math.min(caf.next_folio, caf.folio_hasta + 1)
  push(caf.folio_desde, libreDesde - 1, 'usado')
  if (caf.anulacion_estado === 'anulado' && caf.anulado_desde != null && caf.anulado_hasta != null) {
    // Folios between the last used and the annulled range (handed out and given back before the annulment) stay unused.
    push(libreDesde, caf.anulado_desde - 1, 'sin_usar')
    push(caf.anulado_desde, caf.anulado_hasta, 'anulado')
    push(caf.anulado_hasta + 1, caf.folio_hasta, 'sin_usar')
    return tramos
  }
  const expired = caf.vence_el !== null && today > caf.vence_el
  push(libreDesde, caf.folio_hasta, caf.anulacion_estado === 'en_curso' ? 'en_anulacion' : expired ? 'por_anular' : 'disponible')
  return tramos
}

export function rangesOverlap(a: { readonly desde: number; readonly hasta: number }, b: { readonly desde: number; readonly hasta: number }): boolean {
  return a.desde <= b.hasta && b.desde <= a.hasta
}
