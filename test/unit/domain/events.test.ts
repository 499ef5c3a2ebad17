// DESIGN §7: the retry schedule and the certificate-expiry thresholds as data.
import { describe, expect, test } from 'bun:test'
import { EVENT_TYPES, expiryThresholdDue, isEventType, nextRetryDelayMs, RETRY_DELAYS_MS } from '../../../src/domain/events'

describe('retry schedule', () => {
  test('1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed', () => {
    const minutes = [1, 2, 3, 4, 5, 6, 7].map((n) => nextRetryDelayMs(n)! / 60_000)
    expect(minutes).toEqual([1, 5, 30, 120, 300, 600, 600])
    expect(nextRetryDelayMs(8)).toBeNull()
    expect(RETRY_DELAYS_MS).toHaveLength(7)
  })
})

describe('event names', () => {
  test('the six of spec §6, then the exchange of DESIGN §13, the instance\'s backups (DESIGN §18), the month\'s close (DESIGN §16)', () => {
    expect([...EVENT_TYPES]).toEqual([
      'dte.created', 'dte.accepted', 'dte.rejected', 'dte.repaired', 'caf.low_stock', 'certificado.expiring',
      'recibido.created', 'recibido.plazo_por_vencer', 'recibido.accion', 'dte.acuse_recibo', 'dte.resultado_receptor', 'dte.aceptado_receptor', 'dte.reclamado',
      'backup.failed',
      'rcv.sincronizado',
      'caf.obtenido',
      'caf.anulado',
      'caf.solicitud_fallida',
    ])
    expect(isEventType('dte.created')).toBe(true)
    expect(isEventType('ping')).toBe(false)
  })
})

describe('certificado.expiring thresholds', () => {
  test.each([
    [45, [], null],
    [30, [], 30],
    [29, [30], null],
    [15, [30], 15],
    [5, [30], 7],
    [5, [30, 15, 7], null],
    [1, [30, 15, 7, 3], 1],
    [0, [30, 15, 7, 3, 1], null],
  ])('%d days left, announced %j → %p', (days, announced, expected) => {
    expect(expiryThresholdDue(days, announced)).toBe(expected)
  })
})
