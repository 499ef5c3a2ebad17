// Fault injection (docs/decisions/simulator.md "Faults"): one draw of the injected random per request, only when some rate
// is above 0. A 503 or the maintenance page answers instead of the channel (unprocessed); a hang answers late what
// the channel processed, so the answer is lost to a client that timed out.
import { textResponse } from './http-responses'

export interface FaultOptions {
  /** Share of requests answered HTTP 503 without being processed. */
  readonly errorRate?: number
  /** Share of requests processed but answered only after `hangMs` (the answer is lost to a client that timed out). */
  readonly hangRate?: number
  /** Share answered by an HTML maintenance page with HTTP 200, unprocessed (docs/sii-protocol.md §6.4, §6.8). */
  readonly htmlRate?: number
  /** Default 45 000: beyond the 30 s every Timbre SII call allows (DESIGN §6). */
  readonly hangMs?: number
}

export type Fault = 'none' | '503' | 'hang' | 'html'

export const DEFAULT_HANG_MS = 45_000

export function drawFault(faults: FaultOptions, random: () => number): Fault {
  const [error, hang, html] = [faults.errorRate ?? 0, faults.hangRate ?? 0, faults.htmlRate ?? 0]
  if (error + hang + html <= 0) return 'none'
  const draw = random()
  if (draw < error) return '503'
  if (draw < error + hang) return 'hang'
  if (draw < error + hang + html) return 'html'
  return 'none'
}

/** The answer that replaces the channel's for a 503 or an HTML fault; null when the channel answers. */
export function faultResponse(fault: Fault): Response | null {
  if (fault === '503') return textResponse('<html><body><h1>503 Service Unavailable</h1></body></html>', 'text/html', 503)
  if (fault === 'html') return maintenancePage()
  return null
}

/** What the SII shows in maintenance windows: HTML with HTTP 200 (docs/sii-protocol.md §6.4 failure modes, §6.8). */
function maintenancePage(): Response {
  return textResponse(
    '<!DOCTYPE html><html><head><title>SII - Servicio no disponible</title></head><body><h1>Servicio en mantención</h1>' +
      '<p>Estimado contribuyente: el servicio no se encuentra disponible en este momento. Intente más tarde.</p></body></html>',
    'text/html; charset=utf-8',
  )
}

/** The pending hangs, so stop() can resolve them all at once instead of waiting for one. */
export class Hangs {
  private readonly pending = new Set<() => void>()

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const release = (): void => {
        clearTimeout(timer)
        this.pending.delete(release)
        resolve()
      }
      const timer = setTimeout(release, ms)
      this.pending.add(release)
    })
  }

  releaseAll(): void {
    for (const release of this.pending) release()
    this.pending.clear()
  }
}
