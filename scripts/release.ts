// `npm run release`: the executables for every platform a firm or an accountant may run Timbre on, built offline.
//
//   bun scripts/release.ts [--out DIR] [--targets linux-x64,windows-x64,…] [--no-zip]
//
// Writes into DIR (default dist/release): one executable per platform, a zip per platform holding it and LEEME.txt,
// and SHA256SUMS over all of them (`sha256sum -c SHA256SUMS` checks them). Each executable embeds the Bun runtime of its
// platform, taken from the `@oven/bun-*` npm package pinned in package-lock.json: `npm pack --offline` reads it from
// npm's cache, where `npm ci` put it (scripts/fetch-runtimes.mjs), and its bytes are checked against the lock's
// integrity before use. No network is needed here (docs/decisions/platforms.md "Release builds").
import { $ } from 'bun'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { zipSync } from 'fflate'
import { compileTimbre } from './compile'
import { leemeFor } from './release-leeme'

const root = join(import.meta.dir, '..')

export interface ReleaseTarget {
  /** Our name for the platform: the executable is `timbre-<name>` (`.exe` on Windows). */
  readonly name: 'linux-x64' | 'linux-arm64' | 'windows-x64' | 'darwin-arm64'
  readonly bunTarget: Bun.Build.CompileTarget
  /** The npm package with that platform's Bun runtime, and the runtime's path inside it. */
  readonly runtimePackage: string
  readonly runtimePath: string
}

export const RELEASE_TARGETS: readonly ReleaseTarget[] = [
  { name: 'linux-x64', bunTarget: 'bun-linux-x64', runtimePackage: '@oven/bun-linux-x64', runtimePath: 'package/bin/bun' },
  { name: 'linux-arm64', bunTarget: 'bun-linux-arm64', runtimePackage: '@oven/bun-linux-aarch64', runtimePath: 'package/bin/bun' },
  { name: 'windows-x64', bunTarget: 'bun-windows-x64', runtimePackage: '@oven/bun-windows-x64', runtimePath: 'package/bin/bun.exe' },
  { name: 'darwin-arm64', bunTarget: 'bun-darwin-arm64', runtimePackage: '@oven/bun-darwin-aarch64', runtimePath: 'package/bin/bun' },
]

export const executableName = (target: ReleaseTarget): string => `timbre-${target.name}${target.name.startsWith('windows') ? '.exe' : ''}`

export class ReleaseError extends Error {}

/** The folder inside each zip: the same for every version (see zipRelease). */
export const releaseFolder = (target: ReleaseTarget): string => `timbre-${target.name}`

/** Every file name a release writes into its folder: what a new release removes first, and nothing else there. */
const isReleaseOutput = (name: string): boolean => name === 'SHA256SUMS' || /^timbre-[\w.-]+(\.exe|\.zip)?$/.test(name)

export interface LockedPackage {
  readonly version: string
  readonly integrity: string
}

/** The version and integrity package-lock.json pins for a runtime package: the release embeds exactly that. */
export function lockedRuntime(packageName: string, lockPath = join(root, 'package-lock.json')): LockedPackage {
  const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as { packages?: Record<string, { version?: string; integrity?: string }> }
  const entry = lock.packages?.[`node_modules/${packageName}`]
  if (!entry?.version || !entry.integrity) throw new ReleaseError(`package-lock.json no fija ${packageName} (versión e integridad)`)
  return { version: entry.version, integrity: entry.integrity }
}

/**
 * The Bun running this build must be the one the lock pins: `bytecode: true` embeds bytecode of the JavaScriptCore that
 * compiled it, which only the same Bun version's runtime can load; a global `bun` of another version would ship
 * executables that fall back to parsing at every start, or fail (review of issue 26).
 */
export function assertPinnedBun(running: string = Bun.version, lockPath = join(root, 'package-lock.json')): void {
  const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as { packages?: Record<string, { version?: string }> }
  const pinned = lock.packages?.['node_modules/bun']?.version
  if (pinned !== running)
    throw new ReleaseError(`esta compilación corre con Bun ${running}, pero package-lock.json fija bun ${pinned ?? '?'}: use \`npm run release\` (el Bun del proyecto)`)
}

