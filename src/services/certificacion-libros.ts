// The libros the set of tests asks for (DESIGN §15 `GET /certificacion/libros/{tipo}`, `POST /certificacion/libros/enviar`;
// research §1.4): Libro de Ventas from the BASICO (or EXENTA) documents issued, Libro de Compras from the set's grid,
// Libro de Guías from the GUIA DE DESPACHO set's guías; signed with the company's certificate, uploaded with DTEUpload and
// followed until the SII answers LOK or a rejection. The lines and totals are domain/libros.ts; the XML xml/libro-*.ts.
import { isoTimestamp, santiagoDate } from '../clock'
import {
  findCasos, findCertificacionEnvios, findDtesById, findDueCertificacionEnvios, insertCertificacionEnvio, updateCertificacionEnvio,
} from '../db/certificacion-store'
import { findEnvio, insertEnvio, setEnvioTrackId } from '../db/envio-store'
import type { CertificacionEnvioRow, DteRow, EmpresaRow } from '../db/schema'
import { RECEPTOR_SET_NACIONAL } from '../domain/certificacion-casos'
import { backoffMs } from '../domain/estados'
import { FOLIO_NOTIFICACION, libroCompras, libroGuias, libroVentas, type LibroError } from '../domain/libros'
import { glosaDeMotivos } from '../domain/sii-respuestas'
import type { NombreSet } from '../domain/set-pruebas'
import { TimbreError } from '../errors'
import { buildLibroCompraVenta, type CaratulaLibro } from '../xml/libro-cv'
import { buildLibroGuia } from '../xml/libro-guia'
import type { Signer } from '../domain/signer'
import { openActiveCertificado } from './certificados'
import { documentosPorCaso, estadoCertificacion, type EstadoCertificacion, fuentesDeLibros, requireCertificacion, serialized, type SetGuardado, setsGuardados } from './certificacion'
import { POR_SUBIR, tomarParaSubir, type CertificacionDeps } from './certificacion-emitir'
import { siiContextOf } from './submit-dte'

export const TIPOS_LIBRO = ['ventas', 'compras', 'guias'] as const
export type TipoLibro = (typeof TIPOS_LIBRO)[number]

export function isTipoLibro(value: string): value is TipoLibro {
  return (TIPOS_LIBRO as readonly string[]).includes(value)
}

const SET_DEL_LIBRO: Readonly<Record<TipoLibro, NombreSet>> = { ventas: 'LIBRO DE VENTAS', compras: 'LIBRO DE COMPRAS', guias: 'LIBRO DE GUIAS' }

/**
 * The supplier of every purchase in the libro de compras: the set names none and the SII asks for valid RUTs. The SII
 * itself stands in, as it does for the set's receivers (docs/decisions/certificacion.md "Los libros, desde Timbre").
 */
const PROVEEDOR_SET = { rut: RECEPTOR_SET_NACIONAL.rut, razonSocial: RECEPTOR_SET_NACIONAL.razon_social }

function sinDocumentos(tipo: TipoLibro, que: string): TimbreError {
  return new TimbreError('NOT_FOUND', { message: `El libro de ${tipo} necesita ${que}.`, context: { libro: tipo } })
}

/**
 * A libro its documents cannot make as they stand: documents of two months (re-issued in the next one), say. 409: the
 * state of the certification, not the request, is what must change; the reasons are the libro's own words.
 */
function libroInvalido(tipo: TipoLibro, errors: readonly LibroError[]): TimbreError {
  return new TimbreError('ACCION_NO_PERMITIDA', {
    message: `No se puede armar el libro de ${tipo}: ${errors.map((e) => e.mensaje).join(' ')} El SII pide un libro de un solo período: si los documentos quedaron en meses distintos, reemplace el set (?reemplazar=true) y emítalo de nuevo.`,
    context: { libro: tipo },
  })
}

/** The month of the set's documents (DESIGN §15): the BASICO's first document, else the guías', else today's. */
function periodoDe(ventas: readonly DteRow[], guias: readonly DteRow[], today: string): string {
  return (ventas[0]?.fecha_emision ?? guias[0]?.fecha_emision ?? today).slice(0, 7)
}

