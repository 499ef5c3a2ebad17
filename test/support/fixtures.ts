// test/fixtures/dte: one realistic request per file, grouped by type (STYLE §5: a new case is a new JSON file). The one
// loader of them: every test that reads a fixture reads it through dteFixtures().
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EmitirDte } from '../../src/domain/emision'
import type { Totales } from '../../src/domain/totals'

const ROOT = join(import.meta.dir, '../fixtures/dte')

/** One file of test/fixtures/dte/<tipo>/<nnn>-<case>.json. */
export interface DteFixture {
  /** `<tipo>/<file>`, e.g. `033/004-descuento-global.json`. */
  readonly name: string
  readonly description: string
  /** The business date the case is written for: its fecha_emision and references are valid on that day. */
  readonly today: string
  readonly request: EmitirDte
  readonly expected: { readonly totales: Totales }
}

/**
 * Every fixture, by type folder then file name, freshly parsed (a test may change its copy). The order and the set are
 * part of what tests pin: test/unit/xml/signature.test.ts signs each with folio 1000 + its position here.
 */
export function dteFixtures(): DteFixture[] {
  return readdirSync(ROOT)
    .sort()
    .flatMap((tipo) =>
      readdirSync(join(ROOT, tipo))
        .filter((file) => file.endsWith('.json'))
        .sort()
        .map((file) => ({ name: `${tipo}/${file}`, ...(JSON.parse(readFileSync(join(ROOT, tipo, file), 'utf8')) as Omit<DteFixture, 'name'>) })),
    )
}

/** The first fixture of each of the 12 types, without its fixed date so the server issues it today. */
export function fixtureOfEachType(): Array<{ name: string; request: EmitirDte }> {
  const first = new Map<string, DteFixture>()
  for (const f of dteFixtures()) {
    const tipo = f.name.slice(0, f.name.indexOf('/'))
    if (!first.has(tipo)) first.set(tipo, f)
  }
  return [...first.values()].map(({ name, request }) => {
    const { fecha_emision: _fecha, ...rest } = request
    return { name, request: rest as EmitirDte }
  })
}
