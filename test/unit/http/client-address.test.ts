// DESIGN §4: the client address of the failed-authentication limit, from the socket or, behind a trusted proxy, from
// X-Forwarded-For read right to left.
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../../src/config'
import { clientAddressResolver } from '../../../src/http/client-address'

describe('clientAddressResolver', () => {
  test('no trusted proxy: the socket, whatever X-Forwarded-For says', () => {
    const of = clientAddressResolver([])
    expect(of('192.0.2.1', '203.0.113.7')).toBe('192.0.2.1')
    expect(of('::ffff:192.0.2.1', null)).toBe('192.0.2.1')
  })

  test('a socket that is not a trusted proxy: X-Forwarded-For is ignored', () => {
    const of = clientAddressResolver(['10.0.0.1'])
    expect(of('192.0.2.1', '203.0.113.7')).toBe('192.0.2.1')
  })

  test('from a trusted proxy: the right-most address that is not a trusted proxy', () => {
    const of = clientAddressResolver(['10.0.0.0/8', '2001:db8::/32', '127.0.0.1'])
    expect(of('10.0.0.5', '203.0.113.7')).toBe('203.0.113.7')
    expect(of('10.0.0.5', '198.51.100.1, 203.0.113.7')).toBe('203.0.113.7') // the client's own claim on the left
    expect(of('10.0.0.5', '203.0.113.7, 10.9.9.9')).toBe('203.0.113.7') // through a second trusted hop
    expect(of('::ffff:127.0.0.1', '203.0.113.7')).toBe('203.0.113.7') // a dual-stack socket
    expect(of('2001:db8::5', '2001:db9::1, 2001:DB8:1::1')).toBe('2001:db9::1')
    expect(of('10.0.0.5', '203.0.113.7:5123')).toBe('203.0.113.7') // proxies that add the port
    expect(of('10.0.0.5', '[2001:db9::7]:443')).toBe('2001:db9::7')
    expect(of('10.0.0.5', '::ffff:203.0.113.7')).toBe('203.0.113.7')
  })

  test('from a trusted proxy with no usable header: the last address a trusted proxy vouched for', () => {
    const of = clientAddressResolver(['10.0.0.0/8'])
    expect(of('10.0.0.5', null)).toBe('10.0.0.5')
    expect(of('10.0.0.5', '')).toBe('10.0.0.5')
    expect(of('10.0.0.5', '10.0.0.9')).toBe('10.0.0.9')
    expect(of('10.0.0.5', '203.0.113.7, unknown')).toBe('10.0.0.5')
    expect(of('10.0.0.5', '203.0.113.7, nonsense, 10.0.0.9')).toBe('10.0.0.9')
  })
})

describe('TIMBRE_TRUST_PROXY', () => {
  test('addresses and CIDR ranges of both families', () => {
    expect(loadConfig({}, { TIMBRE_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8' }).trustProxy).toEqual(['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8'])
    expect(loadConfig({}, {}).trustProxy).toEqual([])
  })

  test.each(['proxy.lan', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', '10.0.0.0/x', '300.1.1.1'])('%s → ConfigError naming the setting', (raw) => {
    expect(() => loadConfig({}, { TIMBRE_TRUST_PROXY: raw })).toThrow(ConfigError)
    expect(() => loadConfig({}, { TIMBRE_TRUST_PROXY: raw })).toThrow('TIMBRE_TRUST_PROXY')
  })
})
