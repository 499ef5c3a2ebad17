// Every setting of DESIGN §2, declared once: environment variable, flag, default, parser. The only reader of process.env.
import { isIP } from 'node:net'
import { posix, win32 } from 'node:path'
import { OperatorError } from './errors'
import { isInsideCompiledBinary } from './worker-entry'

export type SiiTarget = { kind: 'sii' } | { kind: 'simulado' } | { kind: 'origin'; origin: string }
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface Config {
  readonly host: string
  readonly port: number
  readonly dataDir: string
  readonly sii: SiiTarget
  readonly submitEveryMs: number
  readonly trackEveryMs: number
  readonly deliverEveryMs: number
  /** The `intercambio` job: mailboxes read, mail sent, received documents followed at the SII (DESIGN §13). */
  readonly inboxEveryMs: number
  /** The `folios` job: CAF requests and annulments at the SII's folio pages, and automatic mode (DESIGN §17). */
  readonly foliosEveryMs: number
  /** Each HTTP request to the SII gives up after this long (DESIGN §6: 30 s); only shorter, for tests and soaks. */
  readonly siiTimeoutMs: number
  /**
   * Upload retries and status queries wait `firstMs` doubling to `capMs` instead of DESIGN §6's 30 s to 30 min, for
   * soaks against a simulator that fails on purpose; null: DESIGN §6's pace (the simulator's own for `--sii simulado`).
   */
  readonly siiBackoff: SiiBackoffSetting | null
  /** An RCV section and type with more documents than this is read through the SII's deferred download (DESIGN §16). */
  readonly rcvDiferidaDesde: number
  /** How long a sync waits for a deferred download to finish before it fails (descarga_diferida_sin_terminar). */
  readonly rcvDiferidaEsperaMs: number
  readonly webhookAllowHttp: boolean
  /** Also refuse webhook receivers in private ranges (DESIGN §7): for hosting many companies on one instance. */
  readonly webhookDenyPrivate: boolean
  /** Base64 32-byte key from TIMBRE_MASTER_KEY; null means the key file in the data dir. */
  readonly masterKey: string | null
  /** External token issuers (TIMBRE_JWT_PUBLIC_KEYS): a PEM public key each, with the iss and aud its tokens carry. */
  readonly jwtPublicKeys: readonly JwtPublicKeySetting[]
  readonly cafLowStock: number
  readonly log: LogLevel
  readonly rateLimit: number
  readonly corsOrigins: readonly string[]
  /** Proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client, for the failed-authentication limit. */
  readonly trustProxy: readonly string[]
  readonly tlsCert: string | null
  readonly tlsKey: string | null
  readonly demo: boolean
  /** Workers of the task pool (issue 17); null = one per core. */
  readonly workers: number | null
  /**
   * Fault injection for the crash tests only (TIMBRE_FAULT_GROUP_COMMIT=before:N or after:N): the process kills itself
   * with SIGKILL when a group of at least N issuances is about to commit, or has just committed and is not answered yet.
   */
  readonly faultGroupCommit: GroupCommitFault | null
  // Scheduled, verified backups (DESIGN §18, issue 26; docs/decisions/backups.md). No target: no backup job.
  /** A folder on another disk, a USB drive or a NAS share; null: no folder target. */
  readonly backupDir: string | null
  /** S3-compatible endpoint (`https://s3.us-east-1.amazonaws.com`, a MinIO); null: no S3 target. */
  readonly backupS3Url: string | null
  readonly backupS3Bucket: string | null
  readonly backupS3AccessKey: string | null
  readonly backupS3SecretKey: string | null
  /** Region signed into each request; null: Bun's default (us-east-1), which MinIO and most others accept. */
  readonly backupS3Region: string | null
  /** Key prefix inside the bucket (`timbre/empresa-x/`), so one bucket can hold several instances; '' for none. */
  readonly backupS3Prefix: string
  /** The S3 copies carry master.key and jwt-private.pem only when true (docs/decisions/backups.md "Keys"). */
  readonly backupS3Keys: boolean
  readonly backupEveryMs: number
  readonly backupKeep: BackupKeep
}

