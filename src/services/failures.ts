// What a thrown value means to a caller, decided once for every door (DESIGN §12): a TimbreError is itself; the
// database held by another process past its 5 s busy timeout is SERVICE_UNAVAILABLE, worth retrying; anything else is
// a bug, which the door logs with its stack and answers INTERNAL_ERROR.
import { isDatabaseBusy } from '../db/open'
import { storageUnwritableCode } from '../db/storage-errors'
import { TimbreError } from '../errors'

export function knownFailure(err: unknown): TimbreError | null {
  if (err instanceof TimbreError) return err
  if (isDatabaseBusy(err)) return new TimbreError('SERVICE_UNAVAILABLE')
  const storage = storageUnwritableCode(err)
  // Nothing of the request was stored (the statement and its transaction were rolled back), so retrying is safe; the
  // cause is the operator's to fix, and the integrator is told it is not theirs.
  if (storage !== null)
    return new TimbreError('SERVICE_UNAVAILABLE', {
      message: storage === 'SQLITE_FULL'
        ? 'El almacenamiento del servidor está lleno: no se guardó nada de esta solicitud.'
        : 'El almacenamiento del servidor no admite escritura: no se guardó nada de esta solicitud.',
      context: { motivo: storage === 'SQLITE_FULL' ? 'almacenamiento_lleno' : 'almacenamiento_sin_escritura' },
    })
  return null
}

/** knownFailure's answer for a store that cannot take a write. */
export function isStorageFailure(err: TimbreError): boolean {
  const motivo = err.extra.context?.motivo
  return err.code === 'SERVICE_UNAVAILABLE' && typeof motivo === 'string' && motivo.startsWith('almacenamiento_')
}
