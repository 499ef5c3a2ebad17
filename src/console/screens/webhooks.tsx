// Placeholder until this screen is written.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { renderPage } from '../page'

export const webhookScreens = (deps: Deps) =>
  new Elysia({ normalize: false }).get('/webhooks', ({ request }) => renderPage(deps, request, { title: 'Webhooks', section: 'webhooks', children: <p>Pendiente.</p> }))