/** TIMBRE_BACKUP_KEEP: the newest verified copy of each of the last `days` calendar days and `months` months (Santiago). */
export interface BackupKeep {
  readonly days: number
  readonly months: number
}

export interface JwtPublicKeySetting {
  readonly path: string
  /** The `iss` every token this key signs must carry; null (a bare path, as before issue 18): not checked. */
  readonly iss: string | null
  /** The `aud` every token this key signs must name; null: not checked. */
  readonly aud: string | null
}

export interface SiiBackoffSetting {
  readonly firstMs: number
  readonly capMs: number
}

export interface GroupCommitFault {
  readonly phase: 'before' | 'after'
  readonly minGroup: number
}

export class ConfigError extends OperatorError {}

export const SIMULADO_SUBMIT_EVERY_MS = 1000
export const SIMULADO_TRACK_EVERY_MS = 2000
export const SIMULADO_INBOX_EVERY_MS = 2000

interface Setting<K extends keyof Config> {
  readonly env?: string
  readonly flag?: string
  /** Flags without a value (`--demo`). */
  readonly isSwitch?: boolean
  readonly default: string
  readonly parse: (raw: string, name: string) => Config[K]
  readonly help: string
}

type Settings = { readonly [K in keyof Config]: Setting<K> }

function fail(name: string, why: string): never {
  throw new ConfigError(`${name}: ${why}`)
}

export function parseDuration(raw: string, name: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(raw.trim())
  if (!m) fail(name, `duración inválida "${raw}" (use 500ms, 5s, 2m, 1h)`)
  const n = Number(m[1])
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
  if (n * unit <= 0) fail(name, 'debe ser mayor que cero')
  return n * unit
}

/** DESIGN §6: every SII call times out after 30 s. The setting may shorten that (a soak's hangs), never lengthen it. */
export const SII_TIMEOUT_MAX_MS = 30_000

function parseSiiTimeout(raw: string, name: string): number {
  const ms = parseDuration(raw, name)
  if (ms > SII_TIMEOUT_MAX_MS) fail(name, `no puede superar ${SII_TIMEOUT_MAX_MS / 1000}s (DESIGN §6)`)
  return ms
}

/** `1s:30s`: the first wait and the longest one; empty for DESIGN §6's pace. */
export function parseSiiBackoff(raw: string, name: string): SiiBackoffSetting | null {
  if (raw.trim() === '') return null
  const parts = raw.split(':')
  if (parts.length !== 2) fail(name, `se espera PRIMERA:MÁXIMA, por ejemplo 1s:30s, se recibió "${raw}"`)
  const firstMs = parseDuration(parts[0]!, name)
  const capMs = parseDuration(parts[1]!, name)
  if (capMs < firstMs) fail(name, 'la espera máxima no puede ser menor que la primera')
  return { firstMs, capMs }
}

function parseIntInRange(min: number, max: number) {
  return (raw: string, name: string): number => {
    if (!/^\d+$/.test(raw.trim())) fail(name, `se espera un entero, se recibió "${raw}"`)
    const n = Number(raw)
    if (n < min || n > max) fail(name, `debe estar entre ${min} y ${max}`)
    return n
  }
}

function parseBool(raw: string, name: string): boolean {
  const v = raw.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on', ''].includes(v)) return true
  if (['0', 'false', 'no', 'off'].includes(v)) return false
  return fail(name, `se espera true o false, se recibió "${raw}"`)
}

