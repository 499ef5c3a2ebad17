// Console accounts, their memberships and invitations (DESIGN §14 "People, not keys", issue 27). Emails arrive here
// already lower-cased; invitation tokens only as their SHA-256.
import { and, asc, eq, gt, isNull, lt, ne, sql } from 'drizzle-orm'
import type { Db } from './open'
import {
  consoleAccounts,
  consoleInvitations,
  consoleLoginFailures,
  consoleMemberships,
  consoleSessions,
  empresas,
  type ConsoleAccountRow,
  type ConsoleInvitationRow,
  type ConsoleMembershipRow,
} from './schema'
import type { Rol } from '../domain/console-roles'

export type NewConsoleAccount = typeof consoleAccounts.$inferInsert

export function insertAccount(db: Db, row: NewConsoleAccount): ConsoleAccountRow {
  return db.insert(consoleAccounts).values(row).returning().get()
}

export function findAccountByEmail(db: Db, email: string): ConsoleAccountRow | undefined {
  return db.select().from(consoleAccounts).where(eq(consoleAccounts.email, email)).get()
}

export function findAccountById(db: Db, id: string): ConsoleAccountRow | undefined {
  return db.select().from(consoleAccounts).where(eq(consoleAccounts.id, id)).get()
}

type AccountPatch = Partial<
  Pick<
    ConsoleAccountRow,
    'nombre' | 'password_hash' | 'totp_sealed' | 'totp_pending_sealed' | 'totp_last_step' | 'failed_logins' | 'locked_until' | 'disabled_at' | 'last_login_at' | 'updated_at'
  >
>

export function updateAccount(db: Db, id: string, patch: AccountPatch): void {
  db.update(consoleAccounts).set(patch).where(eq(consoleAccounts.id, id)).run()
}

/**
 * One more consecutive failure, in one UPDATE so two concurrent guesses both count. The `lockAfter`-th locks the
 * account until `lockedUntil` and starts the count again, so after the lock another full series is allowed.
 */
export function recordAccountFailure(db: Db, id: string, input: { lockAfter: number; lockedUntil: string; now: string }): void {
  db.update(consoleAccounts)
    .set({
      failed_logins: sql`CASE WHEN ${consoleAccounts.failed_logins} + 1 >= ${input.lockAfter} THEN 0 ELSE ${consoleAccounts.failed_logins} + 1 END`,
      locked_until: sql`CASE WHEN ${consoleAccounts.failed_logins} + 1 >= ${input.lockAfter} THEN ${input.lockedUntil} ELSE ${consoleAccounts.locked_until} END`,
      updated_at: input.now,
    })
    .where(eq(consoleAccounts.id, id))
    .run()
}

/** Until when `address` is locked out of the account's password login, or null. */
export function loginLockedUntil(db: Db, accountId: string, address: string): string | null {
  const row = db
    .select({ locked_until: consoleLoginFailures.locked_until })
    .from(consoleLoginFailures)
    .where(and(eq(consoleLoginFailures.account_id, accountId), eq(consoleLoginFailures.address, address)))
    .get()
  return row?.locked_until ?? null
}

/**
 * One more failure of the account from the address: the `lockAfter`-th in a row locks it until `lockedUntil` and
 * starts the count again. One upsert. Rows of quiet pairs older than `staleBefore` are pruned on the way.
 */
export function recordLoginFailure(db: Db, input: { accountId: string; address: string; lockAfter: number; lockedUntil: string; now: string; staleBefore: string }): void {
  db.insert(consoleLoginFailures)
    .values({ account_id: input.accountId, address: input.address, failures: 1, locked_until: null, updated_at: input.now })
    .onConflictDoUpdate({
      target: [consoleLoginFailures.account_id, consoleLoginFailures.address],
      set: {
        failures: sql`CASE WHEN ${consoleLoginFailures.failures} + 1 >= ${input.lockAfter} THEN 0 ELSE ${consoleLoginFailures.failures} + 1 END`,
        locked_until: sql`CASE WHEN ${consoleLoginFailures.failures} + 1 >= ${input.lockAfter} THEN ${input.lockedUntil} ELSE ${consoleLoginFailures.locked_until} END`,
        updated_at: input.now,
      },
    })
    .run()
  db.delete(consoleLoginFailures)
    .where(and(lt(consoleLoginFailures.updated_at, input.staleBefore), sql`coalesce(${consoleLoginFailures.locked_until}, '') < ${input.now}`))
    .run()
}

/** A right login from the address clears its count; a password reset clears every address's. */
export function clearLoginFailures(db: Db, accountId: string, address?: string): void {
  db.delete(consoleLoginFailures)
    .where(address === undefined ? eq(consoleLoginFailures.account_id, accountId) : and(eq(consoleLoginFailures.account_id, accountId), eq(consoleLoginFailures.address, address)))
    .run()
}

/** Accepts a TOTP step only if it is newer than the last one accepted: one UPDATE, so a code replayed in a race fails. */
export function claimTotpStep(db: Db, id: string, step: number): boolean {
  const claimed = db
    .update(consoleAccounts)
    .set({ totp_last_step: step })
    .where(and(eq(consoleAccounts.id, id), sql`coalesce(${consoleAccounts.totp_last_step}, -1) < ${step}`))
    .returning({ id: consoleAccounts.id })
    .get()
  return claimed !== undefined
}

