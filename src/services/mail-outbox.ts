// Delivery of the outgoing mail queue (DESIGN §13, docs/decisions/intercambio.md): every due row of `mail_outbox`,
// fairly across companies, through the company's own SMTP settings, retried on the webhook schedule (RETRY_DELAYS_MS)
// and then failed. Building and sending are CPU and network: no transaction is held across them, only the claim
// before and the outcome after are written.
import { isoTimestamp, santiagoTimestamp } from '../clock'
import { updateDteIntercambio } from '../db/dte-intercambio-store'
import { findDte } from '../db/dte-store'
import { findEmpresaById } from '../db/empresa-store'
import { claimMail, findDueMail, updateMail } from '../db/mail-outbox-store'
import type { DteRow, EmpresaRow, MailOutboxRow } from '../db/schema'
import { nextRetryDelayMs } from '../domain/events'
import { sendMail } from '../mail/smtp'
import type { OutgoingMail } from '../mail/types'
import { inBatches } from './batches'
import type { Deps } from './deps'
import { getDtePdf } from './dte-pdf'
import { mailboxSettings } from './mailbox'
import { openActiveCertificado } from './certificados'
import { siiCredentials } from './submit-dte'

/** DESIGN §13 (as every SII call, §6): each exchange with the SMTP server within 30 s. */
export const SEND_TIMEOUT_MS = 30_000
const PER_RUN = 100
/** At most this many of one company's mails per run, so a company with a backlog cannot starve the others. */
const PER_EMPRESA = 20
const AT_ONCE = 8
/** Longer than a whole send may take (mail/smtp.ts bounds it at five exchanges of SEND_TIMEOUT_MS). */
const LEASE_MS = 6 * SEND_TIMEOUT_MS
export const SIN_BUZON = 'buzón de intercambio sin configurar'

export type MailDeps = Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'tasks'>

/** One pass over the due mail; returns how many rows were attempted. */
export async function deliverDueMail(deps: MailDeps): Promise<number> {
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  const leaseUntil = isoTimestamp(new Date(now.getTime() + LEASE_MS))
  const claimed = findDueMail(deps.store.db, nowIso, { limit: PER_RUN, perEmpresa: PER_EMPRESA }).flatMap(
    (row) => claimMail(deps.store.db, row.id, nowIso, leaseUntil) ?? [],
  )
  const results = await inBatches(claimed, AT_ONCE, (row) => deliverOne(deps, row))
  for (const r of results)
    if (r.status === 'rejected') deps.log.error('job.item_failed', { job: 'mail', error: String(r.reason), stack: (r.reason as Error)?.stack })
  return claimed.length
}

type Prepared = { readonly ok: true; readonly mail: OutgoingMail } | { readonly ok: false; readonly error: string }

async function deliverOne(deps: MailDeps, row: MailOutboxRow): Promise<void> {
  const settings = mailboxSettings(deps, { empresaId: row.empresa_id })
  if (!settings) return recordFailure(deps, row, { error: SIN_BUZON, permanent: false })
  let prepared: Prepared
  try {
    prepared = await prepare(deps, row)
  } catch (err) {
    // A mail that cannot be built (a bug, a damaged row) follows the schedule and ends failed, instead of coming back
    // after every lease forever.
    prepared = { ok: false, error: `no se pudo preparar el correo: ${(err as Error)?.message ?? String(err)}` }
  }
  if (!prepared.ok) return recordFailure(deps, row, { error: prepared.error, permanent: false })
  const outcome = await sendMail(settings.smtp, prepared.mail, SEND_TIMEOUT_MS)
  if (outcome.ok) recordSent(deps, row, outcome.messageId)
  else recordFailure(deps, row, outcome)
}

async function prepare(deps: MailDeps, row: MailOutboxRow): Promise<Prepared> {
  const empresa = findEmpresaById(deps.store.db, row.empresa_id)
  if (!empresa) throw new Error(`empresa ${row.empresa_id} of mail ${row.id} is missing`)
  if (row.to_address === null) return { ok: false, error: 'sin destinatario' }
  if (row.kind === 'envio_dte') return prepareEnvioDte(deps, row, empresa, row.to_address)
  if (row.attachment === null) throw new Error(`mail ${row.id} (${row.kind}) has no attachment`)
  return {
    ok: true,
    mail: {
      to: row.to_address,
      subject: row.subject,
      text: `${empresa.razon_social} (RUT ${empresa.rut}) adjunta su respuesta de intercambio de documentos tributarios electrónicos.\n\nEnviado automáticamente por Timbre.\n`,
      attachments: [{ fileName: row.attachment_name ?? `${row.kind}.xml`, content: row.attachment, contentType: 'application/xml' }],
    },
  }
}

/**
 * The EnvioDTE to the receiver (Caratula RutReceptor = the receiver) with just this DTE, its stored signed bytes
 * untouched, signed with the company's active certificate at the first attempt and kept on the row, so every retry
 * sends the same file; plus its PDF, rendered as GET /dte/{id}/pdf renders it.
 */
