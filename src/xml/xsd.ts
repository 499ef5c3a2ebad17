// XSD validation of every SII document Timbre reads or writes, in process, with xmllint-wasm (libxml2 in WebAssembly;
// DESIGN §9): the envelopes the simulator receives (EnvioDTE, EnvioBOLETA), the EnvioDTE another company mails in,
// and the exchange answers (RespuestaDTE, EnvioRecibos) and the SII's result mail (RespSII) of DESIGN §13.
// The SII's XSDs in ./schemas/ are byte-exact copies of the files the SII publishes, the same bytes as
// test/fixtures/sii/schemas/ (a test compares them), embedded in the binary as files: a `type: 'text'` import would
// decode their ISO-8859-1 bytes as UTF-8, so they are read back as bytes instead. xmllint-wasm compiles the schema on
// every call (one worker per call, ~140 ms, docs/stack-notes.md) and offers no way to keep a compiled schema: only the
// file bytes are loaded once and reused. xmllint-wasm itself is loaded at the first validation, not at start (issue 17:
// the main thread's memory at rest).
import type { XMLFileInfo } from 'xmllint-wasm'
import dteXsd from './schemas/DTE_v10.xsd' with { type: 'file' }
import envioBoletaXsd from './schemas/EnvioBOLETA_v11.xsd' with { type: 'file' }
import envioDteXsd from './schemas/EnvioDTE_v10.xsd' with { type: 'file' }
import envioRecibosXsd from './schemas/EnvioRecibos_v10.xsd' with { type: 'file' }
import recibosXsd from './schemas/Recibos_v10.xsd' with { type: 'file' }
import respSiiXsd from './schemas/RespSII_v10.xsd' with { type: 'file' }
import respuestaEnvioDteXsd from './schemas/RespuestaEnvioDTE_v10.xsd' with { type: 'file' }
import siiTypesXsd from './schemas/SiiTypes_v10.xsd' with { type: 'file' }
import xmldsigXsd from './schemas/xmldsignature_v10.xsd' with { type: 'file' }

/** The two envelopes that carry DTEs (docs/sii-protocol.md §5). */
export type EnvelopeRoot = 'EnvioDTE' | 'EnvioBOLETA'

/** Every root element Timbre validates; RespSII is the SII's `RESULTADO_ENVIO` (RespSII_v10.xsd). */
export type SchemaRoot = EnvelopeRoot | 'RespuestaDTE' | 'EnvioRecibos' | 'RespSII'

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
 */
const SCHEMA_SETS: Readonly<Record<SchemaRoot, SchemaSet>> = {
  EnvioDTE: { main: 'EnvioDTE_v10.xsd', preload: ['DTE_v10.xsd', 'SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'], fileName: 'envio.xml' },
  EnvioBOLETA: { main: 'EnvioBOLETA_v11.xsd', preload: ['xmldsignature_v10.xsd'], fileName: 'envio.xml' },
  RespuestaDTE: { main: 'RespuestaEnvioDTE_v10.xsd', preload: ['SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'], fileName: 'respuesta.xml' },
  EnvioRecibos: { main: 'EnvioRecibos_v10.xsd', preload: ['Recibos_v10.xsd', 'SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'], fileName: 'recibos.xml' },
  RespSII: { main: 'RespSII_v10.xsd', preload: [], fileName: 'resultado.xml' },
}

let loaded: Promise<ReadonlyMap<string, Uint8Array>> | undefined

/** The embedded XSDs' bytes, read once. */
export function schemaBytes(): Promise<ReadonlyMap<string, Uint8Array>> {
  loaded ??= Promise.all(
    Object.entries(SCHEMA_FILES).map(async ([name, path]) => [name, await Bun.file(path).bytes()] as const),
  ).then((entries) => new Map(entries))
  return loaded
}

export interface SchemaResult {
  readonly isValid: boolean
  /** libxml2's messages, file name and line stripped of the path (as the SII lists `LSX-…` details, docs/sii-protocol.md §6.4). */
  readonly errors: readonly string[]
}

/**
 * Validates the document's bytes as received or written against the schema of `root`. Bytes, not a string: libxml2
 * then honours the file's own `encoding="ISO-8859-1"` declaration, as the SII's parser does (a JS string would be
 * written to the worker as UTF-8). Never throws: a file that is not even well-formed is invalid, with the reason.
 */
export async function validateSchema(document: Uint8Array, root: SchemaRoot): Promise<SchemaResult> {
  const bytes = await schemaBytes()
  const file = (name: string): XMLFileInfo => ({ fileName: name, contents: bytes.get(name) ?? new Uint8Array() })
  const set = SCHEMA_SETS[root]
  const { validateXML } = await import('xmllint-wasm')
  try {
    const result = await validateXML({
      xml: [{ fileName: set.fileName, contents: document }],
      schema: [file(set.main)],
      preload: set.preload.map(file),
      // 2000 DTEs make an envelope of ~10 MB; the default 32 MiB ceiling is too low for the tree plus the schema.
      maxMemoryPages: 1024 * 16,
    })
    return { isValid: result.valid, errors: result.errors.map((e) => e.rawMessage).filter((m) => m.trim() !== '') }
  } catch (err) {
    // xmllint exits 1 (not 3/4) when the file is not even well-formed; the wrapper rejects with its stderr.
    const message = err instanceof Error ? err.message : String(err)
    return { isValid: false, errors: message.split('\n').filter((m) => m.trim() !== '').slice(0, 20) }
  }
}
