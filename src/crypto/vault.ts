// Secrets at rest (DESIGN §2, issue 5): AES-256-GCM under the master key. Each blob is bound to what it is
// (associated data such as `certificado:<id>`), so a ciphertext copied onto another row does not decrypt.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const VERSION = 1
const IV_BYTES = 12
const TAG_BYTES = 16

export interface Vault {
  seal(plaintext: Uint8Array, purpose: string): Uint8Array
  open(sealed: Uint8Array, purpose: string): Buffer
}

export class VaultError extends Error {}

/** Blob layout: version (1) ‖ IV (12) ‖ tag (16) ‖ ciphertext. */
export function createVault(masterKey: Uint8Array): Vault {
  if (masterKey.length !== 32) throw new VaultError('the master key must be 32 bytes')
  const key = Buffer.from(masterKey)
  return {
    seal(plaintext, purpose) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(purpose, 'utf8'))
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()])
      return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body])
    },
    open(sealed, purpose) {
      const blob = Buffer.from(sealed)
      if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== VERSION) throw new VaultError('not a sealed secret of this version')
      const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(1, 1 + IV_BYTES))
      decipher.setAAD(Buffer.from(purpose, 'utf8'))
      decipher.setAuthTag(blob.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES))
      try {
        return Buffer.concat([decipher.update(blob.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()])
      } catch {
        // Wrong master key, tampered blob, or a blob of another row: all the same to the caller.
        throw new VaultError('a stored secret cannot be decrypted with this master key')
      }
    },
  }
}
