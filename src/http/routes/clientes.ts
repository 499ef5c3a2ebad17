// Spec 4.5 listClientes, createCliente, searchClientes, getCliente, updateCliente, deleteCliente (DESIGN §8, §12).
import { Elysia } from 'elysia'
import { SEARCH_LIMIT } from '../../domain/catalogo'
import { createCliente, deleteCliente, getCliente, listClientes, searchClientes, updateCliente } from '../../services/clientes'
import type { Deps } from '../../services/deps'
import { decodeCursor, page, parseLimit } from '../../contracts/pagination'
import { API_PREFIX } from '../prefix'
import { jsonBody, noContent, pathId } from '../../contracts/params'
import { credentialOf } from '../request-context'
import {
  ActualizarClienteBody,
  BuscarClientesQuery,
  ClienteListSchema,
  ClienteSchema,
  CrearClienteBody,
  ListarClientesQuery,
  parseClienteAlta,
  parseClienteCambios,
} from '../../contracts/clientes'
import { commonErrors, ErrorEnvelopeSchema, errorResponses } from '../../contracts/common'

const TAGS = ['Clientes']

export const clienteRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/clientes', normalize: false })
    .get(
      '',
      ({ request, query }) => {
        const limit = parseLimit(query.limit, { max: 100, fallback: 20 })
        return page(listClientes(deps, { empresaId: credentialOf(request).empresaId, afterId: decodeCursor(query.cursor), limit: limit + 1 }), limit)
      },
      {
        query: ListarClientesQuery,
        detail: { operationId: 'listClientes', tags: TAGS, summary: 'Clientes, más recientes primero' },
        response: { 200: ClienteListSchema, ...commonErrors },
      },
    )
    .post(
      '',
      ({ request, body, set }) => {
        const cliente = createCliente(deps, { empresaId: credentialOf(request).empresaId, alta: parseClienteAlta(body) })
        set.status = 201
        set.headers['location'] = `${API_PREFIX}/clientes/${cliente.id}`
        return cliente
      },
      {
        parse: 'json',
        detail: {
          operationId: 'createCliente',
          tags: TAGS,
          summary: 'Registra un cliente (receptor frecuente); el RUT es único en la empresa',
          requestBody: jsonBody(CrearClienteBody),
        } as Record<string, unknown>,
        response: { 201: ClienteSchema, 409: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .get(
      '/search',
      ({ request, query }) =>
        searchClientes(deps, { empresaId: credentialOf(request).empresaId, q: query.q, limit: parseLimit(query.limit, { max: SEARCH_LIMIT.max, fallback: SEARCH_LIMIT.fallback }) }),
      {
        query: BuscarClientesQuery,
        detail: { operationId: 'searchClientes', tags: TAGS, summary: 'Busca clientes por razón social o RUT (sin distinguir mayúsculas ni tildes)' },
        response: { 200: ClienteListSchema.properties.data, ...commonErrors },
      },
    )
    .get('/:id', ({ request, params }) => getCliente(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) }), {
      detail: { operationId: 'getCliente', tags: TAGS, summary: 'Un cliente' },
      response: { 200: ClienteSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
    })
    .put(
      '/:id',
      ({ request, params, body }) => {
        const empresaId = credentialOf(request).empresaId
        const id = pathId(params.id)
        const current = getCliente(deps, { empresaId, id }) // 404 before 400: the stored RUT decides whether `rut` may be sent
        return updateCliente(deps, { empresaId, id, cambios: parseClienteCambios(body, current.rut) })
      },
      {
        parse: 'json',
        detail: {
          operationId: 'updateCliente',
          tags: TAGS,
          summary: 'Modifica un cliente: solo los campos enviados; null borra; el RUT no cambia',
          requestBody: jsonBody(ActualizarClienteBody),
        } as Record<string, unknown>,
        response: { 200: ClienteSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .delete(
      '/:id',
      ({ request, params }) => {
        deleteCliente(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) })
        return noContent()
      },
      {
        detail: {
          operationId: 'deleteCliente',
          tags: TAGS,
          summary: 'Elimina un cliente (borrado lógico): desaparece de consultas y búsquedas y su RUT queda libre',
          responses: { 204: { description: 'Eliminado' }, ...errorResponses(404) },
        } as Record<string, unknown>,
      },
    )
