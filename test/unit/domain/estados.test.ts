// DESIGN §6's table, row by row, against the domain's transitions (domain/estados.ts): the SII's code, how the client
// classifies it (sii/client/codes.ts), and the state and wait that follow. A change to either side fails here.
import { describe, expect, test } from 'bun:test'
import {
  afterDocumentStatus, afterEnvioStatus, afterUpload, backoffMs, ESTADOS_DTE, ESTADOS_EN_EL_SII, ESTADOS_FINALES, ESTADOS_POR_ENVIAR,
  isFinal, isTakenBySubmission, nextAttemptAt, onSubmissionRequested, SII_TIMING, timingWithBackoff, type Espera, type EstadoDte,
} from '../../../src/domain/estados'
import type { DteStatusOutcome, EnvioOutcome, MotivoSii, UploadOutcome } from '../../../src/domain/sii-respuestas'
import { ENVIO_ESTADOS, UPLOAD_STATUS } from '../../../src/sii/client/codes'

const upload = (kind: UploadOutcome['kind'], status = '0'): UploadOutcome => {
  switch (kind) {
    case 'received':
      return { kind, trackId: '123', raw: '' }
    case 'already_received':
      return { kind, trackId: null, raw: '' }
    case 'refused':
    case 'not_authorized':
      return { kind, status, glosa: 'g', motivos: [], raw: '' }
    case 'retry':
      return { kind, reason: 'r', status }
  }
}

const envio = (estado: string, counters = { rechazados: 0, reparos: 0 }): EnvioOutcome => {
  const kind = ENVIO_ESTADOS[estado]?.kind
  if (kind === 'pending') return { kind, estado, glosa: null, raw: '' }
  if (kind === 'rejected') return { kind, estado, glosa: null, motivos: [], detalle: [], raw: '' }
  if (kind === 'processed') return { kind, estado, glosa: null, informados: 1, aceptados: 1 - counters.rechazados - counters.reparos, ...counters, estadistica: [], detalle: [], raw: '' }
  throw new Error(`ENVIO_ESTADOS does not classify ${estado}`)
}

const reparo: MotivoSii = { codigo: 'RCV-2-2', glosa: 'con observaciones', detalle: null, nivel: 2, fuente: 'estado_dte' }
const documento = (estado: string, motivos: MotivoSii[] = []): DteStatusOutcome =>
  ({ kind: 'status', estado, glosaEstado: null, errCode: null, glosaErr: null, numAtencion: null, motivos, raw: '' })

type Row = readonly [from: EstadoDte, event: string, to: EstadoDte, espera: Espera | null, apply: () => { estado: EstadoDte; espera?: Espera } | null]

// DESIGN §6 "DTE states", in its order.
const TABLE: readonly Row[] = [
  ['firmado', 'taken by the submission job (auto_send true) or POST /dte/{id}/enviar', 'enviando', null, () => (isTakenBySubmission('firmado', true) ? { estado: onSubmissionRequested('firmado')! } : null)],
  ['firmado', 'auto_send false, nothing else', 'firmado', null, () => (isTakenBySubmission('firmado', false) ? null : { estado: 'firmado' })],
  ['enviando', 'upload STATUS 0 with a track id', 'procesando', 'ninguna', () => afterUpload(upload(UPLOAD_STATUS['0']!.kind as UploadOutcome['kind']))],
  ['enviando', 'upload STATUS 99 (already received)', 'procesando', 'ninguna', () => afterUpload(upload(UPLOAD_STATUS['99']!.kind as UploadOutcome['kind']))],
  ['enviando', 'boleta envío RPT (already received)', 'procesando', 'ninguna', () => afterUpload(upload('already_received'))],
  ...(['3', '9'] as const).map((s): Row => ['enviando', `upload STATUS ${s}`, 'enviando', 'submit', () => afterUpload(upload(UPLOAD_STATUS[s]!.kind as UploadOutcome['kind'], s))]),
  // STATUS 5 is the token: the client renews it and asks again; if the SII still refuses, a passing cause.
  ['enviando', 'upload STATUS 5 after the token was renewed', 'enviando', 'submit', () => afterUpload(upload('retry', '5'))],
  ...['a timeout', 'an HTML page', 'an empty answer', 'a 5xx', 'the network'].map((cause): Row => ['enviando', `upload: ${cause}`, 'enviando', 'submit', () => afterUpload({ kind: 'retry', reason: cause })]),
  ...(['1', '6'] as const).map((s): Row => ['enviando', `upload STATUS ${s}`, 'enviando', 'notAuthorized', () => afterUpload(upload(UPLOAD_STATUS[s]!.kind as UploadOutcome['kind'], s))]),
  ...(['2', '7', '8'] as const).map((s): Row => ['enviando', `upload STATUS ${s}`, 'rechazado', 'ninguna', () => afterUpload(upload(UPLOAD_STATUS[s]!.kind as UploadOutcome['kind'], s))]),
  ...['REC', 'SOK', 'FOK', 'PRD', 'CRT'].map((e): Row => ['procesando', `envelope ${e}`, 'procesando', 'track', () => afterEnvioStatus(envio(e), undefined)]),
  ['procesando', 'envelope status query failed', 'procesando', 'track', () => afterEnvioStatus({ kind: 'retry', reason: 'timeout' }, undefined)],
  ...['RSC', 'RCT', 'RFR', 'RCH', 'RCO', 'VOF'].map((e): Row => ['procesando', `envelope ${e}`, 'rechazado', 'ninguna', () => afterEnvioStatus(envio(e), undefined)]),
  // RPT is "99 / RPT already received" (DESIGN §6 row 3), not a refusal: the document is in an earlier envelope, getEstDte decides at once.
  ['procesando', 'envelope RPT (a repeat of an envelope the SII holds)', 'procesando', 'ninguna', () => afterEnvioStatus(envio('RPT'), undefined)],
  ['procesando', 'EPR with rechazados > 0', 'rechazado', 'ninguna', () => afterEnvioStatus(envio('EPR', { rechazados: 1, reparos: 0 }), undefined)],
  ['procesando', 'EPR with reparos > 0', 'con_reparos', 'ninguna', () => afterEnvioStatus(envio('EPR', { rechazados: 0, reparos: 1 }), undefined)],
  ['procesando', 'EPR, all accepted', 'aceptado', 'ninguna', () => afterEnvioStatus(envio('EPR'), undefined)],
  ['procesando', "EPR, this DTE's own line RCH", 'rechazado', 'ninguna', () => afterEnvioStatus(envio('EPR'), { estado: 'RCH' })],
  ['procesando', "EPR, this DTE's own line RLV", 'con_reparos', 'ninguna', () => afterEnvioStatus(envio('EPR'), { estado: 'RLV' })],
  // STATUS 99 with no track id: resolved by getEstDte.
  ['procesando', 'no track id, getEstDte DOK', 'aceptado', 'ninguna', () => afterDocumentStatus(documento('DOK'))],
  ['procesando', 'no track id, getEstDte DOK with a reparo', 'con_reparos', 'ninguna', () => afterDocumentStatus(documento('DOK', [reparo]))],
  ['procesando', 'no track id, getEstDte FAU (not yet)', 'procesando', 'track', () => afterDocumentStatus(documento('FAU'))],
  ['procesando', 'no track id, getEstDte failed', 'procesando', 'track', () => afterDocumentStatus({ kind: 'retry', reason: 'timeout' })],
]

