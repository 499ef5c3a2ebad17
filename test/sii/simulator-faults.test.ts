// Faults for exercising retries (DESIGN §9, docs/sii-protocol.md §6.4 failure modes): shares of HTTP 503, of hangs and of HTML
// maintenance pages with HTTP 200, drawn from the injected random so a test knows exactly which request gets which.
import { describe, expect, test } from 'bun:test'
import { startSimulator } from '../../src/sii/simulator/server'
import { testClock } from '../support/clock'
import { field, SIM_START, soap } from './simulator-helpers'
import { prng } from '../support/prng'


const FAULTS = { errorRate: 0.2, hangRate: 0.1, htmlRate: 0.2, hangMs: 300 }

function expected(draw: number): 'error' | 'hang' | 'html' | 'ok' {
  if (draw < FAULTS.errorRate) return 'error'
  if (draw < FAULTS.errorRate + FAULTS.hangRate) return 'hang'
  if (draw < FAULTS.errorRate + FAULTS.hangRate + FAULTS.htmlRate) return 'html'
  return 'ok'
}

describe('faults', () => {
  test('each request gets the fault its draw says: 503, a late answer, an HTML page with 200, or the real answer', async () => {
    const sim = await startSimulator({ clock: testClock({ at: SIM_START }).now, random: prng(42), faults: FAULTS })
    const mirror = prng(42)
    const seen: string[] = []
    const wanted: string[] = []
    try {
      for (let i = 0; i < 30; i++) {
        wanted.push(expected(mirror()))
        const started = Date.now()
        const answer = await soap(sim.url, 'CrSeed', 'getSeed')
        const ms = Date.now() - started
        if (answer.status === 503) seen.push('error')
        else if (answer.text.startsWith('<!DOCTYPE html>')) {
          expect(answer.status).toBe(200)
          seen.push('html')
        } else {
          expect(field(answer.inner, 'SEMILLA')).toMatch(/^\d{12}$/)
          seen.push(ms >= FAULTS.hangMs ? 'hang' : 'ok')
        }
      }
    } finally {
      await sim.stop()
    }
    expect(seen).toEqual(wanted)
    for (const kind of ['error', 'hang', 'html', 'ok']) expect(seen).toContain(kind)
  }, 30_000)

  test('a hung request was processed: its answer arrives after hangMs (lost to a client that timed out)', async () => {
    const sim = await startSimulator({ clock: testClock({ at: SIM_START }).now, random: () => 0.15, faults: { hangRate: 1, hangMs: 400 } })
    try {
      const aborted = await soap(sim.url, 'CrSeed', 'getSeed').catch(() => null)
      expect(field(aborted?.inner ?? null, 'SEMILLA')).toBe('000000000001')
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(), 100)
      const lost = await fetch(`${sim.url}/DTEWS/CrSeed.jws?WSDL`, { signal: controller.signal }).then(() => 'answered', () => 'timed out')
      clearTimeout(timer)
      expect(lost).toBe('timed out')
    } finally {
      await sim.stop()
    }
  })

  test('stop() does not wait for pending hangs', async () => {
    const sim = await startSimulator({ clock: testClock({ at: SIM_START }).now, random: () => 0, faults: { hangRate: 1, hangMs: 60_000 } })
    const pending = fetch(`${sim.url}/recursos/v1/boleta.electronica.semilla`).then((r) => r.status, () => 'closed')
    await Bun.sleep(100)
    const started = Date.now()
    await sim.stop()
    expect(Date.now() - started).toBeLessThan(2000)
    expect([200, 'closed']).toContain(await pending)
  })

  test('rates of 0 never draw from random', async () => {
    let draws = 0
    const sim = await startSimulator({ clock: testClock({ at: SIM_START }).now, random: () => (draws++, 0), faults: { errorRate: 0, hangRate: 0, htmlRate: 0 } })
    try {
      expect((await soap(sim.url, 'CrSeed', 'getSeed')).status).toBe(200)
      expect(draws).toBe(0)
    } finally {
      await sim.stop()
    }
  })
})
