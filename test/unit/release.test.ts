// The release's pure rules (issue 26): the runtimes cached at install are the ones the release embeds, and a Bun other
// than the pinned one never compiles a release. The build itself: test/cli/release.test.ts.
import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RELEASE_TARGETS, ReleaseError, assertPinnedBun } from '../../scripts/release'
// @ts-expect-error plain Node script without types; RUNTIMES is a string array
import { RUNTIMES } from '../../scripts/fetch-runtimes.mjs'

test('npm install caches exactly the runtimes the release embeds, one per target', () => {
  expect([...(RUNTIMES as string[])].sort()).toEqual(RELEASE_TARGETS.map((t) => t.runtimePackage).sort())
})

test('the release compiles only with the Bun the lock pins: its bytecode is for that runtime alone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'timbre-release-pin-'))
  try {
    const lock = join(dir, 'package-lock.json')
    writeFileSync(lock, JSON.stringify({ packages: { 'node_modules/bun': { version: '1.4.5' } } }))
    expect(() => assertPinnedBun('1.4.5', lock)).not.toThrow()
    expect(() => assertPinnedBun('1.3.9', lock)).toThrow(ReleaseError)
    expect(() => assertPinnedBun('1.3.9', lock)).toThrow(/Bun 1\.3\.9.*fija bun 1\.4\.5/)
    // The project's own lock pins the Bun running this test (npm test runs the project's Bun).
    expect(() => assertPinnedBun()).not.toThrow()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
