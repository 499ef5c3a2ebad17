// Comparing the SII's words with the texts Timbre recognises (portal-protocol.ts SESSION_CAP_TEXT,
// SESSION_INVALID_TEXT): its pages and messages come with or without accents, in any case, and HTML pages spell
// accents as entities (`n&uacute;mero`).

/** Lower case, no accents, HTML entities of accented letters decoded, runs of white space as one space. */
export function foldText(text: string): string {
  return decodeEntities(text).normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/\s+/g, ' ')
}

/** Whether `haystack` says `phrase`, accents, case, entities and spacing aside. */
export function saysPhrase(haystack: string, phrase: string): boolean {
  return foldText(haystack).includes(foldText(phrase))
}

const NAMED: Readonly<Record<string, string>> = { nbsp: ' ', amp: '&', quot: '"', lt: '<', gt: '>', apos: "'" }

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1))
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    // Latin letters with an accent (&aacute; &ntilde; &Uuml;…) fold to their letter: the accent is dropped anyway.
    const letter = /^([a-z])(acute|grave|tilde|uml|circ)$/i.exec(body)?.[1]
    return letter ?? NAMED[body.toLowerCase()] ?? whole
  })
}
