// Numbers as people in Chile type and read them (issue 27): the dot groups thousands, the comma marks decimals, and a
// peso sign may lead. `12.500` is twelve thousand five hundred, `12,5` twelve and a half. One reading for every form,
// so a price, a quantity and an exchange rate are never read two ways. Pure: the console and its tests import it.

/** What a field accepts: whole numbers (pesos, folios, counts) or decimals (quantities, rates, foreign prices). */
export interface NumeroOptions {
  /** true: a decimal comma is read; false: a comma is refused with `mensajeEntero`. */
  readonly decimales: boolean
  /** A leading minus sign is read (the liquidación-factura's negative amounts); refused otherwise. */
  readonly negativos?: boolean
  /** What the person is told when a whole number carried decimals; the default speaks of pesos. */
  readonly mensajeEntero?: string
}

export type NumeroLeido = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly message: string }

export const MENSAJE_PESOS_ENTEROS = 'Un monto en pesos es un número entero, sin decimales (los miles se separan con punto: 12.500).'

// Digits grouped by dots in threes (12.500, 1.250.000) or not grouped at all (12500); then an optional decimal comma.
// A grouped number starts with 1-9: `0.500` groups nothing and is refused, never read as five hundred.
const ENTERO = String.raw`(?:[1-9]\d{0,2}(?:\.\d{3})+|\d+)`
const NUMERO = new RegExp(String.raw`^(-)?(${ENTERO})(?:,(\d+))?$`)

/**
 * `raw` as a number, or why not in words. Spaces around, a leading `$` (with or without a space after it), a closing
 * `.-` and thousands grouped by spaces are read. A dot that does not group thousands (`12.5`, `1.2345`) is refused rather than guessed:
 * in Chile the dot never marks decimals, and reading `1.500` as one and a half would be a thousandfold mistake.
 */
export function parseNumeroCL(raw: string, options: NumeroOptions): NumeroLeido {
  const text = raw
    .replace(/[\u00a0\u202f]/g, ' ')
    // The minus sign amounts are shown with (formatPesos), so a shown amount pasted back reads the same.
    .replace(/\u2212/g, '-')
    .trim()
    .replace(/^\$\s*/, '')
    .replace(/^(-)\s*\$\s*/, '$1')
    // `$12.500.-`: how price lists and cheques close an amount.
    .replace(/(\d)[.,]-$/, '$1')
    // `12 500`: thousands grouped by spaces, as some people type them, read as the dots they stand for.
    .replace(/^(-?\d{1,3}(?: \d{3})+)(?=,|$)/, (grouped) => grouped.replaceAll(' ', '.'))
  if (text === '') return { ok: false, message: 'Escriba un número.' }
  const m = NUMERO.exec(text)
  if (m === null) return { ok: false, message: whyNot(text, options) }
  const [, minus, entero, decimales] = m
  if (minus !== undefined && options.negativos !== true) return { ok: false, message: 'No puede ser negativo.' }
  if (decimales !== undefined && !options.decimales) return { ok: false, message: options.mensajeEntero ?? MENSAJE_PESOS_ENTEROS }
  const value = Number(`${minus ?? ''}${entero!.replaceAll('.', '')}${decimales === undefined ? '' : `.${decimales}`}`)
  // Past 2^53 a number no longer holds every digit typed: the schema's bounds refuse it, but not as a rounded value.
  if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) return { ok: false, message: 'El número es demasiado grande.' }
  return { ok: true, value: Object.is(value, -0) ? 0 : value }
}

function whyNot(text: string, options: NumeroOptions): string {
  // 12.5 or 1,234.56: a decimal point, as English writes it.
  if (/^-?[\d.,]+$/.test(text) && /\.\d{0,2}$|\.\d{4,}$/.test(text))
    return options.decimales
      ? 'Use coma para los decimales (12,5); el punto separa los miles (12.500).'
      : 'El punto separa los miles en grupos de tres (12.500); un monto en pesos no lleva decimales.'
  if (/^-?[\d.,]+$/.test(text)) return 'Los miles se separan con punto en grupos de tres (1.250.000) y los decimales con coma (12,5).'
  return options.decimales ? 'Escriba un número, por ejemplo 12,5.' : 'Escriba un número entero, por ejemplo 12.500.'
}

// ------------------------------------------------------------------------------------------------ showing amounts

const GROUPED = (decimals: number) => new Intl.NumberFormat('es-CL', { minimumFractionDigits: 0, maximumFractionDigits: decimals })

/** `12500` → `12.500`; decimals, when there are any, after a comma (up to `maxDecimals`). */
export function formatNumeroCL(n: number, maxDecimals = 6): string {
  return GROUPED(maxDecimals).format(n)
}

/** `12500` → `$ 12.500`: how every amount in pesos is shown. A negative one keeps its sign before the peso sign. */
export function formatPesos(n: number): string {
  return `${n < 0 ? '−' : ''}$ ${GROUPED(0).format(Math.abs(n))}`
}

/** An amount in an export's currency: `DOLAR USA 6.372,75` (the Customs name of the currency, decimals after a comma). */
export function formatMoneda(n: number, moneda: string, maxDecimals = 4): string {
  return `${moneda} ${GROUPED(maxDecimals).format(n)}`
}
