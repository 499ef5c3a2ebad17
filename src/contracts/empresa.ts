// PUT /empresa and the company record (spec 2.13 + acteco, DESIGN §8), bounded by the SII schema's lengths.
import { Type } from '@sinclair/typebox'
import { ACTECO_MAX, checkEmpresaDatos, EMPRESA_MAX_LENGTH, type EmpresaDatos } from '../domain/empresa'
import { parseBody } from './validation'

const text = (field: keyof typeof EMPRESA_MAX_LENGTH, description: string) =>
  Type.String({ minLength: 1, maxLength: EMPRESA_MAX_LENGTH[field], description: `${description} (máx. ${EMPRESA_MAX_LENGTH[field]}).` })

const Acteco = Type.Array(Type.Integer({ minimum: 1, maximum: 999999 }), {
  minItems: 1,
  maxItems: ACTECO_MAX,
  description: 'Códigos de actividad económica del SII (1 a 4).',
})

export const ActualizarEmpresaBody = Type.Object(
  {
    razon_social: Type.Optional(text('razon_social', 'Razón social')),
    giro: Type.Optional(text('giro', 'Giro')),
    direccion: Type.Optional(text('direccion', 'Dirección de origen')),
    comuna: Type.Optional(text('comuna', 'Comuna')),
    ciudad: Type.Optional(text('ciudad', 'Ciudad')),
    acteco: Type.Optional(Acteco),
  },
  { additionalProperties: false, description: 'Solo cambian los campos enviados. RUT, ambiente y resolución se cambian con la CLI.' },
)

/** The shape and the SII's text rules at once: a non-ISO-8859-1 razón social and a too-long giro are both reported (DESIGN §5). */
export function parseActualizarEmpresa(body: unknown): Partial<EmpresaDatos> {
  return parseBody<Partial<EmpresaDatos>>(ActualizarEmpresaBody, body, checkEmpresaDatos)
}

export const EmpresaSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    rut: Type.String({ examples: ['76543210-3'] }),
    razon_social: Type.String(),
    giro: Type.String(),
    acteco: Type.Array(Type.Integer()),
    direccion: Type.String(),
    comuna: Type.String(),
    ciudad: Type.String(),
    ambiente: Type.Union([Type.Literal('certificacion'), Type.Literal('produccion')]),
    fecha_resolucion: Type.String({ format: 'date' }),
    numero_resolucion: Type.Integer(),
    inbound_email: Type.Union([Type.String(), Type.Null()]),
    inbound_status: Type.Union([Type.String(), Type.Null()]),
    is_demo: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Empresa' },
)
