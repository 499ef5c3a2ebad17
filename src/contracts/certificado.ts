// POST /empresa/certificado/pfx and the certificate status record (spec 2.14, DESIGN §8).
import { Type } from '@sinclair/typebox'

export const SubirPfxJsonBody = Type.Object(
  {
    pfx_base64: Type.String({ minLength: 1, description: 'Archivo PFX/P12 en base64.' }),
    password: Type.String({ description: 'Contraseña del archivo PFX.' }),
  },
  { additionalProperties: false },
)

export const SubirPfxMultipartBody = Type.Object({
  archivo: Type.String({ format: 'binary', description: 'Archivo PFX/P12.' }),
  password: Type.String(),
})

export const CertificadoStatusSchema = Type.Object(
  {
    has_certificado: Type.Boolean(),
    rut_firmante: Type.Union([Type.String(), Type.Null()]),
    fecha_vencimiento: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    dias_para_vencimiento: Type.Union([Type.Integer(), Type.Null()]),
    is_active: Type.Boolean(),
    uploaded_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    titular: Type.Union([Type.String(), Type.Null()], { description: 'Extensión: nombre del titular del certificado (CN del sujeto).' }),
    emisor_certificado: Type.Union([Type.String(), Type.Null()], { description: 'Extensión: autoridad certificadora que lo emitió (CN del emisor, o su O).' }),
    fecha_inicio_vigencia: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
      description: 'Extensión: primer día de vigencia (notBefore), fecha de Santiago como fecha_vencimiento.',
    }),
  },
  { title: 'CertificadoStatus' },
)
