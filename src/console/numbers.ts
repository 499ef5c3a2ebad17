// Whole pesos as people in Chile type and read them (issue 27): the dot groups thousands and the comma marks decimals,
// so `12.500` is twelve thousand five hundred, never twelve and a half, and `12,5` is not a whole number at all.

const PLAIN = /^-?\d+$/
// Groups of three after the first, all split by the same separator: a dot, or a space as some people type it.
const GROUPED_DOTS = /^-?\d{1,3}(?:\.\d{3})+$/
const GROUPED_SPACES = /^-?\d{1,3}(?: \d{3})+$/

/**
 * A whole number typed the Chilean way (`12500`, `12.500`, `$ 12.500`, `$12.500`, `12 500`, and `$12.500.-` as price
 * lists and cheques close an amount), or null when it is not
 * one: `12,5` (decimals), `1.25` (a dot that groups nothing), words, blanks, or more digits than a JS number holds
 * exactly. A sign is kept, so the caller's own rule (a price is never negative) is the one that speaks.
 */
export function parseEnteroCL(text: string): number | null {
  const typed = text
    .replace(/[\u00a0\u202f]/g, ' ')
    .trim()
    .replace(/^\$\s*/, '')
    .replace(/^(-)\s*\$\s*/, '$1')
    .replace(/[.,]-$/, '')
  if (!PLAIN.test(typed) && !GROUPED_DOTS.test(typed) && !GROUPED_SPACES.test(typed)) return null
  const n = Number(typed.replace(/[. ]/g, ''))
  return Number.isSafeInteger(n) ? (Object.is(n, -0) ? 0 : n) : null
}

const PESOS = new Intl.NumberFormat('es-CL', { maximumFractionDigits: 0 })

/** `12500` → `$ 12.500`, as an amount in pesos is printed on Chilean documents and price lists. */
export function formatPesos(n: number): string {
  return n < 0 ? `-$ ${PESOS.format(-n)}` : `$ ${PESOS.format(n)}`
}

/** How a stored price goes back into its input: grouped as the person would type it (`12.500`). */
export function pesosForInput(n: number): string {
  return n < 0 ? `-${PESOS.format(-n)}` : PESOS.format(n)
}
