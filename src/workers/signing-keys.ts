// Private keys as they cross into a worker: PKCS#8 DER bytes and an id (a KeyObject cannot be posted). Each worker
// turns them back into KeyObjects once per id and keeps them (a re-parse per signature costs, docs/stack-notes.md).
// The bytes live only in this process's memory: they are never logged, and a task error never carries its input.
import { createPrivateKey, type KeyObject } from 'node:crypto'
import type { Signer } from '../domain/signer'
import { readCafElement, type Caf } from '../xml/caf'
import { parseXml } from '../xml/latin1'

/** A certificate's signing identity, cloneable: what `Signer` holds, with the key as PKCS#8 DER. */
export interface SignerMaterial {
  /** The certificate's id: the cache key (a certificate's key never changes under its id). */
  readonly id: string
  readonly pkcs8: Uint8Array
  readonly certificateDerBase64: string
  readonly modulusBase64: string
  readonly exponentBase64: string
}

/** A CAF's stamping material, cloneable: the flat `<CAF>` element and RSASK as PKCS#8 DER. */
export interface CafMaterial {
  readonly id: string
  readonly cafXml: string
  readonly pkcs8: Uint8Array
}

/** The cloneable form of a Signer, for a task's input (the main thread keeps the DER beside the KeyObject). */
export function signerMaterial(id: string, signer: Signer, pkcs8: Uint8Array): SignerMaterial {
  return { id, pkcs8, certificateDerBase64: signer.certificateDerBase64, modulusBase64: signer.modulusBase64, exponentBase64: signer.exponentBase64 }
}

// Bounded: an instance serving many companies keeps the keys it used last, not every key it ever saw.
const MAX_KEYS = 512
const signers = new Map<string, Signer>()
const cafs = new Map<string, Caf>()

function remember<T>(cache: Map<string, T>, id: string, value: T): T {
  if (cache.size >= MAX_KEYS) cache.delete(cache.keys().next().value!)
  cache.set(id, value)
  return value
}

function privateKeyOf(pkcs8: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' })
}

export function signerOf(material: SignerMaterial): Signer {
  return (
    signers.get(material.id) ??
    remember(signers, material.id, {
      privateKey: privateKeyOf(material.pkcs8),
      certificateDerBase64: material.certificateDerBase64,
      modulusBase64: material.modulusBase64,
      exponentBase64: material.exponentBase64,
    })
  )
}

export function cafOf(material: CafMaterial): Caf {
  return (
    cafs.get(material.id) ??
    remember(cafs, material.id, {
      ...readCafElement(parseXml(material.cafXml).documentElement as unknown as Element),
      privateKey: privateKeyOf(material.pkcs8),
      rsaPubk: null,
    })
  )
}
