// POST /webhooks, the webhook record (spec 2.15, 4.4; DESIGN §7, §12) and the delivery log (beyond the spec).
import { Type, type Static } from '@sinclair/typebox'
import { EVENT_TYPES } from '../domain/events'
import type { Config } from '../config'
import { checkWebhookUrl, webhookPolicy } from '../domain/webhooks'
import { Cursor, ListLimit } from './pagination'
import { parseBody } from './validation'

const EventName = Type.Union(
  EVENT_TYPES.map((e) => Type.Literal(e)),
  { description: 'dte.created, dte.accepted, dte.rejected, dte.repaired, caf.low_stock, certificado.expiring' },
)

export const RegistrarWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'URL HTTPS que recibe los eventos.' }),
    events: Type.Array(EventName, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, description: 'Eventos suscritos.' }),
    secret: Type.Optional(
      Type.String({ minLength: 16, maxLength: 256, description: 'Secreto HMAC-SHA256 (16 caracteres o más); se genera (whsec_…) si se omite.' }),
    ),
  },
  { additionalProperties: false },
)

/**
 * The body's shape and its URL rule at once: an http:// URL (or one written as a refused address) and an unknown
 * event are both reported (DESIGN §5). Where a name resolves is the service's check.
 */
export function parseRegistrarWebhook(body: unknown, config: Pick<Config, 'webhookAllowHttp' | 'webhookDenyPrivate'>): Static<typeof RegistrarWebhookBody> {
  return parseBody(RegistrarWebhookBody, body, (fields) => checkWebhookUrl(fields.url, webhookPolicy(config)))
}

export const WebhookSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String({ format: 'uri' }),
    events: Type.Array(Type.String()),
    secret: Type.String({ description: 'Completo solo al crear; después enmascarado a sus últimos 4 caracteres.' }),
    is_active: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Webhook' },
)

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    event_id: Type.String({ format: 'uuid' }),
    event_type: Type.String(),
    attempt: Type.Integer({ description: 'Intentos hechos.' }),
    status: Type.String({ description: 'pending, delivered, failed, cancelled' }),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'Clase del error del último intento: timeout, connection_refused, tls, dns, http_status, too_large, address_refused (la URL apunta o resuelve a una dirección no permitida).',
    }),
    delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    next_retry_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'WebhookDelivery' },
)

export const DeliveriesQuery = Type.Object({ cursor: Cursor, limit: ListLimit }, { additionalProperties: false })
