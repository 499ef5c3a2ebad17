// Spec 4.2 listarCafs / subirCaf / obtenerCaf, and folios from the SII (DESIGN §17, extensions): a CAF requested
// through the SII's folio pages, the requests' history and the annulment of a CAF's unused folios.
import { Elysia } from 'elysia'
import { getCaf, listCafs, registerCaf } from '../../services/cafs'
import { anularCaf, getCafSolicitud, listSolicitudes, solicitarCaf } from '../../services/caf-solicitudes'
import type { Deps } from '../../services/deps'
import { decodeCursor, page, parseLimit } from '../../contracts/pagination'
import { API_PREFIX } from '../prefix'
import { credentialOf } from '../request-context'
import {
  AnularCafBody, CafListSchema, CafSchema, CafSolicitudAceptadaSchema, CafSolicitudListSchema, CafSolicitudSchema, ListarCafsQuery, ListarSolicitudesQuery,
  SolicitarCafBody, SubirCafBody,
} from '../../contracts/caf'
import { pathId } from '../../contracts/params'
import { commonErrors, ErrorEnvelopeSchema } from '../../contracts/common'

export const cafRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/caf', normalize: false })
    .get(
      '',
      ({ request, query }) => {
        const limit = parseLimit(query.limit, { max: 100, fallback: 20 })
        const rows = listCafs(deps, {
          empresaId: credentialOf(request).empresaId,
          tipo_dte: query.tipo_dte,
          is_active: query.is_active,
          por_anular: query.por_anular,
          afterId: decodeCursor(query.cursor),
          limit: limit + 1,
        })
        return page(rows, limit)
      },
      {
        query: ListarCafsQuery,
        detail: { operationId: 'listarCafs', tags: ['CAF'], summary: 'CAF registrados, más recientes primero' },
        response: { 200: CafListSchema, ...commonErrors },
      },
    )
    .post(
      '',
      async ({ request, body, set }) => {
        const caf = await registerCaf(deps, { empresaId: credentialOf(request).empresaId, tipo_dte: body.tipo_dte, caf_xml: body.caf_xml })
        set.status = 201
        set.headers['location'] = `${API_PREFIX}/caf/${caf.id}`
        return caf
      },
      {
        parse: 'json',
        body: SubirCafBody,
        detail: { operationId: 'subirCaf', tags: ['CAF'], summary: 'Registra un CAF (folios autorizados por el SII)' },
        response: { 201: CafSchema, 409: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .post(
      '/solicitar',
      ({ request, body, set }) => {
        const solicitud = solicitarCaf(deps, { empresaId: credentialOf(request).empresaId, tipo_dte: body.tipo_dte, ...(body.cantidad === undefined ? {} : { cantidad: body.cantidad }) })
        set.status = 202
        set.headers['location'] = `${API_PREFIX}/caf/solicitudes/${solicitud.id}`
        return { solicitud_id: solicitud.id, ...solicitud }
      },
      {
        parse: 'json',
        body: SolicitarCafBody,
        detail: {
          operationId: 'solicitarCaf',
          tags: ['CAF'],
          summary: 'Pide un CAF al SII con el certificado de la empresa; el webhook caf.obtenido o caf.solicitud_fallida avisa el resultado (extensión)',
          description:
            'Responde 202 con la solicitud (en_curso). El trabajo folios entra al sitio de timbraje del SII por TLS mutuo con el certificado de la empresa (nunca una clave ni un tercero), pide los folios limitados al máximo que el SII autoriza (MAX_AUTOR), descarga el CAF, lo revisa como POST /caf y lo registra. Si el SII otorgó el rango y algo falla después, Timbre solo vuelve a descargarlo: nunca pide el mismo rango dos veces. 409 CAF_SOLICITUD_EN_CURSO si ya hay una del tipo; 422 CERTIFICATE_REQUIRED sin certificado activo. Subir un CAF con POST /caf sigue disponible.',
          'x-timbre-extension': true,
        } as Record<string, unknown>,
        response: { 202: CafSolicitudAceptadaSchema, 409: ErrorEnvelopeSchema, 422: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .get(
      '/solicitudes',
      ({ request, query }) => {
        const limit = parseLimit(query.limit, { max: 100, fallback: 20 })
        const rows = listSolicitudes(deps, {
          empresaId: credentialOf(request).empresaId, estado: query.estado, tipo_dte: query.tipo_dte, afterId: decodeCursor(query.cursor), limit: limit + 1,
        })
        return page(rows, limit)
      },
      {
        query: ListarSolicitudesQuery,
        detail: { operationId: 'listarSolicitudesCaf', tags: ['CAF'], summary: 'Solicitudes y anulaciones de folios en el SII, más recientes primero (extensión)', 'x-timbre-extension': true } as Record<string, unknown>,
        response: { 200: CafSolicitudListSchema, ...commonErrors },
      },
    )
    .get(
      '/solicitudes/:id',
      ({ request, params }) => getCafSolicitud(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) }),
      {
        detail: { operationId: 'obtenerSolicitudCaf', tags: ['CAF'], summary: 'Una solicitud o anulación de folios en el SII (extensión)', 'x-timbre-extension': true } as Record<string, unknown>,
        response: { 200: CafSolicitudSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .post(
      '/:id/anular',
      ({ request, params, body, set }) => {
        const solicitud = anularCaf(deps, {
          empresaId: credentialOf(request).empresaId, cafId: pathId(params.id), motivo: body.motivo, ...(body.ya_anulados === undefined ? {} : { ya_anulados: body.ya_anulados }),
        })
        set.status = 202
        set.headers['location'] = `${API_PREFIX}/caf/solicitudes/${solicitud.id}`
        return { solicitud_id: solicitud.id, ...solicitud }
      },
      {
        parse: 'json',
        body: AnularCafBody,
        detail: {
          operationId: 'anularCaf',
          tags: ['CAF'],
          summary: 'Anula en el SII los folios sin usar de un CAF; el webhook caf.anulado o caf.solicitud_fallida avisa el resultado (extensión)',
          description:
            'Responde 202 con la anulación (en_curso). El CAF deja de entregar folios al instante; el trabajo folios anula en el SII los folios desde el primero nunca entregado hasta el final del rango, con el motivo dado. GET /caf?por_anular=true lista los CAF cuyos folios sin usar deben anularse. Si una anulación terminó sin saberse su resultado, el CAF queda cerrado; cuando el sitio del SII muestre sus folios anulados, `ya_anulados: true` lo registra sin volver al SII. 409 CAF_NO_ANULABLE sin folios que anular.',
          'x-timbre-extension': true,
        } as Record<string, unknown>,
        response: { 202: CafSolicitudAceptadaSchema, 404: ErrorEnvelopeSchema, 409: ErrorEnvelopeSchema, 422: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .get(
      '/:id',
      ({ request, params }) => getCaf(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) }),
      {
        detail: { operationId: 'obtenerCaf', tags: ['CAF'], summary: 'Un CAF con su rango y disponibilidad' },
        response: { 200: CafSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
