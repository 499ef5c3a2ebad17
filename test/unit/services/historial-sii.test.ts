// historial_sii keeps what the SII said that was new: an upload answer repeated at every retry (STATUS 1, forever)
// adds one line, not one per attempt (services/dtes.ts recordSiiAnswer).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { findDte } from '../../../src/db/dte-store'
import { recordSiiAnswer, type SiiAnswer } from '../../../src/services/dtes'
import { facturaSimple, issue, provisionIssuer } from '../../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../../support/server'

let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { folios: 5, tipos: [33] })
})
afterAll(() => s.stop())

test('identical upload answers add one line; a different one adds another', async () => {
  const id = (await issue(s, t, facturaSimple({ auto_send: false }))).json.id as string
  const db = s.server.deps.store.db
  const row = findDte(db, t.empresa.id, id)!
  const notAuthorized: SiiAnswer = { canal: 'soap', operacion: 'upload', trackId: null, estado: '1', glosa: 'El Sender no tiene permiso para enviar', motivos: [] }
  for (let attempt = 0; attempt < 5; attempt++) recordSiiAnswer(db, row, notAuthorized, new Date(Date.UTC(2026, 0, 1, attempt)).toISOString())
  recordSiiAnswer(db, row, { ...notAuthorized, estado: '0', glosa: 'Upload OK', trackId: '42' }, '2026-01-02T00:00:00.000Z')
  const record = (await s.request('GET', `/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': t.readKey } })).json
  expect(record.historial_sii.map((h: { estado: string }) => h.estado)).toEqual(['1', '0'])
})
