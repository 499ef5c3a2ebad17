// Reading an EnvioDTE or EnvioBOLETA someone else built: the SII's side (the simulator's reception of uploads) and a
// company's side (a supplier's EnvioDTE mailed in, DESIGN §13) read it the same way. The parse, the Caratula, and for
// each DTE its element, its text exactly as it sits in the file (each DTE's signature is checked on that text cut
// out, standalone, docs/sii-protocol.md §4.3) and the fields both sides compare. Reads; judges nothing.
import { SII_NS } from './dsig-profile'
import { decodeXml } from './decode-xml'
import { childElements, parseXml, textOf } from './latin1'
import type { EnvelopeRoot } from './xsd'

/** What the SII records of each document (getEstDte compares these, docs/sii-protocol.md §6.6), and what a receiver lists. */
export interface DocFields {
  /** The document element's `ID` (the DTE signature's Reference target). */
  readonly id: string
  readonly tipo: number
  readonly folio: number
  readonly fechaEmision: string
  readonly rutEmisor: string
  readonly rutReceptor: string
  readonly razonSocialReceptor: string | null
  /** MntTotal as written (decimal on exports). */
  readonly montoTotal: string
  /** NmbItem of the first Detalle. */
  readonly item1: string
}

/** One DTE of the envelope: its element in the envelope's tree and its text exactly as received. */
export interface EnvioDteEntry {
  readonly element: Element
  /** `<DTE …>…</DTE>` verbatim; null when it could not be cut out of the file (then its signature cannot verify). */
  readonly text: string | null
  readonly fields: DocFields
}

export interface ReadEnvio {
  readonly text: string
  readonly doc: Document
  readonly root: EnvelopeRoot
  /** SetDTE/@ID: the envelope signature's target, RecepcionEnvio/EnvioDTEID of a receipt. */
  readonly setDteId: string
  readonly caratula: {
    readonly rutEmisor: string
    readonly rutEnvia: string
    readonly rutReceptor: string
    /** SubTotDTE as written: [TpoDTE, NroDTE] pairs. */
    readonly subtotales: ReadonlyArray<readonly [number, number]>
  }
  readonly dtes: readonly EnvioDteEntry[]
}

/** Why the file could not be read as the envelope expected, in Spanish. */
export interface UnreadableEnvio {
  readonly problem: string
}

/**
 * Parses the file and reads the Caratula and the DTEs; the problem when it is not well-formed XML or not the envelope
 * `expected` (root in the SII namespace, with a SetDTE). Whatever else is wrong is for the checks to say.
 */
export function readEnvio(bytes: Uint8Array, expected: EnvelopeRoot): ReadEnvio | UnreadableEnvio {
  const text = decodeXml(bytes)
  let doc: Document
  try {
    doc = parseXml(text)
  } catch (err) {
    return { problem: `el archivo no es XML bien formado: ${err instanceof Error ? err.message : String(err)}` }
  }
  const root = doc.documentElement
  if (root.localName !== expected || root.namespaceURI !== SII_NS) {
    // docs/sii-protocol.md §1.1, §7.1: boletas go only to the REST envío in EnvioBOLETA, every other type only to DTEUpload.
    return { problem: `se esperaba ${expected} en el espacio de nombres ${SII_NS}, se recibió ${root.localName}` }
  }
  const setDte = childElements(root).find((e) => e.localName === 'SetDTE')
  if (setDte === undefined) return { problem: `${expected} sin SetDTE` }
  const caratula = childNamed(setDte, 'Caratula')
  const elements = childElements(setDte).filter((e) => e.localName === 'DTE')
  const texts = dteTexts(text, elements.length)
  return {
    text,
    doc,
    root: expected,
    setDteId: setDte.getAttribute('ID') ?? '',
    caratula: {
      rutEmisor: leafText(caratula, 'RutEmisor'),
      rutEnvia: leafText(caratula, 'RutEnvia'),
      rutReceptor: leafText(caratula, 'RutReceptor'),
      subtotales: (caratula === undefined ? [] : childElements(caratula).filter((e) => e.localName === 'SubTotDTE'))
        .map((s) => [Number(leafText(s, 'TpoDTE')), Number(leafText(s, 'NroDTE'))] as const),
    },
    dtes: elements.map((element, i) => ({ element, text: texts?.[i] ?? null, fields: dteFieldsOf(element) })),
  }
}

