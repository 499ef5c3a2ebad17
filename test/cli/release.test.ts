// `npm run release` (issue 26): every platform's executable, built with no network from npm's cache, with its zip and
// checksum; each executable is of its platform's format, and the one for this machine runs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { unzipSync } from 'fflate'
import { RELEASE_TARGETS, ReleaseError, executableName, lockedRuntime, releaseFolder, runtimeFromCache } from '../../scripts/release'
import { executableFormat, verifyMachOPageHashes } from '../support/executable-format'

const root = join(import.meta.dir, '../..')
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
let out: string
let run: { status: number | null; stderr: string; stdout: string; offline: string }

/**
 * No network: a network namespace of its own (`unshare -n`, root or user namespaces), else npm told to work offline
 * against a registry that cannot answer, so whichever runs, a release that reached for the network fails.
 */
function offlineCommand(argv: string[]): { command: string; args: string[]; env: Record<string, string>; offline: string } {
  const probe = spawnSync('unshare', ['-n', 'true'])
  if (probe.status === 0) return { command: 'unshare', args: ['-n', ...argv], env: {}, offline: 'unshare -n' }
  // Bun's own runtime download (a compile without executablePath) goes through the proxy settings: a dead one.
  const dead = 'http://127.0.0.1:9/'
  return {
    command: argv[0]!,
    args: argv.slice(1),
    env: { npm_config_offline: 'true', npm_config_registry: dead, HTTPS_PROXY: dead, HTTP_PROXY: dead, https_proxy: dead, http_proxy: dead },
    offline: 'npm offline, registry and proxies 127.0.0.1:9',
  }
}

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'timbre-release-test-'))
  const cmd = offlineCommand([process.execPath, join(root, 'scripts/release.ts'), '--out', out])
  const r = spawnSync(cmd.command, cmd.args, { cwd: root, env: { ...process.env, ...cmd.env }, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
  run = { status: r.status, stderr: r.stderr, stdout: r.stdout, offline: cmd.offline }
}, 400_000)

afterAll(() => rmSync(out, { recursive: true, force: true }))

