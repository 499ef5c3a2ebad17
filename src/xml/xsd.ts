// XSD validation of every SII document Timbre reads or writes, in process, with xmllint-wasm (libxml2 in WebAssembly;
// DESIGN §9): the envelopes the simulator receives (EnvioDTE, EnvioBOLETA), the EnvioDTE another company mails in,
// and the exchange answers (RespuestaDTE, EnvioRecibos) and the SII's result mail (RespSII) of DESIGN §13.
// Also the certification libros the simulator receives (LibroCompraVenta, LibroGuia; docs/decisions/certificacion.md
// "Los libros"). The SII's XSDs in ./schemas/ are byte-exact copies of the files the SII publishes, the same bytes as
// test/fixtures/sii/schemas/ (a test compares them), embedded in the binary as files: a `type: 'text'` import would
// decode their ISO-8859-1 bytes as UTF-8, so they are read back as bytes instead. xmllint runs on a thread of its own
// (xml/xsd-worker.ts), started at the first validation and kept, with its WebAssembly compiled once: the library's
// validateXML started a thread and compiled the WebAssembly for every document (~140 ms each, docs/stack-notes.md).
// Each document still compiles its schema: libxml2's command line offers no way to keep one.
import dteXsd from './schemas/DTE_v10.xsd' with { type: 'file' }
import envioBoletaXsd from './schemas/EnvioBOLETA_v11.xsd' with { type: 'file' }
import envioDteXsd from './schemas/EnvioDTE_v10.xsd' with { type: 'file' }
import envioRecibosXsd from './schemas/EnvioRecibos_v10.xsd' with { type: 'file' }
import lceCalXsd from './schemas/LceCal_v10.xsd' with { type: 'file' }
import lceCoCertifXsd from './schemas/LceCoCertif_v10.xsd' with { type: 'file' }
import lceSiiTypesXsd from './schemas/LceSiiTypes_v10.xsd' with { type: 'file' }
import libroCvXsd from './schemas/LibroCV_v10.xsd' with { type: 'file' }
import libroGuiaXsd from './schemas/LibroGuia_v10.xsd' with { type: 'file' }
import recibosXsd from './schemas/Recibos_v10.xsd' with { type: 'file' }
import respSiiXsd from './schemas/RespSII_v10.xsd' with { type: 'file' }
import respSiiLibrosXsd from './schemas/RespSIILibros_v10.xsd' with { type: 'file' }
import respuestaEnvioDteXsd from './schemas/RespuestaEnvioDTE_v10.xsd' with { type: 'file' }
import siiTypesXsd from './schemas/SiiTypes_v10.xsd' with { type: 'file' }
import xmldsigXsd from './schemas/xmldsignature_v10.xsd' with { type: 'file' }
// Certificación de boletas (DESIGN §15): the ConsumoFolios Timbre writes (xml/consumo-folios.ts).
import consumoFolioXsd from './schemas/ConsumoFolio_v10.xsd' with { type: 'file' }
import { workerEntry } from '../worker-entry'
import type { XsdJob, XsdOutcome } from './xsd-worker'

/** The two envelopes that carry DTEs (docs/sii-protocol.md §5). */
export type EnvelopeRoot = 'EnvioDTE' | 'EnvioBOLETA'

/** The certification libros (LibroCV_v10.xsd, LibroGuia_v10.xsd), uploaded to DTEUpload like an envelope. */
export type LibroRoot = 'LibroCompraVenta' | 'LibroGuia'

/** Every root element Timbre validates; RespSII is the SII's `RESULTADO_ENVIO` (RespSII_v10.xsd). */
export type SchemaRoot = EnvelopeRoot | LibroRoot | 'RespuestaDTE' | 'EnvioRecibos' | 'RespSII' | 'ConsumoFolios'

/** Embedded path of each XSD, by the file name the others use in `schemaLocation` (docs/sii-protocol.md §5). */
export const SCHEMA_FILES: Readonly<Record<string, string>> = {
  'EnvioDTE_v10.xsd': envioDteXsd,
  'DTE_v10.xsd': dteXsd,
  'SiiTypes_v10.xsd': siiTypesXsd,
  'xmldsignature_v10.xsd': xmldsigXsd,
  'EnvioBOLETA_v11.xsd': envioBoletaXsd,
  'RespuestaEnvioDTE_v10.xsd': respuestaEnvioDteXsd,
  'EnvioRecibos_v10.xsd': envioRecibosXsd,
  'Recibos_v10.xsd': recibosXsd,
  'RespSII_v10.xsd': respSiiXsd,
  'ConsumoFolio_v10.xsd': consumoFolioXsd,
  'LibroCV_v10.xsd': libroCvXsd,
  'LceCoCertif_v10.xsd': lceCoCertifXsd,
  'LceCal_v10.xsd': lceCalXsd,
  'LceSiiTypes_v10.xsd': lceSiiTypesXsd,
  'LibroGuia_v10.xsd': libroGuiaXsd,
  // The SII's answer to a libro (ResultadoEnvioLibro, mailed): embedded with its siblings, no root validates it yet.
  'RespSIILibros_v10.xsd': respSiiLibrosXsd,
}

