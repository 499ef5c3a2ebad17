// workers/pool.ts (issue 17): tasks run in Bun Workers and answer exactly what they answer inline; a TimbreError crosses
// with its code and words; a task past its time limit is killed with its worker, its caller gets a 503 naming it, and
// the pool goes on with a fresh worker while the other worker kept serving.
import { afterAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { getPriority } from 'node:os'
import { join } from 'node:path'
import { TimbreError } from '../../../src/errors'
import { WorkerPool } from '../../../src/workers/pool'
import { signerMaterial } from '../../../src/workers/signing-keys'
import { WORKER_NICE } from '../../../src/workers/limits'
import { signDteTask, type SignDteTask } from '../../../src/workers/tasks'
import { exportPfx, makeCertificate, makeTestCaf } from '../../support/pki'
import { tempDir } from '../../support/server'

const EMPRESA = { rut: '76543210-3', razon_social: 'Comercializadora Ñandú Limitada', giro: 'Ferretería', acteco: [464903], direccion: 'Av. Providencia 1234', comuna: 'Providencia', ciudad: 'Santiago' }
const identity = makeCertificate({ rut: '7880442-4', keySlot: 9 })
const caf = makeTestCaf({ rut: EMPRESA.rut, razonSocial: EMPRESA.razon_social, folioDesde: 1, folioHasta: 1000, fechaAutorizacion: '2026-11-01' }).caf
const task = (folio: number): SignDteTask => ({
  empresa: EMPRESA,
  folio,
  request: { tipo_dte: 33, receptor: { rut: '76086428-5', razon_social: 'Ñuble Ltda.', giro: 'Construcción', direccion: 'Calle 1', comuna: 'Chillán', ciudad: 'Chillán' }, detalle: [{ nombre: 'Martillo', cantidad: 2, precio: 8990 }] },
  today: '2026-11-24',
  timestamp: '2026-11-24T10:00:00',
  caf: { id: 'caf-1', cafXml: caf.cafXml, pkcs8: new Uint8Array(caf.privateKey.export({ type: 'pkcs8', format: 'der' })) },
  signer: signerMaterial('cert-1', identity.signer, new Uint8Array(identity.signer.privateKey.export({ type: 'pkcs8', format: 'der' }))),
})

/** A PKCS#12 file with 1 000 000 key-derivation iterations: node-forge needs seconds to open it. */
function slowPfx(): Uint8Array {
  const dir = tempDir('timbre-pool-')
  writeFileSync(join(dir, 'key.pem'), identity.privateKeyPem)
  writeFileSync(join(dir, 'cert.pem'), identity.certificatePem)
  const made = Bun.spawnSync(['openssl', 'pkcs12', '-export', '-inkey', 'key.pem', '-in', 'cert.pem', '-passout', 'pass:x', '-iter', '1000000', '-out', 'slow.pfx'], { cwd: dir })
  if (made.exitCode !== 0) throw new Error(made.stderr.toString())
  return new Uint8Array(readFileSync(join(dir, 'slow.pfx')))
}

const lost: Array<{ reason: string; kind: string }> = []
const pool = new WorkerPool({ size: 2, limitsMs: { 'open-pfx': 300 }, onWorkerLost: (e) => lost.push(e) })
afterAll(() => pool.close())

test('a DTE signed in a worker is byte for byte the one signed inline', async () => {
  const inWorker = await Promise.all([1, 2, 3, 4].map((f) => pool.run('sign-dte', task(f))))
  expect(inWorker.map((bytes) => Buffer.from(bytes).toString('latin1'))).toEqual([1, 2, 3, 4].map((f) => Buffer.from(signDteTask(task(f))).toString('latin1')))
  expect(Buffer.from(inWorker[0]!).toString('latin1')).toContain('<F>1</F>')
})

/** Each thread of this process: its name and nice value (Linux's /proc; the suite runs on Linux). */
function threads(): Array<{ tid: number; name: string; nice: number }> {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      return [{ tid: Number(tid), name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(), nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) }]
    } catch {
      return []  // a thread that ended between the listing and the read
    }
  })
}

test('the workers\' threads yield to the request thread (WORKER_NICE below it); the request thread keeps its priority', async () => {
  expect(process.platform).toBe('linux')
  const mine = getPriority(0)
  await Promise.all([pool.run('sign-dte', task(7)), pool.run('sign-dte', task(8))])
  const all = threads()
  expect(all.filter((t) => t.name === 'Worker' && t.nice === Math.min(19, mine + WORKER_NICE)).length).toBeGreaterThanOrEqual(2)
  expect(all.find((t) => t.tid === process.pid)!.nice).toBe(mine)
})

test('a TimbreError thrown in the worker reaches the caller as the same error', async () => {
  const pfx = exportPfx(identity, 'correcta', '3des')
  const err = await pool.run('open-pfx', { pfx, password: 'equivocada' }).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(TimbreError)
  expect((err as TimbreError).code).toBe('INVALID_CERTIFICATE')
  expect((err as TimbreError).message).toMatch(/contraseña/i)
  const opened = await pool.run('open-pfx', { pfx, password: 'correcta' })
  expect(opened.rutFirmante).toBe('7880442-4')
  expect(opened.pkcs8.byteLength).toBeGreaterThan(1000)
}, 30_000)

