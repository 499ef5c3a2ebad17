// Spec 4.3 obtenerEmpresa / actualizarEmpresa.
import { Elysia } from 'elysia'
import { getEmpresa, updateEmpresaDatos } from '../../services/empresas'
import { getFoliosAutomaticos, setFoliosAutomaticos } from '../../services/caf-solicitudes'
import { FoliosAutomaticosBody, FoliosAutomaticosSchema } from '../../contracts/caf'
import type { Deps } from '../../services/deps'
import { jsonBody } from '../../contracts/params'
import { credentialOf } from '../request-context'
import { commonErrors } from '../../contracts/common'
import { ActualizarEmpresaBody, EmpresaSchema, parseActualizarEmpresa } from '../../contracts/empresa'

export const empresaRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/empresa', normalize: false })
    .get('', ({ request }) => getEmpresa(deps, { empresaId: credentialOf(request).empresaId }), {
      detail: { operationId: 'obtenerEmpresa', tags: ['Empresa'], summary: 'Empresa asociada a la credencial' },
      response: { 200: EmpresaSchema, ...commonErrors },
    })
    .get('/folios-automaticos', ({ request }) => getFoliosAutomaticos(deps, { empresaId: credentialOf(request).empresaId }), {
      detail: { operationId: 'obtenerFoliosAutomaticos', tags: ['Empresa'], summary: 'El modo de folios automáticos de la empresa (extensión)', 'x-timbre-extension': true } as Record<string, unknown>,
      response: { 200: FoliosAutomaticosSchema, ...commonErrors },
    })
    .put('/folios-automaticos', ({ request, body }) => setFoliosAutomaticos(deps, { empresaId: credentialOf(request).empresaId, ...body }), {
      parse: 'json',
      body: FoliosAutomaticosBody,
      detail: {
        operationId: 'configurarFoliosAutomaticos',
        tags: ['Empresa'],
        summary: 'Activa o cambia el modo de folios automáticos: Timbre pide un CAF al SII cuando quedan pocos folios o vencen pronto (extensión)',
        'x-timbre-extension': true,
      } as Record<string, unknown>,
      response: { 200: FoliosAutomaticosSchema, ...commonErrors },
    })
    .put('', ({ request, body }) => updateEmpresaDatos(deps, { empresaId: credentialOf(request).empresaId, datos: parseActualizarEmpresa(body) }), {
      parse: 'json',
      detail: {
        operationId: 'actualizarEmpresa',
        tags: ['Empresa'],
        summary: 'Actualiza datos tributarios y de contacto',
        requestBody: jsonBody(ActualizarEmpresaBody),
      } as Record<string, unknown>,
      response: { 200: EmpresaSchema, ...commonErrors },
    })
