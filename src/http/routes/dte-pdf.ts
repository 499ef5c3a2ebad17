// Spec 4.1 descargarDTEPdf: the printed representation (DESIGN §8, §12).
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { getDtePdf } from '../../services/dte-pdf'
import { credentialOf } from '../request-context'
import { pathId } from '../../contracts/params'
import { errorResponses } from '../../contracts/common'

export const dtePdfRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/dte', normalize: false }).get(
    '/:id/pdf',
    async ({ request, params, query }) => {
      // The query is checked by the service.
      const pdf = await getDtePdf(deps, {
        empresaId: credentialOf(request).empresaId,
        id: pathId(params.id),
        query: { formato: query.formato, cedible: query.cedible },
      })
      return new Response(Buffer.from(pdf.bytes), {
        headers: {
          'content-type': 'application/pdf',
          'content-disposition': `inline; filename="DTE-${pdf.tipoDte}-F${pdf.folio}.pdf"`,
        },
      })
    },
    {
      detail: {
        operationId: 'descargarDTEPdf',
        tags: ['DTE'],
        summary: 'Representación impresa del DTE (PDF con el timbre PDF417), carta u 80 mm, con copia cedible opcional',
        parameters: [
          { name: 'formato', in: 'query', required: false, schema: { type: 'string', enum: ['carta', 'termico'], default: 'carta' } },
          {
            name: 'cedible',
            in: 'query',
            required: false,
            description: 'Agrega la copia cedible con su acuse de recibo (solo tipos 33, 34, 43, 46 y 52).',
            schema: { type: 'string', enum: ['true', 'false'], default: 'false' },
          },
        ],
        responses: {
          200: { description: 'PDF del DTE', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } },
          ...errorResponses(404),
        },
      } as Record<string, unknown>,
    },
  )
