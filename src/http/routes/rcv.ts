// The month's close (DESIGN §16, extensions): the RCV mirror (state, details, the SII's CSV and xlsx files, a sync on
// demand), the reconciliation and the F29 proposal of one period. Every answer is the credential's company's.
import { Elysia } from 'elysia'
import { errorResponses } from '../../contracts/common'
import { parseLimit } from '../../contracts/pagination'
import {
  ConciliacionSchema, CsvComprasQuery, DetalleRcvListSchema, EstadoRcvSchema, F29Schema, ListarComprasRcvQuery, ListarVentasRcvQuery,
} from '../../contracts/rcv'
import { conciliacionDe, f29De } from '../../services/cierre-mes'
import type { Deps } from '../../services/deps'
import { archivoRcv, estadoRcv, listarDetalles, solicitarSincronizacion, type ArchivoRcv } from '../../services/rcv'
import { credentialOf } from '../request-context'

const extension = (detail: Record<string, unknown>) => ({ ...detail, tags: ['Cierre del mes'], 'x-timbre-extension': true }) as Record<string, unknown>
const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } })
const PERIODO = { name: 'periodo', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]{6}$' }, description: 'Período tributario AAAAMM.' }
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/** A file to download, named by the service. */
function download(file: ArchivoRcv): Response {
  return new Response(Buffer.from(file.bytes), {
    headers: { 'content-type': file.contentType, 'content-disposition': `attachment; filename="${file.fileName}"` },
  })
}

