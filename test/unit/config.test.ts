// DESIGN §2: each setting as env var and flag, flag wins, bad values named.
import { describe, expect, test } from 'bun:test'
import { resolve } from 'node:path'
import { absolutePath, ConfigError, dataDirFrom, defaultDataDir, loadConfig, parseDuration, parseSiiBackoff, SETTINGS, type HostFacts } from '../../src/config'

describe('loadConfig', () => {
  test('defaults of DESIGN §2', () => {
    expect(loadConfig({}, {})).toMatchObject({
      host: '127.0.0.1', port: 8080, dataDir: resolve('data'), sii: { kind: 'sii' }, submitEveryMs: 5000, trackEveryMs: 30_000,
      deliverEveryMs: 2000, inboxEveryMs: 60_000, foliosEveryMs: 5000, webhookAllowHttp: false, masterKey: null, jwtPublicKeys: [], cafLowStock: 10, log: 'info',
      rateLimit: 100, corsOrigins: [], tlsCert: null, tlsKey: null, demo: false,
    })
  })

  test('environment over default, flag over environment', () => {
    const env = { TIMBRE_PORT: '9000', TIMBRE_SII: 'simulado', TIMBRE_RATE_LIMIT: '0', TIMBRE_CORS_ORIGINS: 'https://a.cl, https://b.cl', TIMBRE_WEBHOOK_ALLOW_HTTP: 'true' }
    const fromEnv = loadConfig({}, env)
    expect(fromEnv).toMatchObject({ port: 9000, sii: { kind: 'simulado' }, rateLimit: 0, corsOrigins: ['https://a.cl', 'https://b.cl'], webhookAllowHttp: true })
    const flagged = loadConfig({ '--port': '9100', '--sii': 'http://127.0.0.1:9999/', '--webhook-allow-http': 'false' }, env)
    expect(flagged).toMatchObject({ port: 9100, sii: { kind: 'origin', origin: 'http://127.0.0.1:9999' }, webhookAllowHttp: false })
  })

  test('every setting with a flag also has an environment variable, except --demo', () => {
    for (const [key, s] of Object.entries(SETTINGS)) if (key !== 'demo') expect(s.env).toMatch(/^TIMBRE_/)
  })

  test.each([
    [{ '--port': '70000' }, {}, '--port'],
    [{}, { TIMBRE_PORT: 'abc' }, 'TIMBRE_PORT'],
    [{ '--sii': 'ftp://x' }, {}, '--sii'],
    [{ '--submit-every': '5 minutes' }, {}, '--submit-every'],
    [{ '--log': 'verbose' }, {}, '--log'],
    [{ '--tls-cert': '/x.pem' }, {}, '--tls-key'],
  ])('%j %j → ConfigError naming %s', (flags, env, name) => {
    expect(() => loadConfig(flags, env)).toThrow(ConfigError)
    expect(() => loadConfig(flags, env)).toThrow(name)
  })

  test('durations', () => {
    expect(parseDuration('500ms', 'x')).toBe(500)
    expect(parseDuration('5s', 'x')).toBe(5000)
    expect(parseDuration('30', 'x')).toBe(30_000)
    expect(parseDuration('2m', 'x')).toBe(120_000)
    expect(parseDuration('1h', 'x')).toBe(3_600_000)
    expect(() => parseDuration('0s', 'x')).toThrow(ConfigError)
  })

  test('the config is frozen', () => {
    expect(Object.isFrozen(loadConfig({}, {}))).toBe(true)
  })
})

describe('simulado', () => {
  test('with the simulator the SII jobs default to 1 s and 2 s, unless set', () => {
    expect(loadConfig({ '--sii': 'simulado' }, {})).toMatchObject({ submitEveryMs: 1000, trackEveryMs: 2000, inboxEveryMs: 2000 })
    expect(loadConfig({ '--sii': 'simulado', '--track-every': '10s' }, { TIMBRE_SUBMIT_EVERY: '3s' })).toMatchObject({ submitEveryMs: 3000, trackEveryMs: 10_000 })
    expect(loadConfig({ '--sii': 'http://127.0.0.1:9' }, {})).toMatchObject({ submitEveryMs: 5000, trackEveryMs: 30_000 })
  })
})

