// Keys that belong to this installation, kept in the data dir: the master key (encrypts private keys at rest,
// DESIGN §2) and the RS256 key that signs `timbre token issue` tokens (DESIGN §3). Both 0600, made at first use.
import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { OperatorError } from '../errors'

export const MASTER_KEY_FILE = 'master.key'
export const JWT_PRIVATE_KEY_FILE = 'jwt-private.pem'

export class InstanceKeyError extends OperatorError {}

/** Writes a new file only if none exists (O_EXCL), so two processes starting at once agree on one key. */
function createExclusive(path: string, contents: string): void {
  try {
    writeFileSync(path, contents, { mode: 0o600, flag: 'wx' })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
}

function decodeMasterKey(base64: string, source: string): Buffer {
  const key = Buffer.from(base64.trim(), 'base64')
  if (key.length !== 32) throw new InstanceKeyError(`${source}: la llave maestra debe ser de 32 bytes en base64 (tiene ${key.length})`)
  return key
}

/** TIMBRE_MASTER_KEY when set, else `<data-dir>/master.key`, created on first start. */
export function loadMasterKey(dataDir: string, fromEnv: string | null): Buffer {
  if (fromEnv !== null) return decodeMasterKey(fromEnv, 'TIMBRE_MASTER_KEY')
  const path = join(dataDir, MASTER_KEY_FILE)
  if (!existsSync(path)) createExclusive(path, `${randomBytes(32).toString('base64')}\n`)
  chmodSync(path, 0o600)
  return decodeMasterKey(readFileSync(path, 'utf8'), path)
}

export function loadOrCreateJwtPrivateKey(dataDir: string): KeyObject {
  const path = join(dataDir, JWT_PRIVATE_KEY_FILE)
  if (!existsSync(path)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    createExclusive(path, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
  }
  return createPrivateKey(readFileSync(path, 'utf8'))
}

/**
 * The same key, made off the event loop when it does not exist yet: `serve` starts this before opening the database,
 * so generating RSA-2048 (50–100 ms) overlaps the migrations of a fresh data dir instead of adding to them.
 */
export async function loadOrCreateJwtPrivateKeyInBackground(dataDir: string): Promise<KeyObject> {
  const path = join(dataDir, JWT_PRIVATE_KEY_FILE)
  if (!existsSync(path)) {
    const privateKey = await new Promise<KeyObject>((resolve, reject) =>
      generateKeyPair('rsa', { modulusLength: 2048 }, (err, _publicKey, key) => (err ? reject(err) : resolve(key))),
    )
    createExclusive(path, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
  }
  // Read back, not the generated key: a process that lost the O_EXCL race uses the winner's key.
  return createPrivateKey(readFileSync(path, 'utf8'))
}

export function publicKeyOf(privateKey: KeyObject): KeyObject {
  return createPublicKey(privateKey)
}

export function readPublicKeyFile(path: string): KeyObject {
  try {
    const key = createPublicKey(readFileSync(path, 'utf8'))
    if (key.asymmetricKeyType !== 'rsa') throw new InstanceKeyError('no es una llave RSA')
    return key
  } catch (err) {
    throw new InstanceKeyError(`TIMBRE_JWT_PUBLIC_KEYS: no se pudo leer ${path}: ${(err as Error).message}`)
  }
}
