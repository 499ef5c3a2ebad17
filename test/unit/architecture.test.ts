// STYLE §1 as a table: every folder of src/ and what it may import. Arrows point one way (doors → services → domain,
// xml, crypto, db, sii → errors); a new folder, or a new arrow, fails here until the table says it may.
import { describe, expect, test } from 'bun:test'
import { dirname, join, relative } from 'node:path'

const ROOT = join(import.meta.dir, '../..')
const SRC = join(ROOT, 'src')

/** The files at src/'s top level that every layer may use: they import nothing of ours but each other and errors. */
const LEAVES = ['errors.ts', 'clock.ts', 'version.ts', 'worker-entry.ts']
/** Folder (or top-level file) → what it may import besides itself and LEAVES. `domain` is pure: every folder may use it. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  'main.ts': ['cli', 'config.ts'],
  'app.ts': ['config.ts', 'log.ts', 'domain', 'crypto', 'db', 'sii', 'services', 'workers'],
  'config.ts': [],
  'log.ts': ['config.ts'],
  'errors.ts': [],
  'clock.ts': [],
  'version.ts': ['package.json'],
  'types.d.ts': [],
  'worker-entry.ts': [],
  domain: [],
  xml: ['domain'],
  crypto: ['domain'],
  db: ['domain', 'log.ts', 'drizzle'],
  webhooks: ['domain'],
  pdf: ['domain', 'xml'],
  // Spreadsheets (DESIGN §16: the RCV registers as .xlsx) through exceljs, from domain records only.
  sheets: ['domain'],
  // Mail (DESIGN §13): IMAP and SMTP through imapflow, mailparser and nodemailer; it knows nothing of DTEs.
  mail: ['domain'],
  // The SII's side: the client, and the simulator, which plays the SII and never touches Timbre's store.
  sii: ['domain', 'xml', 'crypto', 'config.ts'],
  // The worker pool (issue 17): pure tasks of xml/, pdf/ and crypto/ run off the event loop; services hand them work.
  workers: ['domain', 'xml', 'crypto', 'pdf'],
  services: ['domain', 'xml', 'crypto', 'db', 'sii', 'webhooks', 'pdf', 'sheets', 'mail', 'workers', 'config.ts', 'log.ts'],
  // The doors: they call services, never the store, the SII client or the crypto directly.
  // Request contracts both doors keep (STYLE §1): shapes, limits, statuses. Below the doors, above the services.
  contracts: ['domain', 'services', 'config.ts'],
  http: ['domain', 'services', 'contracts', 'config.ts', 'log.ts'],
  jobs: ['domain', 'services', 'log.ts'],
  // The CLI also starts the doors it composes (`serve`: http and jobs) and the simulator, a server of its own.
  // The console (DESIGN §14): a fourth door. It validates forms with the API's own contracts and answers their statuses;
  // it never reaches into another door.
  console: ['domain', 'services', 'contracts', 'config.ts', 'log.ts'],
  cli: ['domain', 'services', 'app.ts', 'config.ts', 'log.ts', 'http', 'jobs', 'console', 'sii/simulator'],
}

const files = (glob: string) => [...new Bun.Glob(glob).scanSync({ cwd: ROOT })]

/** The part of src/ a path belongs to: its first folder, or the file itself at the top level; null outside src/. */
function partOf(path: string): string | null {
  const rel = relative(SRC, path)
  if (rel.startsWith('..')) return relative(ROOT, path).split('/')[0]!
  const [first, ...rest] = rel.split('/')
  // An import names a top-level module without its extension ('../errors'): the part is the file.
  return rest.length === 0 && !first!.includes('.') ? `${first}.ts` : first!
}

async function importsOf(file: string): Promise<string[]> {
  const text = await Bun.file(join(ROOT, file)).text()
  return [...text.matchAll(/(?:from|import)\s+'(\.[^']+)'/g)].map((m) => m[1]!)
}

describe('layering (STYLE §1)', () => {
  test('the table covers every part of src/', () => {
    const parts = new Set(files('src/**/*.{ts,tsx}').map((f) => partOf(join(ROOT, f))!))
    expect([...parts].filter((p) => !(p in MAY_IMPORT)).sort()).toEqual([])
  })

  for (const file of files('src/**/*.{ts,tsx}'))
    test(`${file} imports only what its layer may`, async () => {
      const from = partOf(join(ROOT, file))!
      const allowed = new Set([from, ...LEAVES, ...MAY_IMPORT[from]!])
      const bad = (await importsOf(file)).filter((spec) => {
        const target = join(dirname(join(ROOT, file)), spec)
        const to = partOf(target)!
        if (allowed.has(to)) return false
        // A sub-folder grant such as cli → sii/simulator, or a single file of another part such as console → http/errors.
        const rel = relative(SRC, target)
        return ![...allowed].some((a) => a.includes('/') && (rel.startsWith(`${a}/`) || rel === a || rel === `${a}.ts`))
      })
      expect(bad).toEqual([])
    })

  for (const file of files('src/domain/**/*.ts'))
    test(`${file} does no I/O`, async () => {
      const text = await Bun.file(join(ROOT, file)).text()
      expect(text.match(/from '(bun:sqlite|elysia|node:fs|node:net|node:child_process)'|Date\.now\(\)|Math\.random\(\)/g) ?? []).toEqual([])
    })

  for (const file of files('src/{domain,xml,db,services,sii,crypto,pdf,sheets,webhooks,mail}/**/*.ts'))
    test(`${file} does not read process.env or process.argv`, async () => {
      const text = await Bun.file(join(ROOT, file)).text()
      expect(text.match(/process\.(env|argv)/g) ?? []).toEqual([])
    })

  test('no index.ts barrels', () => {
    expect(files('src/**/index.ts')).toEqual([])
  })
})
