// GET /dte query, the DTE record and the issuance response (spec 2.2, 4.1, 4.7).
import { Type } from '@sinclair/typebox'
import { Cursor, ListLimit } from './pagination'
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

const NullableString = Type.Union([Type.String(), Type.Null()])

/** One reason the SII gave (issue 13): its code as the SII writes it, its text, and the answer that said it. */
export const MotivoSiiSchema = Type.Object(
  {
    codigo: Type.String({ description: 'Código del SII: `DTE-3-101`, STATUS del upload (`7`), ESTADO (`RFR`, `FAU`)…' }),
    glosa: Type.String({ description: 'Texto del SII.' }),
    detalle: Type.Union([Type.String(), Type.Null()], { description: 'Lo que el SII agrega: mensaje de schema, detalle del error.' }),
    nivel: Type.Union([Type.Integer(), Type.Null()], { description: 'Nivel del SII cuando lo da: 3 rechaza; 2 y 1 son reparos.' }),
    fuente: Type.Union([Type.Literal('upload'), Type.Literal('estado_envio'), Type.Literal('estado_dte')], {
      description: 'Respuesta que lo dijo: el upload, el estado del envío (QueryEstUp / REST) o el estado del documento (QueryEstDte / consulta).',
    }),
  },
  { title: 'MotivoSII' },
)

/** Spec 2.7, with `motivos` (additive): why the SII decided what it did for this document. */
export const SiiStatusSchema = Type.Object(
  {
    source: Type.String({ description: '`documento`, `envio` o `upload`: la respuesta de la que vienen los datos.' }),
    track_id: NullableString,
    estado_sii: NullableString,
    glosa: Type.Union([Type.String(), Type.Null()], { description: 'Texto consolidado: los motivos del SII cuando los da.' }),
    glosa_estado: NullableString,
    err_code: NullableString,
    glosa_err: NullableString,
    num_atencion: NullableString,
    checked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    raw_xml: NullableString,
    motivos: Type.Optional(Type.Array(MotivoSiiSchema, { description: 'Cada motivo del SII para este documento (rechazo o reparo).' })),
  },
  { title: 'SiiStatus' },
)

/** One SII answer about the DTE (issue 13): `historial_sii` of GET /dte/{id}. */
export const HistorialSiiSchema = Type.Object(
  {
    at: Type.String({ format: 'date-time' }),
    canal: Type.Union([Type.Literal('soap'), Type.Literal('boleta')], { description: 'SOAP (DTEUpload, QueryEstUp, QueryEstDte) o la API REST de boletas.' }),
    operacion: Type.Union([Type.Literal('upload'), Type.Literal('estado_envio'), Type.Literal('estado_dte')]),
    track_id: NullableString,
    estado: Type.Union([Type.String(), Type.Null()], { description: 'Código de la respuesta: STATUS del upload, ESTADO del envío o del documento.' }),
    glosa: NullableString,
    err_code: NullableString,
    glosa_err: NullableString,
    num_atencion: NullableString,
    estadistica: Type.Union([Type.Array(Type.Record(Type.String(), Type.Integer())), Type.Null()], { description: 'Contadores por tipo de un envío procesado.' }),
    motivos: Type.Array(MotivoSiiSchema),
  },
  { title: 'HistorialSII' },
)

const FirmaValida = Type.Boolean({ description: 'false: la firma de la respuesta no se pudo verificar; se registra igual, para que el integrador decida.' })
const RecibidoAt = Type.String({ format: 'date-time', description: 'Cuándo Timbre leyó la respuesta en el buzón.' })

/** The receiver's envelope receipt (RespuestaDTE / RecepcionEnvio) for this DTE. */
const AcuseSchema = Type.Object(
  {
    estado_recep_env: Type.Union([Type.Integer(), Type.Null()], { description: 'EstadoRecepEnv del envío: 0 conforme; 1, 2, 3, 90, 91, 99 rechazo.' }),
    estado_recep_dte: Type.Union([Type.Integer(), Type.Null()], { description: 'EstadoRecepDTE del documento: 0 recibido OK; 1, 2, 3, 4, 99 no recibido.' }),
    glosa: NullableString,
    fecha: Type.Union([Type.String(), Type.Null()], { description: 'FchRecep tal como la escribe el receptor (hora local de Chile).' }),
    firma_valida: FirmaValida,
    recibido_at: RecibidoAt,
  },
  { title: 'AcuseRecibo' },
)

