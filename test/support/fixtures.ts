// test/fixtures/dte: one realistic request per file, grouped by type (STYLE §5: a new case is a new JSON file).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EmitirDte } from '../../src/domain/emision'

const ROOT = join(import.meta.dir, '../fixtures/dte')

/** The first fixture of each of the 12 types, without its fixed date so the server issues it today. */
export function fixtureOfEachType(): Array<{ name: string; request: EmitirDte }> {
  return readdirSync(ROOT)
    .sort()
    .map((dir) => {
      const file = readdirSync(join(ROOT, dir)).sort()[0]!
      const { request } = JSON.parse(readFileSync(join(ROOT, dir, file), 'utf8')) as { request: EmitirDte }
      const { fecha_emision: _fecha, ...rest } = request
      return { name: `${dir}/${file}`, request: rest as EmitirDte }
    })
}
