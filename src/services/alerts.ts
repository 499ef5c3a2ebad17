// The `alerts` use case (DESIGN §7): certificado.expiring at 30, 15, 7, 3 and 1 days left, once each; and caf.low_stock
// when folios expire (FA + 180 days) rather than being used, which issuance alone would not notice.
import { isoTimestamp } from '../clock'
import { cafTypesInUse } from '../db/caf-store'
import { listActiveCertificados } from '../db/certificado-store'
import { announcedExpiryDays, markExpiryAnnounced } from '../db/webhook-store'
import { expiryThresholdDue, EXPIRY_THRESHOLDS_DAYS } from '../domain/events'
import { toCertificadoStatus } from './certificados'
import type { Deps } from './deps'
import { checkCafStock, emitEvent } from './events'

export function checkCertificateExpiry(deps: Pick<Deps, 'store' | 'clock'>): number {
  const now = deps.clock.now()
  let fired = 0
  for (const cert of listActiveCertificados(deps.store.db)) {
    const status = toCertificadoStatus(cert, now)
    const days = status.dias_para_vencimiento ?? 0
    const due = expiryThresholdDue(days, announcedExpiryDays(deps.store.db, cert.id))
    if (due === null) continue
    deps.store.db.transaction(
      (tx) => {
        // Every threshold already passed is settled with this one event: a certificate loaded with 5 days left says so once.
        markExpiryAnnounced(tx, cert.id, EXPIRY_THRESHOLDS_DAYS.filter((d) => d >= due), isoTimestamp(now))
        emitEvent(tx, {
          empresaId: cert.empresa_id,
          type: 'certificado.expiring',
          data: { rut_firmante: status.rut_firmante, fecha_vencimiento: status.fecha_vencimiento, dias_para_vencimiento: days },
          now,
        })
      },
      { behavior: 'immediate' },
    )
    fired++
  }
  return fired
}

export function checkCafExpiry(deps: Pick<Deps, 'store' | 'config' | 'clock'>): number {
  const now = deps.clock.now()
  let fired = 0
  for (const { empresa_id, tipo_dte } of cafTypesInUse(deps.store.db))
    if (deps.store.db.transaction((tx) => checkCafStock(tx, { empresaId: empresa_id, tipoDte: tipo_dte, threshold: deps.config.cafLowStock, cafId: null, now }), { behavior: 'immediate' })) fired++
  return fired
}
