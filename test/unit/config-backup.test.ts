// Issue 26 (DESIGN §18): the backup settings are rows of config.ts's one table; bad values name the setting.
import { describe, expect, test } from 'bun:test'
import { backupConfigFrom, ConfigError, loadConfig } from '../../src/config'

const S3 = { TIMBRE_BACKUP_S3_URL: 'http://127.0.0.1:9000', TIMBRE_BACKUP_S3_BUCKET: 'b', TIMBRE_BACKUP_S3_ACCESS_KEY: 'a', TIMBRE_BACKUP_S3_SECRET_KEY: 's' }

describe('backup settings', () => {
  test('defaults: no target, daily, 7d,12m, S3 copies without keys', () => {
    expect(loadConfig({}, {})).toMatchObject({
      backupDir: null, backupS3Url: null, backupS3Bucket: null, backupS3Prefix: '', backupS3Keys: false, backupEveryMs: 86_400_000, backupKeep: { days: 7, months: 12 },
    })
  })

  test('environment, flags of serve, and the same reading for the CLI', () => {
    const env = { TIMBRE_BACKUP_DIR: '/mnt/usb', TIMBRE_BACKUP_EVERY: '6h', TIMBRE_BACKUP_KEEP: '12m,30d', TIMBRE_BACKUP_S3_PREFIX: '/timbre/oficina', TIMBRE_BACKUP_S3_KEYS: 'true', ...S3 }
    expect(loadConfig({}, env)).toMatchObject({ backupDir: '/mnt/usb', backupEveryMs: 6 * 3_600_000, backupKeep: { days: 30, months: 12 }, backupS3Prefix: 'timbre/oficina/', backupS3Keys: true, backupS3Url: 'http://127.0.0.1:9000' })
    expect(loadConfig({ '--backup-dir': '/mnt/nas', '--backup-keep': '3d' }, env)).toMatchObject({ backupDir: '/mnt/nas', backupKeep: { days: 3, months: 0 } })
    expect(backupConfigFrom({ '--backup-dir': '/mnt/nas' }, env)).toMatchObject({ backupDir: '/mnt/nas', backupEveryMs: 6 * 3_600_000, backupS3Bucket: 'b' })
  })

  test.each([
    [{ TIMBRE_BACKUP_KEEP: '7x' }, 'TIMBRE_BACKUP_KEEP'],
    [{ TIMBRE_BACKUP_KEEP: '7d,8d' }, 'TIMBRE_BACKUP_KEEP'],
    [{ TIMBRE_BACKUP_KEEP: '' }, 'TIMBRE_BACKUP_KEEP'],
    [{ TIMBRE_BACKUP_EVERY: 'daily' }, 'TIMBRE_BACKUP_EVERY'],
    [{ TIMBRE_BACKUP_EVERY: '0s' }, 'TIMBRE_BACKUP_EVERY'],
    [{ TIMBRE_BACKUP_S3_KEYS: 'quizás' }, 'TIMBRE_BACKUP_S3_KEYS'],
    [{ ...S3, TIMBRE_BACKUP_S3_URL: 'ftp://nas' }, 'TIMBRE_BACKUP_S3_URL'],
    [{ ...S3, TIMBRE_BACKUP_S3_SECRET_KEY: undefined }, 'TIMBRE_BACKUP_S3_SECRET_KEY'],
    [{ TIMBRE_BACKUP_S3_URL: 'http://127.0.0.1:9000' }, 'TIMBRE_BACKUP_S3_BUCKET, TIMBRE_BACKUP_S3_ACCESS_KEY, TIMBRE_BACKUP_S3_SECRET_KEY'],
    [{ TIMBRE_BACKUP_S3_BUCKET: 'b' }, 'TIMBRE_BACKUP_S3_URL'],
  ])('%p is a ConfigError naming %s, at start and in the CLI', (env, name) => {
    for (const load of [() => loadConfig({}, env), () => backupConfigFrom({}, env)]) {
      expect(load).toThrow(ConfigError)
      expect(load).toThrow(name)
    }
  })

  test('a bad flag is named as the flag', () => {
    expect(() => loadConfig({ '--backup-every': 'x' }, {})).toThrow('--backup-every')
  })
})
