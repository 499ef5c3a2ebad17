// Spec 4.6 listProductos, createProducto, searchProductos, getProducto, updateProducto, deleteProducto (DESIGN §8, §12).
import { Elysia } from 'elysia'
import { SEARCH_LIMIT } from '../../domain/catalogo'
import type { Deps } from '../../services/deps'
import { createProducto, deleteProducto, getProducto, listProductos, searchProductos, updateProducto } from '../../services/productos'
import { decodeCursor, page, parseLimit } from '../../contracts/pagination'
import { API_PREFIX } from '../prefix'
import { credentialOf } from '../request-context'
import { commonErrors, ErrorEnvelopeSchema, errorResponses } from '../../contracts/common'
import {
  ActualizarProductoBody,
  BuscarProductosQuery,
  CrearProductoBody,
  ListarProductosQuery,
  parseProductoAlta,
  parseProductoCambios,
  ProductoListSchema,
  ProductoSchema,
} from '../../contracts/productos'
import { jsonBody, noContent, pathId } from '../../contracts/params'

const TAGS = ['Productos']

export const productoRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/productos', normalize: false })
    .get(
      '',
      ({ request, query }) => {
        const limit = parseLimit(query.limit, { max: 100, fallback: 20 })
        const filter = { categoria: query.categoria, afterId: decodeCursor(query.cursor), limit: limit + 1 }
        return page(listProductos(deps, { empresaId: credentialOf(request).empresaId, ...filter }), limit)
      },
      {
        query: ListarProductosQuery,
        detail: { operationId: 'listProductos', tags: TAGS, summary: 'Productos, más recientes primero; filtro por categoría' },
        response: { 200: ProductoListSchema, ...commonErrors },
      },
    )
    .post(
      '',
      ({ request, body, set }) => {
        const producto = createProducto(deps, { empresaId: credentialOf(request).empresaId, alta: parseProductoAlta(body) })
        set.status = 201
        set.headers['location'] = `${API_PREFIX}/productos/${producto.id}`
        return producto
      },
      {
        parse: 'json',
        detail: {
          operationId: 'createProducto',
          tags: TAGS,
          summary: 'Registra un producto o servicio; el código, si se envía, es único en la empresa',
          requestBody: jsonBody(CrearProductoBody),
        } as Record<string, unknown>,
        response: { 201: ProductoSchema, 409: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .get(
      '/search',
      ({ request, query }) =>
        searchProductos(deps, { empresaId: credentialOf(request).empresaId, q: query.q, limit: parseLimit(query.limit, { max: SEARCH_LIMIT.max, fallback: SEARCH_LIMIT.fallback }) }),
      {
        query: BuscarProductosQuery,
        detail: { operationId: 'searchProductos', tags: TAGS, summary: 'Busca productos por nombre o código (sin distinguir mayúsculas ni tildes)' },
        response: { 200: ProductoListSchema.properties.data, ...commonErrors },
      },
    )
    .get('/:id', ({ request, params }) => getProducto(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) }), {
      detail: { operationId: 'getProducto', tags: TAGS, summary: 'Un producto' },
      response: { 200: ProductoSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
    })
    .put(
      '/:id',
      ({ request, params, body }) =>
        updateProducto(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id), cambios: parseProductoCambios(body) }),
      {
        parse: 'json',
        detail: {
          operationId: 'updateProducto',
          tags: TAGS,
          summary: 'Modifica un producto: solo los campos enviados; null borra. Los DTE ya emitidos no cambian',
          requestBody: jsonBody(ActualizarProductoBody),
        } as Record<string, unknown>,
        response: { 200: ProductoSchema, 404: ErrorEnvelopeSchema, 409: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .delete(
      '/:id',
      ({ request, params }) => {
        deleteProducto(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) })
        return noContent()
      },
      {
        detail: {
          operationId: 'deleteProducto',
          tags: TAGS,
          summary: 'Elimina un producto (borrado lógico); los DTE ya emitidos no cambian y su código queda libre',
          responses: { 204: { description: 'Eliminado' }, ...errorResponses(404) },
        } as Record<string, unknown>,
      },
    )
