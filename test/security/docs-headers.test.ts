// GET /docs and GET /docs/json (DESIGN §12 "Health and docs") are served to browsers without a credential: they carry
// the headers that keep the page from being framed, sniffed or made to run another site's script (issue 18), and the
// Content-Security-Policy still lets the bundled Swagger UI work: headless Chromium renders every operation, runs one
// ("Try it out"), reports no CSP violation and asks nothing of any other origin (no internet needed, DESIGN §12).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { launchChromium, newContext, screenshot } from '../support/browser'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let browser: Browser | undefined

beforeAll(async () => {
  s = await startTestServer()
})
afterAll(async () => {
  await browser?.close()
  await s?.stop()
})

/** The policy's directives, by name. */
function directives(csp: string | null): Record<string, string[]> {
  return Object.fromEntries((csp ?? '').split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name!, values]))
}

/** The page and every file it loads, as a browser would ask for them. */
async function docsFiles(): Promise<string[]> {
  const html = await (await fetch(`${s.url}/docs`)).text()
  const linked = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
  return ['/docs', '/docs/json', ...linked]
}

describe('security headers of /docs', () => {
  test('every file of the docs is served with X-Content-Type-Options: nosniff and is never framed', async () => {
    const files = await docsFiles()
    expect(files.length).toBeGreaterThanOrEqual(4)
    for (const path of files) {
      const res = await fetch(`${s.url}${path}`)
      expect({ path, status: res.status }).toEqual({ path, status: 200 })
      expect({ path, nosniff: res.headers.get('x-content-type-options') }).toEqual({ path, nosniff: 'nosniff' })
      expect({ path, frame: res.headers.get('x-frame-options') }).toEqual({ path, frame: 'DENY' })
      expect({ path, ancestors: directives(res.headers.get('content-security-policy'))['frame-ancestors'] }).toEqual({ path, ancestors: ["'none'"] })
      expect({ path, referrer: res.headers.get('referrer-policy') }).toEqual({ path, referrer: 'no-referrer' })
    }
  })

  test("the page's policy allows only its own scripts, styles, images and calls: no inline script, no eval, no other origin", async () => {
    const csp = directives((await fetch(`${s.url}/docs`)).headers.get('content-security-policy'))
    expect(csp['default-src']).toEqual(["'none'"])
    expect(csp['script-src']).toEqual(["'self'"])
    expect(csp['connect-src']).toEqual(["'self'"])
    expect(csp['base-uri']).toEqual(["'none'"])
    expect(csp['form-action']).toEqual(["'none'"])
    expect(csp['object-src'] ?? csp['default-src']).toEqual(["'none'"])
    for (const [name, values] of Object.entries(csp)) expect({ name, values: values.filter((v) => /^https?:|^\*$|unsafe-eval/.test(v)) }).toEqual({ name, values: [] })
    // The JSON document is data, never a page: it may load nothing at all.
    expect(directives((await fetch(`${s.url}/docs/json`)).headers.get('content-security-policy'))['default-src']).toEqual(["'none'"])
  })

  test('under that policy Chromium renders Swagger UI, runs an operation, and reports no violation', async () => {
    browser = await launchChromium()
    const context = await newContext(browser)
    const page = await context.newPage()
    const elsewhere: string[] = []
    page.on('request', (r) => {
      if (!r.url().startsWith(s.url) && !r.url().startsWith('data:')) elsewhere.push(r.url())
    })
    const consoleErrors: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text())
    })
    await page.addInitScript(() => {
      const w = window as unknown as { violations: string[] }
      w.violations = []
      document.addEventListener('securitypolicyviolation', (e) => w.violations.push(`${e.violatedDirective} ${e.blockedURI}`))
    })
    await page.goto(`${s.url}/docs`)
    await page.locator('.opblock').first().waitFor({ timeout: 15_000 })
    expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(40)
    // "Try it out" on GET /health: the call goes to this origin (connect-src 'self') and its answer is shown.
    const health = page.locator('[id$="-getHealth"].opblock')
    await health.locator('.opblock-summary').click()
    await health.getByRole('button', { name: 'Try it out' }).click()
    await health.getByRole('button', { name: 'Execute' }).click()
    await health.locator('.live-responses-table tbody .response-col_status').first().waitFor({ timeout: 10_000 })
    expect((await health.locator('.live-responses-table tbody .response-col_status').first().textContent())?.trim()).toBe('200')
    // A request body and its schema drawn: the parts of the UI that render examples and models.
    const issue = page.locator('[id$="-emitirDTE"].opblock')
    await issue.locator('.opblock-summary').click()
    await issue.locator('.opblock-section-request-body').waitFor({ timeout: 10_000 })
    await issue.locator('.opblock-section-request-body [data-name="model"]').first().click()
    await issue.locator('.model-box').first().waitFor({ timeout: 10_000 })
    await screenshot(page, 'docs-swagger-ui')
    const violations = () => page.evaluate(() => (window as unknown as { violations: string[] }).violations)
    expect(await violations()).toEqual([])
    expect(consoleErrors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([])
    expect(elsewhere).toEqual([])
    // The listener does hear the policy: an inline script added now is refused and reported.
    await page.evaluate(() => {
      const el = document.createElement('script')
      el.textContent = 'window.ran = true'
      document.body.append(el)
    })
    await page.waitForFunction(() => (window as unknown as { violations: string[] }).violations.length > 0, undefined, { timeout: 5_000 })
    expect(await violations()).toEqual([expect.stringMatching(/^script-src/)])
  })
})
