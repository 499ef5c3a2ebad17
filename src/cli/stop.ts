// `timbre stop [--data-dir D] [--timeout 15s]` (issue 26): the graceful stop a scheduled task or a script can call on
// any platform, Windows included, where ending a task is a hard kill (services/serve-stop.ts says why a request file).
import { dataDirFrom, parseDuration } from '../config'
import { stopServe } from '../services/serve-stop'
import { DATA_DIR_FLAG, type Command } from './command'

/** Past serve's own 10 s drain budget (cli/serve.ts EXIT_WITHIN_MS), with room for its poll and the exit. */
const DEFAULT_TIMEOUT = '15s'

export const stop: Command = {
  name: 'stop',
  summary: 'Pide a timbre serve de ese directorio de datos que termine ordenadamente y espera a que lo haga.',
  usage: 'timbre stop [--data-dir D] [--timeout 15s]',
  flags: {
    '--timeout': { takesValue: true, help: `cuánto esperar a que serve termine (por defecto ${DEFAULT_TIMEOUT})` },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const timeoutMs = parseDuration(args.flags['--timeout'] ?? DEFAULT_TIMEOUT, '--timeout')
    return stopServe({ dataDir: dataDirFrom(args.flags), timeoutMs })
  },
}
