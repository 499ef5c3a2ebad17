// `timbre backup` / `timbre restore` (DESIGN §3).
import { absolutePath, dataDirFrom } from '../config'
import { stderrLogger } from '../log'
import { createBackup, restoreBackup } from '../services/backup'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, requireFlag, type Command } from './command'

export const backup: Command = {
  name: 'backup',
  summary: 'Respaldo en línea: un .tar.gz con una copia consistente de la base, master.key y jwt-private.pem.',
  usage: 'timbre backup --out ARCHIVO.tar.gz [--no-keys]',
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
  summary: 'Restaura un respaldo en un directorio de datos vacío.',
  usage: 'timbre restore --from ARCHIVO.tar.gz --data-dir D',
  flags: { '--from': { takesValue: true, help: 'archivo de respaldo' }, ...DATA_DIR_FLAG },
  async run(args) {
    return restoreBackup({ from: absolutePath(requireFlag(args, '--from')), dataDir: dataDirFrom(args.flags), log: stderrLogger() })
  },
}
