// Shared bench helpers: a compiled server on a temp data dir, percentiles, the crypto floor.
import { createSign, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EmitirDte } from '../src/domain/emision'
import type { EmpresaEmisora } from '../src/xml/dte-xml'

export const ROOT = join(import.meta.dir, '..')
export const BINARY = join(ROOT, 'dist/timbre')

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export function summarize(latenciesMs: number[]): { p50: number; p99: number; n: number } {
  const sorted = [...latenciesMs].sort((a, b) => a - b)
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), n: sorted.length }
}

export function run(args: string[], env: Record<string, string> = {}): string {
  const p = Bun.spawnSync([BINARY, ...args], { env: { ...process.env, ...env } })
  if (p.exitCode !== 0) throw new Error(`timbre ${args.join(' ')}: ${p.stderr.toString()}`)
  return p.stdout.toString()
}

/**
 * `timbre serve` on a free port; resolves with its URL once it logs server.started. `onOutput` gets the rest of its
 * stdout (the JSON log lines) as it comes, in chunks that may split a line.
 */
export async function startServer(dataDir: string, extra: string[] = [], onOutput?: (chunk: string) => void): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
  const proc = Bun.spawn([BINARY, 'serve', '--port', '0', '--data-dir', dataDir, '--sii', 'simulado', '--rate-limit', '0', ...extra], {
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error('server exited before starting')
    buffer += Buffer.from(value).toString()
    const m = /"listen":"([^"]+)"/.exec(buffer)
    if (m) {
      onOutput?.(buffer)
      void (async () => {
        for (;;) {
          const { value: more, done: ended } = await reader.read()
          if (ended) return
          onOutput?.(Buffer.from(more).toString())
        }
      })()
      return { url: m[1]!, proc }
    }
  }
}

/** One RSA-2048 signature plus one 512-bit CAF-key signature per document: what issuance cannot go below. */
export function cryptoFloorPerSecond(seconds: number): number {
  const doc = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const caf = generateKeyPairSync('rsa', { modulusLength: 512, publicExponent: 3 }).privateKey
  const data = Buffer.alloc(1200, 7)
  const once = () => {
    createSign('RSA-SHA1').update(data).sign(doc)
    createSign('RSA-SHA1').update(data).sign(caf)
  }
  for (let i = 0; i < 100; i++) once()
  let n = 0
  const start = performance.now()
  while (performance.now() - start < seconds * 1000) {
    once()
    n++
  }
  return n / ((performance.now() - start) / 1000)
}

export function rssMb(pid: number): number {
  const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8') as string
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

/** The one-page invoice every document benchmark signs or prints: 3 lines (one exempt), a discount, a reference. */
export const BENCH_EMPRESA: EmpresaEmisora = {
  rut: '76543210-3',
  razon_social: 'Comercializadora Ñandú Limitada',
  giro: 'Venta al por mayor de artículos de ferretería',
  acteco: [464903],
  direccion: 'Av. Providencia 1234, oficina 56',
  comuna: 'Providencia',
  ciudad: 'Santiago',
}
export const BENCH_FACTURA: EmitirDte = {
  tipo_dte: 33,
  fecha_emision: '2026-11-20',
  receptor: { rut: '76086428-5', razon_social: 'Ferretería y Construcción Ñuble Limitada', giro: 'Construcción', direccion: 'Av. O’Higgins 1234', comuna: 'Chillán', ciudad: 'Chillán' },
  detalle: [
    { nombre: 'Martillo carpintero 16 oz', cantidad: 3, precio: 8990, unidad: 'UN' },
    { nombre: 'Clavos 2½" (caja 1 kg)', cantidad: 2, precio: 2490, descuento_pct: 10 },
    { nombre: 'Servicio de despacho a obra', cantidad: 1, precio: 15000, ind_exe: 1 },
  ],
  referencias: [{ tipo_doc_ref: '801', folio_ref: 4512, fecha_ref: '2026-11-18', razon_ref: 'Orden de compra' }],
}