/** The signed libro of this kind, ISO-8859-1 bytes: 404 while the documents it is made of do not exist. */
export function construirLibro(deps: Pick<CertificacionDeps, 'store' | 'vault' | 'clock'>, input: { empresaId: string; tipo: TipoLibro }): Uint8Array {
  const empresa = requireCertificacion(deps.store.db, input.empresaId)
  const now = deps.clock.now()
  const sets = setsGuardados(deps.store.db, empresa.id)
  const { ventas: ventasDocs, guias } = fuentesDeLibros(deps.store.db, empresa.id, sets)
  const periodo = periodoDe(ventasDocs, guias, santiagoDate(now))
  // Signed as of its newest source (a set loaded, a document issued), not of the request: the same records give the
  // same bytes, so a libro downloaded twice, or before and after it was sent, is one file.
  const firmadoEn = new Date(Math.max(...[...sets.map((x) => x.row.created_at), ...ventasDocs.map((d) => d.created_at), ...guias.map((d) => d.created_at)].map((t) => Date.parse(t))))
  // The certificate is opened only once the libro has its documents: a 404 says what is missing first.
  const firmar = (build: (caratula: CaratulaLibro, signer: Signer) => Uint8Array): Uint8Array => {
    const certificado = openActiveCertificado(deps, { empresaId: empresa.id, now })
    const caratula: CaratulaLibro = {
      rutEmisorLibro: empresa.rut,
      rutEnvia: certificado.rutFirmante,
      fchResol: empresa.fecha_resolucion,
      nroResol: 0,
      folioNotificacion: FOLIO_NOTIFICACION[input.tipo],
      tmstFirma: firmadoEn,
    }
    return build(caratula, certificado.signer)
  }
  switch (input.tipo) {
    case 'ventas': {
      if (ventasDocs.length === 0) throw sinDocumentos('ventas', 'los documentos emitidos del set BASICO (o FACTURA EXENTA)')
      const libro = libroVentas({ periodo, documentos: ventasDocs.map(documentoVenta) })
      if (!libro.ok) throw libroInvalido('ventas', libro.errors)
      return firmar((caratula, signer) => buildLibroCompraVenta(libro.value, caratula, signer))
    }
    case 'compras': {
      const set = sets.find((s) => s.set.nombre === SET_DEL_LIBRO.compras)?.set
      if (!set?.compras) throw sinDocumentos('compras', 'el set LIBRO DE COMPRAS')
      const libro = libroCompras({ periodo, compras: set.compras, factorProporcionalidad: set.factorProporcionalidad ?? null, proveedor: PROVEEDOR_SET })
      if (!libro.ok) throw libroInvalido('compras', libro.errors)
      return firmar((caratula, signer) => buildLibroCompraVenta(libro.value, caratula, signer))
    }
    case 'guias': {
      if (guias.length === 0) throw sinDocumentos('guias', 'las guías emitidas del set GUIA DE DESPACHO')
      const set = sets.find((s) => s.set.nombre === SET_DEL_LIBRO.guias)?.set
      const guiaSet = sets.find((s) => s.set.nombre === 'GUIA DE DESPACHO')
      const porCaso = guiaSet ? documentosPorCaso(deps.store.db, empresa.id, guiaSet) : new Map<string, DteRow>()
      // "EL CASO k" of the LIBRO DE GUIAS names the GUIA DE DESPACHO set's case <n>-k, whatever others have a document.
      const guiaDeCaso = (k: number | undefined) => {
        const caso = k === undefined ? undefined : guiaSet?.set.casos.find((c) => Number(c.caso.split('-')[1]) === k)?.caso
        return caso === undefined ? undefined : porCaso.get(caso)
      }
      const facturada = guiaDeCaso(set?.guiaFacturada)
      // The set says a guía was invoiced in the period but issues no invoice for it: the BASICO's first invoice is
      // the one written, a document the company did issue in the period (docs/decisions/certificacion.md).
      const factura = ventasDocs.find((d) => d.tipo_dte === 33) ?? ventasDocs[0]
      const libro = libroGuias({
        periodo,
        guias: guias.map((g) => ({
          folio: g.folio, fechaEmision: g.fecha_emision, indTraslado: Number((g.request as { ind_traslado?: number }).ind_traslado ?? 1),
          rutReceptor: g.rut_receptor, razonSocialReceptor: g.razon_social_receptor, montoNeto: g.monto_neto ?? 0, tasaIva: g.iva ? g.tasa_iva : null,
          iva: g.iva ?? 0, montoTotal: g.monto_total,
        })),
        facturada: facturada && factura ? { folioGuia: facturada.folio, factura: { tipoDte: factura.tipo_dte, folio: factura.folio, fechaEmision: factura.fecha_emision } } : null,
        folioAnulada: guiaDeCaso(set?.guiaAnulada)?.folio ?? null,
      })
      if (!libro.ok) throw libroInvalido('guias', libro.errors)
      return firmar((caratula, signer) => buildLibroGuia(libro.value, caratula, signer))
    }
  }
}

