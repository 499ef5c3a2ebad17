// POST /caf, GET /caf query and the CAF record (spec 2.12, 4.2, DESIGN §8).
import { Type } from '@sinclair/typebox'
import { TIPOS_DTE } from '../domain/emision'
import { Cursor, ListLimit } from './pagination'

export const TipoDteSchema = Type.Union(
  TIPOS_DTE.map((t) => Type.Literal(t)),
  { description: 'Tipo de DTE: 33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112.' },
)

export const SubirCafBody = Type.Object(
  {
    tipo_dte: TipoDteSchema,
    // A real CAF is about 2 KB (3 KB in base64): 64 KB bounds what the XML parser reads on the event loop (issue 12).
    caf_xml: Type.String({ minLength: 1, maxLength: 65_536, description: 'XML del CAF tal como lo entrega el SII, o en base64.' }),
  },
  { additionalProperties: false },
)

export const ListarCafsQuery = Type.Object(
  {
    tipo_dte: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Filtra por tipo de DTE.' })),
    is_active: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Filtra por vigencia.' })),
    por_anular: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: los CAF vencidos con folios sin usar que deben anularse en el SII (extensión).' }),
    ),
    cursor: Cursor,
    limit: ListLimit,
  },
  { additionalProperties: false },
)

export const CafSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    tipo_dte: Type.Integer(),
    folio_desde: Type.Integer(),
    folio_hasta: Type.Integer(),
    folios_disponibles: Type.Integer({ description: 'Folios aún no asignados.' }),
    ambiente: Type.Union([Type.Literal('certificacion'), Type.Literal('produccion')]),
    fecha_autorizacion: Type.String({ format: 'date' }),
    is_active: Type.Boolean({ description: 'Tiene folios libres y, para 33, 43, 46, 56 y 61, no han pasado 180 días desde su autorización.' }),
    created_at: Type.String({ format: 'date-time' }),
    vence_el: Type.Union([Type.String({ format: 'date' }), Type.Null()], { description: 'Último día en que sus folios sirven (extensión).' }),
    anulacion: Type.Union(
      [
        Type.Object({
          estado: Type.Union([Type.Literal('en_curso'), Type.Literal('anulado')], {
            description: 'en_curso: cerrado a la emisión mientras se pide al SII, o tras un intento cuyo resultado no se supo.',
          }),
          rangos: Type.Array(Type.Object({ desde: Type.Integer(), hasta: Type.Integer() }), { description: 'Los rangos que el SII anuló.' }),
          motivo: Type.Union([Type.String(), Type.Null()]),
          anulado_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
        }),
        Type.Null(),
      ],
      { description: 'La anulación de sus folios sin usar en el SII (extensión).' },
    ),
    tramos: Type.Array(
      Type.Object({
        desde: Type.Integer(),
        hasta: Type.Integer(),
        estado: Type.Union([
          Type.Literal('usado'), Type.Literal('disponible'), Type.Literal('por_anular'), Type.Literal('en_anulacion'), Type.Literal('anulado'),
        ]),
      }),
      { description: 'El rango en tramos: usados (con documento), disponibles, por anular (sin usar y ya no se entregan: vencidos o sobrantes de una anulación), en anulación, anulados (extensión).' },
    ),
  },
  { title: 'Caf' },
)

export const CafListSchema = Type.Object({ data: Type.Array(CafSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })

// ------------------------------------------------------------------------------------------------ folios from the SII (DESIGN §17)

export const SolicitarCafBody = Type.Object(
  {
    tipo_dte: TipoDteSchema,
    cantidad: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100_000, description: 'Folios a pedir; se limitan al máximo que el SII autoriza hoy (MAX_AUTOR). Sin ella, ese máximo.' }),
    ),
  },
  { additionalProperties: false },
)

export const AnularCafBody = Type.Object(
  {
    motivo: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Motivo de la anulación, como lo pide el SII.' }),
    ya_anulados: Type.Optional(
      Type.Boolean({
        description:
          'true: solo para un CAF que quedó cerrado tras una anulación de resultado incierto, cuando usted verificó en el sitio del SII que sus folios sin usar ya están anulados. Timbre lo registra sin ir al SII.',
      }),
    ),
  },
  { additionalProperties: false },
)

