// `serve --demo` (DESIGN §13 "Simulator"): two invoices from a simulated supplier, so the received documents' screens
// and actions have data from the first start. They travel the real path, not a shortcut: the supplier (its own test
// certificate, a CAF under the simulator's IDK 900) stamps and signs two 33s to the demo company, uploads its envelope
// to the in-process simulator (so the SII knows them, and accepting or claiming them at the simulated
// RegistroReclamoDTE works), and the same envelope is received as if it had come by mail (origen `demo`): the same
// checks, the same records. Made once: a demo company that has received anything is left alone.
import { santiagoDate, santiagoTimestamp } from '../clock'
import { makeDemoPfx } from '../crypto/demo-certificate'
import { openPfx } from '../crypto/pfx'
import { findEmpresaById } from '../db/empresa-store'
import { countRecibidoEnvios } from '../db/recibido-store'
import type { EmpresaRow } from '../db/schema'
import type { EmitirDte } from '../domain/emision'
import type { SiiCompany } from '../sii/client/client'
import { issueCaf, simulatorAuthorityKey } from '../sii/simulator/caf-issuer'
import { SIMULATOR_IDK } from '../xml/authority-keys'
import { parseCaf } from '../xml/caf'
import { buildDteXml, tedDataFor, type EmpresaEmisora } from '../xml/dte-xml'
import { buildEnvioDte, envelopeBytes, SII_RUT } from '../xml/envelope'
import { signDte } from '../xml/signature'
import { buildTed } from '../xml/ted'
import type { Deps } from './deps'
import { receiveEnvio } from './recibidos'

/** A supplier that exists only in the simulator: its RUT is valid and no real company's. */
export const DEMO_PROVEEDOR: EmpresaEmisora = {
  rut: '77777666-5',
  razon_social: 'Distribuidora Proveedora Demo Ltda.',
  giro: 'Venta al por mayor de materiales de construcción',
  acteco: [466302],
  direccion: 'Camino a Melipilla 8500',
  comuna: 'Maipú',
  ciudad: 'Santiago',
  fecha_resolucion: '2014-08-22',
  numero_resolucion: 0,
}
const PROVEEDOR_SIGNER_RUT = '12345678-5'
const PROVEEDOR_EMAIL = 'dte@proveedora-demo.invalid'

function invoiceTo(empresa: EmpresaRow, lines: EmitirDte['detalle']): EmitirDte {
  return {
    tipo_dte: 33,
    receptor: { rut: empresa.rut, razon_social: empresa.razon_social, giro: empresa.giro, direccion: empresa.direccion, comuna: empresa.comuna, ciudad: empresa.ciudad },
    detalle: lines,
  } as EmitirDte
}

export type DemoRecibidosOutcome = { readonly kind: 'created'; readonly documentos: number; readonly uploaded: boolean } | { readonly kind: 'kept' }

export async function ensureDemoRecibidos(deps: Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'config' | 'sii'>, input: { empresaId: string }): Promise<DemoRecibidosOutcome> {
  const empresa = findEmpresaById(deps.store.db, input.empresaId)
  if (!empresa || !empresa.is_demo || countRecibidoEnvios(deps.store.db, empresa.id) > 0) return { kind: 'kept' }
  const now = deps.clock.now()
  const today = santiagoDate(now)
  const timestamp = santiagoTimestamp(now)
  const certificado = openPfx(makeDemoPfx({ rutFirmante: PROVEEDOR_SIGNER_RUT, nombre: 'FIRMANTE PROVEEDORA DEMO', password: 'demo', now, validDays: 365 }), 'demo')
  const caf = parseCaf(issueCaf({
    rut: DEMO_PROVEEDOR.rut, razonSocial: DEMO_PROVEEDOR.razon_social, tipoDte: 33, folioDesde: 1, folioHasta: 100,
    fechaAutorizacion: today, idk: SIMULATOR_IDK, authorityPrivateKey: simulatorAuthorityKey(),
  }))
  // Folios from the clock's seconds: a data dir made again on another day gets other folios, as a real supplier would.
  const first = 1 + (Math.floor(now.getTime() / 1000) % 49) * 2
  const requests = [
    invoiceTo(empresa, [{ nombre: 'Cemento especial 25 kg', cantidad: 40, precio: 5290 }, { nombre: 'Despacho a obra', cantidad: 1, precio: 25000 }]),
    invoiceTo(empresa, [{ nombre: 'Fierro estriado 12 mm x 6 m', cantidad: 60, precio: 7490 }]),
  ]
  const dtes = requests.map((request, i) => {
    const input = { empresa: DEMO_PROVEEDOR, folio: first + i, request, today }
    const ted = buildTed({ ...tedDataFor(input), timestamp }, caf)
    return signDte(buildDteXml({ ...input, ted, tmstFirma: timestamp }), certificado.signer)
  })
  // Two envelopes of the same signed DTEs, as a real supplier sends them: one to the SII (Caratula RutReceptor = the
  // SII), one to the receiver (RutReceptor = the receiver, DESIGN §13).
  const envelopeTo = (rutReceptor: string) => envelopeBytes(buildEnvioDte({
    dtes,
    caratula: {
      rutEmisor: DEMO_PROVEEDOR.rut, rutEnvia: certificado.rutFirmante, rutReceptor,
      fchResol: DEMO_PROVEEDOR.fecha_resolucion!, nroResol: DEMO_PROVEEDOR.numero_resolucion!, tmstFirmaEnv: timestamp,
    },
    signer: certificado.signer,
  }))
  const fileName = `EnvioDTE_${DEMO_PROVEEDOR.rut}_${first}.xml`
  // The demo is always served by the in-process simulator (DESIGN §10), the supplier too.
  const company: SiiCompany = { rut: DEMO_PROVEEDOR.rut, ambiente: 'certificacion', isDemo: true }
  const creds = { certificateId: `demo-proveedor:${empresa.id}`, rutFirmante: certificado.rutFirmante, signer: certificado.signer }
  const upload = await deps.sii.upload(company, creds, 'soap', envelopeTo(SII_RUT), fileName)
  if (upload.kind !== 'received' && upload.kind !== 'already_received') deps.log.warn('demo.recibidos_upload', { outcome: upload.kind })
  const received = await receiveEnvio(deps, { empresaId: empresa.id, bytes: envelopeTo(empresa.rut), origen: 'demo', fromAddress: PROVEEDOR_EMAIL, fileName })
  return { kind: 'created', documentos: received.documentos.length, uploaded: upload.kind === 'received' || upload.kind === 'already_received' }
}
