// The RCV sync's leases (services/rcv.ts, db/rcv-store.ts) on a real SQLite store: a process that dies mid-sync keeps
// the on-demand request, which the job takes again once the lease runs out; a sync with no request that died reads
// "interrumpido", never "sincronizado"; a sync whose lease ran out and was overtaken writes nothing over the newer copy
// and announces nothing. The portal is a client this file controls (a read that never ends stands for a dead process).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { requestRcvSync } from '../../src/db/rcv-store'
import { estadoRcv, leaseMs, runRcvPass, sincronizarPeriodo } from '../../src/services/rcv'
import type { RcvPortalClient, RcvReadOutcome } from '../../src/sii/portal/types'
import { testClock } from '../support/clock'
import { uploadCertificate } from '../support/issuance'
import { detalleRcv } from '../support/rcv-mirror'
import { resumenDeDetalles, SECCIONES_COMPRAS, type DetalleRcv } from '../../src/domain/rcv'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const clock = testClock()
let s: TestServer
let t: Tenant
const P = '202610'

beforeAll(async () => {
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  t = await s.tenant(testRut(), 'Empresa de Arriendo SpA')
  await uploadCertificate(s, t)
})
afterAll(() => s?.stop())

function answer(folios: number[]): RcvReadOutcome {
  const detalle: DetalleRcv[] = folios.map((folio) => detalleRcv({ rut: '76086428-5', razonSocial: 'Proveedor', folio, fecha: '2026-10-05', neto: 1000, iva: 190 }))
  const vacia = { resumen: [], detalle: [] }
  return {
    kind: 'ok',
    compras: { periodo: P, secciones: Object.fromEntries(SECCIONES_COMPRAS.map((x) => [x, x === 'registro' ? { resumen: resumenDeDetalles(detalle), detalle } : vacia])) as never },
    ventas: { periodo: P, ...vacia },
    diferidas: 0,
  }
}
const portal = (outcome: () => Promise<RcvReadOutcome>): RcvPortalClient => ({ leerRcv: outcome })
const never = portal(() => new Promise<RcvReadOutcome>(() => {}))
const deps = (p: RcvPortalClient) => ({ ...s.server.deps, rcvPortal: p })
const estado = () => estadoRcv(s.server.deps, { empresaId: t.empresa.id, periodo: P })
const events = () => (s.server.deps.store.sqlite.query("SELECT body FROM events WHERE empresa_id = ? AND type = 'rcv.sincronizado' ORDER BY id").all(t.empresa.id) as Array<{ body: string }>).map((e) => JSON.parse(e.body).data)
const folios = () => (s.server.deps.store.sqlite.query('SELECT folio FROM rcv_detalles WHERE empresa_id = ? ORDER BY folio').all(t.empresa.id) as Array<{ folio: number }>).map((r) => r.folio)

test('a sync that dies keeps its request; once the lease runs out the job reads the period again', async () => {
  requestRcvSync(s.server.deps.store.db, t.empresa.id, P, clock.now().toISOString())
  void sincronizarPeriodo(deps(never), { empresaId: t.empresa.id, periodo: P })
  await Bun.sleep(20)
  expect(estado().estado).toBe('sincronizando')
  // Another pass meanwhile finds the period held.
  expect(await runRcvPass(deps(portal(async () => answer([1]))))).toBe(0)
  clock.advance(leaseMs(s.server.deps.config) + 1000)
  expect(estado().estado).toBe('pendiente')
  expect(await runRcvPass(deps(portal(async () => answer([1, 2]))))).toBe(1)
  const after = estado()
  expect({ estado: after.estado, solicitado: after.solicitado_at, falla: after.falla }).toEqual({ estado: 'sincronizado', solicitado: null, falla: null })
  expect(folios()).toEqual([1, 2])
})

test('a sync with no request that died reads interrumpido, with the last good copy', async () => {
  const good = estado().sincronizado_at
  void sincronizarPeriodo(deps(never), { empresaId: t.empresa.id, periodo: P })
  await Bun.sleep(20)
  clock.advance(leaseMs(s.server.deps.config) + 1000)
  const e = estado()
  expect({ estado: e.estado, motivo: e.falla?.motivo, good: e.sincronizado_at }).toEqual({ estado: 'fallido', motivo: 'interrumpido', good })
  expect(folios()).toEqual([1, 2])
})

test('a sync overtaken after its lease ran out writes nothing and announces nothing', async () => {
  let finishLate: (o: RcvReadOutcome) => void = () => {}
  const late = sincronizarPeriodo(deps(portal(() => new Promise((resolve) => (finishLate = resolve)))), { empresaId: t.empresa.id, periodo: P })
  await Bun.sleep(20)
  clock.advance(leaseMs(s.server.deps.config) + 1000)
  const before = events().length
  expect(await sincronizarPeriodo(deps(portal(async () => answer([7]))), { empresaId: t.empresa.id, periodo: P })).toBe('ok')
  finishLate(answer([99]))
  expect(await late).toBe('ocupado')
  expect(folios()).toEqual([7])
  expect(events().slice(before).map((e) => e.resultado)).toEqual(['ok'])
  // A late failure is dropped the same way.
  let failLate: (o: RcvReadOutcome) => void = () => {}
  const lateFail = sincronizarPeriodo(deps(portal(() => new Promise((resolve) => (failLate = resolve)))), { empresaId: t.empresa.id, periodo: P })
  await Bun.sleep(20)
  clock.advance(leaseMs(s.server.deps.config) + 1000)
  expect(await sincronizarPeriodo(deps(portal(async () => answer([8]))), { empresaId: t.empresa.id, periodo: P })).toBe('ok')
  failLate({ kind: 'failed', motivo: 'sin_conexion', mensaje: 'tarde' })
  expect(await lateFail).toBe('ocupado')
  expect(estado().estado).toBe('sincronizado')
})