interface SchemaSet {
  readonly main: string
  /** What `main` includes or imports, by bare file name (the XSDs must sit together, docs/sii-protocol.md §5). */
  readonly preload: readonly string[]
  /** The name the document gets in libxml2's messages (`envio.xml:46: …`). */
  readonly fileName: string
}

/**
 * Main schema and what it pulls in, each root. EnvioBOLETA_v11 only imports xmldsignature; RespSII_v10 is
 * self-contained (no namespace, its own RUTType); EnvioRecibos_v10 includes Recibos_v10, which includes SiiTypes_v10.
 * LibroCV_v10 defines its own types and imports xmldsignature and LceCoCertif_v10 (namespace SiiLce), which includes
 * LceSiiTypes_v10 and LceCal_v10; LibroGuia_v10 is self-contained but for xmldsignature.
 */
const SCHEMA_SETS: Readonly<Record<SchemaRoot, SchemaSet>> = {
  EnvioDTE: { main: 'EnvioDTE_v10.xsd', preload: ['DTE_v10.xsd', 'SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'], fileName: 'envio.xml' },
  EnvioBOLETA: { main: 'EnvioBOLETA_v11.xsd', preload: ['xmldsignature_v10.xsd'], fileName: 'envio.xml' },
  RespuestaDTE: { main: 'RespuestaEnvioDTE_v10.xsd', preload: ['SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'], fileName: 'respuesta.xml' },
  EnvioRecibos: { main: 'EnvioRecibos_v10.xsd', preload: ['Recibos_v10.xsd', 'SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'], fileName: 'recibos.xml' },
  RespSII: { main: 'RespSII_v10.xsd', preload: [], fileName: 'resultado.xml' },
  // ConsumoFolio_v10 imports xmldsignature and includes SiiTypes.
  ConsumoFolios: { main: 'ConsumoFolio_v10.xsd', preload: ['SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'], fileName: 'consumo-folios.xml' },
  LibroCompraVenta: {
    main: 'LibroCV_v10.xsd', preload: ['LceCoCertif_v10.xsd', 'LceSiiTypes_v10.xsd', 'LceCal_v10.xsd', 'xmldsignature_v10.xsd'], fileName: 'libro.xml',
  },
  LibroGuia: { main: 'LibroGuia_v10.xsd', preload: ['xmldsignature_v10.xsd'], fileName: 'libro.xml' },
}

let loaded: Promise<ReadonlyMap<string, Uint8Array>> | undefined

/** The embedded XSDs' bytes, read once. */
export function schemaBytes(): Promise<ReadonlyMap<string, Uint8Array>> {
  loaded ??= Promise.all(
    Object.entries(SCHEMA_FILES).map(async ([name, path]) => [name, await Bun.file(path).bytes()] as const),
  ).then((entries) => new Map(entries))
  return loaded
}

/**
 * LceSiiTypes_v10.xsd's MontoType (namespace SiiLce), as the SII publishes it, bounds an xs:decimal with
 * `maxInclusive value="999999999999999999999999999999.9999"` (its own header: so that it takes only 30 integer digits):
 * a decimal of 34 digits, more than libxml2 (xmllint, xmllint-wasm) holds, so it refuses to compile that schema and
 * with it LibroCV_v10.xsd, which imports it through LceCoCertif_v10.xsd. No element of LceCal, LceCoCertif or LibroCV
 * has that type (LibroCV's amounts are its own SiiDte:MontoType of 18 digits), so dropping the facet changes no
 * verdict on any document. Only that facet of only that file is replaced, in memory, by a comment of the same length on
 * the same line (libxml2's line numbers stay right); the file on disk stays byte for byte the SII's. Any other file,
 * or one without that exact facet (a new SII release), is returned unchanged.
 */
export const LCE_MONTO_MAX_FACET = '<xs:maxInclusive value="999999999999999999999999999999.9999"/>'

export function adjustForLibxml2(name: string, bytes: Uint8Array): Uint8Array {
  if (name !== 'LceSiiTypes_v10.xsd') return bytes
  const text = Buffer.from(bytes).toString('latin1')
  const at = text.indexOf(LCE_MONTO_MAX_FACET)
  if (at < 0 || text.indexOf(LCE_MONTO_MAX_FACET, at + 1) >= 0) return bytes
  const note = '<!-- maxInclusive dropped by xml/xsd.ts'
  const comment = `${note}${' '.repeat(LCE_MONTO_MAX_FACET.length - note.length - 3)}-->`
  return new Uint8Array(Buffer.from(text.slice(0, at) + comment + text.slice(at + LCE_MONTO_MAX_FACET.length), 'latin1'))
}