export function isUnreadable(value: ReadEnvio | UnreadableEnvio): value is UnreadableEnvio {
  return 'problem' in value
}

const END_TAG_CLOSE = /\s*>/y

/**
 * The text of each `<DTE>` element as received, in order, or null when the tags found do not pair up one start, one
 * end, as many as the parser found (a `</DTE>` inside a comment, a self-closed `<DTE/>`): DTEs do not nest.
 */
export function dteTexts(text: string, expected: number): string[] | null {
  return elementTexts(text, 'DTE', expected)
}

/**
 * The text of each element named `name` (any prefix; elements of that name must not nest), as it sits in `text`, in
 * order; null unless their start and end tags pair up, `expected` of them. One pass over the text, so a hostile file
 * costs time linear in its size. `name` is a plain XML name (letters, digits, `_`).
 */
export function elementTexts(text: string, name: string, expected: number): string[] | null {
  // A start tag (`<DTE`, `<ns0:DTE`) or end tag (`</DTE`) of `name`, not `<DTEx` nor `<EnvioDTE`.
  const tag = new RegExp(`<(\\/?)((?:[\\w.-]+:)?)${name}(?=[\\s>/])`, 'g')
  const found: string[] = []
  let open: { readonly at: number; readonly prefix: string } | null = null
  for (const m of text.matchAll(tag)) {
    const [, slash, prefix = ''] = m
    const at = m.index ?? 0
    if (slash === '') {
      if (open !== null) return null
      open = { at, prefix }
      continue
    }
    if (open === null || prefix !== open.prefix) return null
    END_TAG_CLOSE.lastIndex = at + m[0].length
    if (END_TAG_CLOSE.exec(text) === null) return null
    found.push(text.slice(open.at, END_TAG_CLOSE.lastIndex))
    open = null
  }
  return open === null && found.length === expected ? found : null
}

/** The fields of a `<DTE>` element: its first child is Documento, Liquidacion or Exportaciones (DTE_v10.xsd). */
export function dteFieldsOf(dte: Element): DocFields {
  const container = childElements(dte)[0]
  const encabezado = childNamed(container, 'Encabezado')
  const idDoc = childNamed(encabezado, 'IdDoc')
  const receptor = childNamed(encabezado, 'Receptor')
  const razon = childNamed(receptor, 'RznSocRecep')
  const detalle = childNamed(container, 'Detalle')
  return {
    id: container?.getAttribute('ID') ?? '',
    tipo: Number(leafText(idDoc, 'TipoDTE')),
    folio: Number(leafText(idDoc, 'Folio')),
    fechaEmision: leafText(idDoc, 'FchEmis'),
    rutEmisor: leafText(childNamed(encabezado, 'Emisor'), 'RUTEmisor'),
    rutReceptor: leafText(receptor, 'RUTRecep'),
    razonSocialReceptor: razon === undefined ? null : textOf(razon),
    montoTotal: leafText(childNamed(encabezado, 'Totales'), 'MntTotal'),
    item1: detalle === undefined ? '' : leafText(detalle, 'NmbItem'),
  }
}

/** The first child element named `name` (any namespace); undefined when `parent` is. */
export function childNamed(parent: Element | undefined, name: string): Element | undefined {
  return parent === undefined ? undefined : childElements(parent).find((e) => e.localName === name)
}

/** The trimmed text of the child `name`, '' when absent. */
export function leafText(parent: Element | undefined, name: string): string {
  const el = childNamed(parent, name)
  return el === undefined ? '' : textOf(el).trim()
}
