// POST /caf, GET /caf query and the CAF record (spec 2.12, 4.2, DESIGN §8).
import { Type } from '@sinclair/typebox'
import { TIPOS_DTE } from '../domain/emision'
import { Cursor, ListLimit } from './pagination'

export const TipoDteSchema = Type.Union(
  TIPOS_DTE.map((t) => Type.Literal(t)),
  { description: 'Tipo de DTE: 33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112.' },
)

export const SubirCafBody = Type.Object(
  {
    tipo_dte: TipoDteSchema,
    // A real CAF is about 2 KB (3 KB in base64): 64 KB bounds what the XML parser reads on the event loop (issue 12).
    caf_xml: Type.String({ minLength: 1, maxLength: 65_536, description: 'XML del CAF tal como lo entrega el SII, o en base64.' }),
  },
  { additionalProperties: false },
)

export const ListarCafsQuery = Type.Object(
  {
    tipo_dte: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Filtra por tipo de DTE.' })),
    is_active: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Filtra por vigencia.' })),
    cursor: Cursor,
    limit: ListLimit,
  },
  { additionalProperties: false },
)

export const CafSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    tipo_dte: Type.Integer(),
    folio_desde: Type.Integer(),
    folio_hasta: Type.Integer(),
    folios_disponibles: Type.Integer({ description: 'Folios aún no asignados.' }),
    ambiente: Type.Union([Type.Literal('certificacion'), Type.Literal('produccion')]),
    fecha_autorizacion: Type.String({ format: 'date' }),
    is_active: Type.Boolean({ description: 'Tiene folios libres y, para 33, 43, 46, 56 y 61, no han pasado 180 días desde su autorización.' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Caf' },
)

export const CafListSchema = Type.Object({ data: Type.Array(CafSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })
