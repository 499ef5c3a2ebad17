// Certificación ante el SII (DESIGN §15, extensions): the set file, issuing and sending it, the state of each stage with
// the next step, and what the person records. Every operation answers 409 NOT_IN_CERTIFICATION for a company in producción.
import { Elysia, type AnyElysia } from 'elysia'
import { cargarSet, estadoCertificacion, listarEnvios, marcarEtapaEnCurso, registrarEtapa, requireCertificacion } from '../../services/certificacion'
import { answerIntercambio } from '../../services/certificacion-intercambio'
import { simular } from '../../services/certificacion-simulacion'
import { consumoFolios, documentosDeMuestra, emitirBoletas, type CasoBoleta } from '../../services/certificacion-boletas'
import { streamMuestrasZip } from '../../services/certificacion-muestras'
import { emitirSet, envioXml } from '../../services/certificacion-emitir'
import { construirLibro, enviarLibros, TIPOS_LIBRO } from '../../services/certificacion-libros'
import type { Deps } from '../../services/deps'
import {
  ArchivoBody, BoletasBody, EmitirSetBody, EnviosListSchema, parseBoletas, EstadoCertificacionSchema, EtapaBody, parseEmitirSet, parseEtapa, parseSimulacion, SimulacionBody,
} from '../../contracts/certificacion'
import { validateEmision } from '../../contracts/dte'
import { readUploadedFile } from '../../contracts/upload'
import { jsonBody, pathId } from '../../contracts/params'
import { credentialOf } from '../request-context'
import { errorResponses } from '../../contracts/common'
import { ETAPAS } from '../../domain/certificacion-etapas'
import { TimbreError } from '../../errors'

const extension = (detail: Record<string, unknown>) => ({ ...detail, tags: ['Certificación'], 'x-timbre-extension': true }) as Record<string, unknown>
const estadoResponse = (description: string) => ({ description, content: { 'application/json': { schema: EstadoCertificacionSchema } } })

