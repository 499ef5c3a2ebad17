// Where a Worker's code is, from source and inside dist/timbre. A Worker can only start code the build embedded as an
// entry point (scripts/build.ts lists them). Inside the binary `import.meta.url` names the bundle, not the source
// file, so a URL beside the caller points nowhere. The path that works is relative to the entries' common root
// (src/), given as a plain string. From source, the file under src/ (docs/stack-notes.md "Bun Workers").
export type WorkerEntry = 'workers/task-worker' | 'db/checkpoint-worker' | 'xml/xsd-worker' | 'db/backup-worker'

export function workerEntry(entry: WorkerEntry): string | URL {
  return import.meta.url.includes('$bunfs') ? `./${entry}.ts` : new URL(`./${entry}.ts`, import.meta.url)
}
