// Folios (DESIGN §8, §14 and §17): the company's CAFs per document type with what is left of each range, its
// stretches and when its folios stop serving; folios asked of the SII, their history, automatic mode and the annulment
// of unused folios (folios-sii.tsx); and the upload of a new CAF, which always stays. The same services as GET and
// POST /caf, POST /caf/solicitar, GET /caf/solicitudes, POST /caf/{id}/anular and /empresa/folios-automaticos, with
// the same inputs.
import { Elysia } from 'elysia'
import { santiagoDate } from '../../clock'
import { TIPOS_DTE, isTipoDte, type TipoDte } from '../../domain/emision'
import { cafVenceEl } from '../../domain/folios'
import { TIPOS } from '../../domain/tipos'
import { TimbreError, validationError, type FieldError } from '../../errors'
import { STATUS } from '../../contracts/statuses'
import { isUuid } from '../../contracts/common'
import { pathId } from '../../contracts/params'
import { getCaf, listCafs, registerCaf, type CafRecord } from '../../services/cafs'
import {
  anularCaf, getCafSolicitud, getFoliosAutomaticos, listSolicitudes, setFoliosAutomaticos, solicitarCaf, type CafSolicitudRecord,
} from '../../services/caf-solicitudes'
import { getCertificadoStatus } from '../../services/certificados'
import type { ConsoleSession } from '../../services/console-sessions'
import type { Deps } from '../../services/deps'
import { empresaIdOf, formOf, requireWrite, sessionOf, textField } from '../context'
import { ErrorSummary, Field, SelectField, failureOf, formatAmbiente, formatDateTime, formatFecha, formatNumber, NO_ERRORS, type Failure } from '../forms'
import { CsrfInput, fragmentResponse, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'
import {
  AnularForm, AutomaticosSection, Historial, PorAnularSection, SolicitarForm, Tramos, anularBodyOf, automaticosBodyOf, isOpenSolicitud, prefixedFailure,
  solicitarBodyOf, tramoAnulable, type FailedForm,
} from './folios-sii'

const BASE = `${CONSOLE_PREFIX}/folios`
const DAY_MS = 86_400_000
/** A CAF whose folios stop serving within this many days is flagged, so a new one is asked of the SII in time. */
const VENCE_PRONTO_DIAS = 30
/** POST /caf's bound on caf_xml (SubirCafBody, issue 12): a real CAF is about 2 KB. */
const CAF_MAX_BYTES = 65_536
/** The largest page listCafs serves (GET /caf's limit). */
const LIST_PAGE = 100
/** Requests and annulments the history shows, newest first. */
const HISTORIAL = 20

const FIELDS = ['tipo_dte', 'caf']

/** Every CAF of the company, newest first, read page by page as GET /caf serves them. */
function allCafs(deps: Deps, empresaId: string): CafRecord[] {
  const all: CafRecord[] = []
  for (;;) {
    const page = listCafs(deps, { empresaId, afterId: all.at(-1)?.id ?? null, limit: LIST_PAGE })
    all.push(...page)
    if (page.length < LIST_PAGE) return all
  }
}

function estadoOf(c: CafRecord): { text: string; badge: string } {
  if (c.anulacion?.estado === 'anulado') return { text: 'Anulado', badge: 'badge-neutral' }
  if (c.anulacion?.estado === 'en_curso') return { text: 'En anulación', badge: 'badge-warn' }
  if (c.tramos.some((t) => t.estado === 'por_anular')) return { text: 'Vencido: por anular', badge: 'badge-bad' }
  if (c.is_active) return { text: 'Vigente', badge: 'badge-ok' }
  if (c.folios_disponibles === 0) return { text: 'Agotado', badge: 'badge-neutral' }
  return { text: 'Vencido', badge: 'badge-bad' }
}

/** The last day its folios serve (DESIGN §8: 180 days for 33, 43, 46, 56 and 61), and how close that is. */
function Vigencia(props: { caf: CafRecord; today: string }) {
  const vence = cafVenceEl(props.caf.tipo_dte, props.caf.fecha_autorizacion)
  if (vence === null) return <span class="muted">No vence</span>
  const days = Math.round((Date.parse(`${vence}T00:00:00Z`) - Date.parse(`${props.today}T00:00:00Z`)) / DAY_MS)
  const fecha = formatFecha(vence)
  if (days < 0) return <span class="badge badge-bad">Venció el {fecha}</span>
  if (props.caf.folios_disponibles > 0 && days <= VENCE_PRONTO_DIAS)
    return <span class="badge badge-warn">{days === 0 ? `Vence hoy (${fecha})` : `Vence en ${days} ${days === 1 ? 'día' : 'días'} (${fecha})`}</span>
  return <span>Hasta el {fecha}</span>
}

function TipoGroup(props: {
  tipo: TipoDte
  cafs: readonly CafRecord[]
  today: string
  highlight: string | null
  session: ConsoleSession
  canEdit: boolean
  failed: FailedForm | null
  openAnulaciones: ReadonlySet<string>
}) {
  const { tipo, cafs } = props
  const left = cafs.filter((c) => c.is_active).reduce((n, c) => n + c.folios_disponibles, 0)
  const headingId = `tipo-${tipo}`
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {tipo} · {TIPOS[tipo].nombre}
      </h2>
      <p>
        {left === 0 ? <span class="badge badge-bad">Sin folios vigentes</span> : <strong>{formatNumber(left)} folios disponibles en CAF vigentes</strong>}
      </p>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Rango</th>
              <th scope="col" class="num">
                Disponibles
              </th>
              <th scope="col" class="num">
                Siguiente folio
              </th>
              <th scope="col">Autorización</th>
              <th scope="col">Vigencia</th>
              <th scope="col">Estado</th>
              <th scope="col">Tramos</th>
              <th scope="col">Ambiente</th>
              <th scope="col">Cargado</th>
              {props.canEdit && (
                <th scope="col">
                  <span class="muted">Acción</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {cafs.map((c) => {
              const estado = estadoOf(c)
              return (
                <tr id={`caf-${c.id}`} aria-current={c.id === props.highlight ? 'true' : undefined}>
                  <td>
                    {formatNumber(c.folio_desde)} – {formatNumber(c.folio_hasta)}
                  </td>
                  <td class="num">{formatNumber(c.folios_disponibles)}</td>
                  {/* folios_disponibles counts from the next folio to the end of the range (domain/folios.ts). */}
                  <td class="num">{c.folios_disponibles > 0 ? formatNumber(c.folio_hasta - c.folios_disponibles + 1) : '—'}</td>
                  <td>{formatFecha(c.fecha_autorizacion)}</td>
                  <td>
                    <Vigencia caf={c} today={props.today} />
                  </td>
                  <td>
                    <span class={`badge ${estado.badge}`}>{estado.text}</span>
                  </td>
                  <td>
                    <Tramos caf={c} />
                    {c.anulacion?.estado === 'anulado' && c.anulacion.motivo && <span class="muted"> (motivo: {c.anulacion.motivo})</span>}
                  </td>
                  <td>{formatAmbiente(c.ambiente)}</td>
                  <td>{formatDateTime(c.created_at)}</td>
                  {props.canEdit && (
                    <td>
                      <CafAction caf={c} session={props.session} failed={props.failed} open={props.openAnulaciones.has(c.id)} />
                    </td>
                  )}
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
    </section>
  )
}

/**
 * A CAF whose folios still serve may have its unused folios annulled too (a range asked for by mistake), behind a
 * disclosure with its warning; an expired one is offered in «Por anular» instead, where the SII expects it.
 */
function CafAction(props: { caf: CafRecord; session: ConsoleSession; failed: FailedForm | null; open: boolean }) {
  const { caf } = props
  if (props.open) return <span class="muted">Anulación en curso</span>
  if (tramoAnulable(caf) === null) return null
  if (caf.tramos.some((t) => t.estado === 'por_anular')) return <a href={`#por-anular-${caf.id}`}>Anular (por anular)</a>
  const failedHere = props.failed?.kind === 'anular' && props.failed.cafId === caf.id
  return (
    <details open={failedHere}>
      <summary>Anular folios sin usar</summary>
      <AnularForm session={props.session} caf={caf} failed={props.failed} />
    </details>
  )
}

function UploadForm(props: { request: Request; form: FormData | null; failure: Failure | null }) {
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <form method="post" action={BASE} enctype="multipart/form-data" class="stack card" id="subir-caf">
      <h2>Cargar un CAF</h2>
      <p class="muted">El archivo XML de folios tal como lo entrega el SII, sin abrirlo ni modificarlo.</p>
      <CsrfInput session={sessionOf(props.request)} />
      <ErrorSummary failure={props.failure} fields={FIELDS} />
      <div class="grid">
        <SelectField
          name="tipo_dte"
          label="Tipo de documento"
          required
          value={props.form ? textField(props.form, 'tipo_dte') : ''}
          errors={errors}
          options={[{ value: '', label: 'Elija el tipo' }, ...TIPOS_DTE.map((t) => ({ value: String(t), label: `${t} · ${TIPOS[t].nombre}` }))]}
        />
        <Field name="caf" label="Archivo CAF (XML)" type="file" accept=".xml,application/xml,text/xml" required errors={errors} />
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Cargar CAF
        </button>
      </div>
    </form>
  )
}

/** What the page reads once per render: the CAFs, the SII history and settings, and whether the company can reach the SII. */
function FoliosPage(props: { deps: Deps; request: Request; failed: FailedForm | null; highlight: string | null; highlightSolicitud: string | null }) {
  const { deps, request, failed } = props
  const empresaId = empresaIdOf(request)
  const session = sessionOf(request)
  const canEdit = session.settings === 'write' && session.canWrite
  const cafs = allCafs(deps, empresaId)
  const today = santiagoDate(deps.clock.now())
  const tipos = TIPOS_DTE.filter((t) => cafs.some((c) => c.tipo_dte === t))
  const historial = listSolicitudes(deps, { empresaId, afterId: null, limit: HISTORIAL })
  const openAnulaciones = openAnulacionesOf(historial)
  const porAnular = listCafs(deps, { empresaId, por_anular: 'true', afterId: null, limit: LIST_PAGE })
  const hasCertificate = hasActiveCertificate(deps, empresaId)
  const upload = failed?.kind === 'subir' ? failed : null
  return (
    <>
      {failed?.kind === 'anular' && !offersAnulacion(cafs, failed.cafId, openAnulaciones) && (
        // The CAF no longer offers its form (annulled, or its annulment open meanwhile): the refusal is told here.
        <ErrorSummary failure={failed.failure} label={() => 'Motivo'} />
      )}
      {failed === null && canEdit && (
        <p>
          <a href="#pedir-sii">Pedir folios al SII</a> · <a href="#subir-caf">Cargar un CAF</a>
        </p>
      )}
      {tipos.length === 0 && <p class="card">Aún no hay CAF cargados: sin ellos no se puede emitir. Pídalos al SII desde esta página o cárguelos a mano.</p>}
      {tipos.map((t) => (
        <TipoGroup
          tipo={t}
          cafs={cafs.filter((c) => c.tipo_dte === t)}
          today={today}
          highlight={props.highlight}
          session={session}
          canEdit={canEdit}
          failed={failed}
          openAnulaciones={openAnulaciones}
        />
      ))}
      <PorAnularSection session={session} cafs={porAnular} failed={failed} canEdit={canEdit} openAnulaciones={openAnulaciones} />
      {canEdit && <SolicitarForm session={session} failed={failed} hasCertificate={hasCertificate} />}
      <Historial rows={historial} highlight={props.highlightSolicitud} />
      <AutomaticosSection
        session={session}
        setting={getFoliosAutomaticos(deps, { empresaId })}
        umbralInstancia={deps.config.cafLowStock}
        failed={failed}
        canEdit={canEdit}
        hasCertificate={hasCertificate}
      />
      {canEdit ? (
        <UploadForm request={request} form={upload?.form ?? null} failure={upload?.failure ?? null} />
      ) : session.role !== null ? (
        <p class="muted">Los CAF los carga un administrador de la empresa, que también los pide al SII.</p>
      ) : (
        <p class="muted">Solo lectura: para pedir o cargar un CAF entre con una API key con escritura.</p>
      )}
    </>
  )
}

/** Whether the page shows this CAF's annulment form (CafAction, or PorAnularSection for an expired one). */
function offersAnulacion(cafs: readonly CafRecord[], cafId: string, open: ReadonlySet<string>): boolean {
  const caf = cafs.find((c) => c.id === cafId)
  return caf !== undefined && !open.has(caf.id) && tramoAnulable(caf) !== null
}

/** CAFs whose annulment is open in the history read: their form is not offered again (it would be CAF_NO_ANULABLE). */
function openAnulacionesOf(rows: readonly CafSolicitudRecord[]): Set<string> {
  return new Set(rows.filter((r) => r.operacion === 'anulacion' && isOpenSolicitud(r) && r.caf_id !== null).map((r) => r.caf_id!))
}

function hasActiveCertificate(deps: Deps, empresaId: string): boolean {
  try {
    return getCertificadoStatus(deps, { empresaId }).is_active
  } catch (err) {
    if (err instanceof TimbreError && err.code === 'CERTIFICATE_NOT_FOUND') return false
    throw err
  }
}

/** The form → registerCaf's input, with what POST /caf's schema checks (SubirCafBody: tipo_dte a known type, a file within the bound). */
async function cafInputOf(form: FormData): Promise<{ tipo_dte: number; caf_xml: string }> {
  const errors: FieldError[] = []
  const tipo = textField(form, 'tipo_dte')
  if (tipo === null) errors.push({ field: 'tipo_dte', code: 'REQUIRED', message: 'Campo requerido.' })
  else if (!isTipoDte(Number(tipo))) errors.push({ field: 'tipo_dte', code: 'INVALID_VALUE', message: `Valor no permitido; valores aceptados: ${TIPOS_DTE.join(', ')}.` })
  const file = form.get('caf')
  let bytes: Uint8Array | null = null
  if (file === null || typeof file === 'string' || file.size === 0) errors.push({ field: 'caf', code: 'REQUIRED', message: 'Adjunte el archivo XML del CAF.' })
  else if (file.size > CAF_MAX_BYTES) errors.push({ field: 'caf', code: 'TOO_LONG', message: `El archivo supera ${CAF_MAX_BYTES / 1024} KB: no es un CAF del SII.` })
  else bytes = new Uint8Array(await file.arrayBuffer())
  if (errors.length > 0 || bytes === null) throw validationError(errors)
  return { tipo_dte: Number(tipo), caf_xml: cafXmlOf(bytes) }
}

/**
 * The file for caf_xml, which takes the XML or its base64 (DESIGN §8). A CAF's bytes are ISO-8859-1 (the razón social
 * may carry Ñ) and parseCaf decodes bytes as the SII writes them: handing it the bytes in base64 keeps them exact,
 * where reading the file as text here would have to guess its charset. A file that already is base64 goes as it is.
 */
function cafXmlOf(bytes: Uint8Array): string {
  const text = Buffer.from(bytes).toString('latin1')
  return /^[A-Za-z0-9+/=\s]+$/.test(text) ? text : Buffer.from(bytes).toString('base64')
}

/** INVALID_CAF and CAF_RANGE_EXISTS are about the file: shown beside its input. */
function uploadFailure(err: TimbreError): Failure {
  const base = failureOf(err)
  if (err.code === 'VALIDATION_ERROR') {
    // registerCaf names the API's field; the console's file input is `caf`.
    const errors = new Map([...base.errors].map(([field, messages]) => [field === 'caf_xml' ? 'caf' : field, messages]))
    return { ...base, errors }
  }
  const ctx = err.extra.context ?? {}
  const range = err.code === 'CAF_RANGE_EXISTS' ? ` Ya está cargado el rango ${String(ctx.folio_desde)} – ${String(ctx.folio_hasta)}.` : ''
  return { ...base, errors: new Map([['caf', [`${err.message}${range}`]]]) }
}

const UPLOAD_FAILURES = new Set(['VALIDATION_ERROR', 'INVALID_CAF', 'CAF_RANGE_EXISTS'])

interface Notice {
  readonly notice: string | null
  readonly highlight: string | null
  readonly highlightSolicitud: string | null
}

const NO_NOTICE: Notice = { notice: null, highlight: null, highlightSolicitud: null }

/** The notice after a post (post/redirect/get), read back by the id in the redirect: the new range, or the request. */
function noticeOf(deps: Deps, request: Request): Notice {
  const q = new URL(request.url).searchParams
  const aviso = q.get('aviso')
  if (aviso === 'cargado') return uploadNotice(deps, request, q.get('caf'))
  if (aviso === 'solicitado' || aviso === 'anulacion') return solicitudNotice(deps, request, q.get('solicitud'))
  if (aviso === 'automaticos') {
    const activo = getFoliosAutomaticos(deps, { empresaId: empresaIdOf(request) }).activo
    return { ...NO_NOTICE, notice: activo ? 'Folios automáticos guardados: activados.' : 'Folios automáticos guardados: desactivados.' }
  }
  return NO_NOTICE
}

function uploadNotice(deps: Deps, request: Request, id: string | null): Notice {
  if (id === null || !isUuid(id)) return { ...NO_NOTICE, notice: 'CAF cargado.' }
  try {
    const caf = getCaf(deps, { empresaId: empresaIdOf(request), id: id.toLowerCase() })
    return {
      ...NO_NOTICE,
      notice: `CAF cargado: tipo ${caf.tipo_dte}, folios ${formatNumber(caf.folio_desde)} a ${formatNumber(caf.folio_hasta)} (${formatNumber(caf.folios_disponibles)} disponibles).`,
      highlight: caf.id,
    }
  } catch (err) {
    if (err instanceof TimbreError && err.code === 'NOT_FOUND') return { ...NO_NOTICE, notice: 'CAF cargado.' }
    throw err
  }
}

function solicitudNotice(deps: Deps, request: Request, id: string | null): Notice {
  if (id === null || !isUuid(id)) return NO_NOTICE
  let r: CafSolicitudRecord
  try {
    r = getCafSolicitud(deps, { empresaId: empresaIdOf(request), id: id.toLowerCase() })
  } catch (err) {
    if (err instanceof TimbreError && err.code === 'NOT_FOUND') return NO_NOTICE
    throw err
  }
  const notice =
    r.operacion === 'anulacion'
      ? `Anulación pedida al SII: folios ${formatNumber(r.folio_desde ?? 0)} a ${formatNumber(r.folio_hasta ?? 0)} del tipo ${r.tipo_dte}. El CAF ya no entrega folios; el resultado aparece en el historial.`
      : `Folios pedidos al SII: tipo ${r.tipo_dte}, ${r.cantidad_pedida === null ? 'el máximo que autorice' : `${formatNumber(r.cantidad_pedida)} folios`}. El resultado aparece en el historial en unos segundos.`
  return { ...NO_NOTICE, notice, highlightSolicitud: r.id }
}

const FOLIOS_TITLE = 'Folios'

/** A refused form shown again on the whole page, with the status the API would answer for the same error. */
function refusedPage(deps: Deps, request: Request, err: TimbreError, failed: FailedForm, highlightSolicitud: string | null = null): Response {
  return renderPage(deps, request, {
    title: FOLIOS_TITLE,
    section: 'folios',
    status: STATUS[err.code],
    children: <FoliosPage deps={deps} request={request} failed={failed} highlight={null} highlightSolicitud={highlightSolicitud} />,
  })
}

const SOLICITAR_FAILURES = new Set(['VALIDATION_ERROR', 'CERTIFICATE_REQUIRED', 'CAF_SOLICITUD_EN_CURSO'])
const ANULAR_FAILURES = new Set(['VALIDATION_ERROR', 'CERTIFICATE_REQUIRED', 'CAF_NO_ANULABLE'])

/** CAF_SOLICITUD_EN_CURSO names the open request: told beside the type, and that row highlighted in the history. */
function solicitarFailure(deps: Deps, request: Request, err: TimbreError): { failure: Failure; highlight: string | null } {
  const failure = prefixedFailure(err, 'solicitar')
  if (err.code !== 'CAF_SOLICITUD_EN_CURSO') return { failure, highlight: null }
  const id = String(err.extra.context?.['solicitud_id'] ?? '')
  const open = isUuid(id) ? getCafSolicitud(deps, { empresaId: empresaIdOf(request), id }) : null
  const words = open ? `Ya se pidieron folios de este tipo el ${formatDateTime(open.created_at)}: esa solicitud sigue en curso (véala destacada en el historial).` : err.message
  return { failure: { ...failure, errors: new Map([['solicitar.tipo_dte', [words]]]) }, highlight: open?.id ?? null }
}

export const folioScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/folios', ({ request }) => {
      const { notice, highlight, highlightSolicitud } = noticeOf(deps, request)
      return renderPage(deps, request, {
        title: FOLIOS_TITLE,
        section: 'folios',
        notice,
        children: <FoliosPage deps={deps} request={request} failed={null} highlight={highlight} highlightSolicitud={highlightSolicitud} />,
      })
    })
    .get('/folios/historial', ({ request }) => {
      const rows = listSolicitudes(deps, { empresaId: empresaIdOf(request), afterId: null, limit: HISTORIAL })
      const response = fragmentResponse(<Historial rows={rows} highlight={null} />)
      // Nothing open any more: the whole page reloads, so the CAF just downloaded (or annulled) shows in its table.
      if (request.headers.get('HX-Request') === 'true' && !rows.some(isOpenSolicitud)) response.headers.set('HX-Refresh', 'true')
      return response
    })
    .post('/folios', async ({ request }) => {
      requireWrite(request)
      const form = formOf(request)
      try {
        const caf = await registerCaf(deps, { empresaId: empresaIdOf(request), ...(await cafInputOf(form)) })
        return redirect(`${BASE}?aviso=cargado&caf=${caf.id}`)
      } catch (err) {
        if (!(err instanceof TimbreError) || !UPLOAD_FAILURES.has(err.code)) throw err
        return refusedPage(deps, request, err, { kind: 'subir', form, failure: uploadFailure(err) })
      }
    })
    .post('/folios/solicitar', ({ request }) => {
      requireWrite(request)
      const form = formOf(request)
      try {
        const body = solicitarBodyOf(form)
        const solicitud = solicitarCaf(deps, { empresaId: empresaIdOf(request), ...body })
        return redirect(`${BASE}?aviso=solicitado&solicitud=${solicitud.id}#historial`)
      } catch (err) {
        if (!(err instanceof TimbreError) || !SOLICITAR_FAILURES.has(err.code)) throw err
        const { failure, highlight } = solicitarFailure(deps, request, err)
        return refusedPage(deps, request, err, { kind: 'solicitar', form, failure }, highlight)
      }
    })
    .post('/folios/automaticos', ({ request }) => {
      requireWrite(request)
      const form = formOf(request)
      try {
        setFoliosAutomaticos(deps, { empresaId: empresaIdOf(request), ...automaticosBodyOf(form) })
        return redirect(`${BASE}?aviso=automaticos#automaticos`)
      } catch (err) {
        if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
        return refusedPage(deps, request, err, { kind: 'automaticos', form, failure: prefixedFailure(err, 'auto') })
      }
    })
    .post('/folios/:id/anular', ({ request, params }) => {
      requireWrite(request)
      const cafId = pathId(params.id)
      const empresaId = empresaIdOf(request)
      // Another company's CAF, or none: the 404 page, before anything is read from the form.
      getCaf(deps, { empresaId, id: cafId })
      const form = formOf(request)
      try {
        const solicitud = anularCaf(deps, { empresaId, cafId, ...anularBodyOf(form) })
        return redirect(`${BASE}?aviso=anulacion&solicitud=${solicitud.id}#historial`)
      } catch (err) {
        if (!(err instanceof TimbreError) || !ANULAR_FAILURES.has(err.code)) throw err
        return refusedPage(deps, request, err, { kind: 'anular', cafId, form, failure: prefixedFailure(err, `anular-${cafId}`) })
      }
    })
