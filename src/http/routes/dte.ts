// Spec 4.1: listarDTEs, emitirDTE, obtenerDTE, descargarDTEXml, and the submission request of DESIGN §6.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { getDte, getDteXml, listDtes, requestSubmission } from '../../services/dtes'
import { emitDte } from '../../services/issue-dte'
import { resendIntercambio } from '../../services/resend-intercambio'
import { decodeCursor, encodeCursor, parseLimit } from '../../contracts/pagination'
import { IDEMPOTENCY_HEADER, idempotencyKeyOf, pathId } from '../../contracts/params'
import { credentialOf } from '../request-context'
import { commonErrors, ErrorEnvelopeSchema, errorResponses } from '../../contracts/common'
import { EmitirDteBody, validateEmision } from '../../contracts/dte'
import { DteListSchema, DteSchema, IntercambioSchema, IssuanceResponseSchema, ListarDtesQuery, ObtenerDteQuery } from '../../contracts/dte-query'

export const dteRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/dte', normalize: false })
    .get(
      '',
      ({ request, query }) => {
        const limit = parseLimit(query.limit, { max: 100, fallback: 20 })
        const { rows, total } = listDtes(deps, { empresaId: credentialOf(request).empresaId, query, afterId: decodeCursor(query.cursor), limit: limit + 1 })
        const items = rows.slice(0, limit)
        return { items, next_cursor: rows.length > limit ? encodeCursor(items[items.length - 1]!.id) : null, total_count: total }
      },
      {
        query: ListarDtesQuery,
        detail: { operationId: 'listarDTEs', tags: ['DTE'], summary: 'DTE emitidos, más recientes primero' },
        response: { 200: DteListSchema, ...commonErrors },
      },
    )
    .post(
      '',
      async ({ request, body, set }) => {
        const answer = await emitDte(deps, { empresaId: credentialOf(request).empresaId, idempotencyKey: idempotencyKeyOf(request), body, check: validateEmision })
        set.status = answer.status
        if (answer.location) set.headers['location'] = answer.location
        if (answer.isReplay) set.headers['x-idempotency-replay'] = 'true'
        return answer.body as Record<string, unknown>
      },
      {
        parse: 'json',
        detail: {
          operationId: 'emitirDTE',
          tags: ['DTE'],
          summary: 'Emite un DTE: folio, XML, timbre (TED) y firma; responde 201 con estado firmado',
          parameters: [{ name: IDEMPOTENCY_HEADER, in: 'header', required: true, schema: { type: 'string', format: 'uuid' } }],
          requestBody: { required: true, content: { 'application/json': { schema: EmitirDteBody } } },
        } as Record<string, unknown>,
        response: { 201: IssuanceResponseSchema, 409: ErrorEnvelopeSchema, 422: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .get(
      '/:id',
      ({ request, params, query }) => getDte(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id), includeXml: query.include_xml === 'true' }),
      {
        query: ObtenerDteQuery,
        detail: { operationId: 'obtenerDTE', tags: ['DTE'], summary: 'Un DTE con su seguimiento y último estado del SII' },
        response: { 200: DteSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .get(
      '/:id/xml',
      ({ request, params }) => {
        const xml = getDteXml(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) })
        return new Response(Buffer.from(xml.bytes), {
          headers: {
            'content-type': 'application/xml; charset=ISO-8859-1',
            'content-disposition': `inline; filename="DTE-${xml.tipoDte}-F${xml.folio}.xml"`,
          },
        })
      },
      {
        detail: {
          operationId: 'descargarDTEXml',
          tags: ['DTE'],
          summary: 'XML firmado del DTE (ISO-8859-1, bytes exactos)',
          responses: { 200: { description: 'DTE firmado', content: { 'application/xml': { schema: { type: 'string' } } } }, ...errorResponses(404) },
        },
      },
    )
    .post(
      '/:id/enviar',
      ({ request, params, set }) => {
        set.status = 202
        return requestSubmission(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) })
      },
      {
        detail: {
          operationId: 'enviarDTE',
          tags: ['DTE'],
          summary: 'Encola un DTE firmado para su envío al SII (extensión)',
          'x-timbre-extension': true,
        } as Record<string, unknown>,
        response: { 202: DteSchema, 404: ErrorEnvelopeSchema, 409: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .post(
      '/:id/intercambio/reenviar',
      ({ request, params, set }) => {
        set.status = 202
        return resendIntercambio(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) })
      },
      {
        detail: {
          operationId: 'reenviarIntercambioDTE',
          tags: ['DTE'],
          summary: 'Vuelve a encolar el correo del DTE a su receptor cuando terminó en error o sin destinatario (extensión)',
          'x-timbre-extension': true,
        } as Record<string, unknown>,
        response: { 202: IntercambioSchema, 404: ErrorEnvelopeSchema, 409: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
