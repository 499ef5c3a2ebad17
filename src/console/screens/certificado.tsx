// Placeholder until this screen is written.
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { renderPage } from '../page'

export const certificadoScreens = (deps: Deps) =>
  new Elysia({ normalize: false }).get('/certificado', ({ request }) => renderPage(deps, request, { title: 'Certificado', section: 'certificado', children: <p>Pendiente.</p> }))
