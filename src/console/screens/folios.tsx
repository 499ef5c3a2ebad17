// Folios (DESIGN §8 and §14): the company's CAFs per document type with what is left of each range and when its
// folios stop serving, and the upload of a new CAF. The same services as GET and POST /caf (listCafs, registerCaf,
// getCaf) with the same inputs.
import { Elysia } from 'elysia'
import { santiagoDate } from '../../clock'
import { TIPOS_DTE, isTipoDte, type TipoDte } from '../../domain/emision'
import { cafVenceEl } from '../../domain/folios'
import { TIPOS } from '../../domain/tipos'
import { TimbreError, validationError, type FieldError } from '../../errors'
import { STATUS } from '../../contracts/statuses'
import { isUuid } from '../../contracts/common'
import { getCaf, listCafs, registerCaf, type CafRecord } from '../../services/cafs'
import type { Deps } from '../../services/deps'
import { empresaIdOf, formOf, requireWrite, sessionOf, textField } from '../context'
import { ErrorSummary, Field, SelectField, failureOf, formatAmbiente, formatDateTime, formatFecha, formatNumber, NO_ERRORS, type Failure } from '../forms'
import { CONSOLE_PREFIX, CsrfInput, redirect, renderPage } from '../page'

const BASE = `${CONSOLE_PREFIX}/folios`
const DAY_MS = 86_400_000
/** A CAF whose folios stop serving within this many days is flagged, so a new one is asked of the SII in time. */
const VENCE_PRONTO_DIAS = 30
/** POST /caf's bound on caf_xml (SubirCafBody, issue 12): a real CAF is about 2 KB. */
const CAF_MAX_BYTES = 65_536
/** The largest page listCafs serves (GET /caf's limit). */
const LIST_PAGE = 100

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

function TipoGroup(props: { tipo: TipoDte; cafs: readonly CafRecord[]; today: string; highlight: string | null }) {
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
              <th scope="col">Ambiente</th>
              <th scope="col">Cargado</th>
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
                  <td>{formatAmbiente(c.ambiente)}</td>
                  <td>{formatDateTime(c.created_at)}</td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
    </section>
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

function FoliosPage(props: { deps: Deps; request: Request; form: FormData | null; failure: Failure | null; highlight: string | null }) {
  const cafs = allCafs(props.deps, empresaIdOf(props.request))
  const today = santiagoDate(props.deps.clock.now())
  const tipos = TIPOS_DTE.filter((t) => cafs.some((c) => c.tipo_dte === t))
  return (
    <>
      {props.failure === null && sessionOf(props.request).settings === 'write' && (
        <p>
          <a href="#subir-caf">Cargar un CAF</a>
        </p>
      )}
      {tipos.length === 0 && <p class="card">Aún no hay CAF cargados: sin ellos no se puede emitir. Pida los folios en el sitio del SII y cárguelos aquí.</p>}
      {tipos.map((t) => (
        <TipoGroup tipo={t} cafs={cafs.filter((c) => c.tipo_dte === t)} today={today} highlight={props.highlight} />
      ))}
      {sessionOf(props.request).settings === 'write' ? (
        <UploadForm request={props.request} form={props.form} failure={props.failure} />
      ) : sessionOf(props.request).role !== null ? (
        <p class="muted">Los CAF los carga un administrador de la empresa.</p>
      ) : (
        <p class="muted">Solo lectura: para cargar un CAF entre con una API key con escritura.</p>
      )}
    </>
  )
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

/** The notice after an upload names the new range, read back by the id in the redirect. */
function noticeOf(deps: Deps, request: Request): { notice: string | null; highlight: string | null } {
  const q = new URL(request.url).searchParams
  if (q.get('aviso') !== 'cargado') return { notice: null, highlight: null }
  const id = q.get('caf')
  if (id === null || !isUuid(id)) return { notice: 'CAF cargado.', highlight: null }
  try {
    const caf = getCaf(deps, { empresaId: empresaIdOf(request), id: id.toLowerCase() })
    return {
      notice: `CAF cargado: tipo ${caf.tipo_dte}, folios ${formatNumber(caf.folio_desde)} a ${formatNumber(caf.folio_hasta)} (${formatNumber(caf.folios_disponibles)} disponibles).`,
      highlight: caf.id,
    }
  } catch (err) {
    if (err instanceof TimbreError && err.code === 'NOT_FOUND') return { notice: 'CAF cargado.', highlight: null }
    throw err
  }
}

export const folioScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/folios', ({ request }) => {
      const { notice, highlight } = noticeOf(deps, request)
      return renderPage(deps, request, {
        title: 'Folios',
        section: 'folios',
        notice,
        children: <FoliosPage deps={deps} request={request} form={null} failure={null} highlight={highlight} />,
      })
    })
    .post('/folios', async ({ request }) => {
      requireWrite(request)
      const form = formOf(request)
      try {
        const caf = await registerCaf(deps, { empresaId: empresaIdOf(request), ...(await cafInputOf(form)) })
        return redirect(`${BASE}?aviso=cargado&caf=${caf.id}`)
      } catch (err) {
        if (!(err instanceof TimbreError) || !UPLOAD_FAILURES.has(err.code)) throw err
        return renderPage(deps, request, {
          title: 'Folios',
          section: 'folios',
          status: STATUS[err.code],
          children: <FoliosPage deps={deps} request={request} form={form} failure={uploadFailure(err)} highlight={null} />,
        })
      }
    })
