// Folio ranges (DESIGN §8): which CAFs expire, and the arithmetic of what is left. Pure.

/** Types whose CAF folios expire 6 months after authorisation (SII Res. Ex. 11/2019, DESIGN §8: FA + 180 days). */
export const TIPOS_CON_VENCIMIENTO: ReadonlySet<number> = new Set([33, 43, 46, 56, 61])
export const CAF_VIGENCIA_DIAS = 180

/** Last date (YYYY-MM-DD) a CAF's folios may be used, or null when they do not expire. */
export function cafVenceEl(tipoDte: number, fechaAutorizacion: string): string | null {
  if (!TIPOS_CON_VENCIMIENTO.has(tipoDte)) return null
  const d = new Date(`${fechaAutorizacion}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + CAF_VIGENCIA_DIAS)
  return d.toISOString().slice(0, 10)
}

export function foliosDisponibles(caf: { readonly next_folio: number; readonly folio_hasta: number }): number {
  return Math.max(0, caf.folio_hasta - caf.next_folio + 1)
}

/** Active while it has free folios and, for expiring types, until its last day (DESIGN §8). `today` in Santiago. */
export function isCafActive(caf: { readonly next_folio: number; readonly folio_hasta: number; readonly vence_el: string | null }, today: string): boolean {
  return foliosDisponibles(caf) > 0 && (caf.vence_el === null || today <= caf.vence_el)
}

export function rangesOverlap(a: { readonly desde: number; readonly hasta: number }, b: { readonly desde: number; readonly hasta: number }): boolean {
  return a.desde <= b.hasta && b.desde <= a.hasta
}
