// The short form of the mixed load (issue 18, "Load"; the long form and its figures are `bun bench/load.ts`): 2 000
// mixed requests from 64 closed-loop clients over 2 companies against the compiled server, with the SII jobs running.
// No timing is asserted here (timings live in bench/); what must hold at any speed: no 5xx, every answer the status
// its kind must get, every error in the envelope, every 201 stored with its company, tipo and folio, nothing else
// stored, no folio twice, and no error in the server's log. A failure prints the seed that draws the same mix.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { ensureBinary, startServe, type ServeProcess } from '../support/binary'
import { checkStored, createLoadCompanies, equipLoadCompanies, foliosFor, MIX_KINDS, runMix, type LoadCompany } from '../support/load-mix'
import { tempDir } from '../support/server'

const REQUESTS = 2_000
let dir = ''
let serve: ServeProcess | null = null
let companies: LoadCompany[] = []

beforeAll(async () => {
  await ensureBinary()
  dir = tempDir('timbre-load-short-')
  const made = createLoadCompanies(dir, 2)
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0', '--submit-every', '1s', '--track-every', '1s'])
  companies = await equipLoadCompanies(serve.url, made, foliosFor(REQUESTS, 2))
}, 60_000)

afterAll(async () => {
  await serve?.terminate()
  rmSync(dir, { recursive: true, force: true })
})

test('2 000 mixed requests from 64 clients over 2 companies: no 5xx, every answer as its kind must be, errors in the envelope, every 201 stored and nothing else', async () => {
  const seed = Math.floor(Math.random() * 2 ** 31)
  const r = await runMix({ url: serve!.url, companies, clients: 64, requests: REQUESTS, seed })
  const why = `seed ${seed}: ${r.examples.join('\n')}`
  expect(r.requests, why).toBe(REQUESTS)
  expect(r.serverErrors, why).toBe(0)
  expect(r.noAnswer, why).toBe(0)
  expect(r.examples, why).toEqual([])
  expect(r.violations).toBe(0)
  // The mix reached every kind, and invalid requests of several sorts.
  const seen = new Set(Object.keys(r.kinds).map((k) => (k.startsWith('invalid.') ? 'invalid' : k)))
  expect(MIX_KINDS.filter((k) => !seen.has(k)), why).toEqual([])
  expect(Object.keys(r.kinds).filter((k) => k.startsWith('invalid.')).length).toBeGreaterThan(8)
  expect(r.created.dtes.length).toBeGreaterThan(200)

  const stored = checkStored(dir, r.created)
  expect(stored.lost, why).toEqual([])
  expect(stored.extra, why).toBe(0)
  expect(stored.duplicateFolios, why).toBe(0)
  const errors = serve!.lines.filter((l) => l.level === 'error')
  expect(errors, why).toEqual([])
}, 60_000)
