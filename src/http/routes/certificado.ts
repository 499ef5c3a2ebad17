// Spec 4.3 estadoCertificado / subirCertificadoPfx (DESIGN §8): multipart (archivo, password) or JSON (pfx_base64, password).
import { Elysia } from 'elysia'
import { TimbreError, type FieldError } from '../../errors'
import { getCertificadoStatus, uploadCertificado } from '../../services/certificados'
import type { Deps } from '../../services/deps'
import { API_PREFIX } from '../prefix'
import { credentialOf } from '../request-context'
import { jsonObjectOf, notAllowedMembers } from '../../contracts/validation'
import { commonErrors, ErrorEnvelopeSchema } from '../../contracts/common'
import { CertificadoStatusSchema, SubirPfxJsonBody, SubirPfxMultipartBody } from '../../contracts/certificado'

// Base64 with whitespace anywhere before the padding and after it. Linear: what follows the `+` starts with `=`, which
// it cannot match, so a failure backtracks one step per character. `/^[A-Za-z0-9+/\s]+={0,2}\s*$/`, the same language,
// let `+` and `\s*` share whitespace: quadratic, 40 000 spaces then `!` held the event loop 1.7 s (issue 12).
const BASE64 = /^[A-Za-z0-9+/\s]+(?:={1,2}\s*)?$/

/** Reads either form of the upload; every missing or malformed field is reported at once. */
async function readUpload(request: Request, body: unknown): Promise<{ pfx: Uint8Array; password: string }> {
  const isMultipart = (request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data')
  const fields = isMultipart ? ((body ?? {}) as Record<string, unknown>) : jsonObjectOf(body)
  const errors: FieldError[] = []
  const password = fields.password
  if (typeof password !== 'string') errors.push({ field: 'password', code: password === undefined ? 'REQUIRED' : 'INVALID_TYPE', message: 'Contraseña del PFX requerida.' })
  let pfx: Uint8Array | null = null
  if (isMultipart) {
    const file = fields.archivo
    if (file instanceof Blob) pfx = new Uint8Array(await file.arrayBuffer())
    else errors.push({ field: 'archivo', code: file === undefined ? 'REQUIRED' : 'INVALID_TYPE', message: 'Adjunte el archivo PFX/P12 en el campo archivo.' })
  } else {
    const b64 = fields.pfx_base64
    if (typeof b64 !== 'string' || b64.trim() === '') errors.push({ field: 'pfx_base64', code: b64 === undefined || b64 === '' ? 'REQUIRED' : 'INVALID_TYPE', message: 'El PFX en base64 es requerido.' })
    else if (!BASE64.test(b64)) errors.push({ field: 'pfx_base64', code: 'INVALID_FORMAT', message: 'No es base64 válido.' })
    else pfx = Buffer.from(b64, 'base64')
    errors.push(...notAllowedMembers(fields, ['pfx_base64', 'password']))
  }
  if (pfx !== null && pfx.length === 0) errors.push({ field: isMultipart ? 'archivo' : 'pfx_base64', code: 'REQUIRED', message: 'El archivo está vacío.' })
  if (errors.length > 0 || pfx === null) throw new TimbreError('VALIDATION_ERROR', { details: errors })
  return { pfx, password: password as string }
}

export const certificadoRoutes = (deps: Deps) =>
  new Elysia({ prefix: '/empresa/certificado', normalize: false })
    .get('', ({ request }) => getCertificadoStatus(deps, { empresaId: credentialOf(request).empresaId }), {
      detail: { operationId: 'estadoCertificado', tags: ['Empresa'], summary: 'Estado del certificado digital' },
      response: { 200: CertificadoStatusSchema, 404: ErrorEnvelopeSchema, ...commonErrors },
    })
    .post(
      '/pfx',
      async ({ request, body, set }) => {
        const upload = await readUpload(request, body)
        const status = await uploadCertificado(deps, { empresaId: credentialOf(request).empresaId, ...upload })
        set.status = 201
        set.headers['location'] = `${API_PREFIX}/empresa/certificado`
        return status
      },
      {
        detail: {
          operationId: 'subirCertificadoPfx',
          tags: ['Empresa'],
          summary: 'Sube el certificado PFX/P12; reemplaza al activo',
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': { schema: SubirPfxMultipartBody },
              'application/json': { schema: SubirPfxJsonBody },
            },
          },
        },
        response: { 201: CertificadoStatusSchema, ...commonErrors },
      },
    )
