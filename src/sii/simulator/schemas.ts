// XSD validation of uploaded envelopes, in process, with xmllint-wasm (libxml2 in WebAssembly; DESIGN §9). The SII's
// XSDs in ./schemas/ are byte-exact copies of the files the SII publishes, the same bytes as test/fixtures/sii/schemas/
// (a test compares them), embedded in the binary as files: a `type: 'text'` import would decode their ISO-8859-1
// bytes as UTF-8, so they are read back as bytes instead. xmllint-wasm compiles the schema on every call (one worker
// per call, ~140 ms, docs/stack-notes.md) and offers no way to keep a compiled schema: only the file bytes are loaded once and reused.
import { validateXML, type XMLFileInfo } from 'xmllint-wasm'
import dteXsd from './schemas/DTE_v10.xsd' with { type: 'file' }
import envioBoletaXsd from './schemas/EnvioBOLETA_v11.xsd' with { type: 'file' }
import envioDteXsd from './schemas/EnvioDTE_v10.xsd' with { type: 'file' }
import siiTypesXsd from './schemas/SiiTypes_v10.xsd' with { type: 'file' }
import xmldsigXsd from './schemas/xmldsignature_v10.xsd' with { type: 'file' }

export type EnvelopeRoot = 'EnvioDTE' | 'EnvioBOLETA'

/** Embedded path of each XSD, by the file name the others use in `schemaLocation` (docs/sii-protocol.md §5). */
export const SCHEMA_FILES: Readonly<Record<string, string>> = {
  'EnvioDTE_v10.xsd': envioDteXsd,
  'DTE_v10.xsd': dteXsd,
  'SiiTypes_v10.xsd': siiTypesXsd,
  'xmldsignature_v10.xsd': xmldsigXsd,
  'EnvioBOLETA_v11.xsd': envioBoletaXsd,
}

/** Main schema and what it includes or imports, each envelope kind (EnvioBOLETA_v11 only imports xmldsignature). */
const SCHEMA_SETS: Readonly<Record<EnvelopeRoot, { readonly main: string; readonly preload: readonly string[] }>> = {
  EnvioDTE: { main: 'EnvioDTE_v10.xsd', preload: ['DTE_v10.xsd', 'SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'] },
  EnvioBOLETA: { main: 'EnvioBOLETA_v11.xsd', preload: ['xmldsignature_v10.xsd'] },
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
 * Validates the envelope's bytes as uploaded. Bytes, not a string: libxml2 then honours the file's own
 * `encoding="ISO-8859-1"` declaration, as the SII's parser does (a JS string would be written to the worker as UTF-8).
 */
export async function validateEnvelopeSchema(envelope: Uint8Array, root: EnvelopeRoot): Promise<SchemaResult> {
  const bytes = await schemaBytes()
  const file = (name: string): XMLFileInfo => ({ fileName: name, contents: bytes.get(name) ?? new Uint8Array() })
  const set = SCHEMA_SETS[root]
  try {
    const result = await validateXML({
      xml: [{ fileName: 'envio.xml', contents: envelope }],
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
