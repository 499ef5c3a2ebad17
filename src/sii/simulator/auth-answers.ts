// getSeed's and getToken's RESPUESTA (docs/sii-protocol.md §6.3): DTEWS wraps it in SOAP, the boleta REST API sends it as it
// is (§7.3 items 1–2). One writer for both channels, as src/sii/client/auth.ts has one reader.
import { issueSeed, issueToken } from './auth'
import { respuesta, type Field } from './soap'
import type { Channel, SimulatorStore } from './store'

/** A new seed of this channel: ESTADO 00 in RESP_HDR, SEMILLA in RESP_BODY. */
export function seedRespuesta(store: SimulatorStore, channel: Channel, now: Date): string {
  return respuesta([['ESTADO', '00']], [['SEMILLA', issueSeed(store, channel, now)]])
}

/** A token for the signed seed: ESTADO and GLOSA in RESP_HDR, TOKEN in RESP_BODY only when ESTADO is 00. */
export function tokenRespuesta(store: SimulatorStore, channel: Channel, signedSeed: string, now: Date): string {
  const outcome = issueToken(store, channel, signedSeed, now)
  const hdr: Field[] = [['ESTADO', outcome.estado], ['GLOSA', outcome.glosa]]
  return outcome.token === null ? respuesta(hdr) : respuesta(hdr, [['TOKEN', outcome.token]])
}
