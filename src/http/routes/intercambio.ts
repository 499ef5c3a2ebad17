// The company's exchange mailbox (DESIGN §13 "Mailbox of a company"), an extension of the spec: GET, PUT and DELETE
// /empresa/intercambio. Passwords go in, never out.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { getMailbox, mailboxPasswordsStored, removeMailbox, saveMailbox } from '../../services/mailbox'
import { jsonBody, noContent } from '../../contracts/params'
import { credentialOf } from '../request-context'
import { commonErrors, errorResponses } from '../../contracts/common'
import { GuardarIntercambioBody, IntercambioQuery, IntercambioSchema, parseGuardarIntercambio } from '../../contracts/intercambio'

const extension = (detail: Record<string, unknown>) => ({ ...detail, 'x-timbre-extension': true }) as Record<string, unknown>
const TAGS = ['Empresa']

export const intercambioRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/empresa/intercambio', normalize: false })
    .get('', ({ request, query }) => getMailbox(deps, { empresaId: credentialOf(request).empresaId, test: query.test === 'true' }), {
      query: IntercambioQuery,
      detail: extension({
        operationId: 'obtenerIntercambio',
        tags: TAGS,
        summary: 'Buzón de intercambio: configuración sin contraseñas y estado (extensión); ?test=true prueba las conexiones',
      }),
      response: { 200: IntercambioSchema, ...commonErrors },
    })
    .put(
      '',
      ({ request, body }) => {
        const { empresaId } = credentialOf(request)
        const { settings, test } = parseGuardarIntercambio(body, mailboxPasswordsStored(deps, { empresaId }))
        return saveMailbox(deps, { empresaId, settings, test })
      },
      {
        parse: 'json',
        detail: extension({
          operationId: 'guardarIntercambio',
          tags: TAGS,
          summary: 'Configura el buzón de intercambio (IMAP y SMTP; extensión); test: true prueba ambas conexiones',
          requestBody: jsonBody(GuardarIntercambioBody),
        }),
        response: { 200: IntercambioSchema, ...commonErrors },
      },
    )
    .delete(
      '',
      ({ request }) => {
        removeMailbox(deps, { empresaId: credentialOf(request).empresaId })
        return noContent()
      },
      {
        detail: extension({
          operationId: 'eliminarIntercambio',
          tags: TAGS,
          summary: 'Elimina el buzón de intercambio y sus contraseñas (extensión); inbound_email se conserva',
          responses: { 204: { description: 'Eliminado' }, ...errorResponses() },
        }),
      },
    )
