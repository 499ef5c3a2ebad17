// Seed → signed seed → token, on both channels (docs/sii-protocol.md §6.3 for SOAP, §7.3 items 1–2 for the boleta REST API, whose
// token is distinct). Each seed is used once and at once (valid 2 minutes, §6.8). Failures come back as reasons,
// never throws; nothing here logs or returns the signed seed.
import type { Signer } from '../../domain/signer'
import { GET_TOKEN_ESTADOS, SEED_OK } from './codes'
import { exchange, passingFault, snippet } from './http'
import { PATHS } from './hosts'
import { callSoap, parseRespuesta, type Respuesta, type SoapOutcome } from './soap'
import type { TokenResult } from './token-cache'

export interface AuthContext {
  readonly fetch: typeof fetch
  readonly timeoutMs: number
  /** The origin that issues (and keys) the token: DTEWS host for SOAP, apicert/api for boletas. */
  readonly origin: string
  readonly signer: Signer
}

/** CrSeed.getSeed, then GetTokenFromSeed.getToken(pszXml) with the signed seed as a string parameter (§6.3). */
export async function fetchSoapToken(ctx: AuthContext): Promise<TokenResult> {
  const common = { fetch: ctx.fetch, timeoutMs: ctx.timeoutMs }
  const seedReply = await callSoap({ ...common, url: ctx.origin + PATHS.crSeed, operation: 'getSeed', params: [] })
  const seed = seedFrom(soapRespuesta(seedReply, 'getSeed'))
  if (seed.kind === 'failed') return seed
  const pszXml = await signedSeed(seed.seed, ctx.signer)
  const tokenReply = await callSoap({ ...common, url: ctx.origin + PATHS.getTokenFromSeed, operation: 'getToken', params: [['pszXml', pszXml]] })
  return tokenFrom(soapRespuesta(tokenReply, 'getToken'))
}

/** GET boleta.electronica.semilla, POST the signed seed to boleta.electronica.token; both answer SII:RESPUESTA (§7.3). */
export async function fetchBoletaToken(ctx: AuthContext): Promise<TokenResult> {
  const seedRes = await exchange(ctx.fetch, { method: 'GET', url: ctx.origin + PATHS.boletaSemilla, headers: { Accept: 'application/xml' } }, ctx.timeoutMs)
  const seed = seedFrom(restRespuesta(seedRes, 'semilla'))
  if (seed.kind === 'failed') return seed
  const body = await signedSeed(seed.seed, ctx.signer)
  const tokenRes = await exchange(ctx.fetch, {
    method: 'POST', url: ctx.origin + PATHS.boletaToken, headers: { 'Content-Type': 'application/xml', Accept: 'application/xml' }, body,
  }, ctx.timeoutMs)
  return tokenFrom(restRespuesta(tokenRes, 'token'))
}

/**
 * The XML signer (xml-crypto) loads with the first token, not at start: a server that has nothing to send yet does not
 * hold it (issue 17: memory at rest). Tokens are kept (token-cache.ts), so the import is paid once, at the first one.
 */
async function signedSeed(seed: string, signer: Signer): Promise<string> {
  const { signSeed } = await import('../../xml/seed-signature')
  return signSeed(seed, signer)
}

type Parsed = { readonly kind: 'respuesta'; readonly respuesta: Respuesta } | { readonly kind: 'failed'; readonly reason: string }

function soapRespuesta(reply: SoapOutcome, operation: string): Parsed {
  if (reply.kind === 'respuesta') return reply
  if (reply.kind === 'fault') return { kind: 'failed', reason: `${operation}: SOAP fault: ${reply.faultString}` }
  return { kind: 'failed', reason: `${operation}: ${reply.reason}` }
}

function restRespuesta(res: Awaited<ReturnType<typeof exchange>>, what: string): Parsed {
  if (res.kind === 'failure') return { kind: 'failed', reason: `boleta ${what}: ${res.reason}` }
  const fault = passingFault(res)
  if (fault !== null) return { kind: 'failed', reason: `boleta ${what}: ${fault}` }
  if (res.status < 200 || res.status > 299) return { kind: 'failed', reason: `boleta ${what}: HTTP ${res.status}: ${snippet(res.text)}` }
  try {
    return { kind: 'respuesta', respuesta: parseRespuesta(res.text) }
  } catch (err) {
    return { kind: 'failed', reason: `boleta ${what}: not an SII:RESPUESTA: ${snippet(err instanceof Error ? err.message : String(err))}` }
  }
}

/** `RESP_BODY/SEMILLA` with `RESP_HDR/ESTADO` 00; kept as a string, leading zeros included (§6.3 item 1). */
function seedFrom(parsed: Parsed): { readonly kind: 'seed'; readonly seed: string } | Extract<TokenResult, { kind: 'failed' }> {
  if (parsed.kind === 'failed') return parsed
  const estado = parsed.respuesta.hdr.ESTADO ?? ''
  const seed = parsed.respuesta.body.find((f) => f.name === 'SEMILLA')?.text ?? ''
  if (estado !== SEED_OK || !/^\d+$/.test(seed)) {
    return { kind: 'failed', reason: `getSeed: ESTADO ${estado || '(none)'}${seed === '' ? ', no SEMILLA' : ''}`, estado }
  }
  return { kind: 'seed', seed }
}

/** `RESP_BODY/TOKEN` with `RESP_HDR/ESTADO` 00; any other ESTADO is a failure with its meaning (§6.3 item 3). */
function tokenFrom(parsed: Parsed): TokenResult {
  if (parsed.kind === 'failed') return parsed
  const estado = parsed.respuesta.hdr.ESTADO ?? ''
  const token = parsed.respuesta.body.find((f) => f.name === 'TOKEN')?.text ?? ''
  if (estado === '00' && token !== '') return { kind: 'token', token }
  const glosa = parsed.respuesta.hdr.GLOSA || GET_TOKEN_ESTADOS[estado] || 'sin glosa'
  return { kind: 'failed', reason: `getToken: ESTADO ${estado || '(none)'}: ${glosa}`, estado, glosa }
}