describe('DESIGN §6, row by row', () => {
  test.each(TABLE.map((r) => [r[0], r[1], r[2], r[3], r[4]] as const))('%s + %s → %s (wait: %s)', (from, _event, to, espera, apply) => {
    // The row's "from" is a state the job that applies it takes (or POST /enviar, for firmado).
    expect(from === 'firmado' || (ESTADOS_POR_ENVIAR as readonly string[]).includes(from) || (ESTADOS_EN_EL_SII as readonly string[]).includes(from)).toBe(true)
    const next = apply()
    expect(next).not.toBeNull()
    expect(next!.estado).toBe(to)
    if (espera !== null) expect(next!.espera).toBe(espera)
    // A final state is reached with nothing left to wait for; the jobs then never look at it again.
    if (isFinal(to)) expect(next!.espera).toBe('ninguna')
    if (next!.espera !== undefined) {
      const now = new Date('2026-06-01T12:00:00Z')
      const at = nextAttemptAt({ estado: next!.estado, espera: next!.espera }, now, 1, SII_TIMING)
      if (isFinal(to)) expect(at).toBeNull()
      else if (next!.espera === 'ninguna') expect(at).toEqual(now)
      else expect(at!.getTime() - now.getTime()).toBe(SII_TIMING[next!.espera as Exclude<Espera, 'ninguna'>].firstMs)
    }
  })

  test('only firmado can be sent; final states never change (no job takes them, no request moves them)', () => {
    for (const estado of ESTADOS_DTE) expect(onSubmissionRequested(estado)).toBe(estado === 'firmado' ? 'enviando' : null)
    for (const final of ESTADOS_FINALES) {
      expect(ESTADOS_POR_ENVIAR as readonly string[]).not.toContain(final)
      expect(ESTADOS_EN_EL_SII as readonly string[]).not.toContain(final)
    }
  })

  test('every SII code the table names is classified by the client as the row says', () => {
    expect(Object.fromEntries(['0', '1', '2', '3', '5', '6', '7', '8', '9', '99'].map((s) => [s, UPLOAD_STATUS[s]!.kind]))).toEqual({
      '0': 'received', '1': 'not_authorized', '2': 'refused', '3': 'retry', '5': 'token_invalid', '6': 'not_authorized', '7': 'refused', '8': 'refused', '9': 'retry', '99': 'already_received',
    })
  })

  test('back-offs: uploads 30 s doubling to 30 min, not authorised to 6 h, queries 30 s to 30 min (DESIGN §6)', () => {
    expect([1, 2, 3, 7, 8, 30].map((n) => backoffMs(n, SII_TIMING.submit) / 1000)).toEqual([30, 60, 120, 1800, 1800, 1800])
    expect(backoffMs(20, SII_TIMING.notAuthorized) / 3600_000).toBe(6)
    expect([1, 7, 50].map((n) => backoffMs(n, SII_TIMING.track) / 1000)).toEqual([30, 1800, 1800])
  })

  test('--sii-backoff 1s:10s: uploads and queries 1 s doubling to 10 s; not authorised still up to 6 h', () => {
    const t = timingWithBackoff({ firstMs: 1000, capMs: 10_000 })
    expect([1, 2, 3, 4, 5, 30].map((n) => backoffMs(n, t.submit) / 1000)).toEqual([1, 2, 4, 8, 10, 10])
    expect([1, 5].map((n) => backoffMs(n, t.track) / 1000)).toEqual([1, 10])
    expect(backoffMs(1, t.notAuthorized) / 1000).toBe(1)
    expect(backoffMs(30, t.notAuthorized) / 3600_000).toBe(6)
  })
})