export const certificacionRoutes = (deps: Deps) =>
  new Elysia({ normalize: false })
    .use(librosYEtapas(deps))
    .group('/certificacion', (app) => app
    .get('', ({ request }) => estadoCertificacion(deps, { empresaId: credentialOf(request).empresaId }), {
      detail: extension({
        operationId: 'obtenerCertificacion',
        summary: 'Estado de la certificación ante el SII: etapas con el siguiente paso, sets, casos con sus folios, envíos y libros (extensión)',
        responses: { 200: estadoResponse('Estado de la certificación'), ...errorResponses(409) },
      }),
    })
    .post(
      '/set',
      async ({ request, body, query, set }) => {
        const archivo = await readUploadedFile(request, body, { jsonField: 'archivo_base64', what: 'el set de pruebas del SII' })
        set.status = 201
        return cargarSet(deps, { empresaId: credentialOf(request).empresaId, bytes: archivo.bytes, field: archivo.field, reemplazar: query.reemplazar === 'true', check: validateEmision })
      },
      {
        detail: extension({
          operationId: 'cargarSetPruebas',
          summary: 'Carga el set de pruebas del SII (SIISetDePruebas….txt, ISO-8859-1) y muestra la solicitud de cada caso (extensión)',
          description:
            'JSON `{"archivo_base64"}` con los bytes exactos del archivo, o multipart/form-data con el campo `archivo`. Una línea ilegible, o un caso que no se podría emitir, es un 400 que nombra la línea; no se guarda nada. Los sets se guardan por nombre; uno con casos emitidos se reemplaza solo con `?reemplazar=true` (409 SET_YA_EMITIDO).',
          parameters: [{ name: 'reemplazar', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'], default: 'false' } }],
          requestBody: jsonBody(ArchivoBody),
          responses: { 201: estadoResponse('Set cargado'), ...errorResponses(400, 409) },
        }),
      },
    )
    .post(
      '/set/emitir',
      async ({ request, body }) => {
        const input = parseEmitirSet(body)
        return emitirSet(deps, { empresaId: credentialOf(request).empresaId, ...input, check: validateEmision })
      },
      {
        detail: extension({
          operationId: 'emitirSetPruebas',
          summary: 'Emite cada caso del set una sola vez, en orden, con la referencia SET, y envía un EnvioDTE por set al SII (extensión)',
          description:
            'Cada caso pasa por el mismo camino que POST /dte (reglas, folio, TED, firma). `tpo_cambio` es el tipo de cambio de los sets de exportación (400 REQUIRED si falta). `reemitir: true` reemite con folios nuevos los casos rechazados o con reparos. Los documentos siguen su estado en el SII como cualquier DTE.',
          requestBody: jsonBody(EmitirSetBody),
          responses: { 200: estadoResponse('Estado tras emitir y enviar'), ...errorResponses(400, 409, 422) },
        }),
      },
    )
    .post(
      '/simulacion',
      async ({ request, body }) => {
        const { cantidad } = parseSimulacion(body)
        return simular(deps, { empresaId: credentialOf(request).empresaId, cantidad, check: validateEmision })
      },
      {
        detail: extension({
          operationId: 'generarSimulacion',
          summary: 'Simulación: emite entre 20 y 100 documentos representativos de la empresa y los envía en un EnvioDTE (extensión)',
          description:
            'Tipos que cubrió el set (33, 34, 46, 52, 56, 61), con los clientes y productos de la empresa cuando los tiene, montos y descuentos variados y notas sobre sus propias facturas. 422 NO_FOLIOS_AVAILABLE antes de emitir si faltan folios.',
          requestBody: jsonBody(SimulacionBody),
          responses: { 200: estadoResponse('Estado tras la simulación'), ...errorResponses(400, 409, 422) },
        }),
      },
    )
    .post(
      '/intercambio',
      async ({ request, body, query }) => {
        const { empresaId } = credentialOf(request)
        requireCertificacion(deps.store.db, empresaId)
        const archivo = await readUploadedFile(request, body, { jsonField: 'archivo_base64', what: 'el EnvioDTE de intercambio del SII' })
        const { zip, informe } = await answerIntercambio(deps, { empresaId, bytes: archivo.bytes, field: archivo.field, fileName: archivo.fileName, now: deps.clock.now() })
        marcarEtapaEnCurso(deps, { empresaId, etapa: 'intercambio' })
        if (query.formato === 'json') return { informe, zip_base64: Buffer.from(zip).toString('base64') }
        return new Response(Buffer.from(zip), {
          headers: { 'content-type': 'application/zip', 'content-disposition': 'attachment; filename="intercambio.zip"' },
        })
      },
      {
        detail: extension({
          operationId: 'responderIntercambio',
          summary: 'Intercambio: las tres respuestas firmadas al EnvioDTE de prueba del SII, en un zip (extensión)',
          description:
            'JSON `{"archivo_base64"}` o multipart `archivo` con el EnvioDTE que entrega el SII (emisor 88888888-8). Responde application/zip con 1_RecepcionDTE.xml, 2_EnvioRecibos.xml y 3_ResultadoDTE.xml, firmados con el certificado de la empresa. Corren las mismas validaciones que a cualquier envío recibido; con `?formato=json` responde `{informe, zip_base64}` con el resultado de cada una. No guarda los documentos. 400 si el archivo no es el envío de intercambio del SII para esta empresa.',
          parameters: [{ name: 'formato', in: 'query', required: false, schema: { type: 'string', enum: ['zip', 'json'], default: 'zip' } }],
          requestBody: jsonBody(ArchivoBody),
          responses: {
            200: { description: 'Las tres respuestas', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } },
            ...errorResponses(400, 409, 422),
          },
        }),
      },
    )
    .get('/envios', ({ request }) => ({ items: listarEnvios(deps, { empresaId: credentialOf(request).empresaId }) }), {
      detail: extension({
        operationId: 'listarEnviosCertificacion',
        summary: 'Los envíos de la certificación (sets, simulación, boletas, libros), en orden, con su track id y estado (extensión)',
        responses: { 200: { description: 'Envíos', content: { 'application/json': { schema: EnviosListSchema } } }, ...errorResponses(409) },
      }),
    })
    .get(
      '/envios/:id/xml',
      ({ request, params }) => {
        const xml = envioXml(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) })
        return new Response(Buffer.from(xml.bytes), {
          headers: { 'content-type': 'application/xml; charset=ISO-8859-1', 'content-disposition': `attachment; filename="${xml.fileName}"` },
        })
      },
      {
        detail: extension({
          operationId: 'descargarEnvioCertificacion',
          summary: 'El EnvioDTE (o EnvioBOLETA) firmado de un envío de la certificación, bytes exactos (extensión)',
          responses: { 200: { description: 'Envío firmado', content: { 'application/xml': { schema: { type: 'string' } } } }, ...errorResponses(404, 409) },
        }),
      },
    )
    .post('/libros/enviar', ({ request }) => enviarLibros(deps, { empresaId: credentialOf(request).empresaId }), {
      detail: extension({
        operationId: 'enviarLibrosCertificacion',
        summary: 'Envía al SII los libros que pide el set (DTEUpload) y los sigue hasta su respuesta (extensión)',
        responses: { 200: estadoResponse('Estado tras enviar los libros'), ...errorResponses(400, 404, 409) },
      }),
    })
    .get(
      '/muestras',
      ({ request }) => {
        const empresaId = credentialOf(request).empresaId
        const dtes = documentosDeMuestra(deps, { empresaId })
        if (dtes.length === 0) throw new TimbreError('NOT_FOUND', { message: 'Aún no hay documentos del set ni de la simulación.', context: { recurso: 'muestras' } })
        return new Response(streamMuestrasZip(deps, { empresaId, dtes }), {
          headers: { 'content-type': 'application/zip', 'content-disposition': 'attachment; filename="muestras.zip"' },
        })
      },
      {
        detail: extension({
          operationId: 'descargarMuestras',
          summary: 'Muestras de impresión: un PDF por documento del set y de la simulación, y la copia cedible de 33, 34, 46 y 52 (extensión)',
          responses: { 200: { description: 'Zip de PDF', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } }, ...errorResponses(404, 409) },
        }),
      },
    )
    .post(
      '/boletas',
      async ({ request, body }) => {
        const { casos } = parseBoletas(body)
        return emitirBoletas(deps, { empresaId: credentialOf(request).empresaId, casos: casos as unknown as CasoBoleta[], check: validateEmision })
      },
      {
        detail: extension({
          operationId: 'emitirBoletasCertificacion',
          summary: 'Set de boletas: emite cada boleta una vez con la referencia SET (CodRef SET, RazonRef CASO-n) y las envía en un EnvioBOLETA (extensión)',
          requestBody: jsonBody(BoletasBody),
          responses: { 200: estadoResponse('Estado tras emitir las boletas'), ...errorResponses(400, 409, 422) },
        }),
      },
    )
    .get(
      '/boletas/consumo-folios',
      ({ request }) => {
        const xml = consumoFolios(deps, { empresaId: credentialOf(request).empresaId })
        return new Response(Buffer.from(xml), {
          headers: { 'content-type': 'application/xml; charset=ISO-8859-1', 'content-disposition': 'attachment; filename="ConsumoFolios.xml"' },
        })
      },
      {
        detail: extension({
          operationId: 'descargarConsumoFolios',
          summary: 'ConsumoFolios (ConsumoFolio_v10.xsd) de las boletas de la certificación, firmado (extensión)',
          responses: { 200: { description: 'ConsumoFolios', content: { 'application/xml': { schema: { type: 'string' } } } }, ...errorResponses(404, 409) },
        }),
      },
    ))

