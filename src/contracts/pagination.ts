// Cursor pagination (spec 4.7, DESIGN §8): newest first by UUIDv7; the cursor is the last id of the page, made opaque.
import { Type } from '@sinclair/typebox'
import { TimbreError } from '../errors'
import { isUuid } from './common'

const PREFIX = 'c1.'

export function encodeCursor(lastId: string): string {
  return PREFIX + Buffer.from(lastId, 'utf8').toString('base64url')
}

/** The id after which the next page starts; a cursor we did not make is 400 on field `cursor`. */
export function decodeCursor(cursor: string | undefined): string | null {
  if (cursor === undefined || cursor === '') return null
  const id = cursor.startsWith(PREFIX) ? Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8') : ''
  if (!isUuid(id))
    throw new TimbreError('VALIDATION_ERROR', {
      details: [{ field: 'cursor', code: 'INVALID_FORMAT', message: 'Cursor inválido; use el next_cursor de la página anterior.' }],
    })
  return id.toLowerCase()
}

/** `limit` of lists: 1 to 100, default 20 (DESIGN §8). Strings from the query are checked by the route's schema. */
export const ListLimit = Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Resultados por página, 1 a 100 (por defecto 20).' }))
export const Cursor = Type.Optional(Type.String({ description: 'El next_cursor de la página anterior.' }))

export function parseLimit(raw: string | undefined, opts: { min?: number; max: number; fallback: number }): number {
  if (raw === undefined) return opts.fallback
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN
  const min = opts.min ?? 1
  if (!Number.isInteger(n) || n < min || n > opts.max)
    throw new TimbreError('VALIDATION_ERROR', {
      details: [{ field: 'limit', code: 'OUT_OF_RANGE', message: `Debe ser un entero entre ${min} y ${opts.max}.` }],
    })
  return n
}

/** Fetch limit + 1 rows; the extra one says whether a next page exists. */
export function page<T extends { id: string }>(rows: readonly T[], limit: number): { data: T[]; next_cursor: string | null } {
  const data = rows.slice(0, limit)
  return { data, next_cursor: rows.length > limit && data.length > 0 ? encodeCursor(data[data.length - 1]!.id) : null }
}
