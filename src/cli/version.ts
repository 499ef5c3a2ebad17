// `timbre version` (DESIGN §1): binary and schema versions; with --data-dir, also where that data dir's database stands,
// read without migrating it, so an operator can see what starting this binary on it would do before an upgrade.
import { absolutePath } from '../config'
import { binarySchema, dataDirSchema } from '../services/readiness'
import { API_VERSION, VERSION } from '../version'
import type { Command } from './command'

export const version: Command = {
  name: 'version',
  summary: 'Muestra la versión del binario, de la API y del esquema de base de datos (y el de un directorio de datos con --data-dir).',
  usage: 'timbre version [--data-dir D]',
  flags: {
    '--data-dir': { takesValue: true, help: 'muestra también el esquema de ese directorio de datos y cuántas migraciones le aplicaría este binario, sin migrarlo' },
  },
  async run(args) {
    const dataDir = args.flags['--data-dir']
    return { version: VERSION, api_version: API_VERSION, ...binarySchema(), bun: Bun.version, ...(dataDir ? { data_dir: dataDirSchema(absolutePath(dataDir)) } : {}) }
  },
}
