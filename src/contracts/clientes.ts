// /clientes bodies, queries and the cliente record (spec 2.16, 4.5; DESIGN §8, §12). Shape only; the rules TypeBox
// cannot state (valid RUT, e-mail, ISO-8859-1 texts) live in domain/catalogo.ts, and parseBody (validation.ts) runs
// both so a request learns every failing field at once (DESIGN §5).
import { Type } from '@sinclair/typebox'
import { CLIENTE_MAX_LENGTH, checkClienteFields, checkRutUnchanged, SEARCH_Q_MAX } from '../domain/catalogo'
import type { ClienteAlta, ClienteCambios } from '../services/clientes'
import { Cursor, ListLimit } from './pagination'
import { parseBody } from './validation'

type Limits = Readonly<Record<string, number>>

/**
 * An optional text that null clears. `nullable` is OpenAPI 3.0's word for it; TypeBox ignores the keyword, and
 * parseBody sets nulls aside before checking, so a too-long text is TOO_LONG rather than a union mismatch.
 */
export const nullableText = (limits: Limits, field: string, description: string) =>
  Type.Optional(Type.String({ maxLength: limits[field], nullable: true, description: `${description} (máx. ${limits[field]}); null lo borra.` }))

const text = (field: keyof typeof CLIENTE_MAX_LENGTH, description: string) => nullableText(CLIENTE_MAX_LENGTH, field, description)

const clienteTexts = {
  giro: text('giro', 'Giro'),
  direccion: text('direccion', 'Dirección'),
  comuna: text('comuna', 'Comuna'),
  ciudad: text('ciudad', 'Ciudad'),
  email: text('email', 'Correo electrónico'),
  telefono: text('telefono', 'Teléfono'),
  contacto: text('contacto', 'Persona de contacto'),
  notas: text('notas', 'Notas internas; nunca van al DTE'),
}

const RazonSocial = Type.String({ minLength: 1, maxLength: CLIENTE_MAX_LENGTH.razon_social, description: `Razón social (máx. ${CLIENTE_MAX_LENGTH.razon_social}).` })

export const CrearClienteBody = Type.Object(
  {
    rut: Type.String({ minLength: 1, maxLength: 20, description: 'RUT con dígito verificador, con o sin puntos; se guarda como 12345678-K.', examples: ['76.086.428-5'] }),
    razon_social: RazonSocial,
    ...clienteTexts,
  },
  { additionalProperties: false, title: 'CrearCliente' },
)

export const ActualizarClienteBody = Type.Object(
  {
    // Any value reaches checkRutUnchanged, so every attempt to change the RUT reads NOT_ALLOWED (DESIGN §12).
    rut: Type.Optional(Type.Unknown({ description: 'El RUT no se puede cambiar: solo se acepta el mismo, en cualquier formato.' })),
    razon_social: Type.Optional(RazonSocial),
    ...clienteTexts,
  },
  { additionalProperties: false, title: 'ActualizarCliente', description: 'Solo cambian los campos enviados; null borra un campo opcional.' },
)

export function parseClienteAlta(body: unknown): ClienteAlta {
  return parseBody<ClienteAlta>(CrearClienteBody, body, checkClienteFields)
}

/** The stored RUT is needed to tell an unchanged `rut` (accepted) from a change (NOT_ALLOWED). */
export function parseClienteCambios(body: unknown, storedRut: string): ClienteCambios {
  return parseBody<ClienteCambios>(ActualizarClienteBody, body, ({ rut, ...fields }) => [...checkRutUnchanged(rut, storedRut), ...checkClienteFields(fields)])
}

export const ListarClientesQuery = Type.Object({ cursor: Cursor, limit: ListLimit }, { additionalProperties: false })

/** `q` of a search (DESIGN §8); `where` names the fields searched. */
export const searchQ = (where: string) =>
  Type.String({ minLength: 1, maxLength: SEARCH_Q_MAX, description: `Texto a buscar, 1 a ${SEARCH_Q_MAX} caracteres, sin distinguir mayúsculas ni tildes, en ${where}.` })
export const SearchLimit = Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Resultados, 1 a 50 (por defecto 10).' }))

export const BuscarClientesQuery = Type.Object(
  { q: searchQ('la razón social y el RUT (con o sin puntos y guion)'), limit: SearchLimit },
  { additionalProperties: false },
)

const Nullable = () => Type.Union([Type.String(), Type.Null()])

export const ClienteSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    rut: Type.String({ examples: ['76086428-5'] }),
    razon_social: Type.String(),
    giro: Nullable(),
    direccion: Nullable(),
    comuna: Nullable(),
    ciudad: Nullable(),
    email: Nullable(),
    telefono: Nullable(),
    contacto: Nullable(),
    notas: Nullable(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Cliente' },
)

export const ClienteListSchema = Type.Object({ data: Type.Array(ClienteSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })
