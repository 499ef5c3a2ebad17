// The CPU-bound work that runs in the worker pool (issue 17): each task is a pure function from a cloneable input to a
// cloneable output, so the same function runs in a worker (pool.ts) or inline (tests of the function itself). Signing a DTE, building and signing an envelope, drawing a PDF, opening a PKCS#12 file and reading a CAF
// each take from half a millisecond to seconds of one core; on the event loop they would stall every company. Only the
// workers load this module (task-worker.ts, at their first task): the main thread imports its types alone.
import type { EmitirDte } from '../domain/emision'
import type { RenderInput } from '../pdf/render-dte-pdf'
import { authorityKeys } from '../xml/authority-keys'
import { parseCaf, verifyCaf } from '../xml/caf'
import { buildDteXml, tedDataFor, type EmpresaEmisora } from '../xml/dte-xml'
import { buildEnvioBoleta, buildEnvioDte, envelopeBytes, type Caratula } from '../xml/envelope'
import { toLatin1Bytes } from '../xml/latin1'
import { signDte } from '../xml/signature'
import { buildTed } from '../xml/ted'
import { cafOf, signerOf, type CafMaterial, type SignerMaterial } from './signing-keys'

export interface SignDteTask {
  readonly empresa: EmpresaEmisora
  readonly folio: number
  readonly request: EmitirDte
  /** Santiago's business date and local timestamp of the issuance (TSTED and TmstFirma), read by the caller. */
  readonly today: string
  readonly timestamp: string
  readonly caf: CafMaterial
  readonly signer: SignerMaterial
}

/** The DTE built, stamped with the CAF's key and signed with the certificate: ISO-8859-1 bytes as stored (spec 4.1). */
export function signDteTask(task: SignDteTask): Uint8Array {
  const dteInput = { empresa: task.empresa, folio: task.folio, request: task.request, today: task.today }
  const ted = buildTed({ ...tedDataFor(dteInput), timestamp: task.timestamp }, cafOf(task.caf))
  return toLatin1Bytes(signDte(buildDteXml({ ...dteInput, ted, tmstFirma: task.timestamp }), signerOf(task.signer)))
}

export interface EnvelopeTask {
  readonly kind: 'EnvioDTE' | 'EnvioBOLETA'
  readonly dtes: readonly string[]
  readonly caratula: Caratula
  readonly signer: SignerMaterial
}

/** EnvioDTE or EnvioBOLETA, signed, as the ISO-8859-1 bytes uploaded and stored (docs/sii-protocol.md §5). */
export function envelopeTask(task: EnvelopeTask): Uint8Array {
  const input = { dtes: task.dtes, caratula: task.caratula, signer: signerOf(task.signer) }
  return envelopeBytes(task.kind === 'EnvioBOLETA' ? buildEnvioBoleta(input) : buildEnvioDte(input))
}

/** What an uploaded PKCS#12 file holds, with the key as PKCS#8 DER for the vault (never returned by the API). */
export interface OpenedPfx {
  readonly rutFirmante: string
  readonly subjectCn: string
  readonly serialNumber: string
  readonly notBefore: Date
  readonly notAfter: Date
  readonly pkcs8: Uint8Array
  readonly certificateDerBase64: string
}

/** Opens a PKCS#12 file (node-forge: seconds for files with many key-derivation iterations). Throws INVALID_CERTIFICATE. */
export async function openPfxTask(task: { readonly pfx: Uint8Array; readonly password: string }): Promise<OpenedPfx> {
  // node-forge and pdf-lib load on first use: a worker that only signs never holds them (memory at rest, issue 17).
  const { openPfx } = await import('../crypto/pfx')
  const cert = openPfx(task.pfx, task.password)
  return {
    rutFirmante: cert.rutFirmante,
    subjectCn: cert.subjectCn,
    serialNumber: cert.serialNumber,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    pkcs8: new Uint8Array(cert.signer.privateKey.export({ type: 'pkcs8', format: 'der' })),
    certificateDerBase64: cert.signer.certificateDerBase64,
  }
}

/** A CAF file read and verified against the authority keys (FRMA, RSASK ↔ RSAPK): its public fields and RSASK as DER. */
export interface ReadCaf {
  readonly rutEmisor: string
  readonly tipoDte: number
  readonly folioDesde: number
  readonly folioHasta: number
  readonly fechaAutorizacion: string
  readonly idk: number
  readonly cafXml: string
  readonly pkcs8: Uint8Array
}

/** Parses and verifies an uploaded CAF (DESIGN §8). Throws INVALID_CAF with the reason. */
export function readCafTask(task: { readonly cafXml: string; readonly allowSimulator: boolean }): ReadCaf {
  const caf = parseCaf(task.cafXml)
  verifyCaf(caf, authorityKeys({ allowSimulator: task.allowSimulator }))
  return {
    rutEmisor: caf.rutEmisor,
    tipoDte: caf.tipoDte,
    folioDesde: caf.folioDesde,
    folioHasta: caf.folioHasta,
    fechaAutorizacion: caf.fechaAutorizacion,
    idk: caf.idk,
    cafXml: caf.cafXml,
    pkcs8: new Uint8Array(caf.privateKey.export({ type: 'pkcs8', format: 'der' })),
  }
}

/** Every task by name (their time limits are in ./limits.ts, which the main thread reads without loading these). */
export const TASKS = {
  'sign-dte': signDteTask,
  'build-envelope': envelopeTask,
  'render-pdf': async (input: RenderInput) => (await import('../pdf/render-dte-pdf')).renderDtePdf(input),
  'open-pfx': openPfxTask,
  'read-caf': readCafTask,
} as const

export type TaskKind = keyof typeof TASKS
export type TaskInput<K extends TaskKind> = Parameters<(typeof TASKS)[K]>[0]
export type TaskOutput<K extends TaskKind> = Awaited<ReturnType<(typeof TASKS)[K]>>

/** Runs tasks: the worker pool (pool.ts). */
export interface TaskRunner {
  run<K extends TaskKind>(kind: K, input: TaskInput<K>): Promise<TaskOutput<K>>
  close(): Promise<void>
}
