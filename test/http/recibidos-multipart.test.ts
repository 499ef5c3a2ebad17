import { expect, test } from 'bun:test'
import { API, envioFor, facturaPara, issueFrom, supplier } from '../support/received'
import { useTenant, type Tenant, type TestServer } from '../support/server'
let s: TestServer
let receiver: Tenant
useTenant((server, t) => { s = server; receiver = t })
test('multipart archivo: 201, then 200; a missing archivo is 400 at archivo', async () => {
  const prov = await supplier(s)
  const doc = await issueFrom(s, prov, facturaPara(receiver))
  const bytes = envioFor(prov, receiver, [doc.xml])
  const send = async (form: FormData) => {
    const res = await fetch(`${s.url}${API}/recibidos/importar`, { method: 'POST', headers: { 'X-Api-Key': receiver.writeKey }, body: form })
    return { status: res.status, json: (await res.json()) as any }
  }
  const form = () => { const f = new FormData(); f.append('archivo', new File([Buffer.from(bytes)], 'ENVIO.xml', { type: 'application/xml' })); return f }
  const first = await send(form())
  expect(first.status).toBe(201)
  expect(first.json.documentos).toEqual([expect.objectContaining({ folio: doc.folio, estado: 'recibido' })])
  expect((await send(form())).status).toBe(200)
  const empty = new FormData(); empty.append('otro', 'x')
  const bad = await send(empty)
  expect(bad.status).toBe(400)
  expect(bad.json.details).toContainEqual(expect.objectContaining({ field: 'archivo', code: 'REQUIRED' }))
  const notXml = new FormData(); notXml.append('archivo', new File([new TextEncoder().encode('hola')], 'x.txt'))
  const nx = await send(notXml)
  expect(nx.status).toBe(400)
  expect(nx.json.details).toContainEqual(expect.objectContaining({ field: 'archivo', code: 'INVALID_FORMAT' }))
  const file = s.server.deps.store.sqlite.query('SELECT file_name FROM recibidos_envios WHERE id = (SELECT envio_id FROM recibidos WHERE id = ?)').get(first.json.documentos[0].id) as { file_name: string }
  expect(file.file_name).toBe('ENVIO.xml')
}, 60_000)