let compilable: Promise<ReadonlyMap<string, Uint8Array>> | undefined

/** The XSDs as libxml2 is given them: schemaBytes() with adjustForLibxml2 applied. */
function compilableSchemaBytes(): Promise<ReadonlyMap<string, Uint8Array>> {
  compilable ??= schemaBytes().then((all) => new Map([...all].map(([name, bytes]) => [name, adjustForLibxml2(name, bytes)] as const)))
  return compilable
}

export interface SchemaResult {
  readonly isValid: boolean
  /** libxml2's messages, file name and line stripped of the path (as the SII lists `LSX-…` details, docs/sii-protocol.md §6.4). */
  readonly errors: readonly string[]
}

/** 2000 DTEs make an envelope of ~10 MB; 32 MiB (the library's default ceiling) is too low for the tree plus the schema. */
const MAX_MEMORY_PAGES = 1024 * 16

/** Bun's Worker: ref'd keeps the process alive (and delivers promptly), unref'd lets it exit (docs/stack-notes.md). */
type RefWorker = Worker & { ref(): void; unref(): void }

interface Validator {
  readonly worker: RefWorker
  readonly pending: Map<number, (outcome: XsdOutcome) => void>
}

let validator: Validator | null = null
let nextJobId = 0

/** The validator's thread, started at the first call; one that died is replaced, its pending documents failed. */
function validatorThread(): Validator {
  if (validator !== null) return validator
  const worker = new Worker(workerEntry('xml/xsd-worker')) as RefWorker
  // Ref'd only while a document is in it: idle, it must not keep a finished command (a test, the CLI) from exiting, and
  // an unref'd worker's answers come late.
  worker.unref()
  const current: Validator = { worker, pending: new Map() }
  worker.onmessage = (event: MessageEvent<XsdOutcome>) => {
    const settle = current.pending.get(event.data.id)
    current.pending.delete(event.data.id)
    if (current.pending.size === 0) worker.unref()
    settle?.(event.data)
  }
  const fail = (reason: string) => {
    if (validator === current) validator = null
    for (const [id, settle] of current.pending) settle({ id, exitCode: -1, stderr: `xmllint: ${reason}` })
    current.pending.clear()
    worker.terminate()
  }
  worker.onerror = (event) => fail(event.message || 'the validator thread failed')
  worker.addEventListener('close', () => fail('the validator thread stopped'))
  validator = current
  return current
}

function runXmllint(job: Omit<XsdJob, 'id'>): Promise<XsdOutcome> {
  const v = validatorThread()
  const id = nextJobId++
  return new Promise((resolve) => {
    if (v.pending.size === 0) v.worker.ref()
    v.pending.set(id, resolve)
    v.worker.postMessage({ id, ...job } satisfies XsdJob)
  })
}

/**
 * What xmllint's exit code and messages say: 0 valid; 3 or 4 invalid, with its messages (the last line, "… fails to
 * validate", and the "… validates" lines dropped); anything else (1: not even well-formed; -1: the WebAssembly
 * aborted) invalid, with the first 20 lines of what it wrote.
 */
export function schemaResultOf(exitCode: number, stderr: string): SchemaResult {
  const lines = stderr.split('\n').filter((m) => m.trim() !== '')
  if (exitCode === 0) return { isValid: true, errors: [] }
  if (exitCode === 3 || exitCode === 4) return { isValid: false, errors: lines.filter((m) => !/ (validates|fails to validate)$/.test(m.trim())) }
  return { isValid: false, errors: lines.slice(0, 20) }
}

/**
 * Validates the document's bytes as received or written against the schema of `root`. Bytes, not a string: libxml2
 * then honours the file's own `encoding="ISO-8859-1"` declaration, as the SII's parser does (a JS string would be
 * written to the thread as UTF-8). Never throws: a file that is not even well-formed is invalid, with the reason.
 */
export async function validateSchema(document: Uint8Array, root: SchemaRoot): Promise<SchemaResult> {
  const bytes = await compilableSchemaBytes()
  const file = (name: string) => ({ fileName: name, contents: bytes.get(name) ?? new Uint8Array() })
  const set = SCHEMA_SETS[root]
  const outcome = await runXmllint({
    files: [{ fileName: set.fileName, contents: document }, file(set.main), ...set.preload.map(file)],
    args: ['--schema', set.main, '--noout', set.fileName],
    maxMemoryPages: MAX_MEMORY_PAGES,
  })
  return schemaResultOf(outcome.exitCode, outcome.stderr)
}