function documentoVenta(d: DteRow) {
  const nota = (d.referencias as Array<{ tipo_doc_ref?: unknown; folio_ref?: unknown }>).find((r) => typeof r.tipo_doc_ref === 'number' && typeof r.folio_ref === 'number')
  return {
    tipoDte: d.tipo_dte, folio: d.folio, fechaEmision: d.fecha_emision, rutReceptor: d.rut_receptor, razonSocialReceptor: d.razon_social_receptor,
    montoExento: d.monto_exento ?? 0, montoNeto: d.monto_neto ?? 0, tasaIva: d.iva ? d.tasa_iva : null, iva: d.iva ?? 0, montoTotal: d.monto_total,
    ...((d.tipo_dte === 56 || d.tipo_dte === 61) && nota ? { referencia: { tipoDte: nota.tipo_doc_ref as number, folio: nota.folio_ref as number } } : {}),
  }
}

/** The libros the loaded sets ask for. */
export function librosPedidos(sets: readonly SetGuardado[]): TipoLibro[] {
  return TIPOS_LIBRO.filter((t) => sets.some((s) => s.set.nombre === SET_DEL_LIBRO[t]))
}

/**
 * `POST /certificacion/libros/enviar`: each libro the sets ask for, built now, stored and uploaded; a libro already
 * sent and not rejected is not sent again. 200 with the state.
 */
export function enviarLibros(deps: CertificacionDeps, input: { empresaId: string }): Promise<EstadoCertificacion> {
  requireCertificacion(deps.store.db, input.empresaId)
  return serialized(input.empresaId, async () => {
    const empresa = requireCertificacion(deps.store.db, input.empresaId)
    const pedidos = librosPedidos(setsGuardados(deps.store.db, empresa.id))
    if (pedidos.length === 0)
      throw new TimbreError('NOT_FOUND', { message: 'El set cargado no pide libros (LIBRO DE VENTAS, COMPRAS o GUIAS).', context: { recurso: 'libros' } })
    const previos = findCertificacionEnvios(deps.store.db, empresa.id).filter((e) => e.clase === 'libro')
    const fuentes = fuentesDeLibros(deps.store.db, empresa.id, setsGuardados(deps.store.db, empresa.id)).huella
    // A libro goes again when the SII rejected it or its documents changed since (a re-issue, a replaced set).
    const porEnviar = pedidos.filter((t) => !previos.some((e) => e.nombres[0] === t && e.estado !== 'rechazado' && e.fuente === fuentes[t]))
    // Every libro is built before the first is stored: one that cannot be built yet stops them all, with its reason.
    const bytes = porEnviar.map((tipo) => ({ tipo, xml: construirLibro(deps, { empresaId: empresa.id, tipo }) }))
    for (const libro of bytes) {
      const envio = guardarLibro(deps, empresa, libro.tipo, libro.xml, fuentes[libro.tipo])
      await subirLibro(deps, envio)
    }
    return estadoCertificacion(deps, { empresaId: empresa.id })
  })
}

function guardarLibro(deps: CertificacionDeps, empresa: EmpresaRow, tipo: TipoLibro, xml: Uint8Array, fuente: string): CertificacionEnvioRow {
  const at = isoTimestamp(deps.clock.now())
  return deps.store.db.transaction((tx) => {
    const envio = insertEnvio(tx, { id: Bun.randomUUIDv7(), empresa_id: empresa.id, canal: 'soap', file_name: `${empresa.rut.replace('-', '')}_LIBRO_${tipo.toUpperCase()}.xml`, xml: Buffer.from(xml), created_at: at })
    return insertCertificacionEnvio(tx, {
      id: Bun.randomUUIDv7(), empresa_id: empresa.id, clase: 'libro', nombres: [tipo], envio_id: envio.id, dte_ids: [], fuente,
      estado: 'por_enviar', track_id: null, glosa_sii: null, intentos: 0, next_attempt_at: at, enviado_at: null, created_at: at, updated_at: at,
    })
  }, { behavior: 'immediate' })
}