async function prepareEnvioDte(deps: MailDeps, row: MailOutboxRow, empresa: EmpresaRow, to: string): Promise<Prepared> {
  const dte = row.dte_id === null ? undefined : findDte(deps.store.db, row.empresa_id, row.dte_id)
  if (!dte) throw new Error(`DTE ${row.dte_id} of mail ${row.id} is missing`)
  const kept = row.attachment !== null && row.attachment_name !== null ? { xml: row.attachment as Uint8Array, fileName: row.attachment_name } : null
  const built = kept ?? (await envioDteFor(deps, dte, empresa))
  if (!built) return { ok: false, error: 'sin certificado activo para firmar el envío' }
  if (!kept) updateMail(deps.store.db, row.id, { attachment: Buffer.from(built.xml), attachment_name: built.fileName, updated_at: isoTimestamp(deps.clock.now()) })
  const { xml, fileName } = built
  const pdf = await getDtePdf(deps, { empresaId: dte.empresa_id, id: dte.id, query: {} })
  return {
    ok: true,
    mail: {
      to,
      subject: row.subject,
      text:
        `${empresa.razon_social} (RUT ${empresa.rut}) le envía el documento tributario electrónico tipo ${dte.tipo_dte} N° ${dte.folio}, ` +
        `aceptado por el SII: el XML firmado (EnvioDTE) y su representación impresa en PDF.\n\nEnviado automáticamente por Timbre.\n`,
      attachments: [
        { fileName, content: xml, contentType: 'application/xml' },
        { fileName: `DTE-${dte.tipo_dte}-F${dte.folio}.pdf`, content: pdf.bytes, contentType: 'application/pdf' },
      ],
    },
  }
}

/** The EnvioDTE for the customer, built and signed in a worker; null while the company has no active certificate. */
async function envioDteFor(deps: MailDeps, dte: DteRow, empresa: EmpresaRow): Promise<{ xml: Uint8Array; fileName: string } | null> {
  const now = deps.clock.now()
  const creds = siiCredentials(deps, { empresaId: dte.empresa_id, now })
  if (!creds) return null
  const xml = await deps.tasks.run('build-envelope', {
    kind: 'EnvioDTE',
    dtes: [Buffer.from(dte.xml).toString('latin1')],
    caratula: {
      rutEmisor: empresa.rut,
      rutEnvia: creds.rutFirmante,
      rutReceptor: dte.rut_receptor,
      fchResol: empresa.fecha_resolucion,
      nroResol: empresa.numero_resolucion,
      tmstFirmaEnv: santiagoTimestamp(now),
    },
    signer: openActiveCertificado(deps, { empresaId: dte.empresa_id, now }).material,
  })
  return { xml, fileName: `EnvioDTE_${empresa.rut}_T${dte.tipo_dte}F${dte.folio}.xml` }
}

function recordSent(deps: MailDeps, row: MailOutboxRow, messageId: string): void {
  const at = isoTimestamp(deps.clock.now())
  deps.store.db.transaction(
    (tx) => {
      updateMail(tx, row.id, { status: 'sent', attempt: row.attempt + 1, sent_at: at, message_id: messageId, last_error: null, next_attempt_at: null, updated_at: at })
      if (row.kind === 'envio_dte' && row.dte_id !== null)
        updateDteIntercambio(tx, row.dte_id, { estado: 'enviado', email: row.to_address, enviado_at: at, updated_at: at })
    },
    { behavior: 'immediate' },
  )
  deps.log.info('mail.sent', { empresa_id: row.empresa_id, mail_id: row.id, kind: row.kind, dte_id: row.dte_id, attempt: row.attempt + 1 })
}

/** A temporary failure waits for the next turn of RETRY_DELAYS_MS; a permanent one (5xx), or the schedule's end, fails. */
function recordFailure(deps: MailDeps, row: MailOutboxRow, failure: { readonly error: string; readonly permanent: boolean }): void {
  const now = deps.clock.now()
  const at = isoTimestamp(now)
  const attempt = row.attempt + 1
  const delay = failure.permanent ? null : nextRetryDelayMs(attempt)
  deps.store.db.transaction(
    (tx) => {
      updateMail(tx, row.id, {
        status: delay === null ? 'failed' : 'pending',
        attempt,
        last_error: failure.error,
        next_attempt_at: delay === null ? null : isoTimestamp(new Date(now.getTime() + delay)),
        updated_at: at,
      })
      if (delay === null && row.kind === 'envio_dte' && row.dte_id !== null) updateDteIntercambio(tx, row.dte_id, { estado: 'error', updated_at: at })
    },
    { behavior: 'immediate' },
  )
  deps.log.warn('mail.failed', { empresa_id: row.empresa_id, mail_id: row.id, kind: row.kind, dte_id: row.dte_id, attempt, error: failure.error, final: delay === null })
}
