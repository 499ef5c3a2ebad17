// `timbre token issue` (DESIGN §3): an RS256 JWT signed with the instance key.
import { loadKeyring } from '../app'
import { dataDirFrom, jwtPublicKeysFromEnv } from '../config'
import { resolveEmpresa } from '../services/empresas'
import { DEFAULT_TOKEN_TTL_SECONDS, issueToken } from '../services/tokens'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, intFlag, requireFlag, UsageError, type Command } from './command'

export const tokenIssue: Command = {
  name: 'token issue',
  summary: 'Emite un token Bearer (JWT RS256) para una empresa.',
  usage: 'timbre token issue --empresa RUT|ID [--ttl SEGUNDOS] [--sub TEXTO]',
  flags: {
    '--empresa': { takesValue: true, help: 'RUT o id de la empresa' },
    '--ttl': { takesValue: true, help: `vigencia en segundos (por defecto ${DEFAULT_TOKEN_TTL_SECONDS})` },
    '--sub': { takesValue: true, help: 'sujeto (usuario o sistema) del token' },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const ref = requireFlag(args, '--empresa')
    const ttl = intFlag(args, '--ttl') ?? DEFAULT_TOKEN_TTL_SECONDS
    if (ttl < 1) throw new UsageError('--ttl debe ser mayor que 0')
    return withAdminStore(args, async (deps) => {
      const empresa = resolveEmpresa(deps, { ref })
      const keyring = await loadKeyring(dataDirFrom(args.flags), jwtPublicKeysFromEnv())
      return issueToken({ ...deps, keyring }, { empresaId: empresa.id, sub: args.flags['--sub'], ttlSeconds: ttl })
    })
  },
}