describe('SII timeout and back-off for soaks (issue 18, SII faults)', () => {
  test('by default DESIGN §6: 30 s per call, no back-off of its own', () => {
    expect(loadConfig({}, {})).toMatchObject({ siiTimeoutMs: 30_000, siiBackoff: null })
    expect(loadConfig({ '--sii': 'simulado' }, {})).toMatchObject({ siiTimeoutMs: 30_000, siiBackoff: null })
  })

  test('--sii-timeout / TIMBRE_SII_TIMEOUT shorten the call, never past 30 s', () => {
    expect(loadConfig({ '--sii-timeout': '3s' }, {}).siiTimeoutMs).toBe(3000)
    expect(loadConfig({}, { TIMBRE_SII_TIMEOUT: '500ms' }).siiTimeoutMs).toBe(500)
    expect(loadConfig({ '--sii-timeout': '30s' }, {}).siiTimeoutMs).toBe(30_000)
    expect(() => loadConfig({ '--sii-timeout': '31s' }, {})).toThrow('--sii-timeout')
    expect(() => loadConfig({}, { TIMBRE_SII_TIMEOUT: '0s' })).toThrow('TIMBRE_SII_TIMEOUT')
  })

  test('--sii-backoff / TIMBRE_SII_BACKOFF: FIRST:CAP, flag over environment', () => {
    expect(loadConfig({ '--sii-backoff': '1s:30s' }, {}).siiBackoff).toEqual({ firstMs: 1000, capMs: 30_000 })
    expect(loadConfig({}, { TIMBRE_SII_BACKOFF: '500ms:2m' }).siiBackoff).toEqual({ firstMs: 500, capMs: 120_000 })
    expect(loadConfig({ '--sii-backoff': '2s:2s' }, { TIMBRE_SII_BACKOFF: '1s:9s' }).siiBackoff).toEqual({ firstMs: 2000, capMs: 2000 })
    expect(parseSiiBackoff('', 'x')).toBeNull()
  })

  test.each(['1s', '1s:2s:3s', '10s:1s', 'a:1s', '0s:1s', ':1s'])('--sii-backoff %s → ConfigError naming the flag', (raw) => {
    expect(() => loadConfig({ '--sii-backoff': raw }, {})).toThrow(ConfigError)
    expect(() => loadConfig({ '--sii-backoff': raw }, {})).toThrow('--sii-backoff')
  })
})

describe('TIMBRE_JWT_PUBLIC_KEYS (issue 18, hole 7)', () => {
  const keys = (raw: string) => loadConfig({}, { TIMBRE_JWT_PUBLIC_KEYS: raw }).jwtPublicKeys

  test('bare paths as before, or path#iss=…&aud=… read like a URL query', () => {
    expect(keys('/k/a.pem, /k/b.pem')).toEqual([
      { path: '/k/a.pem', iss: null, aud: null },
      { path: '/k/b.pem', iss: null, aud: null },
    ])
    expect(keys('/k/idp.pem#iss=https://idp.example/realms/x&aud=timbre,/k/p.pem#iss=https%3A%2F%2Fp.example%2Ca%2Bb')).toEqual([
      { path: '/k/idp.pem', iss: 'https://idp.example/realms/x', aud: 'timbre' },
      { path: '/k/p.pem', iss: 'https://p.example,a+b', aud: null },
    ])
  })

  test.each(['/k/a.pem#issuer=x', '/k/a.pem#iss=', '/k/a.pem#iss=a&iss=b', '#iss=x', '/k/a.pem#aud='])('%s → ConfigError naming the setting', (raw) => {
    expect(() => keys(raw)).toThrow(ConfigError)
    expect(() => keys(raw)).toThrow('TIMBRE_JWT_PUBLIC_KEYS')
  })
})

