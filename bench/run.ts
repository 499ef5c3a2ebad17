// `npm run bench`: every benchmark in turn, each printing its figures beside the floor measured in the same run.
// Builds the binary first (the HTTP benchmarks measure dist/timbre).
import { $ } from 'bun'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const benches = ['documents.ts 3', 'envelope.ts', 'pdf.ts 200', 'catalogs.ts', 'startup.ts', 'issuance.ts']
await $`${process.execPath} ${join(root, 'scripts/build.ts')}`.cwd(root)
for (const [i, bench] of benches.entries()) {
  const [file, ...args] = bench.split(' ')
  console.log(`\n=== [${i + 1}/${benches.length}] bench/${file} ${args.join(' ')}`)
  await $`${process.execPath} ${join(root, 'bench', file!)} ${args}`.cwd(root).nothrow()
}
