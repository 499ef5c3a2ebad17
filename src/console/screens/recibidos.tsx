// Placeholder until this screen is written.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { renderPage } from '../page'

export const recibidoScreens = (deps: Deps) =>
  new Elysia({ normalize: false }).get('/recibidos', ({ request }) => renderPage(deps, request, { title: 'Recibidos', section: 'recibidos', children: <p>Pendiente.</p> }))
