// What the SII answers, as Timbre reads it (docs/sii-protocol.md §6.4–§6.7, §7.3): the outcome of an upload, of an
// envelope's status and of a document's status, the reasons the SII gives, and the receiver's actions registered at
// the SII (RegistroReclamoDTE). Pure types and helpers: the SII client (sii/client/) produces them from the wire, the
// DTE state machine (domain/estados.ts) and the services read them.

/** The SII's two channels: SOAP DTEWS and DTEUpload for every type but the boletas, the boleta REST API for 39/41. */
export type SiiChannel = 'soap' | 'boleta'

/** The SII answer a reason came in (issue 13): the upload, the envelope's status, the document's status. */
export const OPERACIONES_SII = ['upload', 'estado_envio', 'estado_dte'] as const
export type OperacionSii = (typeof OPERACIONES_SII)[number]

/**
 * One reason the SII gave for a document, as the SII wrote it: `codigo` is its code (`DTE-3-101`, the upload's STATUS
 * `7`, an ESTADO `RFR` or `FAU`), `glosa` its text, `detalle` what the SII added (a schema message, the REST error's
 * `detalle`), `nivel` the SII's level when it gives one (3 rejects; 2 and 1 are reparos, docs/sii-protocol.md §7.3).
 */
export interface MotivoSii {
  readonly codigo: string
  readonly glosa: string
  readonly detalle: string | null
  readonly nivel: number | null
  readonly fuente: OperacionSii
}

/** A reparo (an observation on an accepted document) rather than a rejection: the SII's nivel below 3. */
export function isReparo(motivo: Pick<MotivoSii, 'nivel'>): boolean {
  return motivo.nivel !== null && motivo.nivel < 3
}

