// A supplier's EnvioDTE that came by mail (DESIGN §13 "Receiving", "Checks of a received EnvioDTE"): receiveEnvio,
// as the mailbox job calls it, stores the reception and queues the acuse de recibo (RespuestaDTE / RecepcionEnvio)
// to the sender, signed with the receiver's certificate; an unreadable file is kept (91) and answered too; the same
// attachment twice is processed once. Checked with xmllint against the SII's XSD and xmlsec1.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { receiveEnvio } from '../../src/services/recibidos'
import { uploadCertificate } from '../support/issuance'
import { API, envioFor, facturaPara, issueFrom, supplier } from '../support/received'
import { useTenant, testRut, type Tenant, type TestServer } from '../support/server'
import { SCHEMAS } from '../support/xml-tools'

let s: TestServer
let receiver: Tenant
let prov: Tenant
const FROM = 'facturacion@proveedora.example'

useTenant(
  (server, tenant) => {
    s = server
    receiver = tenant
  },
  async () => {
    prov = await supplier(s)
  },
)

const sql = <T>(query: string, ...params: Array<string | number>) => s.server.deps.store.sqlite.query(query).all(...params) as T[]
const mailOfEnvio = (envioId: string) =>
  sql<{ kind: string; to_address: string | null; status: string; subject: string; attachment: Uint8Array; attachment_name: string }>(
    'SELECT kind, to_address, status, subject, attachment, attachment_name FROM mail_outbox WHERE recibido_envio_id = ?', envioId,
  )

let work: string | undefined
function file(bytes: Uint8Array): string {
  work ??= mkdtempSync(join(tmpdir(), 'timbre-correo-'))
  const path = join(work, `${crypto.randomUUID()}.xml`)
  writeFileSync(path, bytes)
  return path
}
const run = (args: string[]) => {
  const r = Bun.spawnSync(args, { stdout: 'pipe', stderr: 'pipe' })
  return r.exitCode === 0 ? '' : r.stderr.toString('latin1')
}
const xmllint = (bytes: Uint8Array) => run(['xmllint', '--noout', '--nonet', '--schema', join(SCHEMAS, 'RespuestaEnvioDTE_v10.xsd'), file(bytes)])
const xmlsec1 = (bytes: Uint8Array) => run(['xmlsec1', '--verify', '--id-attr:ID', 'http://www.sii.cl/SiiDte:Resultado', file(bytes)])

