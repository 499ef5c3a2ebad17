// The short form of the crash-safety soak (issue 18, test/soak/crash-soak.ts): a few SIGKILL cycles of the compiled
// server during concurrent issuances with a webhook subscribed and the SII jobs running. The long form is
// `bun test/soak/crash-soak.ts --cycles 200`; a failure here prints the seed that repeats it.
import { expect, test } from 'bun:test'
import { runCrashSoak, summaryLine } from '../soak/crash-soak'

test('SIGKILL at random moments during issuances: no 201 lost, no folio twice, no unused folio, every event delivered, SQLite intact', async () => {
  const seed = Math.floor(Math.random() * 2 ** 31)
  const lines: string[] = []
  const summary = await runCrashSoak({ cycles: 4, seed, log: (line) => lines.push(line) })
  const report = [...lines, summaryLine(summary)].join('\n')
  expect(summary.failures, report).toEqual([])
  expect(summary.kills).toBe(4)
  expect(summary.created).toBeGreaterThan(0)
  expect(summary.losses + summary.duplicates + summary.gaps + summary.undelivered + summary.badSignatures).toBe(0)
  expect(summary.integrity).toBe('ok')
}, 90_000)
