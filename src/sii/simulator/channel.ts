// What the server hands each channel (soap-service.ts, upload-service.ts, boleta-service.ts) and what each hands back:
// one context with the state and the injected dependencies, instead of a class holding every handler; and the
// channel's endpoints as data, so server.ts routes without knowing any path.
import type { KeyObject } from 'node:crypto'
import type { SimulatorStore } from './store'

/** The SII does not publish its upload limit; 2000 DTEs of a few KB fit well under this. */
export const MAX_ENVELOPE_BYTES = 50 * 1024 * 1024

export interface SimulatorContext {
  readonly store: SimulatorStore
  /** The injected clock: tokens, seeds and the states over time follow it (docs/decisions/simulator.md "States over time"). */
  readonly clock: () => Date
  /** The CAF-signing keys by IDK, the simulator's own 900 included. */
  readonly authorityKeys: ReadonlyMap<number, KeyObject>
  /** From upload to the final state; fixed per envelope when it is stored. */
  readonly processingDelayMs: number
  readonly log: (event: string, fields: object) => void
  /** The portal's login by certificate (portal-login.ts): its TLS listener, started at the first login. */
  readonly portal: PortalAccess
}

/** What the plain origin's routes need of the portal's TLS listener (server.ts starts it, rcv-service.ts redirects to it). */
export interface PortalAccess {
  /** The listener's port; the first call starts it. */
  tlsPort(): Promise<number>
}

/** One endpoint of a channel: which requests it takes, and how it answers them. */
export interface Route {
  readonly method: 'GET' | 'POST'
  readonly matches: (url: URL) => boolean
  readonly answer: (ctx: SimulatorContext, req: Request, url: URL) => Promise<Response> | Response
}

/** A route's `matches` for one exact path. */
export function pathIs(path: string): (url: URL) => boolean {
  return (url) => url.pathname === path
}
