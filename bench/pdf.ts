// Issue 9 benchmark: render time of the printed representation of a one-page invoice (a signed 33 with three lines and a
// reference), p50 and p99 per format, plus where the time goes. Target: p50 ≤ 50 ms for carta.
//   bun bench/pdf.ts [renders-per-format]
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { renderDtePdf, type Formato } from '../src/pdf/render-dte-pdf'
import { readDteView } from '../src/pdf/dte-view'
import { pdf417Matrix } from '../src/pdf/pdf417'
import { buildDteXml, tedDataFor } from '../src/xml/dte-xml'
import { fromLatin1Bytes, toLatin1Bytes } from '../src/xml/latin1'
import { signDte } from '../src/xml/signature'
import { buildTed } from '../src/xml/ted'
import { makeCertificate, makeTestCaf } from '../test/support/pki'
import { BENCH_EMPRESA, BENCH_FACTURA, summarize } from './support'

const runs = Number(process.argv[2] ?? 300)
const empresa = BENCH_EMPRESA
const request = BENCH_FACTURA

function signedInvoice(): Uint8Array {
  const caf = makeTestCaf({ rut: empresa.rut, razonSocial: empresa.razon_social, folioDesde: 1, folioHasta: 1000, fechaAutorizacion: '2026-11-01' }).caf
  const signer = makeCertificate({ rut: '7880442-4', keySlot: 9 }).signer
  const input = { empresa, folio: 42, request, today: '2026-11-22' }
  const timestamp = '2026-11-22T10:15:30'
  const ted = buildTed({ ...tedDataFor(input), timestamp }, caf)
  return toLatin1Bytes(signDte(buildDteXml({ ...input, ted, tmstFirma: timestamp }), signer))
}

async function measure(label: string, fn: () => Promise<unknown> | unknown): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 30; i++) await fn()  // warm-up: JIT, font metrics
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await fn()
    times.push(performance.now() - started)
  }
  const { p50, p99, n } = summarize(times)
  console.log(`${label.padEnd(40)} p50 ${p50.toFixed(1).padStart(6)} ms   p99 ${p99.toFixed(1).padStart(6)} ms   (n=${n})`)
  return { p50, p99 }
}

const xml = signedInvoice()
const ctx = { resolucion: { numero: 80, fecha: '2014-08-22' }, isRechazado: false }
console.log(`bun ${Bun.version}, ${navigator.hardwareConcurrency} cores; one-page factura (3 lines, 1 reference), ${runs} renders each`)
const results: Record<string, { p50: number; p99: number }> = {}
for (const formato of ['carta', 'termico'] as Formato[]) results[formato] = await measure(`renderDtePdf ${formato}`, () => renderDtePdf({ xml, formato, cedible: false, ...ctx }))
await measure('renderDtePdf carta + cedible copy', () => renderDtePdf({ xml, formato: 'carta', cedible: true, ...ctx }))
console.log('stages (carta):')
const view = readDteView(fromLatin1Bytes(xml))
await measure('  readDteView (parse the signed XML)', () => readDteView(fromLatin1Bytes(xml)))
await measure('  pdf417Matrix (bwip-js, 18 columns)', () => pdf417Matrix(toLatin1Bytes(view.ted), 18))
await measure('  empty pdf-lib document + 2 fonts + save', async () => {
  const doc = await PDFDocument.create()
  await doc.embedFont(StandardFonts.Helvetica)
  await doc.embedFont(StandardFonts.HelveticaBold)
  doc.addPage()
  return doc.save()
})
const target = 50
console.log(`target carta p50 ≤ ${target} ms: ${results.carta!.p50 <= target ? 'met' : 'NOT met'} (${results.carta!.p50.toFixed(1)} ms)`)