export function findMembership(db: Db, accountId: string, empresaId: string): ConsoleMembershipRow | undefined {
  return db
    .select()
    .from(consoleMemberships)
    .where(and(eq(consoleMemberships.account_id, accountId), eq(consoleMemberships.empresa_id, empresaId)))
    .get()
}

export function upsertMembership(db: Db, row: ConsoleMembershipRow): void {
  db.insert(consoleMemberships)
    .values(row)
    .onConflictDoUpdate({ target: [consoleMemberships.account_id, consoleMemberships.empresa_id], set: { role: row.role } })
    .run()
}

export function updateMembershipRole(db: Db, accountId: string, empresaId: string, role: Rol): boolean {
  const updated = db
    .update(consoleMemberships)
    .set({ role })
    .where(and(eq(consoleMemberships.account_id, accountId), eq(consoleMemberships.empresa_id, empresaId)))
    .returning({ id: consoleMemberships.account_id })
    .get()
  return updated !== undefined
}

export function deleteMembership(db: Db, accountId: string, empresaId: string): boolean {
  const deleted = db
    .delete(consoleMemberships)
    .where(and(eq(consoleMemberships.account_id, accountId), eq(consoleMemberships.empresa_id, empresaId)))
    .returning({ id: consoleMemberships.account_id })
    .get()
  return deleted !== undefined
}

export interface MemberRow {
  readonly account: ConsoleAccountRow
  readonly role: Rol
  readonly since: string
}

export function listMembersOfEmpresa(db: Db, empresaId: string): MemberRow[] {
  return db
    .select({ account: consoleAccounts, role: consoleMemberships.role, since: consoleMemberships.created_at })
    .from(consoleMemberships)
    .innerJoin(consoleAccounts, eq(consoleAccounts.id, consoleMemberships.account_id))
    .where(eq(consoleMemberships.empresa_id, empresaId))
    .orderBy(asc(consoleAccounts.email))
    .all()
}

export interface AccountEmpresaRow {
  readonly empresa_id: string
  readonly rut: string
  readonly razon_social: string
  readonly role: Rol
}

export function listEmpresasOfAccount(db: Db, accountId: string): AccountEmpresaRow[] {
  return db
    .select({ empresa_id: empresas.id, rut: empresas.rut, razon_social: empresas.razon_social, role: consoleMemberships.role })
    .from(consoleMemberships)
    .innerJoin(empresas, eq(empresas.id, consoleMemberships.empresa_id))
    .where(eq(consoleMemberships.account_id, accountId))
    .orderBy(asc(empresas.razon_social))
    .all()
}

export function insertInvitation(db: Db, row: ConsoleInvitationRow): void {
  db.insert(consoleInvitations).values(row).run()
}

/** A new invitation for the same email and company replaces the pending ones: only the newest link works. */
export function revokePendingInvitations(db: Db, empresaId: string, email: string, now: string): void {
  db.update(consoleInvitations)
    .set({ revoked_at: now })
    .where(and(eq(consoleInvitations.empresa_id, empresaId), eq(consoleInvitations.email, email), isNull(consoleInvitations.used_at), isNull(consoleInvitations.revoked_at)))
    .run()
}

export function revokeInvitation(db: Db, id: string, empresaId: string, now: string): boolean {
  const revoked = db
    .update(consoleInvitations)
    .set({ revoked_at: now })
    .where(and(eq(consoleInvitations.id, id), eq(consoleInvitations.empresa_id, empresaId), isNull(consoleInvitations.used_at), isNull(consoleInvitations.revoked_at)))
    .returning({ id: consoleInvitations.id })
    .get()
  return revoked !== undefined
}

/** An invitation that can still be accepted (unused, not revoked, not expired), or undefined. */
export function findUsableInvitation(db: Db, tokenHash: string, now: string): ConsoleInvitationRow | undefined {
  return db
    .select()
    .from(consoleInvitations)
    .where(and(eq(consoleInvitations.token_hash, tokenHash), isNull(consoleInvitations.used_at), isNull(consoleInvitations.revoked_at), gt(consoleInvitations.expires_at, now)))
    .get()
}

/** Spends the invitation: one UPDATE, so two browsers racing on one link get one account. */
export function useInvitation(db: Db, id: string, now: string): boolean {
  const used = db
    .update(consoleInvitations)
    .set({ used_at: now })
    .where(and(eq(consoleInvitations.id, id), isNull(consoleInvitations.used_at), isNull(consoleInvitations.revoked_at), gt(consoleInvitations.expires_at, now)))
    .returning({ id: consoleInvitations.id })
    .get()
  return used !== undefined
}

export function listPendingInvitations(db: Db, empresaId: string, now: string): ConsoleInvitationRow[] {
  return db
    .select()
    .from(consoleInvitations)
    .where(and(eq(consoleInvitations.empresa_id, empresaId), isNull(consoleInvitations.used_at), isNull(consoleInvitations.revoked_at), gt(consoleInvitations.expires_at, now)))
    .orderBy(asc(consoleInvitations.email))
    .all()
}

/** Ends every session of an account but `keepId` (the one that changed the password, when there is one). */
export function deleteAccountSessions(db: Db, accountId: string, keepId: string | null = null): void {
  db.delete(consoleSessions)
    .where(and(eq(consoleSessions.account_id, accountId), ...(keepId === null ? [] : [ne(consoleSessions.id, keepId)])))
    .run()
}
