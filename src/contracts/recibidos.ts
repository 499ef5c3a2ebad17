// Received documents (DESIGN §13, extension): the GET /recibidos query, the received record, the import answer and
// the action request.
import { Type } from '@sinclair/typebox'
import { Cursor, ListLimit } from './pagination'
import { DATE_PATTERN } from './common'

const EstadoRecibido = Type.Union([
  Type.Literal('recibido'),
  Type.Literal('rechazado_tecnico'),
  Type.Literal('aceptado'),
  Type.Literal('reclamado'),
  Type.Literal('aceptado_tacito'),
])

const Accion = Type.Union([Type.Literal('ACD'), Type.Literal('RCD'), Type.Literal('ERM'), Type.Literal('RFP'), Type.Literal('RFT')], {
  description:
    'ACD acepta el contenido; RCD reclama el contenido; ERM otorga el recibo de mercaderías o servicios (Ley 19.983); RFP / RFT reclaman falta parcial / total de mercaderías.',
})

export const ListarRecibidosQuery = Type.Object(
  {
    rut_emisor: Type.Optional(Type.String({ maxLength: 20, description: 'RUT del emisor, con o sin puntos.' })),
    tipo_dte: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Filtra por tipo de DTE.' })),
    estado: Type.Optional(EstadoRecibido),
    fecha_desde: Type.Optional(Type.String({ pattern: DATE_PATTERN, description: 'Fecha de emisión mínima (inclusive), YYYY-MM-DD.' })),
    fecha_hasta: Type.Optional(Type.String({ pattern: DATE_PATTERN, description: 'Fecha de emisión máxima (inclusive), YYYY-MM-DD.' })),
    pendientes: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: 'true: solo las 33, 34 y 43 aún sin aceptar ni reclamar, el plazo más próximo primero, con dias_restantes (DESIGN §16).',
    })),
    cursor: Cursor,
    limit: ListLimit,
  },
  { additionalProperties: false },
)

const NullableString = Type.Union([Type.String(), Type.Null()])
const NullableInteger = Type.Union([Type.Integer(), Type.Null()])

export const CheckSchema = Type.Object(
  {
    check: Type.String({ description: 'schema, firma_envio, receptor_envio, firma_dte, ted, caf, receptor, emisor, duplicado.' }),
    ok: Type.Boolean(),
    detalle: Type.String({ description: 'Lo encontrado, en castellano; vacío cuando ok.' }),
  },
  { title: 'CheckRecepcion' },
)

export const AccionSchema = Type.Object(
  {
    accion: Accion,
    motivo: NullableString,
    estado: Type.Union([Type.Literal('registrada'), Type.Literal('pendiente'), Type.Literal('rechazada')], {
      description: 'registrada en el SII; pendiente (el SII no respondió: se reintenta y el resultado llega por webhook recibido.accion); rechazada por el SII.',
    }),
    cod_resp: Type.Union([Type.Integer(), Type.Null()], { description: 'codResp del SII (RegistroReclamoDTE); null mientras está pendiente.' }),
    desc_resp: NullableString,
    solicitada_at: Type.String({ format: 'date-time' }),
    registrada_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'AccionRecibido' },
)

export const RecibidoSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    rut_emisor: Type.String(),
    razon_social_emisor: Type.String(),
    tipo_dte: Type.Integer(),
    folio: Type.Integer(),
    fecha_emision: Type.String({ format: 'date' }),
    monto_neto: NullableInteger,
    monto_exento: NullableInteger,
    iva: NullableInteger,
    monto_total: Type.Integer(),
    estado: EstadoRecibido,
    estado_recep_dte: Type.Integer({ description: 'EstadoRecepDTE del acuse: 0 recibido OK; 1 firma; 2 RUT emisor; 3 RUT receptor; 4 repetido; 99 otros.' }),
    plazo: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Fin de los 8 días para aceptar o reclamar (recepción en el SII + 8 días); null mientras el SII no informa la recepción.',
    }),
    fecha_recepcion_sii: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    checks: Type.Array(CheckSchema, { description: 'Cada validación de la recepción: primero las del sobre, luego las del documento.' }),
    acciones: Type.Array(AccionSchema),
    recibido_at: Type.String({ format: 'date-time' }),
    dias_restantes: Type.Optional(Type.Union([Type.Integer(), Type.Null()], {
      description: 'Solo con ?pendientes=true: días enteros que quedan antes de que se considere aceptado (redondeado hacia arriba); null sin fecha de recepción del SII.',
    })),
    envio: Type.Object({
      id: Type.String({ format: 'uuid' }),
      origen: Type.Union([Type.Literal('correo'), Type.Literal('importar'), Type.Literal('demo')]),
      estado_recep_env: Type.Integer({ description: 'EstadoRecepEnv del acuse: 0 conforme; 1 schema; 2 firma; 3 RUT receptor; 90 repetido; 91 ilegible; 99 otros.' }),
      glosa: Type.String(),
    }),
  },
  { title: 'Recibido' },
)

export const RecibidoListSchema = Type.Object({
  items: Type.Array(RecibidoSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
  total_count: Type.Integer(),
})

export const ImportarRecibidosBody = Type.Object(
  { xml_base64: Type.String({ description: 'El archivo EnvioDTE, sus bytes exactos en base64 (hasta 5 MB de cuerpo).' }) },
  { title: 'ImportarRecibidos' },
)

export const ImportarRecibidosResponse = Type.Object(
  {
    estado_recep_env: Type.Integer(),
    glosa: Type.String(),
    documentos: Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        tipo_dte: Type.Integer(),
        folio: Type.Integer(),
        rut_emisor: Type.String(),
        estado: EstadoRecibido,
        estado_recep_dte: Type.Integer(),
      }),
    ),
  },
  { title: 'ImportarRecibidosRespuesta' },
)

/** Longest `motivo`: what the ResultadoDTE's GlosaDTE carries (RespuestaEnvioDTE_v10.xsd, 256). */
export const MOTIVO_MAX = 256

export const AccionBody = Type.Object(
  {
    accion: Accion,
    motivo: Type.Optional(
      Type.String({ minLength: 1, maxLength: MOTIVO_MAX, description: 'Opcional: razón de la aceptación o el reclamo; viaja al emisor en el ResultadoDTE.' }),
    ),
  },
  { additionalProperties: false, title: 'AccionRecibidoRequest' },
)
