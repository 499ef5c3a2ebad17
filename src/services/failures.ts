// What a thrown value means to a caller, decided once for every door (DESIGN §12): a TimbreError is itself; the
// database held by another process past its 5 s busy timeout is SERVICE_UNAVAILABLE, worth retrying; anything else is
// a bug, which the door logs with its stack and answers INTERNAL_ERROR.
import { isDatabaseBusy } from '../db/open'
import { TimbreError } from '../errors'

export function knownFailure(err: unknown): TimbreError | null {
  if (err instanceof TimbreError) return err
  if (isDatabaseBusy(err)) return new TimbreError('SERVICE_UNAVAILABLE')
  return null
}
