// validateSchema's thread (src/xml/xsd.ts, xml/xsd-worker.ts): documents are validated on one long-lived thread with the
// WebAssembly compiled once. Before, xmllint-wasm's validateXML started a thread per document: 12 documents at once
// were 12 more threads, each compiling the WebAssembly (~140 ms of CPU and a thread's memory apiece; bench/README.md
// "Load": most of the in-process simulator's cost). The thread count of this process is read, not a time.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { schemaResultOf, validateSchema } from '../../../src/xml/xsd'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../src/xml/latin1'

const OFFICIAL = new Uint8Array(readFileSync(join(import.meta.dir, '../../fixtures/sii/examples/F60T33-ejemplo-oficial-SII.xml')))
const SPOILED = toLatin1Bytes(fromLatin1Bytes(OFFICIAL).replace(/<MntTotal>(\d+)<\/MntTotal>/, '<MntTotal>mil</MntTotal>'))
const threads = () => readdirSync('/proc/self/task').length

describe('validateSchema', () => {
  test('12 documents at once: one thread validates them all, each with its own verdict', async () => {
    await validateSchema(OFFICIAL, 'EnvioDTE') // the thread is up
    const before = threads()
    let most = before
    const sampler = setInterval(() => (most = Math.max(most, threads())), 1)
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => validateSchema(i % 3 === 0 ? SPOILED : OFFICIAL, 'EnvioDTE')))
    clearInterval(sampler)
    expect(most - before).toBeLessThanOrEqual(1)
    results.forEach((r, i) => {
      expect(r.isValid).toBe(i % 3 !== 0)
      if (i % 3 === 0) expect(r.errors.join('\n')).toContain('MntTotal')
    })
  })

  test('an idle validator thread does not keep a process from exiting', async () => {
    const script = `import { validateSchema } from ${JSON.stringify(join(import.meta.dir, '../../../src/xml/xsd.ts'))}
const r = await validateSchema(new TextEncoder().encode('<a/>'), 'RespSII'); console.log(r.isValid)`
    const child = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'pipe' })
    const exited = await Promise.race([child.exited, Bun.sleep(20_000).then(() => 'still running')])
    if (exited === 'still running') child.kill()
    expect(exited).toBe(0)
    expect((await new Response(child.stdout).text()).trim()).toBe('false')
  })
})

describe('schemaResultOf: what xmllint exit code and messages say', () => {
  test('0 valid; 3 or 4 invalid with its messages, without the summary lines', () => {
    expect(schemaResultOf(0, 'envio.xml validates\n')).toEqual({ isValid: true, errors: [] })
    expect(schemaResultOf(3, "envio.xml:7: element MntTotal: Schemas validity error : 'mil' is not valid\nenvio.xml fails to validate\n")).toEqual({
      isValid: false,
      errors: ["envio.xml:7: element MntTotal: Schemas validity error : 'mil' is not valid"],
    })
  })

  test('1 (not well-formed) and -1 (the WebAssembly aborted): invalid, with at most 20 lines of what it wrote', () => {
    const many = Array.from({ length: 30 }, (_, i) => `envio.xml:${i}: parser error : x`).join('\n')
    expect(schemaResultOf(1, many).errors).toHaveLength(20)
    expect(schemaResultOf(-1, 'WASM Abort: OOM')).toEqual({ isValid: false, errors: ['WASM Abort: OOM'] })
  })
})
