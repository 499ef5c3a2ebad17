// The demo banner's commands paste into the person's own shell (issue 26): sh quoting on Linux and macOS, as before;
// on Windows curl.exe with double quotes only and the body from a file, for PowerShell and cmd alike.
import { expect, test } from 'bun:test'
import { DEMO_INVOICE, demoCommands } from '../../../src/cli/demo-banner'

const input = { baseUrl: 'http://127.0.0.1:8080', apiKey: 'timbre_abc-DEF_123', idempotencyKey: '0193a6c2-0000-7000-8000-000000000001', invoicePath: 'C:\\Timbre\\data\\demo-factura.json' }

test.each(['linux', 'darwin'] as const)('%s: the sh lines of before, body inline', (platform) => {
  const c = demoCommands({ ...input, platform })
  expect(c.empresa).toBe(`curl -s -H 'X-Api-Key: timbre_abc-DEF_123' http://127.0.0.1:8080/api/v1/billing/empresa`)
  expect(c.issue).toBe(
    `curl -s -X POST http://127.0.0.1:8080/api/v1/billing/dte -H 'X-Api-Key: timbre_abc-DEF_123' -H 'Content-Type: application/json' -H 'Idempotency-Key: 0193a6c2-0000-7000-8000-000000000001' -d '${JSON.stringify(DEMO_INVOICE)}'`,
  )
  expect(c.list).toBe(`curl -s -H 'X-Api-Key: timbre_abc-DEF_123' http://127.0.0.1:8080/api/v1/billing/dte`)
})

test('Windows: curl.exe, double quotes only, the body from the file in the data dir', () => {
  const c = demoCommands({ ...input, platform: 'win32' })
  expect(c.issue).toBe(
    'curl.exe -s -X POST http://127.0.0.1:8080/api/v1/billing/dte -H "X-Api-Key: timbre_abc-DEF_123" -H "Content-Type: application/json" ' +
      '-H "Idempotency-Key: 0193a6c2-0000-7000-8000-000000000001" --data-binary "@C:\\Timbre\\data\\demo-factura.json"',
  )
  for (const line of [c.empresa, c.issue, c.list]) {
    expect(line.startsWith('curl.exe ')).toBe(true)
    // No single quote (cmd passes it through) and no JSON braces or inner quotes for PowerShell to mangle.
    expect(line).not.toMatch(/['{}`]/)
    expect(line.split('"').length % 2).toBe(1)
  }
})
