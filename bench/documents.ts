// Issue 4 benchmark: documents built, stamped and signed per second on one core, beside the floor measured in the same
// run (one RSA-2048 signature + one CAF-key signature per document). Target: at least 60 % of the floor.
//   bun bench/documents.ts [seconds-per-measure]
import { createSign } from 'node:crypto'
import type { EmitirDte } from '../src/domain/emision'
import { buildDteXml, tedDataFor, type EmpresaEmisora } from '../src/xml/dte-xml'
import { toLatin1Bytes } from '../src/xml/latin1'
import { signDte } from '../src/xml/signature'
import { buildTed } from '../src/xml/ted'
import { makeCertificate, makeTestCaf } from '../test/support/pki'

const seconds = Number(process.argv[2] ?? 3)
const empresa: EmpresaEmisora = {
  rut: '76543210-3',
  razon_social: 'Comercializadora Ñandú Limitada',
  giro: 'Venta al por mayor de artículos de ferretería',
  acteco: [464903],
  direccion: 'Av. Providencia 1234, oficina 56',
  comuna: 'Providencia',
  ciudad: 'Santiago',
}
const request: EmitirDte = {
  tipo_dte: 33,
  fecha_emision: '2026-11-20',
  receptor: { rut: '76086428-5', razon_social: 'Ferretería y Construcción Ñuble Limitada', giro: 'Construcción', direccion: 'Av. O’Higgins 1234', comuna: 'Chillán', ciudad: 'Chillán' },
  detalle: [
    { nombre: 'Martillo carpintero 16 oz', cantidad: 3, precio: 8990, unidad: 'UN' },
    { nombre: 'Clavos 2½" (caja 1 kg)', cantidad: 2, precio: 2490, descuento_pct: 10 },
    { nombre: 'Servicio de despacho a obra', cantidad: 1, precio: 15000, ind_exe: 1 },
  ],
  referencias: [{ tipo_doc_ref: 801, folio_ref: 4512, fecha_ref: '2026-11-18', razon_ref: 'Orden de compra' }],
}
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

const sample = oneDocument(1)
console.log(`document: tipo 33, ${request.detalle.length} lines, ${sample.length} bytes signed; ${seconds} s per measure, one core`)
const payload = Buffer.alloc(1200, 7)
const floor = rate('floor: RSA-2048 + CAF-key signature', () => floorOnce(payload))
const docs = rate('documents built, stamped and signed', (i) => oneDocument(i + 2))
console.log(`ratio: ${((docs / floor) * 100).toFixed(1)} % of the floor (target ≥ 60 %)`)
