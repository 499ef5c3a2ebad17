// /productos bodies, queries and the producto record (spec 2.17, 4.6; DESIGN §8, §12). Shape only; the rules
// TypeBox cannot state live in domain/catalogo.ts and run with the shape in parseBody (validation.ts).
import { Type, type Static } from '@sinclair/typebox'
import { checkProductoFields, PRECIO_UNITARIO_MAX, PRODUCTO_MAX_LENGTH, type UNIDADES } from '../domain/catalogo'
import type { ProductoAlta, ProductoCambios } from '../services/productos'
import { Cursor, ListLimit } from './pagination'
import { parseBody } from './validation'
import { nullableText, SearchLimit, searchQ } from './clientes'

const text = (field: keyof typeof PRODUCTO_MAX_LENGTH, description: string) => nullableText(PRODUCTO_MAX_LENGTH, field, description)

// A union of literals, never t.UnionEnum, which would inject a default (docs/stack-notes.md "Elysia and TypeBox"); spelled
// out so TypeScript sees each literal, and held to domain UNIDADES by the type below.
const Unidad = Type.Union(
  [Type.Literal('UN'), Type.Literal('HR'), Type.Literal('KG'), Type.Literal('LT'), Type.Literal('MT'), Type.Literal('M2'), Type.Literal('M3')],
  { description: 'Unidad de medida: UN, HR, KG, LT, MT, M2, M3 (por defecto UN).' },
)
type SameUnidades = [Static<typeof Unidad>] extends [(typeof UNIDADES)[number]] ? ([(typeof UNIDADES)[number]] extends [Static<typeof Unidad>] ? true : never) : never
true satisfies SameUnidades

const productoFields = {
  codigo: Type.Optional(
    Type.String({ minLength: 1, maxLength: PRODUCTO_MAX_LENGTH.codigo, nullable: true, description: `Código interno (máx. ${PRODUCTO_MAX_LENGTH.codigo}), único en la empresa; null lo borra.` }),
  ),
  descripcion: text('descripcion', 'Descripción; en un DTE, el dsc_item de la línea'),
  precio_unitario: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: PRECIO_UNITARIO_MAX,
      nullable: true,
      description: `Precio unitario en pesos, entero de 0 a ${PRECIO_UNITARIO_MAX} (int64 que un número JSON lleva exacto); null: sin precio de lista.`,
    }),
  ),
  unidad: Type.Optional(Unidad),
  es_exento: Type.Optional(Type.Boolean({ description: 'Exento de IVA (en un DTE, ind_exe 1). Por defecto false.' })),
  categoria: text('categoria', 'Categoría, para filtrar la lista'),
}

const Nombre = Type.String({ minLength: 1, maxLength: PRODUCTO_MAX_LENGTH.nombre, description: `Nombre (máx. ${PRODUCTO_MAX_LENGTH.nombre}); en un DTE, el nombre de la línea.` })

export const CrearProductoBody = Type.Object({ nombre: Nombre, ...productoFields }, { additionalProperties: false, title: 'CrearProducto' })

export const ActualizarProductoBody = Type.Object(
  { nombre: Type.Optional(Nombre), ...productoFields },
  { additionalProperties: false, title: 'ActualizarProducto', description: 'Solo cambian los campos enviados; null borra un campo opcional.' },
)

export function parseProductoAlta(body: unknown): ProductoAlta {
  return parseBody<ProductoAlta>(CrearProductoBody, body, checkProductoFields)
}

export function parseProductoCambios(body: unknown): ProductoCambios {
  return parseBody<ProductoCambios>(ActualizarProductoBody, body, checkProductoFields)
}

export const ListarProductosQuery = Type.Object(
  {
    categoria: Type.Optional(Type.String({ minLength: 1, maxLength: PRODUCTO_MAX_LENGTH.categoria, description: 'Solo los de esta categoría (igual exacto).' })),
    cursor: Cursor,
    limit: ListLimit,
  },
  { additionalProperties: false },
)

export const BuscarProductosQuery = Type.Object(
  { q: searchQ('el nombre y el código'), limit: SearchLimit },
  { additionalProperties: false },
)

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(s: T) => Type.Union([s, Type.Null()])

export const ProductoSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    codigo: Nullable(Type.String()),
    nombre: Type.String(),
    descripcion: Nullable(Type.String()),
    precio_unitario: Nullable(Type.Integer()),
    unidad: Unidad,
    es_exento: Type.Boolean(),
    categoria: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Producto' },
)

export const ProductoListSchema = Type.Object({ data: Type.Array(ProductoSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })
