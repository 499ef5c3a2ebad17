// Placeholder until this screen is written.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { renderPage } from '../page'

export const correoScreens = (deps: Deps) =>
  new Elysia({ normalize: false }).get('/correo', ({ request }) => renderPage(deps, request, { title: 'Correo', section: 'correo', children: <p>Pendiente.</p> }))
