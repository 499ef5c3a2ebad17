// `timbre apikey create|list|revoke` (DESIGN §3, §12): keys are shown once, listed without the key.
import { systemClock } from '../clock'
import { withAdminStore } from './admin-store'
import { createApiKey, listApiKeys, revokeApiKey } from '../services/api-keys'
import { resolveEmpresa } from '../services/empresas'
import { DATA_DIR_FLAG, requireFlag, UsageError, type Command, type ParsedArgs } from './command'

function expiresAt(raw: string | undefined, now: Date): string | null {
  if (raw === undefined) return null
  const t = Date.parse(raw)
  if (Number.isNaN(t)) throw new UsageError(`--expires-at: fecha inválida "${raw}" (use RFC 3339, p. ej. 2027-01-31T23:59:59Z)`)
  if (t <= now.getTime()) throw new UsageError('--expires-at debe estar en el futuro')
  return new Date(t).toISOString()
}

export const apikeyCreate: Command = {
  name: 'apikey create',
  summary: 'Crea una API key para una empresa; la key se muestra solo esta vez.',
  usage: 'timbre apikey create --empresa RUT|ID [--write] [--nombre TEXTO] [--expires-at FECHA]',
  flags: {
    '--empresa': { takesValue: true, help: 'RUT o id de la empresa' },
    '--write': { takesValue: false, help: 'permite escribir (POST, PUT, DELETE); sin ella es de solo lectura' },
    '--nombre': { takesValue: true, help: 'nombre para reconocerla en apikey list' },
    '--expires-at': { takesValue: true, help: 'vencimiento RFC 3339 (opcional)' },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const ref = requireFlag(args, '--empresa')
    // Checked before the data dir is opened: a bad flag touches nothing.
    const expires = expiresAt(args.flags['--expires-at'], systemClock.now())
    return withAdminStore(args, (deps) => {
      const empresa = resolveEmpresa(deps, { ref })
      const created = createApiKey(deps, { empresaId: empresa.id, write: args.flags['--write'] === 'true', nombre: args.flags['--nombre'] ?? null, expiresAt: expires })
      return { id: created.id, key: created.key, write: created.write, empresa_id: created.empresa_id, expires_at: created.expires_at }
    })
  },
}

export const apikeyList: Command = {
  name: 'apikey list',
  summary: 'Lista las API keys (nunca la key: solo sus primeros 12 caracteres).',
  usage: 'timbre apikey list [--empresa RUT|ID]',
  flags: { '--empresa': { takesValue: true, help: 'solo las de esta empresa' }, ...DATA_DIR_FLAG },
  async run(args) {
    return withAdminStore(args, (deps) => {
      const ref = args.flags['--empresa']
      return listApiKeys(deps, { empresaId: ref === undefined ? undefined : resolveEmpresa(deps, { ref }).id })
    })
  },
}

export const apikeyRevoke: Command = {
  name: 'apikey revoke',
  summary: 'Revoca una API key; rige desde la siguiente solicitud.',
  usage: 'timbre apikey revoke ID',
  flags: DATA_DIR_FLAG,
  async run(args) {
    const id = args.positionals[0]
    if (!id) throw new UsageError('falta el ID de la API key')
    return withAdminStore(args, (deps) => revokeApiKey(deps, { id }))
  },
}
