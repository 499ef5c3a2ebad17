// Operational endpoints (DESIGN §12): unauthenticated, outside /api/v1/billing, no tenant data.
import { Elysia } from 'elysia'
import { Type } from '@sinclair/typebox'
import type { Deps } from '../../services/deps'
import { VERSION } from '../../version'
import { storeReadiness } from '../../services/readiness'

export interface Readiness {
  /** Scheduler state: false before start and after shutdown began. */
  jobsRunning(): boolean
  isShuttingDown(): boolean
  sii(): { last_ok_at: string | null; oldest_pending_s: number | null }
}

const CheckSchema = Type.Union([Type.Literal('ok'), Type.Literal('fail')])
const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Object({ database: CheckSchema, migrations: CheckSchema, jobs: CheckSchema }),
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
        return { status: ready ? 'ready' : 'unavailable', checks, sii: readiness.sii() }
      },
      {
        detail: { tags: ['Operación'], summary: 'Listo para recibir tráfico (base de datos, migraciones, jobs)', security: [] },
        response: { 200: ReadinessSchema, 503: ReadinessSchema },
      },
    )
