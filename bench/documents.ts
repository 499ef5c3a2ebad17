// Issue 4 benchmark: documents built, stamped and signed per second on one core, beside the floor measured in the same
// run (one RSA-2048 signature + one CAF-key signature per document). Target: at least 60 % of the floor.
//   bun bench/documents.ts [seconds-per-measure]
import { createSign } from 'node:crypto'
import { buildDteXml, tedDataFor } from '../src/xml/dte-xml'
import { toLatin1Bytes } from '../src/xml/latin1'
import { canonicalFormsFromText, signDte } from '../src/xml/signature'
import { buildTed } from '../src/xml/ted'
import { makeCertificate, makeTestCaf } from '../test/support/pki'
import { BENCH_EMPRESA, BENCH_FACTURA } from './support'

const seconds = Number(process.argv[2] ?? 3)
const empresa = BENCH_EMPRESA
const request = BENCH_FACTURA
const caf = makeTestCaf({ rut: empresa.rut, razonSocial: empresa.razon_social, folioDesde: 1, folioHasta: 10_000_000, fechaAutorizacion: '2026-11-01' }).caf
const signer = makeCertificate({ rut: '7880442-4', keySlot: 9 }).signer

function oneDocument(folio: number): Uint8Array {
  const input = { empresa, folio, request, today: '2026-11-22' }
  const timestamp = '2026-11-22T10:15:30'
  const ted = buildTed({ ...tedDataFor(input), timestamp }, caf)
  return toLatin1Bytes(signDte(buildDteXml({ ...input, ted, tmstFirma: timestamp }), signer))
}

function floorOnce(data: Buffer): void {
  createSign('RSA-SHA1').update(data).sign(signer.privateKey)
  createSign('RSA-SHA1').update(data).sign(caf.privateKey)
}

function rate(label: string, fn: (i: number) => void): number {
  for (let i = 0; i < 200; i++) fn(i) // warm-up: JIT, key caches
  const deadline = performance.now() + seconds * 1000
  let n = 0
  const started = performance.now()
  while (performance.now() < deadline) fn(n++)
  const perSecond = n / ((performance.now() - started) / 1000)
  console.log(`${label.padEnd(44)} ${perSecond.toFixed(0).padStart(7)} /s   ${(1000 / perSecond).toFixed(3)} ms each`)
  return perSecond
}

/** Mean time of `fn` over a short run, in ms, for the per-stage breakdown (not part of the target). */
function meanMs(fn: (i: number) => unknown): number {
  for (let i = 0; i < 200; i++) fn(i)
  const runs = Math.max(200, Math.round(seconds * 300))
  const started = performance.now()
  for (let i = 0; i < runs; i++) fn(i)
  return (performance.now() - started) / runs
}

/** Where one document's time goes: the stages of oneDocument, measured one by one on the same input. */
function breakdown(): string {
  const input = { empresa, folio: 7, request, today: '2026-11-22' }
  const timestamp = '2026-11-22T10:15:30'
  const ted = buildTed({ ...tedDataFor(input), timestamp }, caf)
  const unsigned = buildDteXml({ ...input, ted, tmstFirma: timestamp })
  const signed = signDte(unsigned, signer)
  // buildDteXml already declares both namespaces on <DTE>, so signDte canonicalizes this very text.
  const canonical = canonicalFormsFromText(unsigned)
  const stages: Array<[string, number]> = [
    ['tedDataFor', meanMs(() => tedDataFor(input))],
    ['buildTed', meanMs(() => buildTed({ ...tedDataFor(input), timestamp }, caf))],
    ['buildDteXml', meanMs(() => buildDteXml({ ...input, ted, tmstFirma: timestamp }))],
    ['signDte', meanMs(() => signDte(unsigned, signer))],
    ['  of which C14N+digests', meanMs(() => canonicalFormsFromText(unsigned))],
    ['  of which RSA-2048', meanMs(() => createSign('RSA-SHA1').update(canonical?.canonicalSignedInfo ?? '').sign(signer.privateKey))],
    ['toLatin1Bytes', meanMs(() => toLatin1Bytes(signed))],
  ]
  const path = canonical === null ? 'xml-crypto (DOM) path' : 'string C14N path'
  return `breakdown (${path}): ${stages.map(([name, ms]) => `${name.trim()} ${ms.toFixed(3)}`).join(' · ')} ms`
}

const sample = oneDocument(1)
console.log(`document: tipo 33, ${request.detalle.length} lines, ${sample.length} bytes signed; ${seconds} s per measure, one core`)
const payload = Buffer.alloc(1200, 7)
const floor = rate('floor: RSA-2048 + CAF-key signature', () => floorOnce(payload))
const docs = rate('documents built, stamped and signed', (i) => oneDocument(i + 2))
console.log(`ratio: ${((docs / floor) * 100).toFixed(1)} % of the floor (target ≥ 60 %)`)
console.log(breakdown())