export function parseSiiTarget(raw: string, name: string): SiiTarget {
  if (raw === 'sii') return { kind: 'sii' }
  if (raw === 'simulado') return { kind: 'simulado' }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return fail(name, `se espera sii, simulado o un origen http(s)://host:puerto, se recibió "${raw}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, 'el origen debe ser http:// o https://')
  return { kind: 'origin', origin: url.origin }
}

const list = (raw: string): string[] => raw.split(',').map((s) => s.trim()).filter((s) => s !== '')
const optional = (raw: string): string | null => (raw === '' ? null : raw)

/** Addresses (`10.0.0.5`, `::1`) or CIDR ranges (`10.0.0.0/8`, `fd00::/8`), comma separated. */
function parseAddressList(raw: string, name: string): string[] {
  return list(raw).map((entry) => {
    const [address, prefix, extra] = entry.split('/')
    const family = isIP(address!)
    const max = family === 4 ? 32 : 128
    if (family === 0 || extra !== undefined || (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max)))
      fail(name, `se espera una dirección IP o un rango CIDR (10.0.0.0/8), se recibió "${entry}"`)
    return entry
  })
}

/**
 * `path` or `path#iss=https://idp.example&aud=timbre`, comma separated. What follows `#` is read like a URL query, so
 * a `,`, `&` or `+` inside a value is written percent-encoded (`%2C`, `%26`, `%2B`); a bare path stays valid as it was.
 */
function parseJwtPublicKeys(raw: string, name: string): JwtPublicKeySetting[] {
  return list(raw).map((entry) => {
    const hash = entry.indexOf('#')
    if (hash < 0) return { path: entry, iss: null, aud: null }
    const path = entry.slice(0, hash).trim()
    const options = new URLSearchParams(entry.slice(hash + 1))
    const value = (key: 'iss' | 'aud'): string | null => {
      const all = options.getAll(key)
      if (all.length > 1) fail(name, `${key} repetido en "${entry}"`)
      if (all[0] === '') fail(name, `${key} vacío en "${entry}"`)
      return all[0] ?? null
    }
    for (const key of options.keys()) if (key !== 'iss' && key !== 'aud') fail(name, `opción desconocida "${key}" en "${entry}" (se esperan iss y aud)`)
    if (path === '') fail(name, `falta la ruta de la llave en "${entry}"`)
    return { path, iss: value('iss'), aud: value('aud') }
  })
}

/**
 * What the default data dir depends on (issue 26, DESIGN §18). A parameter, not globals, so each platform's answer is
 * unit-tested on Linux.
 */
export interface HostFacts {
  readonly platform: NodeJS.Platform
  readonly cwd: string
  readonly execPath: string
  /** Running as the executable `bun build --compile` made (not `bun src/main.ts`). */
  readonly isCompiled: boolean
  readonly env: Readonly<Record<string, string | undefined>>
}

export function hostFacts(env: Readonly<Record<string, string | undefined>> = process.env): HostFacts {
  return { platform: process.platform, cwd: process.cwd(), execPath: process.execPath, isCompiled: isInsideCompiledBinary(), env }
}

const pathsOf = (facts: HostFacts) => (facts.platform === 'win32' ? win32 : posix)

/**
 * Windows: `data` beside the executable, since a scheduled task or a service starts in C:\Windows\System32 and a
 * double-click in the download folder; but an executable under Program Files (installed) may not write beside itself,
 * so there `%ProgramData%\Timbre`. Elsewhere, and from source: `./data` of the folder Timbre starts in, as always.
 */
export function defaultDataDir(facts: HostFacts): string {
  const p = pathsOf(facts)
  if (facts.platform !== 'win32' || !facts.isCompiled) return p.resolve(facts.cwd, 'data')
  const exeDir = p.dirname(facts.execPath)
  const programFiles = [facts.env.ProgramFiles, facts.env['ProgramFiles(x86)'], facts.env.ProgramW6432].filter((d): d is string => !!d)
  const lower = (d: string) => p.resolve(d).toLowerCase() + p.sep
  if (programFiles.some((d) => lower(exeDir).startsWith(lower(d)))) return p.join(facts.env.ProgramData || 'C:\\ProgramData', 'Timbre')
  return p.join(exeDir, 'data')
}

/**
 * Every path the operator gives (data dir, `--out`, `--from`) becomes absolute once, here: logs and errors then name
 * the real place, and under Wine (the Windows smoke test) Bun's writeFileSync on a relative path fails with ENOENT
 * (docs/decisions/platforms.md). Empty means the platform's default data dir.
 */
export function absolutePath(raw: string, facts: HostFacts = hostFacts()): string {
  return raw === '' ? defaultDataDir(facts) : pathsOf(facts).resolve(facts.cwd, raw)
}

/** `7d,12m`: days and months, each at most once, in any order; a missing one is 0 (only the newest copy then). */
export function parseBackupKeep(raw: string, name: string): BackupKeep {
  const keep = { days: 0, months: 0 }
  const seen = new Set<string>()
  for (const part of list(raw)) {
    const m = /^(\d{1,4})([dm])$/.exec(part)
    if (!m || seen.has(m[2]!)) fail(name, `se espera algo como 7d,12m (días y meses, cada uno una vez), se recibió "${raw}"`)
    seen.add(m[2]!)
    if (m[2] === 'd') keep.days = Number(m[1])
    else keep.months = Number(m[1])
  }
  if (seen.size === 0) fail(name, `se espera algo como 7d,12m, se recibió "${raw}"`)
  return keep
}

function parseHttpUrl(raw: string, name: string): string | null {
  if (raw.trim() === '') return null
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    return fail(name, `se espera una URL http(s)://, se recibió "${raw}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, 'la URL debe ser http:// o https://')
  return url.href.replace(/\/$/, '')
}

/** A prefix ends in `/` (or is empty), never starts with one: keys read `prefix/timbre-….tar.gz`. */
function parseS3Prefix(raw: string, name: string): string {
  const trimmed = raw.trim().replace(/^\/+/, '')
  if (/[\\]|\.\.|\/\//.test(trimmed)) fail(name, `prefijo inválido "${raw}"`)
  return trimmed === '' || trimmed.endsWith('/') ? trimmed : `${trimmed}/`
}

export const SETTINGS: Settings = {
  host: { env: 'TIMBRE_HOST', flag: '--host', default: '127.0.0.1', parse: (r) => r, help: 'dirección de escucha (0.0.0.0 para la LAN)' },
  port: { env: 'TIMBRE_PORT', flag: '--port', default: '8080', parse: parseIntInRange(0, 65535), help: 'puerto HTTP (0 = uno libre)' },
  dataDir: {
    env: 'TIMBRE_DATA_DIR',
    flag: '--data-dir',
    // Shown in --help as the absolute path it stands for on this machine (issue 26).
    default: defaultDataDir(hostFacts()),
    parse: (raw) => absolutePath(raw),
    help: 'base de datos, llaves de la instancia, respaldos (en Windows, data junto al ejecutable o %ProgramData%\\Timbre)',
  },
  sii: { env: 'TIMBRE_SII', flag: '--sii', default: 'sii', parse: parseSiiTarget, help: 'sii | simulado | http(s)://host:puerto' },
  submitEveryMs: { env: 'TIMBRE_SUBMIT_EVERY', flag: '--submit-every', default: '5s', parse: parseDuration, help: 'periodo del envío al SII' },
  trackEveryMs: { env: 'TIMBRE_TRACK_EVERY', flag: '--track-every', default: '30s', parse: parseDuration, help: 'periodo del seguimiento en el SII' },
  deliverEveryMs: { env: 'TIMBRE_DELIVER_EVERY', flag: '--deliver-every', default: '2s', parse: parseDuration, help: 'periodo de entrega de webhooks' },
  inboxEveryMs: { env: 'TIMBRE_INBOX_EVERY', flag: '--inbox-every', default: '60s', parse: parseDuration, help: 'periodo del intercambio: lectura de buzones y envío de correos' },
  foliosEveryMs: { env: 'TIMBRE_FOLIOS_EVERY', flag: '--folios-every', default: '5s', parse: parseDuration, help: 'periodo de las solicitudes y anulaciones de folios en el SII y del modo automático' },
  siiTimeoutMs: {
    env: 'TIMBRE_SII_TIMEOUT',
    flag: '--sii-timeout',
    default: '30s',
    parse: parseSiiTimeout,
    help: 'tiempo máximo de cada llamada al SII, hasta 30s (más corto solo para pruebas)',
  },
  siiBackoff: {
    env: 'TIMBRE_SII_BACKOFF',
    flag: '--sii-backoff',
    default: '',
    parse: parseSiiBackoff,
    help: 'solo pruebas: esperas entre reintentos y consultas al SII, PRIMERA:MÁXIMA (1s:30s); vacío: 30s a 30m',
  },
  rcvDiferidaDesde: {
    env: 'TIMBRE_RCV_DIFERIDA_DESDE',
    flag: '--rcv-diferida-desde',
    default: '1000',
    parse: parseIntInRange(1, 1_000_000),
    help: 'documentos de una sección y tipo del RCV desde los que se usa la descarga diferida del SII',
  },
  rcvDiferidaEsperaMs: {
    env: 'TIMBRE_RCV_DIFERIDA_ESPERA',
    flag: '--rcv-diferida-espera',
    default: '10m',
    parse: parseDuration,
    help: 'cuánto espera una lectura del RCV a que termine una descarga diferida del SII',
  },
  webhookAllowHttp: {
    env: 'TIMBRE_WEBHOOK_ALLOW_HTTP',
    flag: '--webhook-allow-http',
    isSwitch: true,
    default: 'false',
    parse: parseBool,
    help: 'acepta URLs http:// en webhooks (solo desarrollo)',
  },
  webhookDenyPrivate: {
    env: 'TIMBRE_WEBHOOK_DENY_PRIVATE',
    default: 'false',
    parse: parseBool,
    help: 'rechaza también receptores de webhooks en rangos privados (10/8, 172.16/12, 192.168/16, fc00::/7)',
  },
  masterKey: { env: 'TIMBRE_MASTER_KEY', default: '', parse: optional, help: 'llave maestra de 32 bytes en base64' },
  jwtPublicKeys: {
    env: 'TIMBRE_JWT_PUBLIC_KEYS',
    default: '',
    parse: parseJwtPublicKeys,
    help: 'llaves públicas PEM de emisores de tokens: ruta o ruta#iss=EMISOR&aud=AUDIENCIA, separadas por coma',
  },
  cafLowStock: { env: 'TIMBRE_CAF_LOW_STOCK', default: '10', parse: parseIntInRange(0, 1_000_000), help: 'umbral de caf.low_stock' },
  log: {
    env: 'TIMBRE_LOG',
    flag: '--log',
    default: 'info',
    parse: (r, name) => (['debug', 'info', 'warn', 'error'].includes(r) ? (r as LogLevel) : fail(name, 'debug | info | warn | error')),
    help: 'nivel de log (líneas JSON en stdout)',
  },
  rateLimit: { env: 'TIMBRE_RATE_LIMIT', flag: '--rate-limit', default: '100', parse: parseIntInRange(0, 1_000_000), help: 'solicitudes por segundo por credencial (0 = sin límite)' },
  workers: {
    env: 'TIMBRE_WORKERS',
    flag: '--workers',
    default: '0',
    parse: (raw, name) => {
      const n = parseIntInRange(0, 64)(raw, name)
      return n === 0 ? null : n
    },
    help: 'hilos para firmar, armar sobres y PDFs (0 = uno por núcleo)',
  },
  faultGroupCommit: {
    env: 'TIMBRE_FAULT_GROUP_COMMIT',
    default: '',
    parse: (raw, name) => {
      if (raw === '') return null
      const m = /^(before|after):(\d+)$/.exec(raw)
      if (!m) fail(name, `se espera before:N o after:N (solo para pruebas de caídas), se recibió "${raw}"`)
      return { phase: m[1] as 'before' | 'after', minGroup: Number(m[2]) }
    },
    help: 'solo pruebas: el proceso se mata con SIGKILL en un commit agrupado (before:N | after:N)',
  },
  corsOrigins: { env: 'TIMBRE_CORS_ORIGINS', default: '', parse: list, help: 'orígenes CORS permitidos, separados por coma' },
  trustProxy: { env: 'TIMBRE_TRUST_PROXY', default: '', parse: parseAddressList, help: 'proxies (IP o rango CIDR, separados por coma) cuyo X-Forwarded-For nombra al cliente' },
  tlsCert: { env: 'TIMBRE_TLS_CERT', flag: '--tls-cert', default: '', parse: optional, help: 'certificado PEM para servir HTTPS' },
  tlsKey: { env: 'TIMBRE_TLS_KEY', flag: '--tls-key', default: '', parse: optional, help: 'llave PEM para servir HTTPS' },
  demo: { flag: '--demo', isSwitch: true, default: 'false', parse: parseBool, help: 'crea la empresa demo en un directorio de datos vacío' },
  backupDir: { env: 'TIMBRE_BACKUP_DIR', flag: '--backup-dir', default: '', parse: (raw) => (raw === '' ? null : absolutePath(raw)), help: 'carpeta de respaldos automáticos (otro disco, USB, NAS)' },
  backupS3Url: { env: 'TIMBRE_BACKUP_S3_URL', flag: '--backup-s3-url', default: '', parse: parseHttpUrl, help: 'respaldos automáticos en S3: URL del servicio compatible con S3' },
  backupS3Bucket: { env: 'TIMBRE_BACKUP_S3_BUCKET', flag: '--backup-s3-bucket', default: '', parse: optional, help: 'respaldos en S3: bucket' },
  // Credentials from the environment only: a flag would show them to every user of the machine in `ps`.
  backupS3AccessKey: { env: 'TIMBRE_BACKUP_S3_ACCESS_KEY', default: '', parse: optional, help: 'respaldos en S3: access key' },
  backupS3SecretKey: { env: 'TIMBRE_BACKUP_S3_SECRET_KEY', default: '', parse: optional, help: 'respaldos en S3: secret key' },
  backupS3Region: { env: 'TIMBRE_BACKUP_S3_REGION', default: '', parse: optional, help: 'respaldos en S3: región (por defecto us-east-1)' },
  backupS3Prefix: { env: 'TIMBRE_BACKUP_S3_PREFIX', flag: '--backup-s3-prefix', default: '', parse: parseS3Prefix, help: 'respaldos en S3: prefijo de las claves dentro del bucket' },
  backupS3Keys: {
    env: 'TIMBRE_BACKUP_S3_KEYS',
    default: 'false',
    parse: parseBool,
    help: 'incluye master.key y jwt-private.pem en las copias en S3 (por defecto no: guarde la llave maestra aparte)',
  },
  backupEveryMs: { env: 'TIMBRE_BACKUP_EVERY', flag: '--backup-every', default: '24h', parse: parseDuration, help: 'periodo de los respaldos automáticos (solo con una carpeta o S3)' },
  backupKeep: { env: 'TIMBRE_BACKUP_KEEP', flag: '--backup-keep', default: '7d,12m', parse: parseBackupKeep, help: 'copias verificadas que se guardan: una por día y una por mes (7d,12m)' },
}

/** Which flags take a value, for argv parsing. */
export function settingFlags(): Map<string, { key: keyof Config; isSwitch: boolean }> {
  const flags = new Map<string, { key: keyof Config; isSwitch: boolean }>()
  for (const [key, s] of Object.entries(SETTINGS) as Array<[keyof Config, Setting<keyof Config>]>)
    if (s.flag) flags.set(s.flag, { key, isSwitch: s.isSwitch === true })
  return flags
}

/** Flag wins over environment, environment over default (DESIGN §2). */
export function loadConfig(flags: Readonly<Record<string, string>>, env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const out: Record<string, unknown> = {}
  for (const [key, s] of Object.entries(SETTINGS) as Array<[keyof Config, Setting<keyof Config>]>) {
    const fromFlag = s.flag ? flags[s.flag] : undefined
    const fromEnv = s.env ? env[s.env] : undefined
    const name = fromFlag !== undefined ? s.flag! : fromEnv !== undefined ? s.env! : (s.flag ?? s.env ?? key)
    out[key] = s.parse(fromFlag ?? fromEnv ?? s.default, name)
  }
  // The simulator answers in about a second: unless told otherwise, look at it that often too, so the demo's invoice
  // reaches its final state within seconds (DESIGN §10). The real SII keeps DESIGN §2's 5 s and 30 s.
  const isSet = (key: keyof Config) => (SETTINGS[key].flag !== undefined && flags[SETTINGS[key].flag!] !== undefined) || (SETTINGS[key].env !== undefined && env[SETTINGS[key].env!] !== undefined)
  if ((out.sii as SiiTarget).kind === 'simulado') {
    if (!isSet('submitEveryMs')) out.submitEveryMs = SIMULADO_SUBMIT_EVERY_MS
    if (!isSet('trackEveryMs')) out.trackEveryMs = SIMULADO_TRACK_EVERY_MS
    if (!isSet('inboxEveryMs')) out.inboxEveryMs = SIMULADO_INBOX_EVERY_MS
  }
  const config = out as unknown as Config
  if ((config.tlsCert === null) !== (config.tlsKey === null)) throw new ConfigError('--tls-cert y --tls-key van juntos')
  checkBackupS3(config)
  return Object.freeze(config)
}

const BACKUP_KEYS = [
  'backupDir', 'backupS3Url', 'backupS3Bucket', 'backupS3AccessKey', 'backupS3SecretKey', 'backupS3Region', 'backupS3Prefix', 'backupS3Keys', 'backupEveryMs', 'backupKeep',
] as const satisfies ReadonlyArray<keyof Config>
export type BackupConfig = Pick<Config, (typeof BACKUP_KEYS)[number]>

/** An S3 target is all four pieces or none: a half-configured one is refused at start, naming what is missing. */
function checkBackupS3(config: BackupConfig): void {
  const pieces = { TIMBRE_BACKUP_S3_URL: config.backupS3Url, TIMBRE_BACKUP_S3_BUCKET: config.backupS3Bucket, TIMBRE_BACKUP_S3_ACCESS_KEY: config.backupS3AccessKey, TIMBRE_BACKUP_S3_SECRET_KEY: config.backupS3SecretKey }
  const missing = Object.entries(pieces).filter(([, v]) => v === null).map(([k]) => k)
  if (missing.length > 0 && missing.length < 4) throw new ConfigError(`${missing.join(', ')}: falta para el respaldo en S3 (se necesitan URL, bucket, access key y secret key)`)
}

/**
 * The backup settings alone, for `timbre backup run|list` and `restore --from s3://` (same env as serve, same checks).
 * `fallback` fills variables the environment lacks: `restore --from s3://bucket/key` names its bucket itself.
 */
export function backupConfigFrom(
  flags: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>> = process.env,
  fallback: Readonly<Record<string, string>> = {},
): BackupConfig {
  const out: Record<string, unknown> = {}
  for (const key of BACKUP_KEYS) {
    const s = SETTINGS[key] as Setting<keyof Config>
    const fromFlag = s.flag ? flags[s.flag] : undefined
    const fromEnv = s.env ? (env[s.env] ?? fallback[s.env]) : undefined
    out[key] = s.parse(fromFlag ?? fromEnv ?? s.default, fromFlag !== undefined ? s.flag! : (s.env ?? key))
  }
  const config = out as unknown as BackupConfig
  checkBackupS3(config)
  return Object.freeze(config)
}

/** Data dir only, for the admin commands (DESIGN §3: every command takes --data-dir or TIMBRE_DATA_DIR). */
export function dataDirFrom(flags: Readonly<Record<string, string>>, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return absolutePath(flags['--data-dir'] ?? env.TIMBRE_DATA_DIR ?? '', hostFacts(env))
}

/** Environment values the admin commands need besides the data dir. */
export function masterKeyFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): string | null {
  return optional(env.TIMBRE_MASTER_KEY ?? '')
}

export function jwtPublicKeysFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): JwtPublicKeySetting[] {
  return parseJwtPublicKeys(env.TIMBRE_JWT_PUBLIC_KEYS ?? '', 'TIMBRE_JWT_PUBLIC_KEYS')
}

export function settingsHelp(envOnly = false): string {
  return (Object.values(SETTINGS) as Array<Setting<keyof Config>>)
    .filter((s) => !envOnly || s.flag === undefined)
    .map((s) => (envOnly ? `  ${(s.env ?? '').padEnd(26)} ${s.help}` : `  ${(s.flag ?? '').padEnd(22)} ${(s.env ?? '').padEnd(26)} ${s.help}`) + ` (por defecto: ${s.default || '—'})`)
    .join('\n')
}
