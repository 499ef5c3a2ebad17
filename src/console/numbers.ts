// Whole pesos as people in Chile type and read them (issue 27), for the catalog's prices: the reading is the one every
// form uses (domain/numero-cl.ts), so `12.500` is twelve thousand five hundred and `12,5` is not a whole number at all.
import { formatNumeroCL, parseNumeroCL } from '../domain/numero-cl'

/**
 * A whole number typed the Chilean way (`12500`, `12.500`, `$ 12.500`, `$12.500`, `12 500`, `$12.500.-`), or null
 * when it is not one: `12,5` (decimals), `1.25` (a dot that groups nothing), words, blanks, or more digits than a JS
 * number holds exactly. A sign is kept, so the caller's own rule (a price is never negative) is the one that speaks.
 */
export function parseEnteroCL(text: string): number | null {
  const read = parseNumeroCL(text, { decimales: false, negativos: true })
  return read.ok ? read.value : null
}

/** How a stored price goes back into its input: grouped as the person would type it (`12.500`). */
export function pesosForInput(n: number): string {
  return formatNumeroCL(n, 0)
}
