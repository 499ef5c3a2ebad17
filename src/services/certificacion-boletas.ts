// The boleta certification's documents (DESIGN §15 "Boletas"; research §1.7): the SII's boleta set is an instructions
// page, not a text file, so the person gives its cases; each boleta is issued once with the SET reference (CodRef SET,
// RazonRef CASO-<n>, as the boleta set asks) and all go in one EnvioBOLETA through the boleta API. The ConsumoFolios of
// those boletas, which some reviewers still ask for, is built on request. Also: which documents the muestras zip holds.
import { santiagoDate } from '../clock'
import { findCasos, findCertificacionEnvios, findDteByCertificacionClave, findDtesById } from '../db/certificacion-store'
import type { DteRow } from '../db/schema'
import { TIPO_DOC_REF_SET, type EmitirDte } from '../domain/emision'
import { TimbreError, validationError, type FieldError } from '../errors'
import { buildConsumoFolios } from '../xml/consumo-folios'
import { openActiveCertificado } from './certificados'
import { type CheckEmision, estadoCertificacion, type EstadoCertificacion, requireCertificacion, serialized } from './certificacion'
import { checkFolios, crearEnvio, emitirCaso, subirEnvio, type CertificacionDeps } from './certificacion-emitir'
import { requestHash } from './issue-dte'

export const MAX_CASOS_BOLETA = 50
const TIPOS_BOLETA = [39, 41]
/** A boleta to the final consumer names no receiver; the SII's generic RUT stands in (DESIGN §12). */
const CONSUMIDOR_FINAL = { rut: '66666666-6', razon_social: 'CONSUMIDOR FINAL' }

export interface CasoBoleta {
  readonly caso: string
  /** The boleta as POST /dte takes it, without referencias (the SET reference is added); receptor optional. */
  readonly documento: Omit<EmitirDte, 'receptor' | 'referencias'> & { receptor?: EmitirDte['receptor'] }
}

/** `RazonRef` of a boleta's SET reference: the boleta set names its cases CASO-1, CASO-2… */
export function razonBoleta(caso: string): string {
  const n = caso.trim().replace(/^CASO[\s-]*/i, '')
  return `CASO-${n}`
}

function checkCasos(casos: readonly CasoBoleta[]): FieldError[] {
  const errors: FieldError[] = []
  if (casos.length === 0) errors.push({ field: 'casos', code: 'TOO_FEW', message: 'Indique al menos un caso.' })
  if (casos.length > MAX_CASOS_BOLETA) errors.push({ field: 'casos', code: 'TOO_MANY', message: `Como máximo ${MAX_CASOS_BOLETA} casos.` })
  const vistos = new Set<string>()
  casos.forEach((c, i) => {
    const razon = razonBoleta(c.caso)
    if (vistos.has(razon)) errors.push({ field: `casos.${i}.caso`, code: 'INVALID_VALUE', message: `El caso ${c.caso} está repetido.` })
    vistos.add(razon)
    if (!TIPOS_BOLETA.includes(c.documento.tipo_dte))
      errors.push({ field: `casos.${i}.documento.tipo_dte`, code: 'INVALID_VALUE', message: 'El set de boletas emite boletas (39 o 41); las notas van por POST /dte.' })
  })
  return errors
}

export function emitirBoletas(deps: CertificacionDeps, input: { empresaId: string; casos: readonly CasoBoleta[]; check: CheckEmision }): Promise<EstadoCertificacion> {
  requireCertificacion(deps.store.db, input.empresaId)
  const errors = checkCasos(input.casos)
  if (errors.length > 0) throw validationError(errors)
  return serialized(input.empresaId, () => emitirBoletasNow(deps, input))
}

