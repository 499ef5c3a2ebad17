// postinstall: puts in npm's cache the Bun runtimes `npm run release` embeds for the other platforms (Windows, macOS,
// Linux arm64), at the versions and integrities package-lock.json pins. npm installs only the runtime of the machine
// it runs on (the others are optional dependencies for other platforms), so without this step the release would need
// the network; with it, `npm run release` runs offline (docs/decisions/platforms.md "Release builds").
// Plain Node: it runs inside `npm ci`, before anything of ours is built. About 150 MB, once per cache.
// TIMBRE_SKIP_RELEASE_RUNTIMES=1 skips it (the Docker image and install.sh build only for their own machine).
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const RUNTIMES = ['@oven/bun-linux-aarch64', '@oven/bun-windows-x64', '@oven/bun-darwin-aarch64']

if (process.env.TIMBRE_SKIP_RELEASE_RUNTIMES === '1') process.exit(0)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))
const specs = RUNTIMES.map((name) => {
  const entry = lock.packages?.[`node_modules/${name}`]
  return entry?.version ? `${name}@${entry.version}` : null
}).filter((spec) => spec !== null)
try {
  console.error(`[timbre] caching the release runtimes (${specs.join(', ')}) for an offline \`npm run release\`…`)
  // --prefer-offline: a cache that has them is not asked again. `npm run release` checks each tarball against the lock.
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['cache', 'add', '--prefer-offline', ...specs], { stdio: ['ignore', 'ignore', 'inherit'], shell: process.platform === 'win32' })
} catch (err) {
  // Not a reason to fail the install: the server builds and runs without them; only `npm run release` needs them.
  console.error(`[timbre] warning: could not cache the release runtimes (${err.message.split('\n')[0]}); \`npm run release\` will say what is missing`)
}
