// Per-request facts of the console door: who is logged in and the form they sent, set by door.ts before any screen
// runs, so a screen reads them and never re-checks a session or a CSRF token itself.
import { TimbreError } from '../errors'
import type { ConsoleSession } from '../services/console-sessions'

interface ConsoleRequest {
  readonly session: ConsoleSession
  /** The submitted form of a POST (already read once for its CSRF token); empty for a GET. */
  readonly form: FormData
}

const requests = new WeakMap<Request, ConsoleRequest>()

export function bindConsoleRequest(request: Request, facts: ConsoleRequest): void {
  requests.set(request, facts)
}

function factsOf(request: Request): ConsoleRequest {
  const facts = requests.get(request)
  if (!facts) throw new Error('console screen reached without the door binding its session')
  return facts
}

export function sessionOf(request: Request): ConsoleSession {
  return factsOf(request).session
}

export function formOf(request: Request): FormData {
  return factsOf(request).form
}

/** A form's text field, trimmed; null when absent or blank, so "not sent" and "empty" read alike. */
export function textField(form: FormData, name: string): string | null {
  const value = form.get(name)
  if (typeof value !== 'string') return null
  const trimmed = value.trim()
  return trimmed === '' ? null : trimmed
}

/** An uploaded file of a multipart form, or null when none was chosen. */
export async function fileField(form: FormData, name: string): Promise<Uint8Array | null> {
  const value = form.get(name)
  if (value === null || typeof value === 'string' || value.size === 0) return null
  return new Uint8Array(await value.arrayBuffer())
}

/** Thrown by a screen when the administrator has not picked a company yet: the door sends them to the list. */
export class NoEmpresaSelected extends Error {}

/** The company the pages show; an administrator who has not chosen one yet is sent to choose. */
export function empresaIdOf(request: Request): string {
  const id = sessionOf(request).empresaId
  if (id === null) throw new NoEmpresaSelected()
  return id
}

/** Screens that change something call this first; the door already refuses a read-only session's POST. */
export function requireWrite(request: Request): void {
  if (!sessionOf(request).canWrite) throw new TimbreError('API_KEY_READ_ONLY')
}