/** The same reason said twice (the envelope's detail and the document's status) is kept once, first one wins. */
export function uniqueMotivos(motivos: readonly MotivoSii[]): MotivoSii[] {
  const seen = new Set<string>()
  return motivos.filter((m) => {
    const key = `${m.codigo}\u0000${m.glosa}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** `tracking.glosa_sii` and `sii_status.glosa` from the reasons: "DTE-3-101: Folio … ; RCV-2-2: …"; null when none. */
export function glosaDeMotivos(motivos: readonly MotivoSii[]): string | null {
  return motivos.length === 0 ? null : motivos.map((m) => `${m.codigo}: ${m.glosa}`).join('; ')
}

export type UploadOutcome =
  | { kind: 'received'; trackId: string; raw: string }
  | { kind: 'already_received'; trackId: string | null; raw: string }
  | { kind: 'refused'; status: string; glosa: string; motivos: MotivoSii[]; raw: string }
  | { kind: 'not_authorized'; status: string; glosa: string; motivos: MotivoSii[]; raw: string }
  | { kind: 'retry'; reason: string; status?: string; raw?: string }

/** One type's counters of a processed envelope (getEstUp RESP_BODY groups, REST `estadistica`). */
export interface EnvioEstadistica {
  readonly tipo: number
  readonly informados: number
  readonly aceptados: number
  readonly rechazados: number
  readonly reparos: number
}

/** One document of a processed or rejected envelope, as the SII's detail lists it (REST `detalle_rep_rech`). */
export interface EnvioDocumento {
  readonly tipo: number
  readonly folio: number
  /** DOK, RCH, RPR, RLV. */
  readonly estado: string
  readonly descripcion: string | null
  /** Its `error[]` lines, each as `SECCION-NIVEL-CODIGO` with its text. */
  readonly motivos: MotivoSii[]
}

export type EnvioOutcome =
  | { kind: 'pending'; estado: string; glosa: string | null; numAtencion?: string | null; raw: string }
  | {
      kind: 'rejected'; estado: string; glosa: string | null; numAtencion?: string | null
      /** Why: the REST detail's error lines, else the ESTADO with its GLOSA (getEstUp gives nothing more, §6.5). */
      motivos: MotivoSii[]
      /** The REST detail of the envelope's documents; [] on the SOAP channel. */
      detalle: EnvioDocumento[]
      raw: string
    }
  | {
      kind: 'processed'; estado: 'EPR' | string; glosa: string | null
      /** getEstUp's NUM_ATENCION (the SII's reference of the answer); the REST status has none. */
      numAtencion?: string | null
      /** Sums over `estadistica`. */
      informados: number; aceptados: number; rechazados: number; reparos: number
      estadistica: EnvioEstadistica[]
      /**
       * Per-document results (REST `detalle_rep_rech`). getEstUp lists only counters (docs/sii-protocol.md §6.5: the
       * SOAP channel tells each document's reason in its result e-mail), so [] on the SOAP channel.
       */
      detalle: EnvioDocumento[]
      raw: string
    }
  | { kind: 'retry'; reason: string; raw?: string }

export type DteStatusOutcome =
  | {
      kind: 'status'; estado: string; glosaEstado: string | null; errCode: string | null; glosaErr: string | null; numAtencion: string | null
      /** The detail lines of GLOSA_ERR (or of the REST `descripcion`), else the ESTADO itself unless it is DOK. */
      motivos: MotivoSii[]
      raw: string
    }
  | { kind: 'retry'; reason: string; raw?: string }

/**
 * RegistroReclamoDTE (docs/sii-protocol.md §6.7): one document of type 33, 34 or 43, named as the SII names it, by its
 * issuer, type and folio. `rutEmisor` canonical `12345678-K`.
 */
export interface RegistroDoc {
  readonly rutEmisor: string
  readonly tipoDte: number
  readonly folio: number
}

/**
 * `ingresarAceptacionReclamoDoc`'s outcome. `rechazada`: the SII answered a codResp other than 0 (the order, the 8
 * days, an unknown document…): final for this call, asking again gives the same answer. codResp 7 ("Evento registrado
 * previamente") says the very event is already registered, e.g. by an earlier attempt whose answer was lost. `retry`:
 * the SII could not answer (outage, HTML page, timeout, codResp -1, token refused twice).
 */
export type RegistroOutcome =
  | { readonly kind: 'registrada'; readonly codResp: 0; readonly descResp: string }
  | { readonly kind: 'rechazada'; readonly codResp: number; readonly descResp: string }
  | { readonly kind: 'retry'; readonly reason: string }

/** One event of `listarEventosHistDoc`: the receiver's actions (ACD RCD ERM RFP RFT) and the SII's own (NCA ENC …). */
export interface EventoReceptor {
  /** codEvento as the SII writes it. */
  readonly accion: string
  /** descEvento. */
  readonly descripcion: string
  /** RFC 3339 UTC, from the SII's Chile-local `dd-mm-yyyy hh:mm:ss`. */
  readonly fecha: string
  /** Who registered it, canonical `12345678-K`; null when the SII names nobody. */
  readonly rutResponsable: string | null
}

/** `listarEventosHistDoc`'s outcome; a document with no events (codResp 16) is `eventos` with []. */
export type EventosOutcome =
  | { readonly kind: 'eventos'; readonly eventos: readonly EventoReceptor[] }
  | { readonly kind: 'rechazada'; readonly codResp: number; readonly descResp: string }
  | { readonly kind: 'retry'; readonly reason: string }

/** `consultarFechaRecepcionSii`'s outcome: the instant the SII received the document, RFC 3339 UTC. */
export type FechaRecepcionOutcome =
  | { readonly kind: 'fecha'; readonly fecha: string }
  | { readonly kind: 'rechazada'; readonly codResp: number; readonly descResp: string }
  | { readonly kind: 'retry'; readonly reason: string }

/**
 * The SII's per-document detail lines, `(DTE-3-101) Folio para este Tipo de documento ya fue recibido en el SII`:
 * section, nivel and number in parentheses, then the text. It is the form of REVISIONDTE/DETALLE in the SII's result
 * e-mail (LibreDTE keys its help texts on it: `DTE-3-101`, `CAF-3-517`, `REF-3-750`), of the boleta REST error lines
 * (`seccion`, `nivel`, `codigo`, docs/sii-protocol.md §7.3) and of the simulator's getEstDte GLOSA_ERR
 * (docs/decisions/simulator.md), which may add ` — <detalle>`. Every line of `text` becomes a reason; text with no such
 * line gives none.
 */
export function detalleMotivos(text: string | null, fuente: OperacionSii): MotivoSii[] {
  if (text === null) return []
  const codes = [...text.matchAll(DETALLE_CODE)]
  return codes.map((m, i) => {
    const start = (m.index ?? 0) + m[0].length
    const end = codes[i + 1]?.index ?? text.length
    const seccion = (m[1] ?? '').replace(/\s+/g, ' ')
    const line = text.slice(start, end).replace(/[\s;]+$/, '').trim()
    // The simulator adds its own detail after an em dash, a character ISO-8859-1 (the SII's) cannot carry.
    const [glosa = '', ...rest] = line.split(' — ')
    return { codigo: `${seccion}-${m[2]}-${m[3]}`, glosa, detalle: rest.length > 0 ? rest.join(' — ') : null, nivel: Number(m[2]), fuente }
  })
}

/** `(DTE-3-101)`, `(RCV-2-2)`, LibreDTE's `(REF L[5] -3-758)`. */
const DETALLE_CODE = /\(\s*([A-Z][A-Z0-9]*(?:\s*L\[\d+\])?)\s*-\s*(\d+)\s*-\s*(\d+)\s*\)\s*/g