describe('receiveEnvio from the mailbox', () => {
  test('without a certificate the reception is kept and no acuse can be signed', async () => {
    const doc = await issueFrom(s, prov, facturaPara(receiver))
    const r = await receiveEnvio(s.server.deps, { empresaId: receiver.empresa.id, bytes: envioFor(prov, receiver, [doc.xml]), origen: 'correo', fromAddress: FROM, fileName: 'sin-certificado.xml' })
    expect(r.created).toBe(true)
    expect(r.documentos.map((d) => d.estado)).toEqual(['recibido'])
    expect(mailOfEnvio(r.envio.id)).toEqual([])
  })

  test('an EnvioDTE: stored with origen correo, its attachment row, and the signed acuse queued to the sender', async () => {
    await uploadCertificate(s, receiver)
    const docs = [await issueFrom(s, prov, facturaPara(receiver)), await issueFrom(s, prov, facturaPara(receiver))]
    const bytes = envioFor(prov, receiver, docs.map((d) => d.xml))
    const r = await receiveEnvio(s.server.deps, { empresaId: receiver.empresa.id, bytes, origen: 'correo', fromAddress: FROM, fileName: 'ENVIO_DTE_123.xml' })
    expect(r).toMatchObject({ created: true, envio: { origen: 'correo', from_address: FROM, file_name: 'ENVIO_DTE_123.xml', estado_recep_env: 0 } })
    const record = (await s.request('GET', `${API}/recibidos/${r.documentos[0]!.id}`, { headers: { 'X-Api-Key': receiver.readKey } })).json
    expect(record.envio).toEqual({ id: r.envio.id, origen: 'correo', estado_recep_env: 0, glosa: r.envio.glosa })
    expect(sql<{ kind: string; outcome: string; from_address: string }>('SELECT kind, outcome, from_address FROM inbox_attachments WHERE empresa_id = ? AND outcome = ?', receiver.empresa.id, r.envio.id))
      .toEqual([{ kind: 'envio_dte', outcome: r.envio.id, from_address: FROM }])
    const [acuse, ...more] = mailOfEnvio(r.envio.id)
    expect(more).toEqual([])
    expect(acuse).toMatchObject({ kind: 'recepcion_envio', to_address: FROM, status: 'pending', subject: expect.stringMatching(/^Acuse de recibo EnvioDTE /) })
    expect(acuse!.attachment_name).toMatch(new RegExp(`^RespuestaDTE_${receiver.empresa.rut.replace('-', '')}_\\d+\\.xml$`))
    const xml = Buffer.from(acuse!.attachment).toString('latin1')
    expect(xml).toContain(`<RutResponde>${receiver.empresa.rut}</RutResponde>`)
    expect(xml).toContain(`<RutRecibe>${prov.empresa.rut}</RutRecibe>`)
    expect(xml).toContain('<NmbEnvio>ENVIO_DTE_123.xml</NmbEnvio>')
    expect(xml).toContain('<EstadoRecepEnv>0</EstadoRecepEnv>')
    for (const d of docs) expect(xml).toContain(`<Folio>${d.folio}</Folio>`)
    expect(xml.match(/<EstadoRecepDTE>0<\/EstadoRecepDTE>/g)).toHaveLength(2)
    expect(xmllint(acuse!.attachment)).toBe('')
    expect(xmlsec1(acuse!.attachment)).toBe('')
  })

  test('the same attachment twice is processed once: created false, nothing new, no second acuse', async () => {
    const doc = await issueFrom(s, prov, facturaPara(receiver))
    const bytes = envioFor(prov, receiver, [doc.xml])
    const input = { empresaId: receiver.empresa.id, bytes, origen: 'correo' as const, fromAddress: FROM, fileName: 'x.xml' }
    const first = await receiveEnvio(s.server.deps, input)
    const count = () => sql<{ n: number }>('SELECT count(*) AS n FROM mail_outbox WHERE empresa_id = ?', receiver.empresa.id)[0]!.n
    const before = count()
    const again = await receiveEnvio(s.server.deps, input)
    expect(again.created).toBe(false)
    expect(again.envio.id).toBe(first.envio.id)
    expect(again.documentos.map((d) => d.id)).toEqual(first.documentos.map((d) => d.id))
    expect(count()).toBe(before)
  })

  test('an unreadable attachment is kept (91, no documents) so it is not processed again, and answered with the acuse', async () => {
    const bytes = new TextEncoder().encode('<?xml version="1.0"?><EnvioDTE xmlns="http://www.sii.cl/SiiDte"><SetDTE ID="S"><Caratula>')
    const r = await receiveEnvio(s.server.deps, { empresaId: receiver.empresa.id, bytes, origen: 'correo', fromAddress: FROM, fileName: 'roto.xml' })
    expect(r).toMatchObject({ created: true, documentos: [], envio: { estado_recep_env: 91 } })
    const [acuse] = mailOfEnvio(r.envio.id)
    expect(acuse).toMatchObject({ kind: 'recepcion_envio', to_address: FROM })
    const xml = Buffer.from(acuse!.attachment).toString('latin1')
    expect(xml).toContain('<EstadoRecepEnv>91</EstadoRecepEnv>')
    expect(xmllint(acuse!.attachment)).toBe('')
    expect((await receiveEnvio(s.server.deps, { empresaId: receiver.empresa.id, bytes, origen: 'correo', fromAddress: FROM, fileName: 'roto.xml' })).created).toBe(false)
    // Imported by hand, the same unreadable file is a 400, as any unreadable file is.
    const res = await s.request('POST', `${API}/recibidos/importar`, { headers: { 'X-Api-Key': receiver.writeKey }, body: { xml_base64: Buffer.from(bytes).toString('base64') } })
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'xml_base64', code: 'INVALID_FORMAT' }))
  })

  test('another company never sees these receptions', async () => {
    const other = await s.tenant(testRut())
    expect((await s.request('GET', `${API}/recibidos`, { headers: { 'X-Api-Key': other.readKey } })).json.total_count).toBe(0)
  })
})

describe('/docs/json', () => {
  test('every /recibidos operation is an extension under the Recibidos tag', async () => {
    const doc = (await s.request('GET', '/docs/json')).json as { paths: Record<string, Record<string, { tags?: string[]; 'x-timbre-extension'?: boolean; operationId?: string }>> }
    const ops = Object.entries(doc.paths).filter(([p]) => p.startsWith(`${API}/recibidos`)).flatMap(([, m]) => Object.values(m))
    expect(ops.map((o) => o.operationId).sort()).toEqual(['accionRecibido', 'descargarRecibidoPdf', 'descargarRecibidoXml', 'importarRecibidos', 'listarRecibidos', 'obtenerRecibido'])
    for (const op of ops) expect({ op: op.operationId, tags: op.tags, ext: op['x-timbre-extension'] }).toEqual({ op: op.operationId, tags: ['Recibidos'], ext: true })
  })
})
