// The master key that opens this data dir's sealed secrets (DESIGN §2, §3). A data dir restored from a `--no-keys`
// backup, or served with the wrong TIMBRE_MASTER_KEY, holds certificates, CAFs and webhook secrets no key at hand
// opens: starting anyway would say `ready` and answer every issuance with 500, and generating a new key over that
// data would make the mistake permanent. So `serve` refuses to start and says what to do.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { InstanceKeyError, loadMasterKey, MASTER_KEY_FILE } from '../crypto/instance-keys'
import { createVault, type Vault } from '../crypto/vault'
import { sealedSecretSamples } from '../db/sealed-secrets'
import type { Deps } from './deps'

/** Called by app.ts while it builds Deps: the store is opened, the vault is what this makes. */
export function openVault(deps: Pick<Deps, 'store'>, input: { masterKeyFromEnv: string | null }): Vault {
  const { store } = deps
  const { masterKeyFromEnv } = input
  const samples = sealedSecretSamples(store.db)
  const keyFile = resolve(store.dataDir, MASTER_KEY_FILE)
  if (masterKeyFromEnv === null && !existsSync(keyFile) && samples.length > 0)
    throw new InstanceKeyError(
      `${resolve(store.dataDir)} guarda certificados, CAF o secretos de webhooks sellados y no tiene ${MASTER_KEY_FILE}: ` +
        `sin la llave maestra original no se pueden usar (¿un respaldo restaurado con --no-keys?). Copie la ${MASTER_KEY_FILE} ` +
        `original a ${keyFile} (permisos 0600) o defina TIMBRE_MASTER_KEY. Timbre no crea una llave nueva sobre datos sellados.`,
    )
  const vault = createVault(loadMasterKey(store.dataDir, masterKeyFromEnv))
  for (const sample of samples) {
    try {
      vault.open(sample.sealed, sample.purpose)
    } catch {
      const source = masterKeyFromEnv === null ? keyFile : 'TIMBRE_MASTER_KEY'
      throw new InstanceKeyError(
        `la llave maestra de ${source} no abre los secretos sellados de ${resolve(store.dataDir)} (${sample.purpose.split(':')[0]}): ` +
          `use la llave maestra con que se guardaron (la master.key del respaldo completo, o el valor correcto de TIMBRE_MASTER_KEY).`,
      )
    }
  }
  return vault
}