/** One upload of a libro: taken, it is `procesando` until the SII answers; refused, `rechazado` with the reason. */
async function subirLibro(configured: CertificacionDeps, due: CertificacionEnvioRow): Promise<void> {
  const now = configured.clock.now()
  const at = isoTimestamp(now)
  const envio = tomarParaSubir(configured, due, now)
  if (!envio) return
  const { deps, empresa, company, creds } = siiContextOf(configured, { id: envio.id, empresa_id: envio.empresa_id }, now)
  const stored = findEnvio(deps.store.db, envio.empresa_id, envio.envio_id)
  if (!stored) throw new Error(`libro ${envio.id} has no stored envelope`)
  const attempt = envio.intentos + 1
  const later = isoTimestamp(new Date(now.getTime() + backoffMs(attempt, deps.siiTiming.submit)))
  if (empresa.ambiente !== 'certificacion')
    return updateCertificacionEnvio(deps.store.db, envio.id, { estado: 'por_enviar', glosa_sii: 'La empresa pasó a producción: este libro de certificación ya no se envía.', next_attempt_at: null, updated_at: at })
  if (!creds) return updateCertificacionEnvio(deps.store.db, envio.id, { estado: 'por_enviar', glosa_sii: 'Sin certificado activo para firmar el envío', next_attempt_at: later, updated_at: at })
  const outcome = await deps.sii.upload(company, creds, 'soap', stored.xml, stored.file_name)
  const trackId = outcome.kind === 'received' || outcome.kind === 'already_received' ? outcome.trackId : null
  deps.store.db.transaction((tx) => {
    if (trackId !== null) {
      setEnvioTrackId(tx, stored.id, trackId)
      updateCertificacionEnvio(tx, envio.id, { estado: 'procesando', track_id: trackId, intentos: attempt, enviado_at: at, glosa_sii: null, next_attempt_at: at, updated_at: at })
    } else if (outcome.kind === 'refused') {
      updateCertificacionEnvio(tx, envio.id, { estado: 'rechazado', intentos: attempt, glosa_sii: outcome.glosa, next_attempt_at: null, enviado_at: at, updated_at: at })
    } else {
      const glosa = outcome.kind === 'retry' ? outcome.reason : 'glosa' in outcome ? outcome.glosa : 'El SII no dio un track id'
      updateCertificacionEnvio(tx, envio.id, { estado: 'por_enviar', intentos: attempt, glosa_sii: glosa, next_attempt_at: later, updated_at: at })
    }
  }, { behavior: 'immediate' })
  deps.log.info('certificacion.libro_upload', { empresa_id: envio.empresa_id, libro: envio.nombres[0], outcome: outcome.kind, track_id: trackId })
}

/** One status query of a libro the SII holds: LOK is aceptado; a rejection (LRH, RSC, RFR…) rechazado with its reasons. */
async function consultarLibro(configured: CertificacionDeps, envio: CertificacionEnvioRow): Promise<void> {
  const now = configured.clock.now()
  const at = isoTimestamp(now)
  const { deps, empresa, company, creds } = siiContextOf(configured, { id: envio.id, empresa_id: envio.empresa_id }, now)
  const attempt = envio.intentos + 1
  const later = isoTimestamp(new Date(now.getTime() + backoffMs(attempt, deps.siiTiming.track)))
  // Its answer is at maullin; a company already in producción would be asking palena.
  if (empresa.ambiente !== 'certificacion') return updateCertificacionEnvio(deps.store.db, envio.id, { next_attempt_at: null, updated_at: at })
  if (!creds || envio.track_id === null) return updateCertificacionEnvio(deps.store.db, envio.id, { next_attempt_at: later, updated_at: at })
  const outcome = await deps.sii.queryEnvio(company, creds, 'soap', envio.track_id)
  switch (outcome.kind) {
    case 'processed':
      return updateCertificacionEnvio(deps.store.db, envio.id, { estado: 'aceptado', glosa_sii: outcome.glosa, intentos: attempt, next_attempt_at: null, updated_at: at })
    case 'rejected':
      return updateCertificacionEnvio(deps.store.db, envio.id, {
        estado: 'rechazado', glosa_sii: glosaDeMotivos(outcome.motivos) ?? `${outcome.estado}: ${outcome.glosa ?? ''}`, intentos: attempt, next_attempt_at: null, updated_at: at,
      })
    default:
      return updateCertificacionEnvio(deps.store.db, envio.id, { intentos: attempt, next_attempt_at: later, updated_at: at })
  }
}

/** The jobs' share: libros due for another upload (sii-submit) or a status query (sii-track). */
export async function libroPass(deps: CertificacionDeps, kind: 'subir' | 'consultar'): Promise<number> {
  const due = findDueCertificacionEnvios(deps.store.db, { nowIso: isoTimestamp(deps.clock.now()), estados: kind === 'subir' ? POR_SUBIR : ['procesando'], clases: ['libro'] }, 20)
  for (const envio of due) {
    try {
      await (kind === 'subir' ? subirLibro(deps, envio) : consultarLibro(deps, envio))
    } catch (err) {
      deps.log.error('job.item_failed', { job: kind === 'subir' ? 'sii-submit' : 'sii-track', certificacion_envio_id: envio.id, error: String(err) })
    }
  }
  return due.length
}
