// The console's static files, embedded in the binary (`with { type: 'text' }`), served with long caching under a
// content hash so a new release never meets a stale copy. No CDN: the console works with no internet (DESIGN §14).
import htmxJs from 'htmx.org/dist/htmx.min.js' with { type: 'text' }
import consoleCss from './assets/console.css' with { type: 'text' }
import consoleJs from './assets/console.js' with { type: 'text' }

interface Asset {
  readonly path: string
  readonly body: string
  readonly type: string
}

function asset(name: string, body: string, type: string): Asset {
  const hash = new Bun.CryptoHasher('sha256').update(body).digest('hex').slice(0, 12)
  return { path: `/console/assets/${name}.${hash}`, body, type }
}

const ASSETS = {
  css: asset('console.css', consoleCss, 'text/css; charset=utf-8'),
  js: asset('console.js', consoleJs, 'text/javascript; charset=utf-8'),
  htmx: asset('htmx.min.js', htmxJs, 'text/javascript; charset=utf-8'),
} as const

export const ASSET_PATHS = { css: ASSETS.css.path, js: ASSETS.js.path, htmx: ASSETS.htmx.path } as const

/** The asset at `path`, or null: answers are immutable because the path carries the content's hash. */
export function assetResponse(path: string): Response | null {
  const found = Object.values(ASSETS).find((a) => a.path === path)
  if (!found) return null
  return new Response(found.body, {
    headers: { 'Content-Type': found.type, 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' },
  })
}
