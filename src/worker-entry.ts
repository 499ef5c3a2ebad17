// Where a Worker's code is, from source and inside the compiled executable. A Worker can only start code the build
// embedded as an entry point (scripts/compile.ts lists them). Inside the executable `import.meta.url` names the bundle,
// not the source file, so a URL beside the caller points nowhere. The path that works is relative to the entries'
// common root (src/), given as a plain string. From source, the file under src/ (docs/stack-notes.md "Bun Workers").
export type WorkerEntry = 'workers/task-worker' | 'db/checkpoint-worker' | 'xml/xsd-worker' | 'db/backup-worker'

/**
 * The compiled executable's virtual root: `/$bunfs/root/` on Linux and macOS, `B:\~BUN\root\` on Windows, which
 * `import.meta.url` spells `file:///B:/%7EBUN/root/…` (printed inside timbre-windows-x64.exe under Wine, issue 26).
 */
const COMPILED_ROOT = /\$bunfs|[\\/](?:~|%7E)BUN[\\/]/i

export function isInsideCompiledBinary(url: string = import.meta.url): boolean {
  return COMPILED_ROOT.test(url)
}

export function workerEntry(entry: WorkerEntry, url: string = import.meta.url): string | URL {
  return isInsideCompiledBinary(url) ? `./${entry}.ts` : new URL(`./${entry}.ts`, url)
}
