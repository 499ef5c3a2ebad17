// One place that knows how Timbre is compiled into one executable: dist/timbre (scripts/build.ts) and the release
// executables for every platform (scripts/release.ts) come from the same entry points and options.
import { join } from 'node:path'

const root = join(import.meta.dir, '..')

/**
 * Each Worker's code is an entry point too (src/worker-entry.ts): a Worker inside the binary can only start code the
 * build embedded as an entry. The task pool's, the WAL checkpointer's, the XSD validator's, and the scheduled backup's.
 */
export const ENTRYPOINTS: readonly string[] = [
  'src/main.ts',
  'src/workers/task-worker.ts',
  'src/db/checkpoint-worker.ts',
  'src/xml/xsd-worker.ts',
  'src/db/backup-worker.ts',
].map(
  (entry) => join(root, entry),
)

export interface CompileInput {
  readonly outfile: string
  /** Bun's cross-compile target (`bun-windows-x64`); absent: the platform running the build. */
  readonly target?: Bun.Build.CompileTarget
  /** The runtime to embed, from the matching `@oven/bun-*` npm package: without it Bun downloads one (network). */
  readonly executablePath?: string
}

export async function compileTimbre(input: CompileInput): Promise<void> {
  const result = await Bun.build({
    entrypoints: [...ENTRYPOINTS],
    compile: {
      outfile: input.outfile,
      ...(input.target ? { target: input.target } : {}),
      ...(input.executablePath ? { executablePath: input.executablePath } : {}),
      // The binary reads its settings from its own flags and TIMBRE_* variables (DESIGN §2), never from a .env or a
      // bunfig.toml that happens to sit in the folder it is started from.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    minify: true,
    target: 'bun',
    // Bytecode compiled at build time: without it the runtime parses the whole bundle before the first line runs, which
    // was ~150 ms of a ~350 ms start (docs/decisions/performance.md "Start-up"). ESM keeps main.ts's top-level await legal.
    bytecode: true,
    format: 'esm',
    // Each module reached only through `await import()` (PDFs, the workbook writers, mail, tar, the simulator's services,
    // the demo's certificate) is a chunk of its own, loaded when first imported. Without splitting the binary held one
    // bundle whose every module's bytecode was loaded at start, used or not: `timbre version` went from ~160 ms and
    // 79 MB to ~100 ms and 66 MB, the server 1 s after its start from 99 to 84 MB (docs/decisions/performance.md «Issue 31, session 14»).
    splitting: true,
  })
  if (!result.success) throw new Error(`bun build failed for ${input.target ?? 'this platform'}:\n${result.logs.map(String).join('\n')}`)
}
