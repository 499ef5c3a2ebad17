// The shape of a sub-command and the argv parser they share (DESIGN §3: every command has --help, prints JSON).

export interface FlagSpec {
  /** Takes a value (`--rut 1-9`) or is a switch (`--write`). */
  readonly takesValue: boolean
  readonly help: string
}

export interface ParsedArgs {
  readonly flags: Readonly<Record<string, string>>
  readonly positionals: readonly string[]
}

export interface Command {
  /** Words after `timbre`: 'serve', 'empresa create'. */
  readonly name: string
  readonly summary: string
  readonly usage: string
  readonly flags: Readonly<Record<string, FlagSpec>>
  /** The value to print as JSON on stdout; a string is printed as it is (sii-simulator caf prints XML). */
  run(args: ParsedArgs): Promise<unknown>
  /** Long-running commands (serve) print nothing at the end and keep the process alive. */
  readonly isLongRunning?: boolean
}

export class UsageError extends Error {}

export const DATA_DIR_FLAG: Readonly<Record<string, FlagSpec>> = {
  '--data-dir': { takesValue: true, help: 'directorio de datos (o TIMBRE_DATA_DIR; por defecto ./data, en Windows data junto al ejecutable o %ProgramData%\\Timbre)' },
}

export function parseArgs(argv: readonly string[], spec: Readonly<Record<string, FlagSpec>>): ParsedArgs {
  const flags: Record<string, string> = {}
  const positionals: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (!arg.startsWith('--')) {
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = eq >= 0 ? arg.slice(0, eq) : arg
    const flag = spec[name]
    if (!flag) throw new UsageError(`opción desconocida ${name}`)
    if (!flag.takesValue) {
      flags[name] = eq >= 0 ? arg.slice(eq + 1) : 'true'
      continue
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i]
    if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new UsageError(`${name} requiere un valor`)
    flags[name] = value
  }
  return { flags, positionals }
}

export function requireFlag(args: ParsedArgs, name: string): string {
  const value = args.flags[name]
  if (value === undefined || value === '') throw new UsageError(`falta ${name}`)
  return value
}

export function intFlag(args: ParsedArgs, name: string): number | undefined {
  const raw = args.flags[name]
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw)) throw new UsageError(`${name} debe ser un entero, se recibió "${raw}"`)
  return Number(raw)
}

export function helpText(cmd: Command): string {
  const flags = Object.entries(cmd.flags)
    .map(([name, f]) => `  ${(f.takesValue ? `${name} VALOR` : name).padEnd(28)} ${f.help}`)
    .join('\n')
  return `${cmd.summary}\n\nUso: ${cmd.usage}\n${flags ? `\nOpciones:\n${flags}\n` : ''}  ${'--help'.padEnd(28)} muestra esta ayuda\n`
}
