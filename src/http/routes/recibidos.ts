// Received documents (DESIGN §13, extensions): list, record, XML, PDF, import of an EnvioDTE, and the receiver's actions.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { pendientesPagina } from '../../services/cierre-mes'
import { getRecibidoPdf } from '../../services/recibido-pdf'
import { getRecibido, getRecibidoXml, importRecibidos, listRecibidos, recibidoFilterOf, solicitarAccion, type RecibidoListQuery } from '../../services/recibidos'
import { decodeCursor, encodeCursor, parseLimit } from '../../contracts/pagination'
import { jsonBody, pathId } from '../../contracts/params'
import { credentialOf } from '../request-context'
import { commonErrors, ErrorEnvelopeSchema, errorResponses } from '../../contracts/common'
import { AccionBody, ImportarRecibidosBody, ImportarRecibidosResponse, ListarRecibidosQuery, RecibidoListSchema, RecibidoSchema } from '../../contracts/recibidos'
import { readUploadedFile } from '../../contracts/upload'

const extension = (detail: Record<string, unknown>) => ({ ...detail, tags: ['Recibidos'], 'x-timbre-extension': true }) as Record<string, unknown>

/**
 * `?pendientes=true` (DESIGN §16 "Pending acceptance board"): the open 33, 34 and 43 by deadline, the list's other
 * filters applied, paged after the cursor's place in that order.
 */
function pendientesPage(deps: Deps, empresaId: string, query: RecibidoListQuery & { readonly cursor?: string }, limit: number) {
  const filtro = recibidoFilterOf(query)
  if (filtro.estado !== undefined && filtro.estado !== 'recibido') return { items: [], next_cursor: null, total_count: 0 }
  const page = pendientesPagina(deps, { empresaId, filtro, afterId: decodeCursor(query.cursor), limit })
  const items = page.items.map((p) => ({ ...getRecibido(deps, { empresaId, id: p.id }), dias_restantes: p.dias_restantes }))
  return { items, next_cursor: page.hayMas && items.length > 0 ? encodeCursor(items[items.length - 1]!.id) : null, total_count: page.total }
}

export const recibidoRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/recibidos', normalize: false })
    .get(
      '',
      ({ request, query }) => {
        const limit = parseLimit(query.limit, { max: 100, fallback: 20 })
        if (query.pendientes === 'true') return pendientesPage(deps, credentialOf(request).empresaId, query, limit)
        const { rows, total } = listRecibidos(deps, { empresaId: credentialOf(request).empresaId, query, afterId: decodeCursor(query.cursor), limit: limit + 1 })
        const items = rows.slice(0, limit)
        return { items, next_cursor: rows.length > limit ? encodeCursor(items[items.length - 1]!.id) : null, total_count: total }
      },
      {
        query: ListarRecibidosQuery,
        detail: extension({
          operationId: 'listarRecibidos',
          summary: 'Documentos recibidos de proveedores, más recientes primero; con pendientes=true, los que esperan aceptación, el plazo más próximo primero (extensión)',
        }),
        response: { 200: RecibidoListSchema, ...commonErrors },
      },
    )
    .post(
      '/importar',
      async ({ request, body, set }) => {
        const upload = await readUploadedFile(request, body, { jsonField: 'xml_base64', what: 'el EnvioDTE' })
        const answer = await importRecibidos(deps, { empresaId: credentialOf(request).empresaId, ...upload })
        set.status = answer.status
        return answer.body
      },
      {
        detail: extension({
          operationId: 'importarRecibidos',
          summary: 'Importa un EnvioDTE recibido fuera del buzón: mismas validaciones, sin correo; 200 si ya se importó (extensión)',
          description:
            'JSON `{"xml_base64"}` con los bytes exactos del archivo (o multipart/form-data con el campo `archivo`). Responde los códigos del acuse de recibo del SII: EstadoRecepEnv del sobre y EstadoRecepDTE de cada documento.',
          requestBody: jsonBody(ImportarRecibidosBody),
        }),
        response: { 200: ImportarRecibidosResponse, 201: ImportarRecibidosResponse, ...commonErrors },
      },
    )
    .get('/:id', ({ request, params }) => getRecibido(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) }), {
      detail: extension({ operationId: 'obtenerRecibido', summary: 'Un documento recibido, con sus validaciones, plazo y acciones (extensión)' }),
      response: { 200: RecibidoSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
    })
    .get(
      '/:id/xml',
      ({ request, params }) => {
        const xml = getRecibidoXml(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) })
        return new Response(Buffer.from(xml.bytes), {
          headers: {
            'content-type': 'application/xml; charset=ISO-8859-1',
            'content-disposition': `inline; filename="DTE-${xml.rutEmisor}-${xml.tipoDte}-F${xml.folio}.xml"`,
          },
        })
      },
      {
        detail: extension({
          operationId: 'descargarRecibidoXml',
          summary: 'XML firmado del documento recibido (ISO-8859-1, bytes exactos) (extensión)',
          responses: { 200: { description: 'DTE recibido', content: { 'application/xml': { schema: { type: 'string' } } } }, ...errorResponses(404) },
        }),
      },
    )
    .get(
      '/:id/pdf',
      async ({ request, params, query }) => {
        const pdf = await getRecibidoPdf(deps, {
          empresaId: credentialOf(request).empresaId,
          id: pathId(params.id),
          query: { formato: query.formato, cedible: query.cedible },
        })
        return new Response(Buffer.from(pdf.bytes), {
          headers: { 'content-type': 'application/pdf', 'content-disposition': `inline; filename="DTE-${pdf.tipoDte}-F${pdf.folio}.pdf"` },
        })
      },
      {
        detail: extension({
          operationId: 'descargarRecibidoPdf',
          summary: 'Representación impresa del documento recibido, con el mismo formato que los DTE emitidos (extensión)',
          parameters: [
            { name: 'formato', in: 'query', required: false, schema: { type: 'string', enum: ['carta', 'termico'], default: 'carta' } },
            { name: 'cedible', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'], default: 'false' } },
          ],
          responses: {
            200: { description: 'PDF del documento', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } },
            ...errorResponses(404),
          },
        }),
      },
    )
    .post(
      '/:id/acciones',
      async ({ request, params, body, set }) => {
        const answer = await solicitarAccion(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id), accion: body.accion, motivo: body.motivo ?? null })
        set.status = answer.status
        return answer.record
      },
      {
        parse: 'json',
        body: AccionBody,
        detail: extension({
          operationId: 'accionRecibido',
          summary: 'Acepta (ACD), reclama (RCD, RFP, RFT) u otorga el recibo de mercaderías (ERM) en el SII y responde al emisor (extensión)',
          description:
            'Registra la acción en el Registro de Reclamos del SII con el certificado de la empresa y envía al emisor el ResultadoDTE (o el EnvioRecibos para ERM). 200 registrada; 202 si el SII no respondió: queda pendiente, se reintenta y el resultado llega por el webhook recibido.accion. 409 PLAZO_VENCIDO pasados los 8 días; 409 ACCION_NO_PERMITIDA fuera del orden del SII o rechazada por el SII (context.cod_resp).',
        }),
        response: { 200: RecibidoSchema, 202: RecibidoSchema, 404: ErrorEnvelopeSchema, 409: ErrorEnvelopeSchema, 422: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
