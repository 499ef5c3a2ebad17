// Placeholder until this screen is written.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { renderPage } from '../page'

export const documentoScreens = (deps: Deps) =>
  new Elysia({ normalize: false }).get('/documentos', ({ request }) => renderPage(deps, request, { title: 'Documentos', section: 'documentos', children: <p>Pendiente.</p> }))