/**
 * `GET /certificacion/libros/{ventas|compras|guias}` and `POST /certificacion/etapas/{etapa}` (DESIGN §15): one literal
 * route per libro and per stage, since they name a kind, not a resource (the route table's `{…}` are ids).
 */
const librosYEtapas = (deps: Deps) => {
  // Typed loosely: Elysia's route types grow with each route, which a loop cannot express.
  let app: AnyElysia = new Elysia({ prefix: '/certificacion', normalize: false })
  for (const tipo of TIPOS_LIBRO)
    app = app.get(
      `/libros/${tipo}`,
      ({ request }) => {
        const xml = construirLibro(deps, { empresaId: credentialOf(request).empresaId, tipo })
        return new Response(Buffer.from(xml), {
          headers: { 'content-type': 'application/xml; charset=ISO-8859-1', 'content-disposition': `attachment; filename="Libro_${tipo}.xml"` },
        })
      },
      {
        detail: extension({
          operationId: `descargarLibro${tipo[0]!.toUpperCase()}${tipo.slice(1)}`,
          summary: LIBRO_SUMMARY[tipo],
          description: 'Firmado con el certificado de la empresa, ISO-8859-1. 404 mientras no existan los documentos de los que se arma.',
          responses: { 200: { description: 'Libro firmado', content: { 'application/xml': { schema: { type: 'string' } } } }, ...errorResponses(404, 409) },
        }),
      },
    )
  for (const etapa of ETAPAS)
    app = app.post(
      `/etapas/${etapa}`,
      ({ request, body }) => {
        const input = parseEtapa(body)
        return registrarEtapa(deps, { empresaId: credentialOf(request).empresaId, etapa, estado: input.estado, ...(input.nota !== undefined ? { nota: input.nota } : {}) })
      },
      {
        detail: extension({
          operationId: `registrarEtapa_${etapa}`,
          summary: `Registra lo que el SII dijo de la etapa ${etapa} en su sitio: aprobado o pendiente (extensión)`,
          requestBody: jsonBody(EtapaBody),
          responses: { 200: estadoResponse('Estado de la certificación'), ...errorResponses(400, 409) },
        }),
      },
    )
  return app
}

const LIBRO_SUMMARY: Readonly<Record<string, string>> = {
  ventas: 'Libro de ventas del set (LibroCompraVenta VENTA, ESPECIAL, TOTAL, FolioNotificacion 1), de los documentos del set BASICO (extensión)',
  compras: 'Libro de compras del set (LibroCompraVenta COMPRA, ESPECIAL, TOTAL, FolioNotificacion 2), de la grilla del set, cada línea según su observación (extensión)',
  guias: 'Libro de guías del set (LibroGuia), de las guías del set GUIA DE DESPACHO, con la facturada y la anulada (extensión)',
}
