// STYLE §1: arrows point one way. Fails the day domain/ imports I/O or services/ reach into a door.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '../..')

async function importsOf(file: string): Promise<string[]> {
  const text = await Bun.file(join(ROOT, file)).text()
  return [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]!)
}

const files = (glob: string) => [...new Bun.Glob(glob).scanSync({ cwd: ROOT })]

describe('layering', () => {
  for (const file of files('src/domain/**/*.ts'))
    test(`${file} imports no I/O`, async () => {
      expect((await importsOf(file)).filter((f) => /\/(db|http|services|sii|cli|jobs|xml|crypto)\/|bun:sqlite|elysia|node:fs|node:net/.test(f))).toEqual([])
    })

  for (const file of files('src/services/**/*.ts'))
    test(`${file} does not import a door (http, cli, jobs)`, async () => {
      expect((await importsOf(file)).filter((f) => /\/(http|cli|jobs)\/|^elysia|\.\.\/app'?$/.test(f))).toEqual([])
    })

  for (const file of files('src/{domain,xml,db,services}/**/*.ts'))
    test(`${file} does not read process.env or process.argv`, async () => {
      const text = await Bun.file(join(ROOT, file)).text()
      expect(text.match(/process\.(env|argv)/g) ?? []).toEqual([])
    })

  test('no index.ts barrels', () => {
    expect(files('src/**/index.ts')).toEqual([])
  })
})
