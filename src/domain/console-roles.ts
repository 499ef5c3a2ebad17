// What a person may do in one company's console (DESIGN §14 "People, not keys", issue 27). The three roles and what
// each opens are decided here once; the console's door and screens only ask.

export const ROLES = ['administrador', 'emisor', 'lectura'] as const
export type Rol = (typeof ROLES)[number]

/** How far a session reaches into the company's settings: certificate, CAF upload, webhooks, mailbox. */
export type SettingsAccess = 'hidden' | 'read' | 'write'

export interface RoleAccess {
  /** Issue, send, accept or claim, import received documents, create clientes and productos. */
  readonly canWrite: boolean
  readonly settings: SettingsAccess
  /** Invite, change roles, remove people: the Cuentas screen. */
  readonly canManageAccounts: boolean
}

/**
 * `emisor` does the day's work but neither sees nor changes what binds the company (its signing certificate, its
 * folios from the SII, where its events and mail go) nor who gets in; `lectura` reads the day's work only. Settings
 * stay hidden from `lectura` too: a role that may do less than `emisor` must not see more than it.
 */
export const ROLE_ACCESS: Readonly<Record<Rol, RoleAccess>> = {
  administrador: { canWrite: true, settings: 'write', canManageAccounts: true },
  emisor: { canWrite: true, settings: 'hidden', canManageAccounts: false },
  lectura: { canWrite: false, settings: 'hidden', canManageAccounts: false },
}

export const ROLE_LABELS: Readonly<Record<Rol, string>> = {
  administrador: 'Administrador',
  emisor: 'Emisor',
  lectura: 'Solo lectura',
}

export function isRol(value: string | null): value is Rol {
  return value !== null && (ROLES as readonly string[]).includes(value)
}
