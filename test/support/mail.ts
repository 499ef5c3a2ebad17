// A real mail hub for tests (DESIGN §13 "Tests through real parts"): Debian's dovecot serves IMAP over Maildirs in a
// temp dir, and the npm smtp-server accepts SMTP, records every message and drops the ones addressed to a hub user
// into that user's Maildir/new/, where dovecot finds them. How dovecot is configured, and why: docs/stack-notes.md
// "Mail (imapflow, mailparser, nodemailer, dovecot in tests)".
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  chmodSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync,
} from 'node:fs'
import { connect, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server'
import type { ImapSettings, SmtpSettings } from '../../src/mail/types'

export const DOVECOT = '/usr/sbin/dovecot'

export interface ReceivedAttachment {
  readonly fileName: string | null
  readonly contentType: string
  readonly content: Uint8Array
}

/** A message the hub's SMTP server accepted. */
export interface ReceivedMail {
  /** Envelope MAIL FROM (empty string for the null sender). */
  readonly from: string
  /** Envelope RCPT TO, in order. */
  readonly to: readonly string[]
  /** The user the client logged in as (the hub accepts any password), null without AUTH. */
  readonly authUser: string | null
  /** The DATA bytes exactly as received. */
  readonly raw: Uint8Array
  readonly subject: string | null
  readonly attachments: readonly ReceivedAttachment[]
}

/** One message file of a user's Maildir, in delivery order. */
export interface StoredMessage {
  /** The Maildir base name (without the `:2,` flags). */
  readonly file: string
  readonly subject: string | null
  /** Still in new/ (dovecot moves a message to cur/ when a read-write SELECT first sees it). */
  readonly isNew: boolean
  /** The Maildir flag letters after `:2,` (S seen, F flagged, R answered, T trashed, D draft). */
  readonly flags: string
  readonly seen: boolean
}

export interface MailHub {
  readonly imap: { readonly host: '127.0.0.1'; readonly port: number }
  readonly smtp: { readonly host: '127.0.0.1'; readonly port: number }
  readonly dir: string
  password(user: string): string
  imapSettings(user: string, folder?: string): ImapSettings
  /** Settings of a plain SMTP relay (`security: 'none'`) that accepts any login, or none. */
  smtpSettings(from: string): SmtpSettings
  /** Every message the SMTP server accepted, in order (rejected ones are not here). */
  readonly sent: ReceivedMail[]
  waitForSent(predicate: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>
  /** Drops a raw RFC 822 message into the user's Maildir/new/, as a new unseen message (hostile mail included). */
  deliver(user: string, raw: Uint8Array | string): Promise<void>
  /** The user's messages as dovecot left them in the Maildir, in delivery order. */
  messages(user: string): Promise<StoredMessage[]>
  /** The next `n` messages are refused at the end of DATA with `code` (e.g. 451 temporary, 550 permanent). */
  failNext(n: number, code: number, text?: string): void
  /** Dovecot's log so far (its log process writes it a moment after the fact). */
  log(): string
  stop(): Promise<void>
}

interface Account {
  readonly user: string
  readonly password: string
  readonly maildir: string
  /** Base name → subject of each file the hub delivered. */
  readonly delivered: Map<string, string | null>
}

/** Who dovecot runs as. As root its login and mail processes must not be root: they run as nobody. */
interface RunAs {
  readonly user: string
  readonly group: string
  readonly uid: number
  readonly gid: number
  readonly isRoot: boolean
}

export async function startMailHub(opts: { readonly users: readonly string[] }): Promise<MailHub> {
  if (!existsSync(DOVECOT)) throw new Error(`${DOVECOT} is missing: apt-get install dovecot-imapd (scripts/test.sh does)`)
  // Not server.ts's tempDir: importing it would load the whole app into mail tests that need none of it.
  const dir = mkdtempSync(join(tmpdir(), 'timbre-mail-'))
  try {
    return await startIn(dir, opts.users)
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
}

async function startIn(dir: string, users: readonly string[]): Promise<MailHub> {
  const runAs = whoRunsDovecot()
  const accounts = new Map<string, Account>(users.map((u) => [u.toLowerCase(), makeAccount(dir, u, runAs)]))
  writeFileSync(join(dir, 'passwd'), [...accounts.values()].map((a) => `${a.user}:{PLAIN}${a.password}\n`).join(''), { mode: 0o644 })
  for (const sub of ['run', 'state']) mkdirSync(join(dir, sub))
  // mkdtemp makes the dir 0700: dovecot's auth and mail processes (nobody, when root) must reach passwd and the homes.
  if (runAs.isRoot) chmodSync(dir, 0o711)

  const dovecot = await startDovecot(dir, runAs)
  const smtp = await startSmtp(accounts, runAs).catch(async (err: unknown) => {
    await dovecot.stop()
    throw err
  })
  const account = (user: string): Account => {
    const a = accounts.get(user.toLowerCase())
    if (!a) throw new Error(`${user} is not a user of this mail hub`)
    return a
  }
  let stopped = false
  return {
    imap: { host: '127.0.0.1', port: dovecot.port },
    smtp: { host: '127.0.0.1', port: smtp.port },
    dir,
    password: (user) => account(user).password,
    imapSettings: (user, folder = 'INBOX') => ({
      host: '127.0.0.1', port: dovecot.port, tls: false, user: account(user).user, password: account(user).password, folder,
    }),
    smtpSettings: (from) => ({ host: '127.0.0.1', port: smtp.port, security: 'none', user: null, password: null, from }),
    sent: smtp.sent,
    waitForSent: smtp.waitForSent,
    deliver: async (user, raw) => {
      const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw
      dropIntoMaildir(account(user), bytes, await subjectOf(bytes), runAs)
    },
    messages: async (user) => listMaildir(account(user)),
    failNext: smtp.failNext,
    log: () => readLog(join(dir, 'dovecot.log')),
    async stop() {
      if (stopped) return
      stopped = true
      await smtp.stop()
      await dovecot.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function makeAccount(dir: string, user: string, runAs: RunAs): Account {
  const home = join(dir, 'home', user.toLowerCase())
  const maildir = join(home, 'Maildir')
  for (const sub of ['tmp', 'new', 'cur']) mkdirSync(join(maildir, sub), { recursive: true })
  if (runAs.isRoot) for (const d of [home, maildir, ...['tmp', 'new', 'cur'].map((s) => join(maildir, s))]) chownSync(d, runAs.uid, runAs.gid)
  return { user: user.toLowerCase(), password: randomBytes(12).toString('hex'), maildir, delivered: new Map() }
}

function whoRunsDovecot(): RunAs {
  const uid = process.getuid?.() ?? 0
  // By /etc/passwd, not os.userInfo(): under Bun that reads $USER, which a CI job may not set.
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n').map((l) => l.split(':'))
  const entry = uid === 0 ? passwd.find((f) => f[0] === 'nobody') : passwd.find((f) => Number(f[2]) === uid)
  if (!entry?.[0]) {
    throw new Error(uid === 0
      ? 'dovecot refuses to run its processes as root, and there is no user nobody to run them as'
      : `uid ${uid} has no name in /etc/passwd: dovecot needs one (default_internal_user)`)
  }
  const gid = Number(entry[3])
  return { user: entry[0], group: groupName(gid), uid: Number(entry[2]), gid, isRoot: uid === 0 }
}

function groupName(gid: number): string {
  const line = readFileSync('/etc/group', 'utf8').split('\n').map((l) => l.split(':')).find((f) => Number(f[2]) === gid)
  if (!line?.[0]) throw new Error(`no name for group ${gid} in /etc/group: dovecot needs one (default_internal_group)`)
  return line[0]
}

function dovecotConf(dir: string, port: number, runAs: RunAs): string {
  // Every line is one dovecot would otherwise refuse to start (or to log in) without in a temp dir; see stack-notes.
  return `# Written by test/support/mail.ts for one test run.
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
instance_name = timbre-test-${port}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# A wrong password is answered at once (default: 2 s later); with no auth penalty (anvil-auth-penalty below) 127.0.0.1
# earns no growing delay (up to 15 s) either: a wrong-password test would slow every login that follows it.
auth_failure_delay = 0
default_internal_user = ${runAs.user}
default_internal_group = ${runAs.group}
default_login_user = ${runAs.user}
first_valid_uid = 1
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%Lu ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${runAs.uid} gid=${runAs.gid} home=${dir}/home/%Lu
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
`
}

interface Running {
  readonly port: number
  stop(): Promise<void>
}

async function startDovecot(dir: string, runAs: RunAs): Promise<Running> {
  // Dovecot takes no port 0: a free port is picked by binding one, and a lost race (another process took it in between)
  // is one more try.
  let lastError: unknown = null
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    writeFileSync(join(dir, 'dovecot.conf'), dovecotConf(dir, port, runAs))
    try {
      return await launchDovecot(dir, port)
    } catch (err) {
      lastError = err
      if (!/Address already in use/.test(tail(join(dir, 'dovecot.log')))) break
    }
  }
  throw lastError
}

async function launchDovecot(dir: string, port: number): Promise<Running> {
  // Errors before log_path is open (a bad setting) go to stderr: into the same log.
  const out = openSync(join(dir, 'dovecot.log'), 'a')
  const child = spawn(DOVECOT, ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: ['ignore', out, out] })
  closeSync(out)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  // A test file that dies before its afterAll still takes its dovecot along.
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  const stop = async () => {
    process.off('exit', killOnExit)
    await terminate(child, exited)
  }
  try {
    await waitForGreeting(port, child, exited, 10_000)
  } catch (err) {
    await stop()
    throw new Error(`dovecot did not start: ${(err as Error).message}\n${tail(join(dir, 'dovecot.log'))}`)
  }
  return { port, stop }
}

async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGKILL')
  await exited
}

/** Resolves once the port answers with an IMAP greeting; rejects when dovecot exits or the time runs out. */
async function waitForGreeting(port: number, child: ChildProcess, exited: Promise<void>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let hasExited = false
  void exited.then(() => { hasExited = true })
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    if (hasExited) throw new Error(`it exited (code ${child.exitCode}, signal ${child.signalCode})`)
    if (await greets(port)) return
    if (Date.now() > deadline) throw new Error(`no IMAP greeting on 127.0.0.1:${port} after ${timeoutMs} ms`)
    await Bun.sleep(wait)
  }
}

function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    let data = ''
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.on('error', () => done(false))
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1')
      if (data.includes('\n')) done(data.startsWith('* OK'))
    })
    socket.on('end', () => done(false))
  })
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

