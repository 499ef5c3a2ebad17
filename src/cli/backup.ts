// `timbre backup` / `timbre restore` (DESIGN §3), `timbre backup list|run` and `restore --from s3://` (DESIGN §18, issue 26).
import { absolutePath, backupConfigFrom, dataDirFrom, type BackupConfig } from '../config'
import { OperatorError } from '../errors'
import { stderrLogger } from '../log'
import { createBackup } from '../services/backup'
import { configuredTargets, parseS3Name } from '../services/backup-targets'
import { listBackupCopies, restoreCopy } from '../services/backup-copies'
import { backupSettingWarnings } from '../services/backup-status'
import { runScheduledBackup } from '../services/scheduled-backup'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, requireFlag, type Command, type FlagSpec } from './command'

export const backup: Command = {
  name: 'backup',
  summary: 'Respaldo en línea: un .tar.gz con una copia consistente de la base, master.key y jwt-private.pem.',
  usage: 'timbre backup --out ARCHIVO.tar.gz [--no-keys]\n\nRespaldos automáticos a una carpeta o a S3: timbre backup run, timbre backup list (vea su --help).',
  flags: {
    '--out': { takesValue: true, help: 'archivo de salida' },
    '--no-keys': { takesValue: false, help: 'no incluye las llaves (sin master.key los certificados y CAF no se pueden usar)' },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    // Absolute before anything is written (issue 26): the result names the real file, and Windows paths work under Wine.
    const out = absolutePath(requireFlag(args, '--out'))
    const includeKeys = args.flags['--no-keys'] !== 'true'
    if (!includeKeys) stderrLogger().warn('backup.without_keys', { message: 'sin master.key los certificados y CAF del respaldo no se pueden usar' })
    return withAdminStore(args, (deps) => createBackup(deps, { out, includeKeys }))
  },
}

export const restore: Command = {
  name: 'restore',
  summary: 'Restaura un respaldo (archivo o s3://bucket/clave) en un directorio de datos vacío.',
  usage: 'timbre restore --from ARCHIVO.tar.gz|s3://BUCKET/CLAVE --data-dir D\n\nDesde S3 usa TIMBRE_BACKUP_S3_URL, TIMBRE_BACKUP_S3_ACCESS_KEY y TIMBRE_BACKUP_S3_SECRET_KEY (y TIMBRE_BACKUP_S3_REGION).',
  flags: { '--from': { takesValue: true, help: 'archivo de respaldo o s3://bucket/clave' }, ...DATA_DIR_FLAG },
  async run(args) {
    const given = requireFlag(args, '--from')
    // The S3 settings only matter for an s3:// name (whose bucket is its own): a restore from a file never fails on an
    // unrelated setting.
    const s3 = parseS3Name(given)
    // A file's path absolute before anything is read (issue 26): errors name the real file, and it works under Wine.
    const from = s3 ? given : absolutePath(given)
    const config = s3 ? backupConfigFrom(args.flags, undefined, { TIMBRE_BACKUP_S3_BUCKET: s3.bucket }) : backupConfigFrom({}, {})
    return restoreCopy({ from, dataDir: dataDirFrom(args.flags), log: stderrLogger(), config })
  },
}

/** The settings of serve that say where the copies go; also TIMBRE_BACKUP_* in the environment. */
const TARGET_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--backup-dir': { takesValue: true, help: 'carpeta de respaldos (o TIMBRE_BACKUP_DIR)' },
  '--backup-s3-url': { takesValue: true, help: 'URL del servicio S3 (o TIMBRE_BACKUP_S3_URL; llaves en TIMBRE_BACKUP_S3_ACCESS_KEY y _SECRET_KEY)' },
  '--backup-s3-bucket': { takesValue: true, help: 'bucket S3 (o TIMBRE_BACKUP_S3_BUCKET)' },
  '--backup-s3-prefix': { takesValue: true, help: 'prefijo dentro del bucket (o TIMBRE_BACKUP_S3_PREFIX)' },
}

function requireTargets(config: BackupConfig): void {
  if (configuredTargets(config).length === 0)
    throw new OperatorError('no hay destino de respaldos: indique TIMBRE_BACKUP_DIR (o --backup-dir) y/o TIMBRE_BACKUP_S3_URL, _BUCKET, _ACCESS_KEY y _SECRET_KEY')
}

export const backupList: Command = {
  name: 'backup list',
  summary: 'Lista las copias de los respaldos automáticos en la carpeta y en S3 (verificadas o no).',
  usage: 'timbre backup list [--backup-dir D] [--backup-s3-url U --backup-s3-bucket B]',
  flags: TARGET_FLAGS,
  async run(args) {
    const config = backupConfigFrom(args.flags)
    requireTargets(config)
    const listing = await listBackupCopies(config)
    if (listing.warning) stderrLogger().warn('backup.s3_without_keys', { message: listing.warning })
    return listing
  },
}

export const backupRun: Command = {
  name: 'backup run',
  summary: 'Hace ahora un respaldo como el automático: copia, verificación en cada destino y limpieza de copias antiguas.',
  usage: 'timbre backup run [--data-dir D] [--backup-dir D] [--backup-keep 7d,12m]\n\nPensado también para cron o el Programador de tareas: sale con 1 si algún destino falló.',
  flags: { ...TARGET_FLAGS, '--backup-keep': { takesValue: true, help: 'copias que se guardan (o TIMBRE_BACKUP_KEEP; por defecto 7d,12m)' }, ...DATA_DIR_FLAG },
  async run(args) {
    const config = backupConfigFrom(args.flags)
    requireTargets(config)
    const log = stderrLogger()
    const result = await withAdminStore(args, async (deps) => {
      for (const w of await backupSettingWarnings(config, deps.store.dataDir)) log.warn(w.event, { message: w.message })
      return runScheduledBackup({ ...deps, log }, config)
    })
    const failedTargets = result.targets.filter((t) => !t.ok)
    // A cron job learns of a failure by the exit code, and why from the error line on stderr.
    if (failedTargets.length > 0) throw new OperatorError(`el respaldo ${result.copy} falló en ${failedTargets.map((t) => `${t.location}: ${t.reason}`).join('; ')}`)
    return result
  },
}
