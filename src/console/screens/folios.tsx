// Placeholder until this screen is written.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { renderPage } from '../page'

export const folioScreens = (deps: Deps) =>
  new Elysia({ normalize: false }).get('/folios', ({ request }) => renderPage(deps, request, { title: 'Folios', section: 'folios', children: <p>Pendiente.</p> }))
