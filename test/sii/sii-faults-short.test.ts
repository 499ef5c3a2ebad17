// The short form of the SII faults soak (issue 18, test/soak/sii-faults-soak.ts): ~25 s of issuances through the
// compiled server against the compiled simulator answering 30 % HTTP 503, 5 % past the call timeout (processed, the
// answer lost) and 5 % HTML pages, its tokens deleted every few seconds; then the DTEs settle with the faults on. The
// long form is `bun test/soak/sii-faults-soak.ts --minutes 10`; a failure here prints the seed that repeats its choices.
import { expect, test } from 'bun:test'
import { runSiiFaultsSoak, summaryLine } from '../soak/sii-faults-soak'

test('SII faults: every DTE final as its receptor asks, no document under two track ids, tokens renewed, no API 5xx, SQLite intact', async () => {
  const seed = Math.floor(Math.random() * 2 ** 31)
  const lines: string[] = []
  const summary = await runSiiFaultsSoak({
    minutes: 0.4, seed, tokenLossEveryMs: 4000, progressEveryMs: 10_000, settleMs: 150_000, backoff: '1s:5s', log: (line) => lines.push(line),
  })
  const report = [...lines, summaryLine(summary)].join('\n')
  expect(summary.failures, report).toEqual([])
  expect(summary.issued, report).toBeGreaterThan(10)
  expect(summary.notFinal + summary.doubleUploads + summary.trackIdMismatches + summary.wrongEstados + summary.api5xx + summary.errorLines, report).toBe(0)
  // The faults happened, the tokens vanished and Timbre asked for new ones.
  expect(summary.requests['503'] + summary.requests.html + summary.requests.hang, report).toBeGreaterThan(0)
  expect(summary.tokenLosses, report).toBeGreaterThanOrEqual(3)
  expect(summary.tokensObtained, report).toBeGreaterThan(1)
  expect(summary.integrity).toBe('ok')
  expect(summary.simulatorIntegrity).toBe('ok')
}, 240_000)
