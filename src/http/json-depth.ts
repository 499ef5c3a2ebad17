// How deep a JSON text nests, found in one pass over its bytes before anything parses it (issue 12 item 6): no
// request body of this service is legitimately deeper than a few levels, and a parser or a validator walking
// a million nested arrays costs time and stack on the event loop every company shares.

/** Deepest nesting allowed in a request body; DTE metadata is free-form, so the bound is generous. */
export const MAX_JSON_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/**
 * True when `bytes` (UTF-8 JSON) opens more than `max` objects or arrays inside each other. Brackets inside strings
 * do not count. Malformed text is not judged here: the parser refuses it afterwards.
 */
export function exceedsJsonDepth(bytes: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!
    if (inString) {
      if (b === BACKSLASH) i++  // the escaped character, a quote included, never ends the string
      else if (b === QUOTE) inString = false
    } else if (b === QUOTE) inString = true
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > max) return true
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--
  }
  return false
}
