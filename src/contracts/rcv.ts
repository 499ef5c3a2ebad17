// The month's close (DESIGN §16, extensions): the RCV mirror's state and details, the reconciliation and the F29
// proposal as the API answers them. Pure data: the services shape the records, these schemas document them.
import { Type } from '@sinclair/typebox'
import { Cursor, ListLimit } from './pagination'

const NullableString = Type.Union([Type.String(), Type.Null()])
const Monto = Type.Union([Type.Integer(), Type.Null()], { description: 'Pesos; null cuando el SII dejó la celda vacía (distinto de 0).' })

export const SECCIONES_QUERY = ['registro', 'pendiente', 'no_incluir', 'reclamado'] as const

const ResumenTipo = Type.Object(
  {
    tipoDoc: Type.Integer(), cantidad: Type.Integer(), montoExento: Type.Integer(), montoNeto: Type.Integer(), montoIva: Type.Integer(),
    montoIvaNoRecuperable: Type.Integer(), ivaUsoComun: Type.Integer(), montoTotal: Type.Integer(),
  },
  { title: 'ResumenTipoRcv' },
)

export const EstadoRcvSchema = Type.Object(
  {
    periodo: Type.String({ description: 'AAAAMM.' }),
    estado: Type.Union(['sin_sincronizar', 'pendiente', 'sincronizando', 'sincronizado', 'fallido'].map((e) => Type.Literal(e)), {
      description: 'sin_sincronizar: nunca leído; pendiente: pedido; sincronizando: en lectura; sincronizado; fallido: la última lectura falló (la última copia buena sigue).',
    }),
    sincronizado_at: NullableString,
    solicitado_at: NullableString,
    ultimo_intento_at: NullableString,
    falla: Type.Union([Type.Object({ motivo: Type.String(), mensaje: Type.String(), at: Type.String() }), Type.Null()], {
      description: 'Por qué falló la última lectura: login_rechazado, tope_sesiones, sesion_expirada, descarga_diferida_sin_terminar, sii_rechazo, respuesta_invalida, sin_conexion, sin_certificado, error_interno.',
    }),
    diferidas: Type.Integer({ description: 'Cuántos detalles (sección, tipo) de la última copia vinieron por descarga diferida.' }),
    resumen: Type.Union([
      Type.Object({
        compras: Type.Object({ registro: Type.Array(ResumenTipo), pendiente: Type.Array(ResumenTipo), no_incluir: Type.Array(ResumenTipo), reclamado: Type.Array(ResumenTipo) }),
        ventas: Type.Array(ResumenTipo),
      }),
      Type.Null(),
    ]),
  },
  { title: 'EstadoRcv' },
)

export const DetalleRcvSchema = Type.Object(
  {
    seccion: Type.String({ description: 'registro, pendiente, no_incluir, reclamado (compras) o ventas.' }),
    tipo_dte: Type.Integer(),
    rut: Type.String({ description: 'La contraparte: el proveedor en compras, el cliente en ventas.' }),
    razon_social: Type.String(),
    folio: Type.Integer(),
    fecha_emision: Type.String(),
    fecha_recepcion: NullableString,
    fecha_acuse: NullableString,
    fecha_reclamo: NullableString,
    tipo_transaccion: NullableString,
    monto_exento: Monto,
    monto_neto: Monto,
    monto_iva: Monto,
    monto_iva_no_recuperable: Monto,
    monto_total: Type.Integer(),
    iva_uso_comun: Monto,
    iva_retenido_total: Monto,
    iva_retenido_parcial: Monto,
    referencia: Type.Union([Type.Object({ tipo_dte: Type.Integer(), folio: Type.Integer() }), Type.Null()]),
  },
  { title: 'DetalleRcv' },
)

export const DetalleRcvListSchema = Type.Object(
  { items: Type.Array(DetalleRcvSchema), next_cursor: NullableString, total_count: Type.Integer() },
  { title: 'DetalleRcvList' },
)

export const ListarComprasRcvQuery = Type.Object(
  {
    seccion: Type.Optional(Type.String({ description: 'registro, pendiente, no_incluir o reclamado; sin ella, todas.' })),
    cursor: Cursor,
    limit: ListLimit,
  },
  { additionalProperties: false },
)
export const ListarVentasRcvQuery = Type.Object({ cursor: Cursor, limit: ListLimit }, { additionalProperties: false })
export const CsvComprasQuery = Type.Object(
  { seccion: Type.Optional(Type.String({ description: 'registro (por defecto), pendiente, no_incluir o reclamado: el SII exporta una sección por archivo.' })) },
  { additionalProperties: false },
)

const DocumentoHallazgo = Type.Object({
  origen: Type.String({ description: 'timbre o sii.' }), tipo_dte: Type.Integer(), folio: Type.Integer(), rut: Type.String(),
  registro: NullableString, id: Type.Union([Type.String(), Type.Null()], { description: 'El DTE emitido o recibido en Timbre.' }),
})

export const ConciliacionSchema = Type.Object(
  {
    periodo: Type.String(),
    rcv: Type.Object({ estado: Type.String(), sincronizado_at: NullableString, falla: Type.Union([Type.Object({ motivo: Type.String(), mensaje: Type.String(), at: Type.String() }), Type.Null()]) }),
    completa: Type.Boolean({ description: 'false mientras no hay copia del RCV: solo lo que Timbre sabe por sí mismo (pendientes de aceptación, notas sobre reclamadas).' }),
    total: Type.Integer(),
    por_tipo: Type.Record(Type.String(), Type.Integer()),
    hallazgos: Type.Array(Type.Object({
      tipo: Type.String({ description: 'recibido_sin_registro, compra_sin_documento, montos_distintos, emitido_sin_registro, venta_sin_documento, pendiente_aceptacion, nota_sobre_reclamada, boleta_duplicada.' }),
      mensaje: Type.String(),
      documentos: Type.Array(DocumentoHallazgo),
      diferencias: Type.Optional(Type.Array(Type.Object({ campo: Type.String(), timbre: Type.Integer(), sii: Type.Integer() }))),
      plazo: Type.Optional(Type.String()),
      dias_restantes: Type.Optional(Type.Integer()),
    })),
  },
  { title: 'Conciliacion' },
)

const DocF29 = Type.Object({ tipo_dte: Type.Integer(), folio: Type.Integer(), rut: Type.String() })
const CodigoF29 = Type.Object({
  codigo: Type.Integer(), glosa: Type.String(), valor: Type.Integer(),
  confirmado: Type.Boolean({ description: 'false: ninguna fuente del SII confirma la asignación; revísela antes de declarar.' }),
  fuente: Type.String(), documentos: Type.Array(DocF29),
})

export const F29Schema = Type.Object(
  {
    periodo: Type.String(),
    origen: Type.String({ description: 'rcv: desde la copia del RCV; timbre: desde los documentos de Timbre mientras no hay copia.' }),
    rcv: Type.Object({ estado: Type.String(), sincronizado_at: NullableString }),
    codigos: Type.Array(CodigoF29),
    resultado: CodigoF29,
    advertencias: Type.Array(Type.Object({ tipo: Type.String(), bloquea: Type.Boolean(), mensaje: Type.String(), documentos: Type.Array(DocF29) })),
    limpia: Type.Boolean(),
    confirmada: Type.Boolean(),
  },
  { title: 'PropuestaF29' },
)
