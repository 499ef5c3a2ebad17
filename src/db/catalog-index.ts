// The catalogs' search index (drizzle/0003_catalogs.sql, DESIGN §8): how a company maps to its range of the FTS5
// tables, and how search terms become FTS5 syntax or substring tests. Shared by cliente-store.ts and producto-store.ts.
import { sql, type SQL, type SQLWrapper } from 'drizzle-orm'

/**
 * Each indexed row's key is empresa_key × 2^40 + seq: one company's rows are one contiguous rowid range, and a search
 * seeks into it and walks it newest first, stopping at the limit, whatever other companies hold. 2^40 rows per
 * instance is never reached; two companies whose ids hash to the same key share a range, which costs a little speed
 * and nothing else (queries also filter on empresa_id).
 */
const SEQ_SPAN = 2 ** 40
const EMPRESA_KEYS = 2 ** 22

/** FNV-1a of the empresa id, reduced to 22 bits; stored in each row as `empresa_key` for the triggers. */
export function empresaKey(empresaId: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < empresaId.length; i++) h = Math.imul(h ^ empresaId.charCodeAt(i), 0x01000193) >>> 0
  return h % EMPRESA_KEYS
}

/**
 * `rowid` lies in the company's range of an FTS table. The bounds reach 2^62, beyond a double's exact integers: bound
 * from JavaScript they would arrive as REAL, rounded, and FTS5 then walks the whole doclist (measured 13 ms instead of
 * 0.3 ms for a common word at 100 000 rows). SQLite computes them in 64-bit integers from the small key instead.
 */
export function inEmpresaRange(ftsRowid: SQLWrapper, empresaId: string): SQL {
  const key = empresaKey(empresaId)
  return sql`${ftsRowid} BETWEEN ${key} * ${SEQ_SPAN} AND ${key} * ${SEQ_SPAN} + ${SEQ_SPAN - 1}`
}

/** The `seq` an FTS rowid stands for. */
export function seqOf(ftsRowid: SQLWrapper): SQL<number> {
  return sql<number>`(${ftsRowid} % ${SEQ_SPAN})`
}

/**
 * The trigram tokenizer indexes 3-character windows: a shorter term matches nothing through MATCH. A NUL ends FTS5's
 * query text ("unterminated string"), so a term holding one (foldText never makes one) goes the instr way too.
 */
export function isTrigramSearchable(term: string): boolean {
  return [...term].length >= 3 && !term.includes('\u0000')
}

/** `"a" OR "b"`: each term a quoted FTS5 phrase (quotes doubled), so no character of a query is FTS syntax. */
export function ftsMatchExpression(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ')
}

/** `expr` contains `term` (both folded already): instr, so no character of a query is pattern syntax. */
export function contains(expr: SQLWrapper, term: string): SQL {
  return sql`instr(${expr}, ${term}) > 0`
}