/** `sha512-<base64>` of the bytes, as npm writes integrity. */
const sha512Integrity = (bytes: Uint8Array): string => `sha512-${createHash('sha512').update(bytes).digest('base64')}`

/**
 * The runtime executable of one platform, extracted into `workDir`, from the tarball in npm's cache. A tarball that is
 * missing (npm ci ran with TIMBRE_SKIP_RELEASE_RUNTIMES, or the cache was cleaned) or whose bytes differ from the lock's
 * integrity stops the release: it never embeds a runtime nobody pinned.
 */
export async function runtimeFromCache(target: ReleaseTarget, workDir: string, locked: LockedPackage = lockedRuntime(target.runtimePackage)): Promise<string> {
  const { version, integrity } = locked
  const spec = `${target.runtimePackage}@${version}`
  const packed = await $`npm pack ${spec} --offline --json --pack-destination ${workDir}`.cwd(workDir).quiet().nothrow()
  if (packed.exitCode !== 0)
    throw new ReleaseError(
      `${spec} no está en la caché de npm. Ejecute \`npm ci\` (sin TIMBRE_SKIP_RELEASE_RUNTIMES) o \`node scripts/fetch-runtimes.mjs\` con acceso al registro de npm. ` +
        `npm dijo: ${packed.stderr.toString().trim().split('\n').slice(-2).join(' ')}`,
    )
  const [packedFile] = JSON.parse(packed.stdout.toString()) as Array<{ filename: string }>
  if (!packedFile) throw new ReleaseError(`npm pack ${spec} no nombró el archivo que escribió`)
  const tarball = join(workDir, packedFile.filename)
  const actual = sha512Integrity(readFileSync(tarball))
  if (actual !== integrity) throw new ReleaseError(`${spec}: la integridad del paquete en caché (${actual}) no es la de package-lock.json (${integrity})`)
  const unpacked = join(workDir, target.name)
  mkdirSync(unpacked, { recursive: true })
  const tar = await import('tar')
  await tar.x({ file: tarball, cwd: unpacked, strict: true, filter: (path) => path === target.runtimePath })
  const runtime = join(unpacked, target.runtimePath)
  if (!existsSync(runtime)) throw new ReleaseError(`${spec} no trae ${target.runtimePath}`)
  rmSync(tarball)
  return runtime
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex')

/**
 * A zip with the executable (mode 0755 for unzip on Linux and macOS), LEEME.txt (CRLF on Windows) and README.md, which
 * LEEME.txt points to. The folder inside carries no version: on Windows the data dir sits beside the executable, so a
 * new version unzipped over the old folder keeps using the same data (review of issue 26: a versioned folder would
 * open an empty data dir after every upgrade).
 */
function zipRelease(target: ReleaseTarget, executable: string, zipPath: string, version: string): void {
  const folder = releaseFolder(target)
  const unixFile = (mode: number) => ({ os: 3, attrs: (0o100000 | mode) << 16 })
  const zipped = zipSync(
    {
      [`${folder}/${basename(executable)}`]: [readFileSync(executable), { level: 6, ...unixFile(0o755) }],
      [`${folder}/LEEME.txt`]: [new TextEncoder().encode(leemeFor(target.name, version)), { level: 9, ...unixFile(0o644) }],
      [`${folder}/README.md`]: [readFileSync(join(root, 'README.md')), { level: 9, ...unixFile(0o644) }],
    },
    { mtime: new Date('2026-01-01T00:00:00Z') },
  )
  writeFileSync(zipPath, zipped)
}

export interface ReleaseFile {
  readonly file: string
  readonly bytes: number
  readonly sha256: string
}

export async function buildRelease(input: { outDir: string; targets: readonly ReleaseTarget[]; zip: boolean }): Promise<ReleaseFile[]> {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
  const outDir = resolve(input.outDir)
  assertPinnedBun()
  mkdirSync(outDir, { recursive: true })
  // A folder holds one release: an older version's zips, or a SHA256SUMS over files a failed run had already replaced,
  // must not be published beside this one (review of issue 26). Only our own outputs are removed.
  for (const name of readdirSync(outDir)) if (isReleaseOutput(name)) rmSync(join(outDir, name), { force: true })
  const workDir = mkdtempSync(join(tmpdir(), 'timbre-release-'))
  const steps = 1 + input.targets.length * (input.zip ? 2 : 1) + 1
  let step = 0
  const progress = (what: string) => console.error(`[release ${++step}/${steps}] ${what}`)
  const written: string[] = []
  try {
    progress('embedding migrations from drizzle/')
    await $`${process.execPath} ${join(root, 'scripts/embed-migrations.ts')}`.cwd(root).quiet()
    for (const target of input.targets) {
      const started = performance.now()
      const executable = join(outDir, executableName(target))
      progress(`${executableName(target)}: runtime ${target.runtimePackage} from npm's cache, compiling…`)
      const runtime = await runtimeFromCache(target, workDir)
      await compileTimbre({
        outfile: executable,
        target: target.bunTarget,
        executablePath: runtime,
        // No `windows: { title, version, … }`: Bun 1.4.5 writes those resources only when building on Windows; from
        // Linux the .exe keeps the runtime's (bun.exe, Oven), checked in issue 26 (docs/decisions/platforms.md).
      })
      chmodSync(executable, 0o755)
      written.push(executable)
      console.error(`  ${(statSync(executable).size / 1024 / 1024).toFixed(0)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s`)
      if (input.zip) {
        const zipPath = join(outDir, `timbre-${version}-${target.name}.zip`)
        progress(`${basename(zipPath)}`)
        zipRelease(target, executable, zipPath, version)
        written.push(zipPath)
      }
    }
    progress('SHA256SUMS')
    const files = written.map((path) => ({ file: basename(path), bytes: statSync(path).size, sha256: sha256(path) }))
    // The format of sha256sum (two spaces, then the name): `sha256sum -c SHA256SUMS` and PowerShell's Get-FileHash compare.
    writeFileSync(join(outDir, 'SHA256SUMS'), files.map((f) => `${f.sha256}  ${f.file}\n`).join(''))
    return files
  } finally {
    rmSync(workDir, { recursive: true, force: true })
  }
}

function targetsFrom(raw: string | undefined): ReleaseTarget[] {
  if (raw === undefined) return [...RELEASE_TARGETS]
  return raw.split(',').map((name) => {
    const target = RELEASE_TARGETS.find((t) => t.name === name.trim())
    if (!target) throw new ReleaseError(`plataforma desconocida "${name}" (${RELEASE_TARGETS.map((t) => t.name).join(', ')})`)
    return target
  })
}

const HELP = `Uso: bun scripts/release.ts [--out DIR] [--targets ${RELEASE_TARGETS.map((t) => t.name).join(',')}] [--no-zip]

Compila Timbre para cada plataforma sin red, con el runtime de Bun fijado en package-lock.json (caché de npm),
y escribe en DIR (por defecto dist/release) los ejecutables, un zip por plataforma con LEEME.txt, y SHA256SUMS.
`

if (import.meta.main) {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, targets: { type: 'string' }, 'no-zip': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) {
    process.stdout.write(HELP)
    process.exit(0)
  }
  try {
    const started = performance.now()
    const files = await buildRelease({ outDir: values.out ?? join(root, 'dist/release'), targets: targetsFrom(values.targets), zip: values['no-zip'] !== true })
    console.error(`[release] ${files.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    process.stdout.write(`${JSON.stringify({ out: resolve(values.out ?? join(root, 'dist/release')), files }, null, 2)}\n`)
  } catch (err) {
    console.error(`release: ${err instanceof ReleaseError ? err.message : (err as Error).stack}`)
    process.exit(1)
  }
}
