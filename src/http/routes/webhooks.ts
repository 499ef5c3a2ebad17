// Spec 4.4 listarWebhooks / registrarWebhook / eliminarWebhook, and the delivery log of DESIGN §12 (extensions).
import { Elysia } from 'elysia'
import { Type } from '@sinclair/typebox'
import type { Deps } from '../../services/deps'
import { listWebhooks, redeliver, registerWebhook, removeWebhook, sendTestPing, webhookDeliveries } from '../../services/webhooks'
import { decodeCursor, page, parseLimit } from '../../contracts/pagination'
import { API_PREFIX } from '../prefix'
import { jsonBody, pathId } from '../../contracts/params'
import { credentialOf } from '../request-context'
import { commonErrors, ErrorEnvelopeSchema } from '../../contracts/common'
import { DeliveriesQuery, DeliverySchema, parseRegistrarWebhook, RegistrarWebhookBody, WebhookSchema } from '../../contracts/webhooks'

const extension = (detail: Record<string, unknown>) => ({ ...detail, 'x-timbre-extension': true }) as Record<string, unknown>

export const webhookRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/webhooks', normalize: false })
    .get('', ({ request }) => listWebhooks(deps, { empresaId: credentialOf(request).empresaId }), {
      detail: { operationId: 'listarWebhooks', tags: ['Webhooks'], summary: 'Webhooks registrados (secreto enmascarado)' },
      response: { 200: Type.Array(WebhookSchema), ...commonErrors },
    })
    .post(
      '',
      async ({ request, body, set }) => {
        const { url, events, secret } = parseRegistrarWebhook(body, deps.config)
        const webhook = await registerWebhook(deps, { empresaId: credentialOf(request).empresaId, url, events, secret })
        set.status = 201
        set.headers['location'] = `${API_PREFIX}/webhooks/${webhook.id}`
        return webhook
      },
      {
        parse: 'json',
        detail: {
          operationId: 'registrarWebhook',
          tags: ['Webhooks'],
          summary: 'Registra un webhook; la respuesta trae el secreto completo (única vez). 422 WEBHOOK_LIMIT_REACHED con 20 ya registrados',
          requestBody: jsonBody(RegistrarWebhookBody),
        } as Record<string, unknown>,
        response: { 201: WebhookSchema, 422: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .delete('/:id', ({ request, params }) => removeWebhook(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) }), {
      detail: { operationId: 'eliminarWebhook', tags: ['Webhooks'], summary: 'Elimina un webhook y cancela sus entregas pendientes' },
      response: { 200: Type.Object({ status: Type.Literal('deleted') }), 404: ErrorEnvelopeSchema, ...commonErrors },
    })
    .get(
      '/:id/deliveries',
      ({ request, params, query }) => {
        const limit = parseLimit(query.limit, { max: 100, fallback: 20 })
        return page(webhookDeliveries(deps, { empresaId: credentialOf(request).empresaId, webhookId: pathId(params.id), afterId: decodeCursor(query.cursor), limit: limit + 1 }), limit)
      },
      {
        query: DeliveriesQuery,
        detail: extension({ operationId: 'listarEntregasWebhook', tags: ['Webhooks'], summary: 'Entregas recientes de un webhook (extensión)' }),
        response: { 200: Type.Object({ data: Type.Array(DeliverySchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }), 404: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .post(
      '/:id/deliveries/:deliveryId/redeliver',
      ({ request, params, set }) => {
        set.status = 202
        return redeliver(deps, { empresaId: credentialOf(request).empresaId, webhookId: pathId(params.id), deliveryId: pathId(params.deliveryId) })
      },
      {
        detail: extension({ operationId: 'reenviarEntregaWebhook', tags: ['Webhooks'], summary: 'Vuelve a enviar una entrega (extensión)' }),
        response: { 202: DeliverySchema, 404: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .post(
      '/:id/test',
      ({ request, params, set }) => {
        set.status = 202
        return sendTestPing(deps, { empresaId: credentialOf(request).empresaId, webhookId: pathId(params.id) })
      },
      {
        detail: extension({ operationId: 'probarWebhook', tags: ['Webhooks'], summary: 'Envía un evento ping firmado (extensión)' }),
        response: { 202: Type.Object({ event_id: Type.String({ format: 'uuid' }) }), 404: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
