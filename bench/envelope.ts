// Envelope signing cost against the number of DTEs: `node_modules/.bin/bun bench/envelope.ts`.
// The claim under test (issue 6, DESIGN §11): building and signing an EnvioDTE is linear in its DTEs, one parse and
// one C14N of SetDTE plus one RSA signature; its floor is that one RSA-2048 signature, measured here in the same run.
// Timing lives here, not in tests (a timing assertion in a test is flaky on a loaded machine).
import { createPrivateKey, sign } from 'node:crypto'
import { buildEnvioDte, setDteDigest, SII_RUT, type Caratula } from '../src/xml/envelope'
import { signDte } from '../src/xml/signature'
import { buildTed } from '../src/xml/ted'
import { makeCertificate, makeTestCaf } from '../test/support/pki'

const SIZES = [1, 10, 100, 500, 2000] as const
const LINES_PER_DTE = 11  // ~4 KB per signed DTE, the size signature.test.ts and docs/stack-notes.md measure signDte on

const { caf } = makeTestCaf({ folioHasta: 2000 })
const { signer } = makeCertificate({ rut: '07880442-4' })
const caratula: Caratula = {
  rutEmisor: '76543210-3', rutEnvia: '7880442-4', rutReceptor: SII_RUT, fchResol: '2026-01-01', nroResol: 0, tmstFirmaEnv: '2026-01-10T10:11:13',
}

/** A signed factura 33 of `LINES_PER_DTE` lines, schema-valid (same shape as the unit tests' DTEs). */
function factura(folio: number): string {
  const detalle = Array.from({ length: LINES_PER_DTE }, (_, i) =>
    `<Detalle><NroLinDet>${i + 1}</NroLinDet><NmbItem>Café molido Ñuble &amp; "Sur" línea ${i + 1}</NmbItem>` +
      '<DscItem>Bolsa de 1 kg, tueste medio, origen Colombia</DscItem><QtyItem>1</QtyItem><PrcItem>1000</PrcItem><MontoItem>1000</MontoItem></Detalle>',
  ).join('\n')
  const neto = 1000 * LINES_PER_DTE
  const iva = Math.round(neto * 0.19)
  const ted = buildTed({
    rutEmisor: '76543210-3', tipoDte: 33, folio, fechaEmision: '2026-01-10', rutReceptor: '77777777-7',
    razonSocialReceptor: 'Ñandú Ltda', montoTotal: neto + iva, item1: 'Café molido Ñuble & "Sur" línea 1', timestamp: '2026-01-10T10:11:12',
  }, caf)
  return signDte(`<?xml version="1.0" encoding="ISO-8859-1"?>
<DTE version="1.0"><Documento ID="F${folio}T33"><Encabezado><IdDoc><TipoDTE>33</TipoDTE><Folio>${folio}</Folio><FchEmis>2026-01-10</FchEmis></IdDoc>` +
    '<Emisor><RUTEmisor>76543210-3</RUTEmisor><RznSoc>Comercializadora Ñandú Limitada</RznSoc><GiroEmis>Venta de café</GiroEmis><Acteco>620100</Acteco><DirOrigen>Av. Irarrázaval 1234</DirOrigen><CmnaOrigen>Ñuñoa</CmnaOrigen></Emisor>' +
    '<Receptor><RUTRecep>77777777-7</RUTRecep><RznSocRecep>Ñandú Ltda</RznSocRecep><GiroRecep>Comercio</GiroRecep><DirRecep>Calle 1</DirRecep><CmnaRecep>Santiago</CmnaRecep></Receptor>' +
    `<Totales><MntNeto>${neto}</MntNeto><TasaIVA>19</TasaIVA><IVA>${iva}</IVA><MntTotal>${neto + iva}</MntTotal></Totales></Encabezado>\n${detalle}\n${ted}<TmstFirma>2026-01-10T10:11:12</TmstFirma></Documento></DTE>\n`, signer)
}

/**
 * Median of `runs` timings of `fn`, in ms, after one warm-up call. With `collect`, a full GC runs (untimed) before
 * each call: at 2000 DTEs the DOM of the previous run is ~100 MB, and collecting it inside the timed region moved the
 * per-DTE figure from ~0.6 to ~0.8 ms at random, which measures the previous run, not this one.
 */
function medianMs(runs: number, fn: () => unknown, collect = false): number {
  fn()
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    if (collect) Bun.gc(true)
    const start = performance.now()
    fn()
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)] ?? Number.NaN
}

const runsFor = (n: number): number => Math.max(3, Math.ceil(400 / n))

const dtes = Array.from({ length: Math.max(...SIZES) }, (_, i) => factura(i + 1))
const meanDteChars = Math.round(dtes.reduce((sum, d) => sum + d.length, 0) / dtes.length)

// The floor: one RSA-2048 PKCS#1 v1.5 SHA-1 signature over a SignedInfo-sized input, the key already a KeyObject.
const key = createPrivateKey(signer.privateKey.export({ type: 'pkcs8', format: 'pem' }))
const signedInfoSized = Buffer.alloc(700, 0x41)
const rsaMs = medianMs(400, () => sign('sha1', signedInfoSized, key))

console.log(`envelope bench: EnvioDTE of factura 33 DTEs, ~${meanDteChars} characters each; bun ${Bun.version}`)
console.log(`floor: one RSA-2048 signature = ${rsaMs.toFixed(3)} ms (median of 400); envelope timings: medians, full GC before each run\n`)
console.log('  DTEs | envelope ms | of which SetDTE parse+C14N+SHA-1 ms | per DTE ms (vs 1 DTE) | µs per KB | × floor')
let oneDteMs = 0
for (const n of SIZES) {
  const slice = dtes.slice(0, n)
  const envelope = buildEnvioDte({ dtes: slice, caratula, signer })
  const ms = medianMs(runsFor(n), () => buildEnvioDte({ dtes: slice, caratula, signer }), true)
  const digestMs = medianMs(runsFor(n), () => setDteDigest(envelope), true)
  if (n === 1) oneDteMs = ms
  const perDte = n === 1 ? Number.NaN : (ms - oneDteMs) / (n - 1)
  const perKb = (ms / (envelope.length / 1024)) * 1000
  console.log(
    `${String(n).padStart(6)} | ${ms.toFixed(2).padStart(11)} | ${digestMs.toFixed(2).padStart(35)} | ` +
      `${(Number.isNaN(perDte) ? '–' : perDte.toFixed(3)).padStart(21)} | ${perKb.toFixed(1).padStart(9)} | ${(ms / rsaMs).toFixed(1).padStart(7)}`,
  )
}