const estadoSolicitud = (options: { description: string }) =>
  Type.Union([Type.Literal('en_curso'), Type.Literal('otorgado'), Type.Literal('descargado'), Type.Literal('anulado'), Type.Literal('fallido')], options)

export const ListarSolicitudesQuery = Type.Object(
  {
    estado: Type.Optional(estadoSolicitud({ description: 'Filtra por estado.' })),
    tipo_dte: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Filtra por tipo de DTE.' })),
    cursor: Cursor,
    limit: ListLimit,
  },
  { additionalProperties: false },
)

const NullableInt = Type.Union([Type.Integer(), Type.Null()])

export const CafSolicitudSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    operacion: Type.Union([Type.Literal('solicitud'), Type.Literal('anulacion')]),
    origen: Type.Union([Type.Literal('api'), Type.Literal('automatica')], { description: 'Quién la pidió: la API (o consola, CLI) o el modo automático.' }),
    tipo_dte: Type.Integer(),
    estado: estadoSolicitud({
      description: 'en_curso; otorgado (el SII otorgó el rango y Timbre lo descarga de nuevo, nunca lo pide otra vez); descargado (el CAF quedó registrado); anulado; fallido.',
    }),
    cantidad_pedida: Type.Union([Type.Integer(), Type.Null()], { description: 'Lo pedido; null pide el máximo del SII.' }),
    cantidad_solicitada: Type.Union([Type.Integer(), Type.Null()], { description: 'Lo pedido al SII: la cantidad limitada a MAX_AUTOR.' }),
    max_autor: Type.Union([Type.Integer(), Type.Null()], { description: 'El máximo que el SII autorizaba al pedir.' }),
    folio_desde: NullableInt,
    folio_hasta: NullableInt,
    fecha_otorgamiento: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    caf_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'El CAF registrado (solicitud) o el que se anula (anulación).' }),
    motivo_anulacion: Type.Union([Type.String(), Type.Null()]),
    falla: Type.Union([
      Type.Object({
        motivo: Type.String({ description: 'no_autorizado, f29_pendiente, excede_maximo, pagina_desconocida, sii_rechazo, login_rechazado, tope_sesiones, sesion_expirada, sin_conexion, respuesta_invalida.' }),
        mensaje: Type.String(),
        etapa: Type.Union([Type.String({ description: 'El paso del sitio del SII donde se detuvo.' }), Type.Null()]),
      }),
      Type.Null(),
    ]),
    intentos: Type.Integer({ description: 'Descargas fallidas del rango otorgado.' }),
    proximo_intento_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'CafSolicitud' },
)

export const CafSolicitudAceptadaSchema = Type.Composite([Type.Object({ solicitud_id: Type.String({ format: 'uuid' }) }), CafSolicitudSchema], { title: 'CafSolicitudAceptada' })

export const CafSolicitudListSchema = Type.Object({ data: Type.Array(CafSolicitudSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })

export const FoliosAutomaticosBody = Type.Object(
  {
    activo: Type.Boolean(),
    tipos: Type.Array(TipoDteSchema, { maxItems: 12, description: 'Tipos de documento cuyos folios se piden solos.' }),
    cantidad: Type.Integer({ minimum: 1, maximum: 100_000, description: 'Folios por solicitud (limitados al máximo del SII).' }),
    umbral: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000 }), Type.Null()], { description: 'Folios libres con los que se pide otro CAF; null sigue TIMBRE_CAF_LOW_STOCK.' }),
    ),
    dias_antes_de_vencer: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 179, description: 'Los folios que vencen dentro de estos días no cuentan como libres (15 por omisión).' }),
    ),
  },
  { additionalProperties: false },
)

export const FoliosAutomaticosSchema = Type.Object(
  {
    activo: Type.Boolean(),
    tipos: Type.Array(Type.Integer()),
    cantidad: Type.Union([Type.Integer(), Type.Null()]),
    umbral: Type.Union([Type.Integer(), Type.Null()]),
    umbral_efectivo: Type.Integer(),
    dias_antes_de_vencer: Type.Integer(),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'FoliosAutomaticos' },
)