interface SmtpSide extends Running {
  readonly sent: ReceivedMail[]
  waitForSent(predicate: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>
  failNext(n: number, code: number, text?: string): void
}

async function startSmtp(accounts: Map<string, Account>, runAs: RunAs): Promise<SmtpSide> {
  const sent: ReceivedMail[] = []
  const waiters = new Set<() => void>()
  let failures: { left: number; code: number; text: string } = { left: 0, code: 250, text: '' }

  async function accept(raw: Buffer, session: SMTPServerSession): Promise<void> {
    const parsed = await simpleParser(raw)
    const mail: ReceivedMail = {
      from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      to: session.envelope.rcptTo.map((r) => r.address),
      authUser: typeof session.user === 'string' ? session.user : null,
      raw: new Uint8Array(raw),
      subject: parsed.subject ?? null,
      attachments: parsed.attachments.map((a) => ({ fileName: a.filename ?? null, contentType: a.contentType, content: new Uint8Array(a.content) })),
    }
    for (const rcpt of mail.to) {
      const account = accounts.get(rcpt.toLowerCase())
      if (account) dropIntoMaildir(account, raw, mail.subject, runAs)
    }
    sent.push(mail)
    for (const wake of waiters) wake()
  }

  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (failures.left > 0) {
          failures.left--
          callback(Object.assign(new Error(failures.text), { responseCode: failures.code }))
          return
        }
        accept(Buffer.concat(chunks), session).then(() => callback(), (err: Error) => callback(err))
      })
    },
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.server.address()
      resolve(typeof address === 'object' && address ? address.port : 0)
    })
  })

  return {
    port,
    sent,
    waitForSent(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = sent.find(predicate)
          if (!found) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve(found)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`no matching message reached the mail hub in ${timeoutMs} ms (${sent.length} received)`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
    failNext(n, code, text = code >= 500 ? 'Rechazado por la prueba' : 'Intente más tarde (prueba)') {
      failures = { left: n, code, text }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

let fileSeq = 0

/** Maildir delivery: write under tmp/, then rename into new/ so dovecot never sees half a file. */
function dropIntoMaildir(account: Account, raw: Uint8Array, subject: string | null, runAs: RunAs): void {
  // Zero-padded sequence after the seconds: the base names sort in delivery order.
  const base = `${Math.floor(Date.now() / 1000)}.M${String(++fileSeq).padStart(6, '0')}P${process.pid}.timbre-hub`
  const tmp = join(account.maildir, 'tmp', base)
  writeFileSync(tmp, raw, { mode: 0o644 })
  if (runAs.isRoot) chownSync(tmp, runAs.uid, runAs.gid)
  renameSync(tmp, join(account.maildir, 'new', base))
  account.delivered.set(base, subject)
}

function listMaildir(account: Account): StoredMessage[] {
  // new/ before cur/: a file dovecot moves in between is then found in cur/ rather than missed.
  const inNew = readdirSync(join(account.maildir, 'new'))
  const inCur = readdirSync(join(account.maildir, 'cur'))
  const entries = [
    ...inNew.map((name) => ({ name, isNew: true })),
    ...inCur.map((name) => ({ name, isNew: false })),
  ].map(({ name, isNew }) => {
    const [file = name, flags = ''] = name.split(':2,')
    return { file, subject: account.delivered.get(file) ?? null, isNew, flags, seen: flags.includes('S') }
  })
  const byFile = new Map(entries.map((e) => [e.file, e]))
  return [...byFile.values()].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
}

async function subjectOf(raw: Uint8Array): Promise<string | null> {
  try {
    return (await simpleParser(Buffer.from(raw))).subject ?? null
  } catch {
    return null
  }
}

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

function tail(path: string, lines = 30): string {
  return readLog(path).trimEnd().split('\n').slice(-lines).join('\n')
}

/** A TCP server that accepts connections and never says a word: the server that would hang a client without deadlines. */
export async function startSilentServer(): Promise<{ readonly port: number; stop(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const address = server.address()
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    stop: () => {
      for (const s of sockets) s.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