test('a task past its limit is killed and answered 503; the other worker kept signing; a fresh worker takes the next task', async () => {
  const slow = pool.run('open-pfx', { pfx: slowPfx(), password: 'x' })
  const started = performance.now()
  const meanwhile = await Promise.all([10, 11, 12].map((f) => pool.run('sign-dte', task(f))))
  expect(meanwhile).toHaveLength(3)
  const err = await slow.catch((e: unknown) => e)
  expect(performance.now() - started).toBeLessThan(5_000)
  expect(err).toBeInstanceOf(TimbreError)
  expect((err as TimbreError).code).toBe('SERVICE_UNAVAILABLE')
  expect((err as TimbreError).extra.context).toEqual({ tarea: 'open-pfx', motivo: 'tiempo_limite' })
  expect((err as TimbreError).message).toContain('apertura del certificado')
  expect(lost).toEqual([{ reason: 'timeout', kind: 'open-pfx', message: expect.any(String) } as never])
  const after = await Promise.all([20, 21, 22, 23].map((f) => pool.run('sign-dte', task(f))))
  expect(after.map((b, i) => Buffer.from(b).toString('latin1').includes(`<F>${20 + i}</F>`))).toEqual([true, true, true, true])
}, 30_000)

test('signatures pipelined behind a killed one are not failed with it: each goes back to the queue and is judged on its own', async () => {
  // 1 ms: a fresh worker's first task (it loads the task code) always takes longer, so each task in turn is the one
  // running when its worker is killed. Four signatures on one worker: one running, three pipelined behind it.
  const killed: string[] = []
  const strict = new WorkerPool({ size: 1, limitsMs: { 'sign-dte': 1 }, onWorkerLost: (e) => killed.push(e.reason) })
  const outcomes = await Promise.all([30, 31, 32, 33].map((f) => strict.run('sign-dte', task(f)).then(() => 'firmado', (e: unknown) => (e as TimbreError).extra.context?.motivo)))
  await strict.close()
  expect(outcomes).toEqual(['tiempo_limite', 'tiempo_limite', 'tiempo_limite', 'tiempo_limite'])
  expect(killed).toEqual(['timeout', 'timeout', 'timeout', 'timeout']) // one worker killed per task, none as a bystander
}, 30_000)

test('work other than signing never takes every worker: a signature is served while two slow certificates wait their turn', async () => {
  const fair = new WorkerPool({ size: 2, limitsMs: { 'open-pfx': 2_000 } })
  const pfx = slowPfx()
  const settled: string[] = []
  const opening = [1, 2].map((n) => fair.run('open-pfx', { pfx, password: 'x' }).then(() => `pfx${n}`, () => `pfx${n}`).then((name) => settled.push(name)))
  await fair.run('sign-dte', task(40))
  settled.push('firma')
  await Promise.all(opening)
  await fair.close()
  expect(settled[0]).toBe('firma')
}, 30_000)

test('under a steady stream of signatures, other work still gets its turn', async () => {
  const busy = new WorkerPool({ size: 2 })
  let feeding = true
  let signed = 0
  let folio = 100
  const feeder = async () => {
    while (feeding) {
      await busy.run('sign-dte', task(folio++ % 900 + 1))
      signed++
    }
  }
  const feeders = Array.from({ length: 16 }, feeder)
  await Bun.sleep(300)
  const cafXml = makeTestCaf({ rut: EMPRESA.rut, razonSocial: EMPRESA.razon_social, folioDesde: 1, folioHasta: 10, fechaAutorizacion: '2026-11-01' }).xml
  const started = performance.now()
  const read = await busy.run('read-caf', { cafXml, allowSimulator: true })
  const waited = performance.now() - started
  const signedMeanwhile = signed
  feeding = false
  await Promise.all(feeders)
  await busy.close()
  expect(read.folioHasta).toBe(10)
  expect(waited).toBeLessThan(2_000) // served while the stream went on, not after it
  expect(signedMeanwhile).toBeGreaterThan(0)
}, 30_000)

test('closing the pool refuses what is still queued with a 503', async () => {
  const closing = new WorkerPool({ size: 1 })
  const queued = Array.from({ length: 5 }, (_, i) => closing.run('sign-dte', task(100 + i)).then(() => 'ok', (e: unknown) => (e as TimbreError).code))
  await closing.close()
  const outcomes = await Promise.all(queued)
  expect(outcomes.filter((o) => o === 'SERVICE_UNAVAILABLE').length).toBeGreaterThanOrEqual(4)
  expect(await closing.run('sign-dte', task(200)).catch((e: unknown) => (e as TimbreError).code)).toBe('SERVICE_UNAVAILABLE')
})
