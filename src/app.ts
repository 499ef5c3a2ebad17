// Composition root: turns a Config into the Deps every door (HTTP, CLI, jobs) hands to the services.
import { systemClock, type Clock } from './clock'
import { jwtPublicKeyPathsFromEnv, masterKeyFromEnv, type Config } from './config'
import { loadMasterKey, loadOrCreateJwtPrivateKey, publicKeyOf, readPublicKeyFile } from './crypto/instance-keys'
import { createVault } from './crypto/vault'
import { openDatabase, type Store } from './db/open'
import type { Logger } from './log'
import type { Deps } from './services/deps'
import { buildKeyring, type JwtKeyring } from './services/tokens'

export async function loadKeyring(dataDir: string, publicKeyPaths: readonly string[]): Promise<JwtKeyring> {
  const privateKey = loadOrCreateJwtPrivateKey(dataDir)
  return buildKeyring(privateKey, publicKeyOf(privateKey), publicKeyPaths.map(readPublicKeyFile))
}

export async function buildDeps(config: Config, log: Logger, clock: Clock = systemClock): Promise<Deps> {
  const store = openDatabase(config.dataDir, { log })
  try {
    // Made at first start (DESIGN §2), so a backup taken right after start already holds it.
    const vault = createVault(loadMasterKey(config.dataDir, config.masterKey))
    const keyring = await loadKeyring(config.dataDir, config.jwtPublicKeyPaths)
    return { store, clock, log, config, keyring, vault }
  } catch (err) {
    store.close()
    throw err
  }
}

/** What an admin command needs: the store of its data dir (opened, migrated) and the clock. */
export function openAdminStore(dataDir: string, log: Logger): Store {
  return openDatabase(dataDir, { log })
}

export { masterKeyFromEnv, jwtPublicKeyPathsFromEnv }
