// `timbre empresa intercambio` (DESIGN §13 "Mailbox of a company"): the operator's door to a company's exchange
// mailbox, through the same services as PUT/GET/DELETE /empresa/intercambio. Passwords are never argv values (anyone
// on the machine reads argv in `ps`): they come from a file or from an environment variable the operator names.
import { readFileSync } from 'node:fs'
import { masterKeyFromEnv } from '../config'
import { resolveEmpresa } from '../services/empresas'
import { getMailbox, removeMailbox, saveMailbox, type MailboxInput } from '../services/mailbox'
import { openVault } from '../services/master-key'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, intFlag, requireFlag, UsageError, type Command, type FlagSpec, type ParsedArgs } from './command'

const SETTING_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--inbound-email': { takesValue: true, help: 'casilla de intercambio registrada en el SII (por defecto la actual, o --smtp-from)' },
  '--imap-host': { takesValue: true, help: 'servidor IMAP' },
  '--imap-port': { takesValue: true, help: 'puerto IMAP (993 con --imap-tls, 143 sin él)' },
  '--imap-tls': { takesValue: false, help: 'TLS implícito en IMAP (sin él: conexión simple, con STARTTLS si el servidor lo ofrece)' },
  '--imap-user': { takesValue: true, help: 'usuario IMAP' },
  '--imap-password-file': { takesValue: true, help: 'archivo con la contraseña IMAP (se quita el salto de línea final)' },
  '--imap-password-env': { takesValue: true, help: 'nombre de la variable de entorno con la contraseña IMAP' },
  '--imap-folder': { takesValue: true, help: 'carpeta que se lee (por defecto INBOX)' },
  '--smtp-host': { takesValue: true, help: 'servidor SMTP' },
  '--smtp-port': { takesValue: true, help: 'puerto SMTP (587 starttls, 465 tls)' },
  '--smtp-security': { takesValue: true, help: 'starttls | tls | none' },
  '--smtp-user': { takesValue: true, help: 'usuario SMTP (sin él: relay sin autenticación)' },
  '--smtp-password-file': { takesValue: true, help: 'archivo con la contraseña SMTP' },
  '--smtp-password-env': { takesValue: true, help: 'nombre de la variable de entorno con la contraseña SMTP' },
  '--smtp-from': { takesValue: true, help: 'remitente (From) de lo que envía la empresa' },
}

/**
 * A password from `--<proto>-password-file` or `--<proto>-password-env`, or undefined when neither is given (the
 * stored one is kept). The environment is read here, not in config.ts: the variable's name is the operator's choice.
 */
function passwordFrom(args: ParsedArgs, proto: 'imap' | 'smtp'): string | undefined {
  const file = args.flags[`--${proto}-password-file`]
  const env = args.flags[`--${proto}-password-env`]
  if (file !== undefined && env !== undefined) throw new UsageError(`use --${proto}-password-file o --${proto}-password-env, no ambos`)
  if (file !== undefined) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      throw new UsageError(`no se pudo leer --${proto}-password-file ${file}`)
    }
    const password = text.replace(/\r?\n$/, '')
    if (password === '') throw new UsageError(`el archivo de --${proto}-password-file está vacío`)
    return password
  }
  if (env !== undefined) {
    const password = process.env[env]
    if (password === undefined || password === '') throw new UsageError(`la variable de entorno ${env} (--${proto}-password-env) no está definida o está vacía`)
    return password
  }
  return undefined
}

function requirePort(args: ParsedArgs, name: string): number {
  requireFlag(args, name)
  return intFlag(args, name)!
}

function settingsFrom(args: ParsedArgs, currentInboundEmail: string | null): MailboxInput {
  const f = args.flags
  const from = requireFlag(args, '--smtp-from')
  const smtpUser = f['--smtp-user'] ?? null
  const smtpPassword = passwordFrom(args, 'smtp')
  if (smtpUser === null && smtpPassword !== undefined) throw new UsageError('una contraseña SMTP requiere --smtp-user')
  return {
    inbound_email: f['--inbound-email'] ?? currentInboundEmail ?? from,
    imap: {
      host: requireFlag(args, '--imap-host'),
      port: requirePort(args, '--imap-port'),
      tls: f['--imap-tls'] !== undefined && f['--imap-tls'] !== 'false',
      user: requireFlag(args, '--imap-user'),
      password: passwordFrom(args, 'imap'),
      folder: f['--imap-folder'],
    },
    smtp: {
      host: requireFlag(args, '--smtp-host'),
      port: requirePort(args, '--smtp-port'),
      security: requireFlag(args, '--smtp-security') as MailboxInput['smtp']['security'],
      user: smtpUser,
      password: smtpPassword,
      from,
    },
  }
}

export const empresaIntercambio: Command = {
  name: 'empresa intercambio',
  summary: 'Configura, muestra o elimina el buzón de intercambio (IMAP y SMTP) de una empresa; nunca imprime contraseñas.',
  usage:
    'timbre empresa intercambio --empresa RUT|ID [--inbound-email X] --imap-host H --imap-port N [--imap-tls] --imap-user U ' +
    '--imap-password-file F|--imap-password-env VAR [--imap-folder INBOX] --smtp-host H --smtp-port N --smtp-security starttls|tls|none ' +
    '[--smtp-user U --smtp-password-file F|--smtp-password-env VAR] --smtp-from X [--test]\n' +
    '       timbre empresa intercambio --empresa RUT|ID --show [--test]\n' +
    '       timbre empresa intercambio --empresa RUT|ID --delete\n' +
    'Las contraseñas nunca van en la línea de comandos (se ven en ps): se leen de un archivo o de una variable de entorno.\n' +
    'Al volver a configurar, una contraseña que no se indica conserva la guardada.',
  flags: {
    '--empresa': { takesValue: true, help: 'RUT o id de la empresa' },
    ...SETTING_FLAGS,
    '--test': { takesValue: false, help: 'prueba ambas conexiones (10 s cada una, en paralelo) e informa cada una' },
    '--show': { takesValue: false, help: 'muestra la configuración (sin contraseñas) y el estado' },
    '--delete': { takesValue: false, help: 'elimina el buzón y sus contraseñas (inbound_email se conserva)' },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const ref = requireFlag(args, '--empresa')
    const mode = args.flags['--show'] !== undefined ? '--show' : args.flags['--delete'] !== undefined ? '--delete' : null
    const test = args.flags['--test'] !== undefined && args.flags['--test'] !== 'false'
    if (mode !== null) {
      const extra = Object.keys(args.flags).filter((f) => f in SETTING_FLAGS || (f !== mode && (f === '--show' || f === '--delete')) || (mode === '--delete' && f === '--test'))
      if (extra.length > 0) throw new UsageError(`${mode} no admite ${extra.join(', ')}`)
    }
    return withAdminStore(args, async (deps) => {
      const empresaId = resolveEmpresa(deps, { ref }).id
      const vault = openVault(deps, { masterKeyFromEnv: masterKeyFromEnv() })
      const full = { ...deps, vault }
      if (mode === '--show') return getMailbox(full, { empresaId, test })
      if (mode === '--delete') {
        removeMailbox(full, { empresaId })
        return getMailbox(full, { empresaId, test: false })
      }
      const current = await getMailbox(full, { empresaId, test: false })
      return saveMailbox(full, { empresaId, settings: settingsFrom(args, current.inbound_email), test })
    })
  },
}
