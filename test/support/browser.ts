// Headless Chromium for the console's end-to-end tests (DESIGN §14): Debian's `chromium` (scripts/test.sh installs
// it) driven by playwright-core. Screenshots go to .test-results/console/, kept after the run for people to look at.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { ROOT } from './binary'

export const SCREENSHOTS = join(ROOT, '.test-results/console')

const CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser']

export async function launchChromium(): Promise<Browser> {
  const executablePath = CHROMIUM_PATHS.find((p) => Bun.file(p).size > 0)
  if (!executablePath) throw new Error('Chromium is missing: npm test installs Debian\'s chromium package (scripts/test.sh)')
  // --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
}

/** A laptop-sized window unless told otherwise; Spanish, Santiago's time zone, as the console's users are. */
export async function newContext(browser: Browser, opts: { width?: number; height?: number } = {}): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 }, locale: 'es-CL', timezoneId: 'America/Santiago' })
}

/** Saves a full-page screenshot as .test-results/console/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const path = join(SCREENSHOTS, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** A company user's login with an API key: the key's form is folded under the account login (issue 27). */
export async function loginWithApiKey(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console/entrar`)
  await page.getByText('Con una API key (integradores)').click()
  await page.locator('#api_key').fill(key)
  await page.keyboard.press('Enter')
  await page.waitForURL('**/console/documentos')
}
