// The data dir on Windows (issue 26, DESIGN §18): file modes mean nothing there (Bun reports 0666 for every file and a
// chmod changes nothing but the read-only bit), so the keys and the database are protected by the folder's access
// rules instead: only the account Timbre runs as, the Administrators and SYSTEM, inherited by everything made in it.
import { spawnSync } from 'node:child_process'
import { userInfo } from 'node:os'
import type { Logger } from '../log'

/** Well-known SIDs, written `*SID` so icacls takes them on a Windows of any language ("Administradores"). */
export const ADMINISTRATORS_SID = 'S-1-5-32-544'
export const SYSTEM_SID = 'S-1-5-18'

/**
 * icacls's arguments: `/inheritance:r` drops what the folder inherited (Users may read C:\ProgramData's children),
 * `/grant:r` replaces each principal's rights with Full control, inherited by files (OI) and folders (CI).
 */
export function icaclsArgs(dir: string, principal: string): string[] {
  return [dir, '/inheritance:r', '/grant:r', `${principal}:(OI)(CI)F`, `*${ADMINISTRATORS_SID}:(OI)(CI)F`, `*${SYSTEM_SID}:(OI)(CI)F`]
}

/** The same rules on one file (a backup archive written outside the data dir): nothing to inherit, so no (OI)(CI). */
export function icaclsFileArgs(file: string, principal: string): string[] {
  return [file, '/inheritance:r', '/grant:r', `${principal}:F`, `*${ADMINISTRATORS_SID}:F`, `*${SYSTEM_SID}:F`]
}

/**
 * Windows' own tools by absolute path: a bare `icacls` is looked up in the current folder before PATH, so Timbre
 * started from a Downloads folder holding a planted icacls.exe or whoami.exe would run it (review of issue 26). The
 * system root is the standard one: only config.ts reads the environment (STYLE §1), and on a Windows installed
 * elsewhere the step fails with its warning, never stopping a start.
 */
export function systemTool(name: 'icacls' | 'whoami', systemRoot = 'C:\\Windows'): string {
  return `${systemRoot}\\System32\\${name}.exe`
}

/**
 * The running account as icacls names it: its SID from `whoami /user /fo csv /nh` (`"pc\ana","S-1-5-21-…"`), which also
 * works for SYSTEM (a scheduled task), whose user name is `PC$`, a name icacls cannot map; else the account's name (Wine's
 * whoami prints no SID); else null.
 */
export function principalOf(whoamiCsv: string | null, userName: string | null): string | null {
  const sid = whoamiCsv?.match(/"(S-1-[0-9-]+)"/)?.[1]
  if (sid) return `*${sid}`
  return userName || null
}

function currentUserName(): string | null {
  try {
    return userInfo().username
  } catch {
    return null
  }
}

export interface CommandRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly error?: string
}

export type Runner = (file: string, args: readonly string[]) => CommandRun

const runCommand: Runner = (file, args) => {
  const r = spawnSync(file, [...args], { encoding: 'utf8', windowsHide: true, timeout: 15_000 })
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ...(r.error ? { error: r.error.message } : {}) }
}

const ACTION = 'deje el directorio de datos accesible solo a la cuenta que ejecuta Timbre, a Administradores y a SYSTEM (icacls o Propiedades > Seguridad)'

/**
 * Sets the data dir's access rules, once per start of `serve` and when `empresa create` or `restore` makes a data dir:
 * the rules are inherited, so what is written later needs no call of its own. A failure is a warning with icacls's own
 * words, never a reason not to start (as with the modes on Linux, docs/decisions/operations.md): the folder's owner or
 * an administrator can fix it. Returns whether the rules were set. Only on Windows; elsewhere the modes do this job.
 */
export function protectDataDirOnWindows(dataDir: string, log: Logger, opts: AclOptions = {}): boolean {
  return protectOnWindows(dataDir, icaclsArgs, log, opts)
}

/**
 * A backup archive holds master.key beside the database: on Windows its folder's inherited rules (a second drive lets
 * every Authenticated User read) would undo what the data dir's rules keep, where Linux has the archive's 0600 (review
 * of issue 26). Same rules as the data dir, on the file alone.
 */
export function protectFileOnWindows(file: string, log: Logger, opts: AclOptions = {}): boolean {
  return protectOnWindows(file, icaclsFileArgs, log, opts)
}

interface AclOptions {
  readonly platform?: NodeJS.Platform
  readonly run?: Runner
  readonly userName?: string | null
}

function protectOnWindows(dataDir: string, argsFor: (path: string, principal: string) => string[], log: Logger, opts: AclOptions): boolean {
  if ((opts.platform ?? process.platform) !== 'win32') return false
  const run = opts.run ?? runCommand
  const whoami = run(systemTool('whoami'), ['/user', '/fo', 'csv', '/nh'])
  const principal = principalOf(whoami.status === 0 ? whoami.stdout : null, opts.userName !== undefined ? opts.userName : currentUserName())
  if (principal === null) {
    log.warn('data_dir.acl_failed', { data_dir: dataDir, reason: 'no se pudo saber con qué cuenta corre Timbre (whoami)', action: ACTION })
    return false
  }
  const args = argsFor(dataDir, principal)
  const r = run(systemTool('icacls'), args)
  if (r.status !== 0) {
    log.warn('data_dir.acl_failed', { data_dir: dataDir, icacls: args, exit_code: r.status, reason: (r.error ?? `${r.stderr} ${r.stdout}`).trim(), action: ACTION })
    return false
  }
  log.info('data_dir.acl_applied', { data_dir: dataDir, icacls: args })
  return true
}
