// The SII's folio pages (src/sii/folios-protocol.ts) read into what the client needs of them: each form's action, its
// inputs (hidden and text, with their values), its selects (with their options), its submit buttons, and the page's
// text to recognise refusals by. Read with Bun's HTMLRewriter, a real HTML parser in the runtime (lol-html): the SII's
// pages are hand-written CGI output, attribute order, quoting and case vary, and a regular expression would misread
// them. The page arrives as ISO-8859-1 bytes and is decoded before (decodeBody), so the parser sees text.

export interface PageForm {
  /** The action's path, without origin or query (`/cvc_cgi/dte/of_genera_folio`); '' when the form has none. */
  readonly action: string
  /** Hidden and text inputs by name, in page order; values with their HTML entities decoded. */
  readonly inputs: ReadonlyMap<string, string>
  /** Each select's option values, in page order. */
  readonly selects: ReadonlyMap<string, readonly string[]>
  /** The values of the submit buttons (`ACEPTAR=Obtener Folios`), decoded. */
  readonly buttons: readonly string[]
}

export interface FoliosPage {
  readonly forms: readonly PageForm[]
  /** Every text node of the page, joined: compared with folios-protocol.ts FOLIOS_TEXTS through text.ts saysPhrase. */
  readonly text: string
  /** The page as it came: a login page is told apart by the names in its links and scripts, not its text. */
  readonly html: string
}

interface OpenForm {
  action: string
  inputs: Map<string, string>
  selects: Map<string, string[]>
  buttons: string[]
}

/** Reads an HTML page. Inputs outside any form are not the page's answer to anything and are left out. */
export async function readFoliosPage(html: string): Promise<FoliosPage> {
  const forms: OpenForm[] = []
  let form: OpenForm | null = null
  let select: string[] | null = null
  let text = ''
  const rewriter = new HTMLRewriter()
    .on('form', {
      element(el) {
        const open: OpenForm = { action: actionPath(decodeAttribute(el.getAttribute('action') ?? '')), inputs: new Map(), selects: new Map(), buttons: [] }
        forms.push(open)
        form = open
        // A form without its end tag (the SII's pages have a few) ends where the next begins or where the page does.
        el.onEndTag(() => {
          if (form === open) form = null
        })
      },
    })
    .on('input', {
      element(el) {
        if (form === null) return
        const name = decodeAttribute(el.getAttribute('name') ?? '')
        const type = (el.getAttribute('type') ?? 'text').toLowerCase()
        const value = decodeAttribute(el.getAttribute('value') ?? '')
        if (type === 'submit' || type === 'button' || type === 'image') form.buttons.push(value)
        else if ((type === 'hidden' || type === 'text' || type === 'number') && name !== '') form.inputs.set(name, value)
      },
    })
    .on('button', {
      element(el) {
        if (form !== null && (el.getAttribute('type') ?? 'submit').toLowerCase() === 'submit') form.buttons.push(decodeAttribute(el.getAttribute('value') ?? ''))
      },
    })
    .on('select', {
      element(el) {
        if (form === null) return
        const options: string[] = []
        form.selects.set(decodeAttribute(el.getAttribute('name') ?? ''), options)
        select = options
        el.onEndTag(() => {
          if (select === options) select = null
        })
      },
    })
    .on('option', {
      element(el) {
        const value = el.getAttribute('value')
        if (select !== null && value !== null) select.push(decodeAttribute(value))
      },
    })
    .onDocument({
      text(chunk) {
        // Text nodes apart stay apart: "Folios anulados" and the next cell must not run into one word.
        text += chunk.lastInTextNode ? `${chunk.text} ` : chunk.text
      },
    })
  // Draining the transformed body is what runs the handlers.
  await rewriter.transform(new Response(html)).arrayBuffer()
  return { forms, text: text.replace(/\s+/g, ' ').trim(), html }
}

/** The form whose action is `path`, or undefined. */
export function formFor(page: FoliosPage, path: string): PageForm | undefined {
  return page.forms.find((f) => f.action === path)
}

/** `https://host/x?y` and `x?y` both as `/x`: the page's actions are compared with folios-protocol.ts FOLIOS_PATHS. */
function actionPath(action: string): string {
  const trimmed = action.trim()
  if (trimmed === '') return ''
  try {
    return new URL(trimmed, 'https://pagina.invalid/cvc_cgi/dte/').pathname
  } catch {
    return trimmed
  }
}

const NAMED: Readonly<Record<string, string>> = { nbsp: '\u00a0', amp: '&', quot: '"', lt: '<', gt: '>', apos: "'" }
const ACCENT: Readonly<Record<string, string>> = { acute: '\u0301', grave: '\u0300', tilde: '\u0303', uml: '\u0308', circ: '\u0302' }

/** An attribute's value as the browser would send it: lol-html gives attributes raw, entities and all. */
export function decodeAttribute(raw: string): string {
  return raw.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1))
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    const accented = /^([a-z])(acute|grave|tilde|uml|circ)$/i.exec(body)
    if (accented !== null) return `${accented[1]}${ACCENT[accented[2]?.toLowerCase() ?? ''] ?? ''}`.normalize('NFC')
    return NAMED[body.toLowerCase()] ?? whole
  })
}