describe('npm run release, offline', () => {
  test('builds every platform with no network, showing its progress', () => {
    if (run.status !== 0) throw new Error(`release failed (${run.offline}):\n${run.stderr}`)
    expect(run.stderr).toMatch(/\[release 1\/\d+\]/)
    const files = readdirSync(out).sort()
    const expected = [
      ...RELEASE_TARGETS.map(executableName),
      ...RELEASE_TARGETS.map((t) => `timbre-${version}-${t.name}.zip`),
      'SHA256SUMS',
    ].sort()
    expect(files).toEqual(expected)
    expect(expected).toContain('timbre-windows-x64.exe')
    expect(expected).toContain('timbre-darwin-arm64')
    expect(expected).toContain('timbre-linux-arm64')
  })

  test('SHA256SUMS names every executable and zip with its real checksum, in sha256sum -c format', () => {
    const lines = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trimEnd().split('\n')
    const listed = new Map(lines.map((l) => { const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(l)!; return [m[2]!, m[1]!] as const }))
    expect([...listed.keys()].sort()).toEqual(readdirSync(out).filter((f) => f !== 'SHA256SUMS').sort())
    for (const [file, sum] of listed) expect(createHash('sha256').update(readFileSync(join(out, file))).digest('hex')).toBe(sum)
    const check = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out, encoding: 'utf8' })
    expect(check.status).toBe(0)
  })

  test.each([
    ['timbre-linux-x64', { kind: 'elf', machine: 'x86-64' }],
    ['timbre-linux-arm64', { kind: 'elf', machine: 'aarch64' }],
    ['timbre-windows-x64.exe', { kind: 'pe', machine: 'x86-64', isConsole: true }],
    ['timbre-darwin-arm64', { kind: 'macho', cpu: 'arm64', hasCodeSignature: true }],
  ])('%s is an executable of its platform, of a runtime-and-app size', (file, format) => {
    const bytes = readFileSync(join(out, file))
    expect(executableFormat(bytes)).toEqual(format as never)
    // The runtime alone is 85–115 MB; the app adds ~20–30 MB. Far outside means a wrong runtime or a missing bundle.
    expect(bytes.length).toBeGreaterThan(90 * 1024 * 1024)
    expect(bytes.length).toBeLessThan(220 * 1024 * 1024)
  })

  test('the macOS executable carries an ad-hoc signature whose page hashes match its bytes (arm64 Macs kill it otherwise)', () => {
    expect(verifyMachOPageHashes(readFileSync(join(out, 'timbre-darwin-arm64')))).toBeGreaterThan(1000)
  })

  test.each(RELEASE_TARGETS.map((t) => [t.name, t] as const))('the %s zip holds its executable, byte for byte and executable, LEEME.txt and README.md, in a folder without the version', (_name, target) => {
    const zip = unzipSync(readFileSync(join(out, `timbre-${version}-${target.name}.zip`)))
    // Unversioned: on Windows the data dir is beside the executable, so an upgrade unzipped over the old folder keeps it.
    const folder = releaseFolder(target)
    expect(folder).not.toContain(version)
    expect(Object.keys(zip).sort()).toEqual([`${folder}/LEEME.txt`, `${folder}/README.md`, `${folder}/${executableName(target)}`].sort())
    expect(Buffer.from(zip[`${folder}/README.md`]!).equals(readFileSync(join(root, 'README.md')))).toBe(true)
    expect(Buffer.from(zip[`${folder}/${executableName(target)}`]!).equals(readFileSync(join(out, executableName(target))))).toBe(true)
    const leeme = new TextDecoder().decode(zip[`${folder}/LEEME.txt`])
    expect(leeme).toContain(`Timbre ${version}`)
    expect(leeme).toContain(executableName(target))
    if (target.name === 'windows-x64') expect(leeme).toContain('\r\n')
    else expect(leeme).not.toContain('\r')
    // Unix mode bits in the zip's external attributes: Info-ZIP's unzip (and macOS's) restore them, so no chmod +x.
    const unzip = spawnSync('unzip', ['-Z', '-l', join(out, `timbre-${version}-${target.name}.zip`)], { encoding: 'utf8' })
    expect(unzip.status).toBe(0)
    expect(unzip.stdout).toMatch(new RegExp(`-rwxr-xr-x.*${executableName(target).replace('.', '\\.')}`))
  })

  test("this machine's executable starts and names the version of package.json", () => {
    const exe = join(out, 'timbre-linux-x64')
    expect(statSync(exe).mode & 0o111).not.toBe(0)
    const r = spawnSync(exe, ['version'], { encoding: 'utf8' })
    expect(r.status).toBe(0)
    expect((JSON.parse(r.stdout) as { version: string }).version).toBe(version)
  })
})

describe('runtimes from the lock only', () => {
  test('a cached runtime whose bytes are not the integrity the lock pins is refused', async () => {
    const target = RELEASE_TARGETS.find((t) => t.name === 'linux-arm64')!
    const locked = lockedRuntime(target.runtimePackage)
    const work = mkdtempSync(join(tmpdir(), 'timbre-release-lock-'))
    try {
      const tampered = { version: locked.version, integrity: `sha512-${Buffer.alloc(64, 7).toString('base64')}` }
      const refusal = runtimeFromCache(target, work, tampered)
      await expect(refusal).rejects.toBeInstanceOf(ReleaseError)
      await expect(refusal).rejects.toThrow(/integridad/)
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }, 60_000)

  test('a runtime version the cache does not hold is refused with what to run, never fetched', async () => {
    const target = RELEASE_TARGETS.find((t) => t.name === 'linux-arm64')!
    const work = mkdtempSync(join(tmpdir(), 'timbre-release-lock-'))
    try {
      const refusal = runtimeFromCache(target, work, { version: '0.0.1-nunca', integrity: 'sha512-x' })
      await expect(refusal).rejects.toThrow(/no está en la caché de npm/)
      expect(readdirSync(work)).toEqual([])
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }, 60_000)
})