/** The receiver's commercial answer (ResultadoDTE) and/or its receipt of goods (Recibo, Ley 19.983). */
const ResultadoSchema = Type.Object(
  {
    estado_dte: Type.Optional(Type.Integer({ description: 'EstadoDTE: 0 aceptado, 1 aceptado con discrepancias, 2 rechazado.' })),
    glosa: Type.Optional(NullableString),
    fecha: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'TmstFirmaResp tal como la escribe el receptor (hora local de Chile).' })),
    firma_valida: Type.Optional(FirmaValida),
    recibido_at: Type.Optional(RecibidoAt),
    recibo: Type.Optional(
      Type.Object(
        {
          recinto: NullableString,
          fecha: Type.Union([Type.String(), Type.Null()], { description: 'TmstFirmaRecibo (hora local de Chile).' }),
          firma_valida: FirmaValida,
          recibido_at: RecibidoAt,
        },
        { description: 'Acuse de recibo de mercaderías o servicios (Ley 19.983), de un EnvioRecibos.' },
      ),
    ),
  },
  { title: 'ResultadoReceptor' },
)

/** DESIGN §13: the DTE mailed to its receiver, the receiver's answers and its actions at the SII. */
export const IntercambioSchema = Type.Object(
  {
    estado: Type.Union([Type.Literal('pendiente'), Type.Literal('enviado'), Type.Literal('sin_destinatario'), Type.Literal('error')], {
      description: 'pendiente: por enviar o reintentando; enviado; sin_destinatario: no se conoce el correo de intercambio del receptor; error: el envío falló.',
    }),
    email: Type.Union([Type.String(), Type.Null()], { description: 'Casilla de intercambio del receptor: receptor.email, el cliente con ese RUT o el listado del SII.' }),
    enviado_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    acuse: Type.Union([AcuseSchema, Type.Null()]),
    resultado: Type.Union([ResultadoSchema, Type.Null()]),
    eventos_receptor: Type.Array(Type.Object({ accion: Type.String({ description: 'codEvento del SII: ACD, RCD, ERM, RFP, RFT…' }), fecha: Type.String({ format: 'date-time' }) }), {
      description: 'Acciones registradas en el SII (listarEventosHistDoc), para 33, 34 y 43 durante los 8 días siguientes a la aceptación.',
    }),
  },
  { title: 'Intercambio' },
)

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
    monto_total: Type.Integer({ description: 'Total en pesos; en exportaciones en moneda extranjera, round(total × tpo_cambio).' }),
    moneda: Type.Union([Type.String(), Type.Null()], {
      description: 'Exportaciones (110, 111, 112): moneda de los montos del documento (TpoMoneda: DOLAR USA, EURO, PESO CL…); null en los demás tipos.',
    }),
    monto_total_moneda: Type.Union([Type.Number(), Type.Null()], {
      description: 'Exportaciones: el total del documento (MntTotal) en su moneda, hasta 4 decimales, tal como lo lleva el XML; null en los demás tipos.',
    }),
    detalle: Type.Array(Type.Unknown()),
    referencias: Type.Array(Type.Unknown()),
    tracking: TrackingSchema,
    sii_status: Type.Union([SiiStatusSchema, Type.Null()]),
    auto_send: Type.Boolean(),
    intercambio: Type.Union([IntercambioSchema, Type.Null()], {
      description: 'Extensión (DESIGN §13): el envío al receptor y sus respuestas; null hasta que el SII acepta el DTE, y siempre en boletas.',
    }),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    xml_documento: Type.Optional(Type.String()),
    historial_sii: Type.Optional(
      Type.Array(HistorialSiiSchema, {
        description: 'Solo en GET /dte/{id}: cada respuesta del SII sobre este DTE (upload, estados del envío, estado del documento), en orden.',
      }),
    ),
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