async function emitirBoletasNow(deps: CertificacionDeps, input: { empresaId: string; casos: readonly CasoBoleta[]; check: CheckEmision }): Promise<EstadoCertificacion> {
  const empresa = requireCertificacion(deps.store.db, input.empresaId)
  const today = santiagoDate(deps.clock.now())
  const requests = input.casos.map((c, i) => {
    const request: EmitirDte = {
      receptor: CONSUMIDOR_FINAL,
      ...c.documento,
      referencias: [{ tipo_doc_ref: TIPO_DOC_REF_SET, folio_ref: 0, fecha_ref: today, razon_ref: razonBoleta(c.caso) }],
      auto_send: false,
    }
    // The same case with the same boleta is one issuance, whatever is retried and on whatever day (the key hashes the
    // boleta as given, not the dated request); a changed boleta is a new one.
    const clave = `certificacion:boleta:${razonBoleta(c.caso)}:${requestHash(c.documento)}`
    return { caso: razonBoleta(c.caso), clave, request: { ...request, metadata: { ...(c.documento.metadata ?? {}), certificacion: { boleta: razonBoleta(c.caso), clave } } }, index: i }
  })
  // Every boleta passes the rules before the first is issued: a set stopped half way would leave boletas unsent.
  const errors = requests.flatMap((r) => {
    const checked = input.check(r.request, today)
    return checked.ok ? [] : checked.errors.map((e) => ({ ...e, field: `casos.${r.index}.documento.${e.field}` }))
  })
  if (errors.length > 0) throw validationError(errors)
  const nuevos = requests.filter((r) => !findDteByCertificacionClave(deps.store.db, empresa.id, r.clave))
  checkFolios(deps, empresa.id, nuevos.map((r) => r.request.tipo_dte))
  const dtes: DteRow[] = []
  for (const r of requests) {
    dtes.push(findDteByCertificacionClave(deps.store.db, empresa.id, r.clave) ?? (await emitirCaso(deps, { empresaId: empresa.id, clave: r.clave, request: r.request, caso: r.caso, today, check: input.check })))
  }
  const yaEnviados = new Set(findCertificacionEnvios(deps.store.db, empresa.id).filter((e) => e.clase === 'boletas').flatMap((e) => e.dte_ids))
  const porEnviar = dtes.filter((d) => !yaEnviados.has(d.id))
  if (porEnviar.length > 0) {
    const envio = await crearEnvio(deps, empresa, { clase: 'boletas', nombres: ['BOLETAS'], dtes: porEnviar })
    await subirEnvio(deps, envio)
  }
  return estadoCertificacion(deps, { empresaId: empresa.id })
}

/**
 * The ConsumoFolios (ConsumoFolio_v10.xsd) of the certification's boletas, signed with the active certificate.
 * SecEnvio counts the boleta envíos: a re-issued set makes the report a correction of the one before.
 */
export function consumoFolios(deps: Pick<CertificacionDeps, 'store' | 'vault' | 'clock'>, input: { empresaId: string }): Uint8Array {
  const empresa = requireCertificacion(deps.store.db, input.empresaId)
  const envios = findCertificacionEnvios(deps.store.db, empresa.id).filter((e) => e.clase === 'boletas')
  const dtes = [...findDtesById(deps.store.db, empresa.id, envios.flatMap((e) => e.dte_ids)).values()]
  if (dtes.length === 0)
    throw new TimbreError('NOT_FOUND', { message: 'Aún no hay boletas de certificación: emítalas con POST /certificacion/boletas.', context: { recurso: 'boletas' } })
  const now = deps.clock.now()
  const certificado = openActiveCertificado(deps, { empresaId: empresa.id, now })
  return buildConsumoFolios(
    {
      rutEmisor: empresa.rut,
      rutEnvia: certificado.rutFirmante,
      fchResol: empresa.fecha_resolucion,
      nroResol: 0,
      secEnvio: envios.length,
      // Dated by the last boleta envío, not the request: the same boletas give the same file whenever it is downloaded.
      tmstFirmaEnv: new Date(envios.at(-1)!.created_at),
      documentos: dtes.map((d) => ({ tipo: d.tipo_dte, folio: d.folio, fecha: d.fecha_emision, neto: d.monto_neto ?? 0, iva: d.iva ?? 0, exento: d.monto_exento ?? 0, total: d.monto_total })),
    },
    certificado.signer,
  )
}

/** The documents of the muestras zip: each set case's current document and the last simulation's (DESIGN §15). */
export function documentosDeMuestra(deps: Pick<CertificacionDeps, 'store'>, input: { empresaId: string }): DteRow[] {
  requireCertificacion(deps.store.db, input.empresaId)
  const casos = findCasos(deps.store.db, input.empresaId).flatMap((c) => (c.dte_id ? [c.dte_id] : []))
  const simulacion = findCertificacionEnvios(deps.store.db, input.empresaId).filter((e) => e.clase === 'simulacion').at(-1)?.dte_ids ?? []
  const dtes = findDtesById(deps.store.db, input.empresaId, [...casos, ...simulacion])
  return [...dtes.values()]
}

