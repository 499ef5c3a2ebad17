// Builds dist/timbre: one executable with the runtime, the code, the migrations, the XSDs and the docs UI inside.
import { $ } from 'bun'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { compileTimbre } from './compile'

const root = join(import.meta.dir, '..')
const outfile = join(root, 'dist/timbre')
mkdirSync(join(root, 'dist'), { recursive: true })

const started = performance.now()
console.error('[build 1/2] embedding migrations from drizzle/')
await $`${process.execPath} ${join(root, 'scripts/embed-migrations.ts')}`.cwd(root).quiet()
console.error('[build 2/2] compiling src/main.ts into dist/timbre (bun build --compile)…')
await compileTimbre({ outfile })
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(0)
console.error(`[build] dist/timbre ready (${mb} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
