// postinstall: puts in npm's cache the Bun runtimes `npm run release` embeds for every platform (Linux x64 and arm64,
// Windows, macOS), at the versions and integrities package-lock.json pins. npm installs only the runtime of the
// machine it runs on (the others are optional dependencies for other platforms), so without this step the release
// would need the network; with it, `npm run release` runs offline (docs/decisions/platforms.md "Release builds").
// Plain Node: it runs inside `npm ci`, before anything of ours is built. About 150 MB, once per cache.
// TIMBRE_SKIP_RELEASE_RUNTIMES=1 skips it (the Docker image and install.sh build only for their own machine).
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

// All four, whatever machine installs: the release builds them all, and npm caches only what it installed here.
// The same packages as RELEASE_TARGETS in scripts/release.ts (test/unit/release.test.ts keeps them equal).
export const RUNTIMES = ['@oven/bun-linux-x64', '@oven/bun-linux-aarch64', '@oven/bun-windows-x64', '@oven/bun-darwin-aarch64']

function cacheRuntimes() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))
  const specs = RUNTIMES.map((name) => {
    const entry = lock.packages?.[`node_modules/${name}`]
    return entry?.version ? `${name}@${entry.version}` : null
  }).filter((spec) => spec !== null)
  try {
    console.error(`[timbre] caching the release runtimes (${specs.join(', ')}) for an offline \`npm run release\`…`)
    // --prefer-offline: a cache that has them is not asked again. `npm run release` checks each tarball against the lock.
    execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['cache', 'add', '--prefer-offline', ...specs], {
      stdio: ['ignore', 'ignore', 'inherit'],
      shell: process.platform === 'win32',
    })
  } catch (err) {
    // Not a reason to fail the install: the server builds and runs without them; only `npm run release` needs them.
    console.error(`[timbre] warning: could not cache the release runtimes (${err.message.split('\n')[0]}); \`npm run release\` will say what is missing`)
  }
}

// Imported by the test that compares RUNTIMES with the release's targets: only run as the postinstall script.
const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]
if (isMain && process.env.TIMBRE_SKIP_RELEASE_RUNTIMES !== '1') cacheRuntimes()
