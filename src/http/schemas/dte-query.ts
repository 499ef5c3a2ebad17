// GET /dte query, the DTE record and the issuance response (spec 2.2, 4.1, 4.7).
import { Type } from '@sinclair/typebox'
import { Cursor, ListLimit } from '../pagination'
import { DATE_PATTERN } from './common'

/** EstadoDTE of spec 2.1, spelled out so TypeScript sees each literal. */
const Estado = Type.Union([
  Type.Literal('borrador'),
  Type.Literal('generado'),
  Type.Literal('firmado'),
  Type.Literal('enviando'),
  Type.Literal('procesando'),
  Type.Literal('aceptado'),
  Type.Literal('rechazado'),
  Type.Literal('con_reparos'),
])

export const ListarDtesQuery = Type.Object(
  {
    tipo_dte: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Filtra por tipo de DTE.' })),
    estado: Type.Optional(Estado),
    fecha_desde: Type.Optional(Type.String({ pattern: DATE_PATTERN, description: 'Fecha de emisión mínima (inclusive), YYYY-MM-DD.' })),
    fecha_hasta: Type.Optional(Type.String({ pattern: DATE_PATTERN, description: 'Fecha de emisión máxima (inclusive), YYYY-MM-DD.' })),
    rut_receptor: Type.Optional(Type.String({ maxLength: 20, description: 'RUT del receptor, con o sin puntos.' })),
    cursor: Cursor,
    limit: ListLimit,
  },
  { additionalProperties: false },
)

export const ObtenerDteQuery = Type.Object(
  { include_xml: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Incluye xml_documento.' })) },
  { additionalProperties: false },
)

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(s: T) => Type.Union([s, Type.Null()])

export const TrackingSchema = Type.Object({
  envio_id: Nullable(Type.String()),
  track_id: Nullable(Type.String()),
  estado_envio: Nullable(Type.String()),
  codigo_sii: Nullable(Type.String()),
  glosa_sii: Nullable(Type.String()),
  informados: Type.Integer(),
  aceptados: Type.Integer(),
  rechazados: Type.Integer(),
  reparos: Type.Integer(),
  intentos: Type.Integer(),
})

export const DteSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    tipo_dte: Type.Integer(),
    folio: Type.Integer(),
    estado: Type.String({ description: 'EstadoDTE: borrador, generado, firmado, enviando, procesando, aceptado, rechazado, con_reparos.' }),
    rut_receptor: Type.String(),
    razon_social_receptor: Type.String(),
    fecha_emision: Type.String({ format: 'date' }),
    monto_neto: Nullable(Type.Integer()),
    monto_exento: Nullable(Type.Integer()),
    tasa_iva: Type.Number(),
    iva: Nullable(Type.Integer()),
    monto_total: Type.Integer(),
    detalle: Type.Array(Type.Unknown()),
    referencias: Type.Array(Type.Unknown()),
    tracking: TrackingSchema,
    sii_status: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    auto_send: Type.Boolean(),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    xml_documento: Type.Optional(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'DTE' },
)

export const DteListSchema = Type.Object({
  items: Type.Array(DteSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
  total_count: Type.Integer(),
})

export const IssuanceResponseSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    folio: Type.Integer(),
    tipo_dte: Type.Integer(),
    estado: Type.Literal('firmado'),
    monto_total: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'EmitirDTEResponse' },
)
