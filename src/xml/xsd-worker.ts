// The XSD validator's thread (xml/xsd.ts): libxml2's xmllint compiled to WebAssembly (xmllint-wasm), its module
// compiled once for the life of the thread and instantiated afresh for each document, with its own memory. The
// library's own validateXML starts a new thread and compiles the WebAssembly on every call: ~140 ms and a thread's
// memory per document, which made the in-process SII simulator most of the server's CPU under load and held received
// envelopes to ~4 imports a second (bench/README.md "Load"); here a small envelope takes ~10 ms.
import { readFileSync } from 'node:fs'
// xmllint-wasm's Emscripten factory: each call runs xmllint's main once over an in-memory file system.
import createXmllint from 'xmllint-wasm/xmllint-node.js'
import wasmPath from 'xmllint-wasm/xmllint.wasm' with { type: 'file' }

declare const self: Worker

export interface XsdJob {
  readonly id: number
  /** Files by the names the arguments use: the document, the main schema and what it includes or imports. */
  readonly files: ReadonlyArray<{ readonly fileName: string; readonly contents: Uint8Array }>
  readonly args: readonly string[]
  readonly maxMemoryPages: number
}

export interface XsdOutcome {
  readonly id: number
  /** xmllint's exit code: 0 valid, 3 or 4 invalid, 1 not well-formed, -1 the WebAssembly aborted. */
  readonly exitCode: number
  readonly stderr: string
}

interface XmllintModuleOptions {
  inputFiles: XsdJob['files']
  arguments: readonly string[]
  print(text: string): void
  printErr(text: string): void
  onExit(code: number): void
  onAbort(reason: unknown): void
  wasmMemory: WebAssembly.Memory
  instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void): WebAssembly.Exports
}

const factory = createXmllint as unknown as (options: XmllintModuleOptions) => Promise<unknown>
const compiled = new WebAssembly.Module(readFileSync(wasmPath))
/** 16 MiB to start, as the library does; it grows up to the job's maximum. */
const INITIAL_MEMORY_PAGES = 256

function run(job: XsdJob): Promise<XsdOutcome> {
  let stderr = ''
  return new Promise((resolve) => {
    const done = (exitCode: number) => resolve({ id: job.id, exitCode, stderr })
    factory({
      inputFiles: job.files,
      arguments: job.args,
      print() {},
      printErr(text) {
        stderr += `${text}\n`
      },
      onExit: done,
      onAbort(reason) {
        stderr = `WASM Abort: ${String(reason)}`
        done(-1)
      },
      wasmMemory: new WebAssembly.Memory({ initial: INITIAL_MEMORY_PAGES, maximum: Math.max(INITIAL_MEMORY_PAGES, job.maxMemoryPages) }),
      instantiateWasm(imports, receive) {
        const instance = new WebAssembly.Instance(compiled, imports)
        receive(instance, compiled)
        return instance.exports
      },
    }).catch((err: unknown) => {
      stderr = `xmllint: ${err instanceof Error ? err.message : String(err)}`
      done(-1)
    })
  })
}

// One document at a time: xmllint's main runs to its end synchronously once the instance is made.
let queue: Promise<unknown> = Promise.resolve()
self.onmessage = (event: MessageEvent<XsdJob>) => {
  queue = queue.then(() => run(event.data).then((outcome) => self.postMessage(outcome)))
}
