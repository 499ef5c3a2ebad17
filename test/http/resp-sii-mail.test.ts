// DESIGN §13 "The SII's own mail": the SII's RESULTADO_ENVIO that reaches the company's mailbox fills in why the SII
// rejected one of the company's DTEs (historial_sii, sii_status.motivos, glosa_sii); other companies' DTEs and
// documents the mail does not list are left alone.
import { describe, expect, test } from 'bun:test'
import { applyRespSii } from '../../src/services/resp-sii-mail'
import { readRespSii } from '../../src/xml/resp-sii'
import { facturaSimple, issue, useIssuer } from '../support/issuance'
import type { Tenant, TestServer } from '../support/server'

let s: TestServer
let t: Tenant
useIssuer((server, tenant) => {
  s = server
  t = tenant
})

const mail = (trackId: string, folio: number) =>
  Buffer.from(
    `<?xml version="1.0" encoding="ISO-8859-1"?>\n<RESULTADO_ENVIO><IDENTIFICACION><RUTEMISOR>${t.empresa.rut}</RUTEMISOR><RUTENVIA>7880442-4</RUTENVIA>` +
      `<TRACKID>${trackId}</TRACKID><TMSTRECEPCION>24/11/2026 10:00:00</TMSTRECEPCION><ESTADO>EPR</ESTADO></IDENTIFICACION>` +
      `<REVISIONENVIO><REVISIONDTE><FOLIO>${folio}</FOLIO><TIPODTE>33</TIPODTE><ESTADO>RCH</ESTADO>` +
      `<DETALLE>(DTE-3-101) Folio para este Tipo de documento ya fue recibido en el SII</DETALLE></REVISIONDTE></REVISIONENVIO></RESULTADO_ENVIO>\n`,
    'latin1',
  )

describe('applyRespSii', () => {
  test('a rejected DTE gains the mail\'s reason in historial_sii, sii_status.motivos and glosa_sii; a padded track id matches', async () => {
    const issued = await issue(s, t, { ...facturaSimple(), auto_send: false })
    expect(issued.status).toBe(201)
    const id = issued.json.id as string
    // As the tracking job leaves a DTE the SOAP channel rejected without saying why (the real SII's reasons come by mail).
    s.server.deps.store.sqlite.run(
      "UPDATE dtes SET estado = 'rechazado', track_id = '4567', glosa_sii = NULL, sii_status = ? WHERE id = ?",
      [JSON.stringify({ source: 'documento', track_id: '4567', estado_sii: 'RCH', glosa: null, glosa_estado: null, err_code: null, glosa_err: null, num_atencion: null, checked_at: new Date().toISOString(), raw_xml: '', motivos: [] }), id],
    )
    const read = readRespSii(mail('0000004567', issued.json.folio))!
    expect(applyRespSii(s.server.deps, { empresaId: t.empresa.id, read })).toEqual({ matched: 1 })
    const dte = (await s.request('GET', `/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': t.readKey } })).json
    const motivo = { codigo: 'DTE-3-101', glosa: 'Folio para este Tipo de documento ya fue recibido en el SII', nivel: 3 }
    expect(dte.sii_status.motivos).toEqual([expect.objectContaining(motivo)])
    expect(dte.tracking.glosa_sii).toContain('Folio para este Tipo de documento ya fue recibido')
    expect(dte.historial_sii.at(-1)).toMatchObject({ estado: 'RCH', motivos: [expect.objectContaining(motivo)] })
    expect(dte.estado).toBe('rechazado')
  })

  test('a mail about another track id or folio changes nothing', async () => {
    const issued = await issue(s, t, { ...facturaSimple(), auto_send: false })
    s.server.deps.store.sqlite.run("UPDATE dtes SET track_id = '999' WHERE id = ?", [issued.json.id])
    expect(applyRespSii(s.server.deps, { empresaId: t.empresa.id, read: readRespSii(mail('998', issued.json.folio))! })).toEqual({ matched: 0 })
    expect(applyRespSii(s.server.deps, { empresaId: t.empresa.id, read: readRespSii(mail('999', issued.json.folio + 1000))! })).toEqual({ matched: 0 })
    const dte = (await s.request('GET', `/api/v1/billing/dte/${issued.json.id}`, { headers: { 'X-Api-Key': t.readKey } })).json
    expect(dte.historial_sii).toEqual([])
  })
})
