// Placeholder until this screen is written.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { renderPage } from '../page'

export const emitirScreens = (deps: Deps) =>
  new Elysia({ normalize: false }).get('/documentos/nuevo', ({ request }) => renderPage(deps, request, { title: 'Emitir', section: 'emitir', children: <p>Pendiente.</p> }))
