// An uploaded file, as every API route that takes one reads it (an EnvioDTE to import, the SII's set and intercambio
// files): JSON `{<field>_base64}` with the file's exact bytes, or multipart `archivo`. Errors name the field used.
import { validationError } from '../errors'
import { jsonObjectOf, notAllowedMembers } from './validation'

const BASE64 = /^[A-Za-z0-9+/\s]+(?:={1,2}\s*)?$/

export interface UploadedFile {
  readonly bytes: Uint8Array
  readonly field: string
  /** The multipart part's file name; null in JSON. */
  readonly fileName: string | null
}

/**
 * `jsonField` is the JSON member (`xml_base64`, `archivo_base64`); `what` names the file after an article, lower case
 * ("el EnvioDTE"), as the messages say it. An empty multipart file is REQUIRED, as an empty base64 string is.
 */
export async function readUploadedFile(request: Request, body: unknown, opts: { jsonField: string; what: string }): Promise<UploadedFile> {
  if ((request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data')) {
    const file = ((body ?? {}) as Record<string, unknown>).archivo
    if (!(file instanceof Blob))
      throw validationError([{ field: 'archivo', code: file === undefined ? 'REQUIRED' : 'INVALID_TYPE', message: `Adjunte ${opts.what} en el campo archivo.` }])
    const bytes = new Uint8Array(await file.arrayBuffer())
    if (bytes.length === 0) throw validationError([{ field: 'archivo', code: 'REQUIRED', message: 'El archivo está vacío.' }])
    return { bytes, field: 'archivo', fileName: file instanceof File && file.name !== '' ? file.name : null }
  }
  const fields = jsonObjectOf(body)
  const extra = notAllowedMembers(fields, [opts.jsonField])
  if (extra.length > 0) throw validationError(extra)
  const value = fields[opts.jsonField]
  const field = opts.jsonField
  if (typeof value !== 'string' || value.trim() === '') {
    const what = opts.what.charAt(0).toUpperCase() + opts.what.slice(1)
    throw validationError([{ field, code: value === undefined || value === '' ? 'REQUIRED' : 'INVALID_TYPE', message: `${what} en base64 es requerido.` }])
  }
  if (!BASE64.test(value)) throw validationError([{ field, code: 'INVALID_FORMAT', message: 'No es base64 válido.' }])
  return { bytes: new Uint8Array(Buffer.from(value, 'base64')), field, fileName: null }
}
