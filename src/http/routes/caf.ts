// Spec 4.2 listarCafs / subirCaf / obtenerCaf.
import { Elysia } from 'elysia'
import { getCaf, listCafs, registerCaf } from '../../services/cafs'
import type { Deps } from '../../services/deps'
import { decodeCursor, page, parseLimit } from '../../contracts/pagination'
import { API_PREFIX } from '../prefix'
import { credentialOf } from '../request-context'
import { CafListSchema, CafSchema, ListarCafsQuery, SubirCafBody } from '../../contracts/caf'
import { pathId } from '../../contracts/params'
import { commonErrors, ErrorEnvelopeSchema } from '../../contracts/common'

export const cafRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/caf', normalize: false })
    .get(
      '',
      ({ request, query }) => {
        const limit = parseLimit(query.limit, { max: 100, fallback: 20 })
        const rows = listCafs(deps, {
          empresaId: credentialOf(request).empresaId,
          tipo_dte: query.tipo_dte,
          is_active: query.is_active,
          afterId: decodeCursor(query.cursor),
          limit: limit + 1,
        })
        return page(rows, limit)
      },
      {
        query: ListarCafsQuery,
        detail: { operationId: 'listarCafs', tags: ['CAF'], summary: 'CAF registrados, más recientes primero' },
        response: { 200: CafListSchema, ...commonErrors },
      },
    )
    .post(
      '',
      async ({ request, body, set }) => {
        const caf = await registerCaf(deps, { empresaId: credentialOf(request).empresaId, tipo_dte: body.tipo_dte, caf_xml: body.caf_xml })
        set.status = 201
        set.headers['location'] = `${API_PREFIX}/caf/${caf.id}`
        return caf
      },
      {
        parse: 'json',
        body: SubirCafBody,
        detail: { operationId: 'subirCaf', tags: ['CAF'], summary: 'Registra un CAF (folios autorizados por el SII)' },
        response: { 201: CafSchema, 409: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
    .get(
      '/:id',
      ({ request, params }) => getCaf(deps, { empresaId: credentialOf(request).empresaId, id: pathId(params.id) }),
      {
        detail: { operationId: 'obtenerCaf', tags: ['CAF'], summary: 'Un CAF con su rango y disponibilidad' },
        response: { 200: CafSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
      },
    )
