// The depth pre-scan agrees with the nesting of the parsed value, whatever strings and escapes the text holds.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { exceedsJsonDepth } from '../../../src/http/json-depth'

const bytes = (text: string) => new TextEncoder().encode(text)

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf))
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf))
  return 0
}

describe('exceedsJsonDepth', () => {
  test('counts objects and arrays, not brackets inside strings or after escaped quotes', () => {
    expect(exceedsJsonDepth(bytes('[[1]]'), 2)).toBe(false)
    expect(exceedsJsonDepth(bytes('[[[1]]]'), 2)).toBe(true)
    expect(exceedsJsonDepth(bytes('{"a":"[[[[{{{{"}'), 1)).toBe(false)
    expect(exceedsJsonDepth(bytes('{"a":"\\"[[[[","b":"\\\\"}'), 1)).toBe(false)
    expect(exceedsJsonDepth(bytes('{"a":"\\\\",  "b":[[1]]}'), 2)).toBe(true)
  })

  test('agrees with the parsed depth of any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, max) => {
        const text = JSON.stringify(value)
        expect(exceedsJsonDepth(bytes(text), max)).toBe(depthOf(value) > max)
      }),
      { numRuns: 500 },
    )
  })
})