describe('data dir: absolute, per platform (issue 26, DESIGN §18)', () => {
  const win = (execPath: string, isCompiled = true): HostFacts => ({
    platform: 'win32',
    cwd: 'C:\\Windows\\System32',
    execPath,
    isCompiled,
    env: { ProgramFiles: 'C:\\Program Files', 'ProgramFiles(x86)': 'C:\\Program Files (x86)', ProgramData: 'D:\\ProgramData' },
  })
  const unix = (platform: NodeJS.Platform): HostFacts => ({ platform, cwd: '/srv/timbre', execPath: '/usr/local/bin/timbre', isCompiled: true, env: {} })

  test.each([
    ['a download folder: data beside the executable, not the System32 a scheduled task starts in', 'C:\\Users\\ana\\Downloads\\timbre\\timbre.exe', 'C:\\Users\\ana\\Downloads\\timbre\\data'],
    ['installed under Program Files: %ProgramData%\\Timbre', 'C:\\Program Files\\Timbre\\timbre.exe', 'D:\\ProgramData\\Timbre'],
    ['under Program Files (x86), another case', 'c:\\program files (x86)\\Timbre\\timbre.exe', 'D:\\ProgramData\\Timbre'],
    ['a folder whose name only starts like Program Files', 'C:\\Program Files Tools\\timbre.exe', 'C:\\Program Files Tools\\data'],
  ])('Windows, %s', (_why, execPath, expected) => {
    expect(defaultDataDir(win(execPath))).toBe(expected)
  })

  test('Windows from source (bun src/main.ts): ./data of the folder it starts in', () => {
    expect(defaultDataDir(win('C:\\bun\\bun.exe', false))).toBe('C:\\Windows\\System32\\data')
  })

  test('Windows without ProgramData in the environment: C:\\ProgramData\\Timbre', () => {
    const facts = { ...win('C:\\Program Files\\Timbre\\timbre.exe'), env: { ProgramFiles: 'C:\\Program Files' } }
    expect(defaultDataDir(facts)).toBe('C:\\ProgramData\\Timbre')
  })

  test.each(['linux', 'darwin'] as const)('%s: ./data of the folder it starts in, as before', (platform) => {
    expect(defaultDataDir(unix(platform))).toBe('/srv/timbre/data')
  })

  test('every value becomes absolute: relative against the folder it starts in, absolute as given, empty is the default', () => {
    expect(absolutePath('datos', unix('linux'))).toBe('/srv/timbre/datos')
    expect(absolutePath('../otra/./datos', unix('linux'))).toBe('/srv/otra/datos')
    expect(absolutePath('/var/lib/timbre', unix('linux'))).toBe('/var/lib/timbre')
    expect(absolutePath('', unix('linux'))).toBe('/srv/timbre/data')
    const facts = win('E:\\timbre\\timbre.exe')
    expect(absolutePath('datos', facts)).toBe('C:\\Windows\\System32\\datos')
    expect(absolutePath('E:\\Timbre\\datos', facts)).toBe('E:\\Timbre\\datos')
    expect(absolutePath('', facts)).toBe('E:\\timbre\\data')
  })

  test('flag, environment and default all reach Config and the admin commands absolute', () => {
    expect(loadConfig({ '--data-dir': 'x/y' }, {}).dataDir).toBe(resolve('x/y'))
    expect(loadConfig({}, { TIMBRE_DATA_DIR: 'z' }).dataDir).toBe(resolve('z'))
    expect(loadConfig({}, {}).dataDir).toBe(resolve('data'))
    expect(dataDirFrom({ '--data-dir': 'x/y' }, {})).toBe(resolve('x/y'))
    expect(dataDirFrom({}, { TIMBRE_DATA_DIR: 'z' })).toBe(resolve('z'))
    expect(dataDirFrom({}, {})).toBe(resolve('data'))
  })
})
