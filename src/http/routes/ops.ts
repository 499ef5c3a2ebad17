// Operational endpoints (DESIGN §12): unauthenticated, outside /api/v1/billing, no tenant data.
import { Elysia } from 'elysia'
import { Type } from '@sinclair/typebox'
import type { Deps } from '../../services/deps'
import { VERSION } from '../../version'
import { storeReadiness } from '../../services/readiness'
import { backupReadiness } from '../../services/backup-status'

export interface Readiness {
  /** Scheduler state: false before start and after shutdown began. */
  jobsRunning(): boolean
  isShuttingDown(): boolean
  sii(): { last_ok_at: string | null; oldest_pending_s: number | null }
}

const CheckSchema = Type.Union([Type.Literal('ok'), Type.Literal('fail')])
const Instant = Type.Union([Type.String({ format: 'date-time' }), Type.Null()])
/** Issue 26: the scheduled backups, reported beside the checks that decide the status, never deciding it. */
const BackupSchema = Type.Object(
  {
    targets: Type.Array(
      // No location, copy name nor failure text: /ready answers anyone who reaches the port, and where the copies go is
      // the instance's infrastructure (review of issue 26). The administrator's console and `timbre backup list` say it.
      Type.Object({
        kind: Type.Union([Type.Literal('folder'), Type.Literal('s3')]),
        state: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('stale')], {
          description: 'failing: la última copia falló; stale: la última copia verificada tiene más de dos periodos, o fecha futura.',
        }),
        last_good_at: Instant,
        last_failure_at: Instant,
      }),
    ),
  },
  { description: 'Respaldos automáticos: última copia verificada y último fallo por destino (vacío sin destinos configurados).' },
)
const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Object({
    database: CheckSchema,
    migrations: CheckSchema,
    jobs: CheckSchema,
    backup: Type.Union([Type.Literal('ok'), Type.Literal('fail'), Type.Literal('off')], {
      description: 'Respaldos automáticos: fail si la última copia de algún destino falló o si no hay una copia verificada reciente; off sin destinos. No cambia el estado (no produce 503).',
    }),
  }),
  backup: BackupSchema,
  sii: Type.Object({
    last_ok_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    oldest_pending_s: Type.Union([Type.Integer(), Type.Null()], { description: 'Antigüedad del DTE pendiente más antiguo, en segundos.' }),
  }),
})

export const opsRoutes = (deps: Deps, readiness: Readiness) =>
  new Elysia({ normalize: false })
    .get('/health', () => ({ status: 'ok' as const, version: VERSION }), {
      detail: { tags: ['Operación'], summary: 'El proceso responde', security: [] },
      response: { 200: Type.Object({ status: Type.Literal('ok'), version: Type.String() }) },
    })
    .get(
      '/ready',
      ({ set }) => {
        const checks = { ...storeReadiness(deps), jobs: readiness.jobsRunning() ? ('ok' as const) : ('fail' as const) }
        const ready = !readiness.isShuttingDown() && Object.values(checks).every((c) => c === 'ok')
        set.status = ready ? 200 : 503
        if (!ready) set.headers['retry-after'] = '5'
        // A failing backup is reported, not routed on: the API can still issue (docs/decisions/backups.md "/ready").
        const backup = backupReadiness(deps)
        const targets = backup.targets.map((t) => ({ kind: t.kind, state: t.state, last_good_at: t.last_good_at, last_failure_at: t.last_failure_at }))
        return { status: ready ? 'ready' : 'unavailable', checks: { ...checks, backup: backup.check }, backup: { targets }, sii: readiness.sii() }
      },
      {
        detail: {
          tags: ['Operación'],
          summary: 'Listo para recibir tráfico (base de datos, migraciones, jobs)',
          description:
            'El estado (200 o 503) depende solo de la base, las migraciones y los jobs. checks.backup y el bloque backup informan de los respaldos automáticos: un respaldo fallido aparece como checks.backup = fail, pero no hace que /ready responda 503, porque la API sigue pudiendo emitir.',
          security: [],
        },
        response: { 200: ReadinessSchema, 503: ReadinessSchema },
      },
    )
