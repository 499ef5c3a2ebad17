// DESIGN §7 "Where deliveries may go": every spelling of an address lands in its range, and the policy refuses what
// the DESIGN lists (issue 18, hole 1).
import { describe, expect, test } from 'bun:test'
import { addressRange, checkWebhookUrl, isRangeAllowed, type AddressRange } from '../../../src/domain/webhooks'

const STRICT = { allowHttp: false, denyPrivate: false }
const DEV = { allowHttp: true, denyPrivate: false }
const HOSTING = { allowHttp: false, denyPrivate: true }

describe('addressRange', () => {
  test.each<[string, AddressRange | null]>([
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['169.254.0.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.100.1.1', 'private'],
    ['fd00::1', 'private'],
    ['fc00::1', 'private'],
    ['172.32.0.1', 'public'],
    ['172.15.0.1', 'public'],
    ['8.8.8.8', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['fec0::1', 'private'],
    // IPv4 carried inside IPv6 is judged by the IPv4 address.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:a9fe:a9fe]', 'link_local'],
    ['::ffff:8.8.8.8', 'public'],
    ['::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link_local'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b:1::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'link_local'],
    // Names are not addresses.
    ['hooks.example.cl', null],
    ['localhost', null],
    ['1.2.3', null],
    ['1.2.3.256', null],
    ['1:2:3', null],
    ['1::2::3', null],
  ])('%s → %s', (address, range) => expect(addressRange(address)).toBe(range))
})

describe('isRangeAllowed', () => {
  test('public always; private unless deny-private; the rest only in development (allow-http)', () => {
    const refused: AddressRange[] = ['loopback', 'link_local', 'unspecified', 'multicast', 'reserved']
    for (const r of refused) expect([isRangeAllowed(r, STRICT), isRangeAllowed(r, DEV), isRangeAllowed(r, HOSTING)]).toEqual([false, true, false])
    expect([isRangeAllowed('private', STRICT), isRangeAllowed('private', DEV), isRangeAllowed('private', HOSTING)]).toEqual([true, true, false])
    expect([isRangeAllowed('public', STRICT), isRangeAllowed('public', HOSTING)]).toEqual([true, true])
  })
})

describe('checkWebhookUrl', () => {
  // The URL parser normalises these spellings to the address they mean; the check sees what a connection would.
  test.each([
    'https://127.0.0.1/h',
    'https://2130706433/h',
    'https://0x7f.1/h',
    'https://0177.0.0.1/h',
    'https://127.1/h',
    'https://%31%32%37.0.0.1/h',
    'https://[::ffff:127.0.0.1]/h',
    'https://[0:0:0:0:0:0:0:1]:8443/h',
    'https://169.254.169.254/latest/meta-data/',
    'https://0/h',
    'https://localhost/h',
    'https://LOCALHOST./h',
    'https://api.localhost/h',
  ])('%s → NOT_ALLOWED at url', (url) => {
    expect(checkWebhookUrl(url, STRICT)).toEqual([expect.objectContaining({ field: 'url', code: 'NOT_ALLOWED' })])
    expect(checkWebhookUrl(url.replace('https:', 'http:'), DEV)).toEqual([])
  })

  test('private addresses pass unless deny-private; names pass (their addresses are checked once resolved)', () => {
    expect(checkWebhookUrl('https://192.168.1.20/h', STRICT)).toEqual([])
    expect(checkWebhookUrl('https://192.168.1.20/h', HOSTING)).toEqual([expect.objectContaining({ field: 'url', code: 'NOT_ALLOWED' })])
    expect(checkWebhookUrl('https://hooks.example.cl/h', HOSTING)).toEqual([])
  })
})
