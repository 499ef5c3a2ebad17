// DESIGN §7 signatures: HMAC-SHA256 of "<t>.<raw body>" in hex, verified within a tolerance.
import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { signPayload, verifySignature } from '../../../src/webhooks/signature'

const SECRET = 'whsec_0123456789abcdefghij'

describe('signPayload', () => {
  test('t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', () => {
    const body = '{"id":"e1","type":"dte.created"}'
    const expected = createHmac('sha256', SECRET).update(`1795000000.${body}`).digest('hex')
    expect(signPayload(SECRET, 1795000000, body)).toBe(`t=1795000000,v1=${expected}`)
  })
})

describe('verifySignature', () => {
  const body = '{"id":"e1","type":"dte.accepted","data":{"razon":"Ñandú"}}'
  const header = signPayload(SECRET, 1795000000, body)

  test('accepts the right secret and body within 5 minutes either way', () => {
    expect(verifySignature(SECRET, header, body, 1795000000)).toBe(true)
    expect(verifySignature(SECRET, header, body, 1795000300)).toBe(true)
    expect(verifySignature(SECRET, header, body, 1794999700)).toBe(true)
  })

  test.each([
    ['another secret', 'whsec_otro_secreto_123456', header, body, 1795000000],
    ['a changed body', SECRET, header, body.replace('Ñandú', 'Nandu'), 1795000000],
    ['too old', SECRET, header, body, 1795000301],
    ['no timestamp', SECRET, header.replace(/^t=\d+,/, ''), body, 1795000000],
    ['garbage', SECRET, 'nonsense', body, 1795000000],
  ])('refuses %s', (_name, secret, h, b, now) => {
    expect(verifySignature(secret, h, b, now)).toBe(false)
  })

  test('any body and secret round-trip (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 16 }), fc.string(), fc.integer({ min: 0, max: 4_000_000_000 }), (secret, b, t) => {
        expect(verifySignature(secret, signPayload(secret, t, b), b, t)).toBe(true)
      }),
    )
  })
})
