// The whole store in one place (drizzle-kit generates the migrations from this file: `npm run db:generate`).
// Column names are the spec's JSON names (STYLE §3). Times are RFC 3339 UTC text with milliseconds (DESIGN §12),
// so they sort as text; ids are UUIDv7, so they sort by creation.
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const empresas = sqliteTable(
  'empresas',
  {
    id: text('id').primaryKey(),
    rut: text('rut').notNull(),
    razon_social: text('razon_social').notNull(),
    giro: text('giro').notNull(),
    /** JSON array of 1 to 4 economic activity codes (DESIGN §8). */
    acteco: text('acteco', { mode: 'json' }).$type<number[]>().notNull(),
    direccion: text('direccion').notNull(),
    comuna: text('comuna').notNull(),
    ciudad: text('ciudad').notNull(),
    ambiente: text('ambiente', { enum: ['certificacion', 'produccion'] }).notNull(),
    fecha_resolucion: text('fecha_resolucion').notNull(),
    numero_resolucion: integer('numero_resolucion').notNull(),
    inbound_email: text('inbound_email'),
    inbound_status: text('inbound_status'),
    /** The demo company never talks to the real SII (DESIGN §10). */
    is_demo: integer('is_demo', { mode: 'boolean' }).notNull().default(false),
    created_at: text('created_at').notNull(),
    updated_at: text('updated_at').notNull(),
  },
  (t) => [uniqueIndex('empresas_rut_unique').on(t.rut)],
)

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    empresa_id: text('empresa_id')
      .notNull()
      .references(() => empresas.id),
    nombre: text('nombre'),
    /** SHA-256 of the whole key, hex: the key itself is shown once and never stored (DESIGN §4). */
    key_hash: text('key_hash').notNull(),
    /** First 12 characters, so people can tell their keys apart in `apikey list`. */
    prefix: text('prefix').notNull(),
    write: integer('write', { mode: 'boolean' }).notNull(),
    created_at: text('created_at').notNull(),
    expires_at: text('expires_at'),
    last_used_at: text('last_used_at'),
    revoked_at: text('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_hash_unique').on(t.key_hash), index('api_keys_empresa').on(t.empresa_id, t.id)],
)

export type EmpresaRow = typeof empresas.$inferSelect
export type ApiKeyRow = typeof apiKeys.$inferSelect

