// DESIGN §6 "99 / RPT already received": an SII that takes a re-upload under a new track id and later calls that
// envelope RPT, "envío repetido" (docs/sii-protocol.md §6.5), because it already holds the first one, whose answer was
// lost. The DTE is not rejected: getEstDte decides. A proxy on 127.0.0.1 plays that SII in front of the simulator (which
// itself answers a repeat with STATUS 99 and the first track id): it loses the first upload's answer after the
// simulator took it, turns the second upload's STATUS 99 into STATUS 0 with a new track id, and answers getEstUp on
// that track id with RPT. Everything else (token, getEstDte) is the simulator's own answer.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { DEFAULT_OPERATION_NS, respuesta, soapResponse } from '../../src/sii/simulator/soap'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const REPEAT_TRACK_ID = '0999999999'
const clock = testClock()
let sim: RunningSimulator
let proxy: ReturnType<typeof Bun.serve>
let uploads = 0
let s: TestServer
let tenant: Tenant

function repeatedEnvelope(): Response {
  const inner = respuesta([['TRACKID', REPEAT_TRACK_ID], ['ESTADO', 'RPT'], ['GLOSA', 'Envio Rechazado - Repetido'], ['NUM_ATENCION', '1 ( 2026/03/02 12:00:00)']])
  return new Response(soapResponse({ operation: 'getEstUp', namespace: DEFAULT_OPERATION_NS }, inner), { headers: { 'content-type': 'text/xml; charset=utf-8' } })
}

beforeAll(async () => {
  sim = await startSimulator({ processingDelayMs: 0 })
  proxy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const body = req.method === 'GET' ? undefined : new Uint8Array(await req.arrayBuffer())
      const headers = new Headers(req.headers)
      headers.delete('host')
      const forward = () => fetch(sim.url + url.pathname + url.search, { method: req.method, headers, body })
      if (url.pathname === '/cgi_dte/UPL/DTEUpload') {
        uploads++
        const answer = await (await forward()).text()
        if (uploads === 1) return new Response('<html><body>503 Service Unavailable</body></html>', { status: 503 })  // taken, its answer lost
        const asNew = answer.replace('<STATUS>99</STATUS>', '<STATUS>0</STATUS>').replace(/<TRACKID>\d+<\/TRACKID>/, `<TRACKID>${REPEAT_TRACK_ID}</TRACKID>`)
        return new Response(asNew, { headers: { 'content-type': 'text/xml' } })
      }
      if (url.pathname === '/DTEWS/QueryEstUp.jws' && new TextDecoder().decode(body).includes(REPEAT_TRACK_ID)) return repeatedEnvelope()
      return forward()
    },
  })
  s = await startTestServer({ clock, flags: { '--sii': `http://127.0.0.1:${proxy.port}`, '--submit-every': '1h', '--track-every': '1h' } })
  tenant = await s.tenant(testRut())
  await provisionIssuer(s, tenant, { folios: 10, tipos: [33] })
})

afterAll(async () => {
  await s.stop()
  await proxy.stop(true)
  await sim.stop()
})

test('a re-upload the SII calls RPT (envío repetido) leaves the DTE to getEstDte: aceptado, not rechazado, with no track id of the repeat', async () => {
  const res = await issue(s, tenant, facturaSimple())
  expect(res.status).toBe(201)
  const submit = siiSubmitJob(3_600_000)
  const track = siiTrackJob(3_600_000)
  await submit.runOnce(s.server.deps)  // the simulator takes it; the answer is lost (503)
  clock.advance(60_000)
  await submit.runOnce(s.server.deps)  // the same bytes again: STATUS 0 with a new track id
  const get = async () => (await s.request('GET', `/api/v1/billing/dte/${res.json.id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json
  expect(uploads).toBe(2)
  expect(await get()).toMatchObject({ estado: 'procesando', tracking: { track_id: REPEAT_TRACK_ID } })
  await track.runOnce(s.server.deps)  // getEstUp: RPT; getEstDte: DOK
  const dte = await get()
  expect(dte.estado).toBe('aceptado')
  expect(dte.tracking.track_id).toBeNull()
  expect(dte.tracking.estado_envio).toBe('RPT')
  expect(dte.sii_status).toMatchObject({ source: 'documento', estado_sii: 'DOK' })
  expect(dte.historial_sii.map((h: { operacion: string; estado: string; track_id: string | null }) => [h.operacion, h.estado, h.track_id])).toEqual([
    ['upload', '0', REPEAT_TRACK_ID],
    ['estado_envio', 'RPT', REPEAT_TRACK_ID],
    ['estado_dte', 'DOK', null],
  ])
}, 60_000)
