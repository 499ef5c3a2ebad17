// The signals serve drains on, per platform (issue 26, DESIGN §18); Linux's SIGHUP and nohup for real in
// test/cli/stop.test.ts, Windows' Ctrl-C in test/cli/windows-wine.test.ts.
import { expect, test } from 'bun:test'
import { isSigHupIgnoredIn, stopSignals } from '../../../src/cli/serve'

test('serve drains on SIGHUP everywhere, on SIGBREAK on Windows (Ctrl-Break), which other platforms do not know', () => {
  expect(stopSignals('linux')).toEqual(['SIGTERM', 'SIGINT', 'SIGHUP'])
  expect(stopSignals('darwin')).toEqual(['SIGTERM', 'SIGINT', 'SIGHUP'])
  expect(stopSignals('win32')).toEqual(['SIGTERM', 'SIGINT', 'SIGBREAK', 'SIGHUP'])
})

test('started under nohup (SIGHUP ignored), serve leaves SIGHUP ignored instead of stopping when the terminal closes', () => {
  expect(stopSignals('linux', true)).toEqual(['SIGTERM', 'SIGINT'])
  expect(isSigHupIgnoredIn('Name:\tbun\nSigBlk:\t0000000000000000\nSigIgn:\t0000000001001001\nSigCgt:\t0000000000000000\n')).toBe(true)
  expect(isSigHupIgnoredIn('Name:\tbun\nSigIgn:\t0000000001001000\n')).toBe(false)
  expect(isSigHupIgnoredIn(null)).toBe(false)
})