export const rcvRoutes = (deps: Deps) =>
  new Elysia({ normalize: false })
    .group('/rcv', (app) => app
      .get('/:periodo', ({ request, params }) => estadoRcv(deps, { empresaId: credentialOf(request).empresaId, periodo: params.periodo }), {
        detail: extension({
          operationId: 'obtenerRcv',
          summary: 'Estado de la copia del RCV del SII de un período y sus resúmenes por tipo de documento (extensión)',
          parameters: [PERIODO],
          responses: { 200: json(EstadoRcvSchema, 'Estado y resúmenes'), ...errorResponses(400) },
        }),
      })
      .post(
        '/:periodo/sincronizar',
        ({ request, params, set }) => {
          set.status = 202
          return solicitarSincronizacion(deps, { empresaId: credentialOf(request).empresaId, periodo: params.periodo })
        },
        {
          detail: extension({
            operationId: 'sincronizarRcv',
            summary: 'Pide leer el RCV del período en el portal del SII con el certificado de la empresa; el webhook rcv.sincronizado avisa el resultado (extensión)',
            description:
              'Responde 202 con el estado (pendiente). El trabajo rcv abre una sesión en el portal del SII por TLS mutuo con el certificado de la empresa (nunca una clave ni un tercero), lee los resúmenes y detalles de las cuatro secciones del Registro de Compras y del Registro de Ventas (descarga diferida en los períodos grandes) y cierra la sesión. Si falla, la última copia buena se mantiene y `falla` dice por qué. 422 CERTIFICATE_REQUIRED sin certificado activo.',
            parameters: [PERIODO],
            responses: { 202: json(EstadoRcvSchema, 'Lectura pedida'), ...errorResponses(400, 422) },
          }),
        },
      )
      .get(
        '/:periodo/compras',
        ({ request, params, query }) =>
          listarDetalles(deps, {
            empresaId: credentialOf(request).empresaId, periodo: params.periodo, registro: 'compras', seccion: query.seccion,
            cursor: query.cursor, limit: parseLimit(query.limit, { max: 100, fallback: 20 }),
          }),
        {
          query: ListarComprasRcvQuery,
          detail: extension({
            operationId: 'listarComprasRcv',
            summary: 'Detalle del Registro de Compras de la copia del RCV, por sección, en el orden del SII (extensión)',
            parameters: [PERIODO],
            responses: { 200: json(DetalleRcvListSchema, 'Detalles'), ...errorResponses(400, 409) },
          }),
        },
      )
      .get(
        '/:periodo/ventas',
        ({ request, params, query }) =>
          listarDetalles(deps, {
            empresaId: credentialOf(request).empresaId, periodo: params.periodo, registro: 'ventas',
            cursor: query.cursor, limit: parseLimit(query.limit, { max: 100, fallback: 20 }),
          }),
        {
          query: ListarVentasRcvQuery,
          detail: extension({
            operationId: 'listarVentasRcv',
            summary: 'Detalle del Registro de Ventas de la copia del RCV, en el orden del SII (extensión)',
            parameters: [PERIODO],
            responses: { 200: json(DetalleRcvListSchema, 'Detalles'), ...errorResponses(400, 409) },
          }),
        },
      )
      .get(
        '/:periodo/compras.csv',
        async ({ request, params, query }) =>
          download(await archivoRcv(deps, { empresaId: credentialOf(request).empresaId, periodo: params.periodo, registro: 'compras', formato: 'csv', seccion: query.seccion })),
        {
          query: CsvComprasQuery,
          detail: extension({
            operationId: 'descargarComprasRcvCsv',
            summary: 'Registro de Compras de una sección en el CSV del SII (separado por ;, CRLF) (extensión)',
            parameters: [PERIODO],
            responses: { 200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } }, ...errorResponses(400, 409) },
          }),
        },
      )
      .get(
        '/:periodo/ventas.csv',
        async ({ request, params }) =>
          download(await archivoRcv(deps, { empresaId: credentialOf(request).empresaId, periodo: params.periodo, registro: 'ventas', formato: 'csv' })),
        {
          detail: extension({
            operationId: 'descargarVentasRcvCsv',
            summary: 'Registro de Ventas en el CSV del SII (extensión)',
            parameters: [PERIODO],
            responses: { 200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } }, ...errorResponses(400, 409) },
          }),
        },
      )
      .get(
        '/:periodo/compras.xlsx',
        async ({ request, params }) =>
          download(await archivoRcv(deps, { empresaId: credentialOf(request).empresaId, periodo: params.periodo, registro: 'compras', formato: 'xlsx' })),
        {
          detail: extension({
            operationId: 'descargarComprasRcvXlsx',
            summary: 'Registro de Compras como planilla .xlsx: un resumen y una hoja por sección, con las columnas del SII (extensión)',
            parameters: [PERIODO],
            responses: { 200: { description: 'Planilla', content: { [XLSX]: { schema: { type: 'string', format: 'binary' } } } }, ...errorResponses(400, 409) },
          }),
        },
      )
      .get(
        '/:periodo/ventas.xlsx',
        async ({ request, params }) =>
          download(await archivoRcv(deps, { empresaId: credentialOf(request).empresaId, periodo: params.periodo, registro: 'ventas', formato: 'xlsx' })),
        {
          detail: extension({
            operationId: 'descargarVentasRcvXlsx',
            summary: 'Registro de Ventas como planilla .xlsx con las columnas del SII (extensión)',
            parameters: [PERIODO],
            responses: { 200: { description: 'Planilla', content: { [XLSX]: { schema: { type: 'string', format: 'binary' } } } }, ...errorResponses(400, 409) },
          }),
        },
      ))
    .get('/conciliacion/:periodo', ({ request, params }) => conciliacionDe(deps, { empresaId: credentialOf(request).empresaId, periodo: params.periodo }), {
      detail: extension({
        operationId: 'conciliarPeriodo',
        summary: 'Conciliación del período: los documentos de Timbre contra la copia del RCV, por (tipo, RUT, folio), cada hallazgo con sus documentos (extensión)',
        parameters: [PERIODO],
        responses: { 200: json(ConciliacionSchema, 'Hallazgos'), ...errorResponses(400) },
      }),
    })
    .get('/f29/:periodo', ({ request, params }) => f29De(deps, { empresaId: credentialOf(request).empresaId, periodo: params.periodo }), {
      detail: extension({
        operationId: 'propuestaF29',
        summary: 'Propuesta de F29 del período: los códigos que salen de documentos, cada uno con sus documentos y su fuente, y las advertencias (extensión)',
        description:
          'Desde la copia del RCV (`origen: rcv`) o, mientras no hay una, desde los documentos de Timbre (`origen: timbre`). Un código cuya asignación no confirma una fuente del SII viene con `confirmado: false`; `limpia` es false si alguna advertencia bloquea la declaración.',
        parameters: [PERIODO],
        responses: { 200: json(F29Schema, 'Propuesta'), ...errorResponses(400) },
      }),
    })
