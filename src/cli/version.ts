// `timbre version` (DESIGN §1): binary and schema versions.
import { binarySchema } from '../services/readiness'
import { API_VERSION, VERSION } from '../version'
import type { Command } from './command'

export const version: Command = {
  name: 'version',
  summary: 'Muestra la versión del binario, de la API y del esquema de base de datos.',
  usage: 'timbre version',
  flags: {},
  async run() {
    return { version: VERSION, api_version: API_VERSION, ...binarySchema(), bun: Bun.version }
  },
}
