// argv → one command (STYLE §1: the only reader of process.argv). Prints the command's value as JSON on stdout;
// errors as one JSON line on stderr with exit 1 (usage errors exit 2).
import { apikeyCreate, apikeyList, apikeyRevoke } from './cli/apikey'
import { backup, backupList, backupRun, restore } from './cli/backup'
import { CAF_COMMANDS } from './cli/caf'
import { helpText, parseArgs, UsageError, type Command } from './cli/command'
import { consoleLink } from './cli/console'
import { contribuyentesImport } from './cli/contribuyentes'
import { empresaCreate, empresaList, empresaUpdate } from './cli/empresa'
import { health } from './cli/health'
import { empresaIntercambio } from './cli/intercambio'
import { serve } from './cli/serve'
import { CERTIFICACION_COMMANDS } from './cli/certificacion'
import { RCV_COMMANDS } from './cli/rcv'
import { siiSimulator, siiSimulatorCaf } from './cli/sii-simulator'
import { siiSimulatorSet } from './cli/sii-simulator-set'
import { siiSimulatorIntercambio } from './cli/sii-simulator-intercambio'
import { SII_SIMULATOR_RCV_COMMANDS } from './cli/sii-simulator-rcv'
import { siiSimulatorFolios } from './cli/sii-simulator-folios'
import { stop } from './cli/stop'
import { tokenIssue } from './cli/token'
import { version } from './cli/version'
import { webhookDeliveriesCommand, webhookRedeliverCommand } from './cli/webhook'
import { OperatorError, TimbreError } from './errors'
import { VERSION } from './version'

const COMMANDS: readonly Command[] = [
  serve,
  stop,
  empresaCreate,
  empresaList,
  empresaUpdate,
  empresaIntercambio,
  apikeyCreate,
  apikeyList,
  apikeyRevoke,
  tokenIssue,
  consoleLink,
  backup,
  backupList,
  backupRun,
  restore,
  siiSimulator,
  siiSimulatorCaf,
  siiSimulatorSet,
  ...CERTIFICACION_COMMANDS,
  ...RCV_COMMANDS,
  ...CAF_COMMANDS,
  siiSimulatorIntercambio,
  ...SII_SIMULATOR_RCV_COMMANDS,
  siiSimulatorFolios,
  webhookDeliveriesCommand,
  webhookRedeliverCommand,
  contribuyentesImport,
  health,
  version,
]

function generalHelp(): string {
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(18)} ${c.summary}`)
  return `Timbre ${VERSION}: facturación electrónica chilena (DTE) autoalojada.\n\nUso: timbre [comando] [opciones]   (sin comando: serve)\n\nComandos:\n${lines.join('\n')}\n\n'timbre COMANDO --help' muestra las opciones de cada uno.\n`
}

/**
 * The longest command name that prefixes argv: 'empresa create' before 'empresa', 'sii-simulator rcv add' before
 * 'sii-simulator'. Two or more words naming a group but no command ('sii-simulator rcv') are that group's help.
 */
function findCommand(argv: readonly string[]): { command: Command | null; rest: readonly string[]; group: string | null } {
  const words = argv.slice(0, 3).filter((w) => !w.startsWith('-'))
  for (let n = words.length; n >= 1; n--) {
    const name = words.slice(0, n).join(' ')
    const command = COMMANDS.find((c) => c.name === name)
    if (command) return { command, rest: argv.slice(n), group: null }
    if (n >= 2 && COMMANDS.some((c) => c.name.startsWith(`${name} `))) return { command: null, rest: argv, group: name }
  }
  if (words.length === 0) return { command: serve, rest: argv, group: null }
  const group = COMMANDS.some((c) => c.name.startsWith(`${words[0]} `)) ? words[0]! : null
  return { command: null, rest: argv, group }
}

function groupHelp(group: string): string {
  const lines = COMMANDS.filter((c) => c.name.startsWith(`${group} `)).map((c) => `  timbre ${c.name.padEnd(16)} ${c.summary}`)
  return `Subcomandos de ${group}:\n${lines.join('\n')}\n`
}

function errorLine(err: unknown): { line: object; exitCode: number } {
  if (err instanceof UsageError) return { line: { code: 'USAGE', message: err.message }, exitCode: 2 }
  if (err instanceof TimbreError) return { line: { code: err.code, message: err.message, details: err.extra.details ?? [] }, exitCode: 1 }
  if (err instanceof OperatorError)
    return { line: { code: 'ERROR', message: err.message }, exitCode: 1 }
  return { line: { code: 'INTERNAL_ERROR', message: String((err as Error)?.message ?? err) }, exitCode: 1 }
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(generalHelp())
    return 0
  }
  if (argv[0] === '--version') argv = ['version']
  const { command, rest, group } = findCommand(argv)
  if (!command) {
    if (group && !rest.slice(group.split(' ').length).some((a) => !a.startsWith('-'))) {
      process.stdout.write(groupHelp(group))
      return rest.includes('--help') ? 0 : 2
    }
    process.stderr.write(`${JSON.stringify({ code: 'USAGE', message: `comando desconocido: ${argv.slice(0, 2).join(' ')}; vea timbre --help` })}\n`)
    return 2
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(helpText(command))
    return 0
  }
  try {
    const value = await command.run(parseArgs(rest, command.flags))
    if (command.isLongRunning) return -1
    process.stdout.write(typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`)
    return 0
  } catch (err) {
    const { line, exitCode } = errorLine(err)
    process.stderr.write(`${JSON.stringify(line)}\n`)
    return exitCode
  }
}

// Everything the binary writes is its owner's alone, whatever umask the shell or the service manager gave it (issue 18):
// the data dir's database, WAL, keys, lock, simulator and backups, and `backup --out` (docs/decisions/operations.md).
process.umask(0o077)
const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)
