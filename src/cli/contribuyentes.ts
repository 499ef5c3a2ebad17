// `timbre contribuyentes import FILE` (DESIGN §13): loads the SII's list of electronic issuers and their exchange
// addresses, where Timbre looks for a receiver's mailbox when neither the request nor the cliente gives one.
import { stderrLogger } from '../log'
import { importContribuyentes, PROGRESS_EVERY } from '../services/contribuyentes'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, intFlag, UsageError, type Command } from './command'

export const contribuyentesImport: Command = {
  name: 'contribuyentes import',
  summary: 'Importa el listado de contribuyentes electrónicos del SII (CSV ce_empresas_dwnld) con sus correos de intercambio.',
  usage: 'timbre contribuyentes import ARCHIVO.csv [--progress-every N]',
  flags: {
    '--progress-every': { takesValue: true, help: `informa el avance en stderr cada N líneas (por defecto ${PROGRESS_EVERY})` },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const [path, ...extra] = args.positionals
    if (path === undefined) throw new UsageError('falta el archivo CSV del SII')
    if (extra.length > 0) throw new UsageError(`argumento inesperado: ${extra[0]}`)
    const progressEvery = intFlag(args, '--progress-every')
    if (progressEvery === 0) throw new UsageError('--progress-every debe ser mayor que 0')
    // Progress for the person at the terminal, as JSON lines on stderr: stdout is the summary alone.
    const log = stderrLogger('info')
    return withAdminStore(args, (deps) =>
      importContribuyentes(deps, { path, progressEvery, onProgress: (p) => log.info('contribuyentes.import.progress', { ...p }) }),
    )
  },
}
