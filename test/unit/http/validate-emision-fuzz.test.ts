// validateEmision over spoiled bodies (issue 12 item 2): whatever fields are replaced by whatever JSON, it answers
// with details in DESIGN §5's codes and never throws, and the rules still speak about fields the spoiling left intact.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { validateEmision } from '../../../src/contracts/dte'
import { fixtureOfEachType } from '../../support/fixtures'

const TODAY = '2026-06-30'
const CODES = ['REQUIRED', 'INVALID_TYPE', 'INVALID_FORMAT', 'INVALID_VALUE', 'TOO_LONG', 'TOO_MANY', 'TOO_FEW', 'OUT_OF_RANGE', 'INVALID_RUT', 'NOT_ALLOWED', 'INCONSISTENT']
const requests = fixtureOfEachType().map((f) => f.request)
/** JSON values whose object keys are plain names, so the paths this test walks stay unambiguous. */
const json = (maxDepth: number) =>
  fc.anything({
    maxDepth,
    key: fc.stringMatching(/^[a-z_]{1,8}$/),
    values: [fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), fc.constant(null)],
  })

/** Every dot path of a JSON value, objects and arrays included. */
function pathsOf(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k
    return [path, ...pathsOf(v, path)]
  })
}

function setAt(body: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.')
  let node: unknown = body
  for (const part of parts.slice(0, -1)) node = (node as Record<string, unknown>)[part]
  ;(node as Record<string, unknown>)[parts[parts.length - 1]!] = value
}

describe('validateEmision on spoiled bodies', () => {
  test('never throws; every spoiled body gets details with dot paths', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: requests.length - 1 }),
        fc.array(fc.tuple(fc.nat(), json(2)), { minLength: 1, maxLength: 4 }),
        (which, spoils) => {
          const body = structuredClone(requests[which]) as unknown as Record<string, unknown>
          for (const [n, value] of spoils) {
            const paths = pathsOf(body)
            if (paths.length > 0) setAt(body, paths[n % paths.length]!, structuredClone(value))
          }
          const result = validateEmision(body, TODAY)
          if (!result.ok)
            for (const d of result.errors) {
              expect(d.field.length).toBeGreaterThan(0)
              expect(CODES).toContain(d.code)
              expect(d.message.length).toBeGreaterThan(0)
            }
        },
      ),
      { numRuns: 400 },
    )
  })

  test('a bad receptor RUT is reported whatever else is spoiled beside it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: requests.length - 1 }), fc.nat(), json(1), (which, n, value) => {
        const body = structuredClone(requests[which]) as unknown as Record<string, unknown>
        const paths = pathsOf(body).filter((p) => !p.startsWith('receptor') && p !== 'tipo_dte')
        setAt(body, paths[n % paths.length]!, value)
        ;(body.receptor as Record<string, unknown>).rut = '76086428-4'
        const result = validateEmision(body, TODAY)
        expect(result.ok).toBe(false)
        if (!result.ok) expect(result.errors).toContainEqual(expect.objectContaining({ field: 'receptor.rut', code: 'INVALID_RUT' }))
      }),
      { numRuns: 300 },
    )
  })
})
