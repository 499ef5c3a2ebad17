// Builds dist/timbre: one executable with the runtime, the code, the migrations, the XSDs and the docs UI inside.
import { $ } from 'bun'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const outfile = join(root, 'dist/timbre')
mkdirSync(join(root, 'dist'), { recursive: true })

const started = performance.now()
console.error('[build 1/2] embedding migrations from drizzle/')
await $`${process.execPath} ${join(root, 'scripts/embed-migrations.ts')}`.cwd(root).quiet()
console.error('[build 2/2] compiling src/main.ts into dist/timbre (bun build --compile)…')
const result = await Bun.build({
  // Each Worker's code is an entry point too (src/worker-entry.ts): a Worker inside the binary can only start code the
  // build embedded as an entry. The task pool's, the WAL checkpointer's, the XSD validator's, and the scheduled
  // backup's (issue 26).
  entrypoints: [join(root, 'src/main.ts'), join(root, 'src/workers/task-worker.ts'), join(root, 'src/db/checkpoint-worker.ts'), join(root, 'src/xml/xsd-worker.ts'), join(root, 'src/db/backup-worker.ts')],
  compile: { outfile },
  minify: true,
  target: 'bun',
  // Bytecode compiled at build time: without it the runtime parses the whole bundle before the first line runs, which was
  // ~150 ms of a ~350 ms start (docs/decisions/performance.md "Start-up"). ESM keeps main.ts's top-level await legal.
  bytecode: true,
  format: 'esm',
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(0)
console.error(`[build] dist/timbre ready (${mb} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
