// Received documents (DESIGN §13 and §14): the suppliers' DTEs with the days left of the 8-day term, each one's
// reception checks and actions, its XML and PDF, and the receiver's accept / claim / receipt-of-goods forms. The same
// services as GET /recibidos, GET /recibidos/{id}, /xml, /pdf, POST /recibidos/importar and POST /recibidos/{id}/acciones,
// with the same inputs; this file only turns forms into those inputs and records into pages.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Elysia } from 'elysia'
import { TIPOS_DTE, isTipoDte } from '../../domain/emision'
import {
  ACCIONES,
  CHECK_NAMES,
  ESTADOS_RECIBIDO,
  GLOSA_RECEP_DTE,
  PLAZO_AVISO_DIAS,
  checkAccion,
  isAccion,
  isClaim,
  type Accion,
  type EstadoRecepDte,
  type EstadoRecibido,
} from '../../domain/intercambio'
import { TIPOS } from '../../domain/tipos'
import { TimbreError, validationError, type ErrorCode, type FieldError } from '../../errors'
import { STATUS } from '../../contracts/statuses'
import { decodeCursor, encodeCursor, parseLimit } from '../../contracts/pagination'
import { pathId } from '../../contracts/params'
import { AccionBody, ListarRecibidosQuery, MOTIVO_MAX } from '../../contracts/recibidos'
import { fieldErrorsFromTypeBox } from '../../contracts/validation'
import type { Deps } from '../../services/deps'
import { getRecibidoPdf } from '../../services/recibido-pdf'
import {
  getRecibido,
  getRecibidoXml,
  hasAcciones,
  importRecibidos,
  listRecibidos,
  solicitarAccion,
  type RecibidoListQuery,
  type RecibidoRecord,
} from '../../services/recibidos'
import { empresaIdOf, formOf, requireWrite, sessionOf, textField } from '../context'
import { formatPesos } from '../../domain/numero-cl'
import { ErrorSummary, Field, SelectField, failureOf, fieldId, formatDateTime, formatFecha, formatRut, NO_ERRORS, type Failure, type FieldErrors } from '../forms'
import { ACCION_ESTADO_BADGE, ACCION_ESTADO_LABEL, ESTADO_BADGE, ESTADO_LABEL } from '../estados'
import { CsrfInput, fileResponse, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const BASE = `${CONSOLE_PREFIX}/recibidos`
const DAY_MS = 86_400_000

const NOTICES: Readonly<Record<string, string>> = {
  registrada: 'Acción registrada en el SII. La respuesta al emisor quedó en la cola de correo.',
  en_cola: 'El SII no respondió: la acción quedó pendiente y se reintentará sola; su resultado llega por el webhook recibido.accion.',
  importado: 'EnvioDTE importado: sus documentos aparecen en la lista con el resultado de cada validación.',
  importado_rechazado: 'EnvioDTE guardado, pero rechazado en la recepción: revise el estado y las validaciones de sus documentos.',
  ya_importado: 'Ese EnvioDTE ya estaba importado: no se cambió nada.',
}

const ACCION_LABEL: Readonly<Record<Accion, string>> = {
  ACD: 'Aceptación del contenido (ACD)',
  RCD: 'Reclamo al contenido (RCD)',
  ERM: 'Recibo de mercaderías o servicios (ERM)',
  RFP: 'Reclamo por falta parcial de mercaderías (RFP)',
  RFT: 'Reclamo por falta total de mercaderías (RFT)',
}

/** What each check of DESIGN §13 verifies, for a person (the record gives the code, its result and what was found). */
const CHECK_LABEL: Readonly<Record<(typeof CHECK_NAMES)[number], string>> = {
  schema: 'Esquema del SII (XSD)',
  firma_envio: 'Firma del sobre',
  receptor_envio: 'Receptor del sobre',
  firma_dte: 'Firma del documento',
  ted: 'Timbre electrónico (TED)',
  caf: 'CAF del emisor',
  receptor: 'RUT receptor',
  emisor: 'RUT emisor',
  duplicado: 'No duplicado',
}

const nombreTipo = (tipo: number) => (isTipoDte(tipo) ? TIPOS[tipo].nombre : `Tipo ${tipo}`)
const montoOrDash = (n: number | null) => (n === null ? '—' : formatPesos(n))

// ------------------------------------------------------------------------------------------------- the 8 days

interface PlazoView {
  readonly text: string
  readonly badge: string
}

/**
 * Days left to accept or claim (Ley 19.983: 8 days from the SII's reception), from what the record gives: its `plazo`
 * (null until the SII reports the reception), its estado and its type (only 33, 34 and 43 take actions).
 */
function plazoOf(r: RecibidoRecord, now: Date): PlazoView {
  if (r.estado === 'aceptado_tacito') return { text: 'Aceptado tácitamente', badge: 'badge-ok' }
  if (!hasAcciones(r.tipo_dte) || r.estado === 'rechazado_tecnico') return { text: 'No aplica', badge: 'badge-neutral' }
  if (r.estado === 'aceptado' || r.estado === 'reclamado') return { text: 'Respondido', badge: 'badge-neutral' }
  if (r.plazo === null) return { text: 'Aún sin plazo', badge: 'badge-info' }
  const leftMs = new Date(r.plazo).getTime() - now.getTime()
  if (leftMs <= 0) return { text: 'Vencido', badge: 'badge-bad' }
  const days = Math.ceil(leftMs / DAY_MS)
  return { text: days === 1 ? '1 día' : `${days} días`, badge: leftMs <= PLAZO_AVISO_DIAS * DAY_MS ? 'badge-warn' : 'badge-ok' }
}

function PlazoBadge(props: { r: RecibidoRecord; now: Date }) {
  const p = plazoOf(props.r, props.now)
  return <span class={`badge ${p.badge}`}>{p.text}</span>
}

function EstadoBadge(props: { estado: EstadoRecibido }) {
  return <span class={`badge ${ESTADO_BADGE[props.estado]}`}>{ESTADO_LABEL[props.estado]}</span>
}

// ------------------------------------------------------------------------------------------------- the list

const FILTERS = ['rut_emisor', 'tipo_dte', 'estado', 'fecha_desde', 'fecha_hasta'] as const
/** The filters plus GET /recibidos's `limit`, which the form does not show but the page links keep. */
const QUERY = [...FILTERS, 'limit'] as const
type Filters = Partial<Record<(typeof QUERY)[number], string>>

/** The filters as typed (blank ones dropped), so the form shows them back and the page links keep them. */
function filtersOf(url: URL): Filters {
  const f: Filters = {}
  for (const name of QUERY) {
    const v = url.searchParams.get(name)?.trim()
    if (v) f[name] = v
  }
  return f
}

// The query is checked with the API's own schema (ListarRecibidosQuery), so what GET /recibidos answers 400 to is
// refused here on the same field; the service then applies its rules (unknown tipo or estado, RUT, an empty range).
const checkQuery = TypeCompiler.Compile(ListarRecibidosQuery)

function checkFilters(f: Filters, cursor: string | null): void {
  const query = { ...f, ...(cursor === null ? {} : { cursor }) }
  if (!checkQuery.Check(query)) throw validationError(fieldErrorsFromTypeBox(checkQuery.Errors(query)))
}

function listUrl(f: Filters, cursor: string | null): string {
  const q = new URLSearchParams(f as Record<string, string>)
  if (cursor !== null) q.set('cursor', cursor)
  const s = q.toString()
  return s === '' ? BASE : `${BASE}?${s}`
}

interface ListView {
  readonly rows: readonly RecibidoRecord[]
  readonly total: number
  readonly nextCursor: string | null
}

function FilterForm(props: { filters: Filters; errors: FieldErrors }) {
  const { filters: f, errors } = props
  return (
    <form method="get" action={BASE} class="filters" aria-label="Filtros">
      {f.limit !== undefined && <input type="hidden" name="limit" value={f.limit} />}
      <Field name="rut_emisor" label="RUT emisor" value={f.rut_emisor} errors={errors} />
      <SelectField
        name="tipo_dte"
        label="Tipo"
        value={f.tipo_dte ?? ''}
        errors={errors}
        options={[{ value: '', label: 'Todos' }, ...TIPOS_DTE.map((t) => ({ value: String(t), label: `${t} · ${TIPOS[t].nombre}` }))]}
      />
      <SelectField name="estado" label="Estado" value={f.estado ?? ''} errors={errors} options={[{ value: '', label: 'Todos' }, ...ESTADOS_RECIBIDO.map((e) => ({ value: e, label: ESTADO_LABEL[e] }))]} />
      <Field name="fecha_desde" label="Emitido desde" type="date" value={f.fecha_desde} errors={errors} />
      <Field name="fecha_hasta" label="Emitido hasta" type="date" value={f.fecha_hasta} errors={errors} />
      <div class="actions">
        <button type="submit" class="primary">
          Filtrar
        </button>
        <a href={BASE}>Limpiar</a>
      </div>
    </form>
  )
}

function RecibidosTable(props: { view: ListView; filters: Filters; now: Date; paged: boolean }) {
  const { view, filters, now } = props
  if (view.rows.length === 0)
    return <p>{FILTERS.some((name) => filters[name] !== undefined) ? 'Ningún documento recibido coincide con los filtros.' : 'Aún no hay documentos recibidos de proveedores.'}</p>
  return (
    <>
      <div class="table-wrap">
        <table class="plegable">
          <caption class="muted">
            {view.total === 1 ? '1 documento' : `${view.total} documentos`}; los más recientes primero.
          </caption>
          <thead>
            <tr>
              <th scope="col" class="col-menor">
                Emisor
              </th>
              <th scope="col" class="col-menor">
                Tipo
              </th>
              <th scope="col">Folio</th>
              <th scope="col" class="col-menor">
                Fecha
              </th>
              <th scope="col" class="num">
                Total
              </th>
              <th scope="col">Estado</th>
              <th scope="col" class="col-menor">
                Días para responder
              </th>
            </tr>
          </thead>
          <tbody>
            {view.rows.map((r) => (
              <tr>
                <td class="col-menor">
                  {r.razon_social_emisor}
                  <br />
                  <span class="muted">{formatRut(r.rut_emisor)}</span>
                </td>
                <td class="col-menor">
                  <abbr title={nombreTipo(r.tipo_dte)}>{r.tipo_dte}</abbr>
                </td>
                <td class="folio">
                  <a href={`${BASE}/${r.id}`} aria-label={`Ver tipo ${r.tipo_dte} folio ${r.folio} de ${r.razon_social_emisor}`}>
                    {r.folio}
                  </a>
                  <span class="solo-telefono muted">
                    {nombreTipo(r.tipo_dte)} · <time datetime={r.fecha_emision}>{formatFecha(r.fecha_emision)}</time>
                    <br />
                    {r.razon_social_emisor}
                  </span>
                </td>
                <td class="col-menor">{formatFecha(r.fecha_emision)}</td>
                <td class="num">{formatPesos(r.monto_total)}</td>
                <td>
                  <EstadoBadge estado={r.estado} />
                  <span class="solo-telefono">
                    <PlazoBadge r={r} now={now} />
                  </span>
                </td>
                <td class="col-menor">
                  <PlazoBadge r={r} now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="actions" aria-label="Páginas">
        {props.paged && <a href={listUrl(filters, null)}>Primera página</a>}
        {view.nextCursor !== null && <a href={listUrl(filters, view.nextCursor)}>Página siguiente</a>}
      </nav>
    </>
  )
}

/** POST /recibidos/importar's multipart form: field `archivo`, as the API takes it. */
function ImportForm(props: { request: Request; failure: Failure | null }) {
  return (
    <form method="post" action={`${BASE}/importar`} enctype="multipart/form-data" class="stack card" id="importar">
      <h2>Importar un EnvioDTE</h2>
      <p class="muted">Para un archivo que llegó fuera del buzón de intercambio: pasa por las mismas validaciones, sin correo.</p>
      <CsrfInput session={sessionOf(props.request)} />
      <ErrorSummary failure={props.failure} fields={['archivo']} />
      <Field name="archivo" label="Archivo EnvioDTE (XML)" type="file" accept=".xml,application/xml,text/xml" required errors={props.failure?.errors ?? NO_ERRORS} />
      <div class="actions">
        <button type="submit">Importar</button>
      </div>
    </form>
  )
}

function ListPage(props: { deps: Deps; request: Request; filters: Filters; view: ListView | null; filterFailure: Failure | null; importFailure: Failure | null; paged: boolean }) {
  const session = sessionOf(props.request)
  return (
    <>
      <section class="card" aria-labelledby="lista-recibidos">
        <h2 id="lista-recibidos">Documentos de proveedores</h2>
        <ErrorSummary failure={props.filterFailure} fields={[...FILTERS]} />
        <FilterForm filters={props.filters} errors={props.filterFailure?.errors ?? NO_ERRORS} />
        {props.view !== null && <RecibidosTable view={props.view} filters={props.filters} now={props.deps.clock.now()} paged={props.paged} />}
      </section>
      {session.canWrite && <ImportForm request={props.request} failure={props.importFailure} />}
    </>
  )
}

function renderList(deps: Deps, request: Request, opts: { importFailure?: Failure | null; status?: number; notice?: string | null } = {}): Response {
  const url = new URL(request.url)
  const filters = filtersOf(url)
  const cursor = url.searchParams.get('cursor')?.trim() || null
  let view: ListView | null = null
  let filterFailure: Failure | null = null
  try {
    checkFilters(filters, cursor)
    // As the route does: one row more than the page says whether a next page exists.
    const { limit: rawLimit, ...query } = filters
    const limit = parseLimit(rawLimit, { max: 100, fallback: 20 })
    const { rows, total } = listRecibidos(deps, { empresaId: empresaIdOf(request), query: query as RecibidoListQuery, afterId: decodeCursor(cursor ?? undefined), limit: limit + 1 })
    const items = rows.slice(0, limit)
    view = { rows: items, total, nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1]!.id) : null }
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
    filterFailure = failureOf(err)
  }
  return renderPage(deps, request, {
    title: 'Recibidos',
    section: 'recibidos',
    status: opts.status ?? (filterFailure ? 400 : 200),
    notice: opts.notice ?? null,
    children: (
      <ListPage deps={deps} request={request} filters={filters} view={view} filterFailure={filterFailure} importFailure={opts.importFailure ?? null} paged={cursor !== null} />
    ),
  })
}

// ------------------------------------------------------------------------------------------------- the detail

function Facts(props: { r: RecibidoRecord; now: Date }) {
  const { r } = props
  return (
    <section class="card" aria-labelledby="documento">
      <h2 id="documento">Documento</h2>
      <dl class="facts">
        <dt>Emisor</dt>
        <dd>
          {r.razon_social_emisor} ({formatRut(r.rut_emisor)})
        </dd>
        <dt>Tipo</dt>
        <dd>
          {r.tipo_dte} · {nombreTipo(r.tipo_dte)}
        </dd>
        <dt>Folio</dt>
        <dd>{r.folio}</dd>
        <dt>Fecha de emisión</dt>
        <dd>{formatFecha(r.fecha_emision)}</dd>
        <dt>Estado</dt>
        <dd>
          <EstadoBadge estado={r.estado} />
        </dd>
        <dt>Recepción</dt>
        <dd>
          {r.estado_recep_dte} · {GLOSA_RECEP_DTE[r.estado_recep_dte as EstadoRecepDte] ?? 'código desconocido'}
        </dd>
        <dt>Sobre</dt>
        <dd>
          {r.envio.origen === 'correo' ? 'llegó por correo' : r.envio.origen === 'importar' ? 'importado a mano' : 'demo'} · {r.envio.estado_recep_env} {r.envio.glosa}
        </dd>
        <dt>Recibido en Timbre</dt>
        <dd>{formatDateTime(r.recibido_at)}</dd>
        <dt>Recepción en el SII</dt>
        <dd>{r.fecha_recepcion_sii === null ? 'aún no informada por el SII' : formatDateTime(r.fecha_recepcion_sii)}</dd>
        <dt>Plazo para responder</dt>
        <dd>
          {r.plazo === null ? '—' : formatDateTime(r.plazo)} <PlazoBadge r={r} now={props.now} />
        </dd>
      </dl>
      <h3>Totales</h3>
      <dl class="totals">
        <dt>Neto</dt>
        <dd>{montoOrDash(r.monto_neto)}</dd>
        <dt>Exento</dt>
        <dd>{montoOrDash(r.monto_exento)}</dd>
        <dt>IVA</dt>
        <dd>{montoOrDash(r.iva)}</dd>
        <dt class="total">Total</dt>
        <dd class="total">{formatPesos(r.monto_total)}</dd>
      </dl>
    </section>
  )
}

function Checks(props: { r: RecibidoRecord }) {
  return (
    <section class="card" aria-labelledby="validaciones">
      <h2 id="validaciones">Validaciones de la recepción</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Validación</th>
              <th scope="col">Resultado</th>
              <th scope="col">Detalle</th>
            </tr>
          </thead>
          <tbody>
            {props.r.checks.map((c) => (
              <tr>
                <td>
                  {CHECK_LABEL[c.check] ?? c.check} <code>{c.check}</code>
                </td>
                <td>{c.ok ? <span class="badge badge-ok">Correcta</span> : <span class="badge badge-bad">Falló</span>}</td>
                <td>{c.detalle === '' ? '—' : c.detalle}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}

function Acciones(props: { r: RecibidoRecord }) {
  const { acciones } = props.r
  return (
    <section class="card" aria-labelledby="acciones">
      <h2 id="acciones">Acciones en el SII</h2>
      {acciones.length === 0 ? (
        <p>{hasAcciones(props.r.tipo_dte) ? 'Aún no se ha aceptado ni reclamado.' : `El tipo ${props.r.tipo_dte} no admite aceptación ni reclamo en el SII (solo 33, 34 y 43).`}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Acción</th>
                <th scope="col">Motivo</th>
                <th scope="col">Estado</th>
                <th scope="col">Respuesta del SII</th>
                <th scope="col">Solicitada</th>
                <th scope="col">Registrada</th>
              </tr>
            </thead>
            <tbody>
              {acciones.map((a) => (
                <tr>
                  <td>{ACCION_LABEL[a.accion] ?? a.accion}</td>
                  <td>{a.motivo ?? '—'}</td>
                  <td>
                    <span class={`badge ${ACCION_ESTADO_BADGE[a.estado]}`}>{ACCION_ESTADO_LABEL[a.estado]}</span>
                  </td>
                  <td>{a.cod_resp === null ? (a.estado === 'pendiente' ? 'en espera; se reintenta' : '—') : `${a.cod_resp} ${a.desc_resp ?? ''}`}</td>
                  <td>{formatDateTime(a.solicitada_at)}</td>
                  <td>{formatDateTime(a.registrada_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

/**
 * The actions the document still takes now, by the same rules solicitarAccion applies (checkAccion, and no second
 * request while one waits for the SII); the reason when none is left. The POST checks again: the page may be stale.
 */
function allowedAcciones(r: RecibidoRecord, now: Date): { allowed: Accion[]; reason: string | null } {
  if (r.acciones.some((a) => a.estado === 'pendiente'))
    return { allowed: [], reason: 'hay una acción pendiente de registro en el SII; espere su resultado' }
  const previas = r.acciones.filter((a) => a.estado === 'registrada')
  const plazo = r.plazo === null ? null : new Date(r.plazo)
  let reason: string | null = null
  const allowed = ACCIONES.filter((accion) => {
    const verdict = checkAccion({ tipoDte: r.tipo_dte, estado: r.estado, plazo, now, previas, accion })
    if (!verdict.ok) reason ??= verdict.reason
    return verdict.ok
  })
  return { allowed, reason: allowed.length === 0 ? reason : null }
}

/** The forms, typed values kept after a failure (`form`). */
function AccionForms(props: { request: Request; r: RecibidoRecord; now: Date; failure: Failure | null; form: FormData | null }) {
  const { r, failure } = props
  const session = sessionOf(props.request)
  const { allowed, reason } = allowedAcciones(r, props.now)
  const action = `${BASE}/${r.id}/acciones`
  const claims = allowed.filter(isClaim)
  const errors = failure?.errors ?? NO_ERRORS
  const motivoErrors = errors.get('motivo') ?? []
  const motivoId = fieldId('motivo')
  const typed = (name: string) => (props.form ? textField(props.form, name) : null)
  const accionTyped = typed('accion')
  const claimTyped = isAccion(accionTyped) && isClaim(accionTyped) ? accionTyped : null
  return (
    <section class="card" aria-labelledby="responder">
      <h2 id="responder">Responder al emisor</h2>
      <ErrorSummary failure={failure} fields={['accion', 'motivo']} />
      {allowed.length === 0 && <p>No quedan acciones posibles: {reason}.</p>}
      {(allowed.includes('ACD') || allowed.includes('ERM')) && (
        <div class="actions">
          {allowed.includes('ACD') && (
            <form method="post" action={action} data-confirm="¿Aceptar el contenido del documento en el SII? No se puede deshacer.">
              <CsrfInput session={session} />
              <input type="hidden" name="accion" value="ACD" />
              <button type="submit" class="primary">
                Aceptar (ACD)
              </button>
            </form>
          )}
          {allowed.includes('ERM') && (
            <form method="post" action={action} data-confirm="¿Otorgar el recibo de mercaderías o servicios (Ley 19.983) en el SII? También acepta el documento.">
              <CsrfInput session={session} />
              <input type="hidden" name="accion" value="ERM" />
              <button type="submit">Otorgar recibo de mercaderías (ERM)</button>
            </form>
          )}
        </div>
      )}
      {claims.length > 0 && (
        <form method="post" action={action} class="stack" data-confirm="¿Reclamar el documento en el SII? No se puede deshacer.">
          <CsrfInput session={session} />
          <fieldset>
            <legend>Reclamar</legend>
            <div class="stack">
              <SelectField name="accion" label="Tipo de reclamo" value={claimTyped ?? 'RCD'} errors={errors} options={claims.map((c) => ({ value: c, label: ACCION_LABEL[c] }))} />
              <div class={motivoErrors.length > 0 ? 'field field-invalid' : 'field'}>
                <label for={motivoId}>
                  Motivo<span aria-hidden="true"> *</span>
                </label>
                <textarea
                  id={motivoId}
                  name="motivo"
                  required
                  maxLength={MOTIVO_MAX}
                  rows={3}
                  aria-invalid={motivoErrors.length > 0 ? 'true' : undefined}
                  aria-describedby={[`${motivoId}-ayuda`, motivoErrors.length > 0 ? `${motivoId}-error` : null].filter(Boolean).join(' ')}
                >
                  {typed('motivo') ?? ''}
                </textarea>
                <small id={`${motivoId}-ayuda`} class="hint">
                  Viaja al emisor en el ResultadoDTE; hasta {MOTIVO_MAX} caracteres.
                </small>
                {motivoErrors.length > 0 && (
                  <p id={`${motivoId}-error`} class="field-error">
                    {motivoErrors.join(' ')}
                  </p>
                )}
              </div>
              <div class="actions">
                <button type="submit" class="danger">
                  Reclamar
                </button>
              </div>
            </div>
          </fieldset>
        </form>
      )}
    </section>
  )
}

function Archivos(props: { r: RecibidoRecord }) {
  const { r } = props
  return (
    <section class="card" aria-labelledby="archivos">
      <h2 id="archivos">Archivos</h2>
      <p class="actions">
        <a class="button" href={`${BASE}/${r.id}/pdf`}>
          Abrir PDF
        </a>
        <a class="button" href={`${BASE}/${r.id}/xml`} download={`DTE-${r.rut_emisor}-${r.tipo_dte}-F${r.folio}.xml`}>
          Descargar XML
        </a>
      </p>
      <iframe class="pdf" src={`${BASE}/${r.id}/pdf`} title={`Vista previa del PDF, tipo ${r.tipo_dte} folio ${r.folio}`} loading="lazy"></iframe>
    </section>
  )
}

function renderDetail(deps: Deps, request: Request, id: string, opts: { failure?: Failure | null; form?: FormData | null; status?: number; notice?: string | null } = {}): Response {
  const r = getRecibido(deps, { empresaId: empresaIdOf(request), id })
  const now = deps.clock.now()
  const canAct = sessionOf(request).canWrite && hasAcciones(r.tipo_dte)
  return renderPage(deps, request, {
    title: `${nombreTipo(r.tipo_dte)} N° ${r.folio}`,
    section: 'recibidos',
    status: opts.status,
    notice: opts.notice ?? null,
    children: (
      <>
        <p>
          <a href={BASE}>← Volver a recibidos</a>
        </p>
        <Facts r={r} now={now} />
        {canAct && <AccionForms request={request} r={r} now={now} failure={opts.failure ?? null} form={opts.form ?? null} />}
        <Acciones r={r} />
        <Checks r={r} />
        <Archivos r={r} />
      </>
    ),
  })
}

// ------------------------------------------------------------------------------------------------- the actions

const checkAccionBody = TypeCompiler.Compile(AccionBody)

/**
 * The form → solicitarAccion's input, checked with the API's own body schema (AccionBody: the five acciones, motivo
 * 1 to 256 characters, optional). One rule is the console's: its claim form asks why, since the emisor reads the
 * motivo in the ResultadoDTE and a bare claim tells them nothing.
 */
function accionOf(form: FormData): { accion: Accion; motivo: string | null } {
  const accion = textField(form, 'accion')
  const motivo = textField(form, 'motivo')
  const body = { ...(accion === null ? {} : { accion }), ...(motivo === null ? {} : { motivo }) }
  const errors: FieldError[] = checkAccionBody.Check(body) ? [] : fieldErrorsFromTypeBox(checkAccionBody.Errors(body))
  if (motivo === null && isAccion(accion) && isClaim(accion))
    errors.push({ field: 'motivo', code: 'REQUIRED', message: 'Indique el motivo del reclamo: el emisor lo recibe en el ResultadoDTE.' })
  if (errors.length > 0 || !isAccion(accion)) throw validationError(errors)
  return { accion, motivo }
}

/** Refusals tied to the action form: shown beside it with the API's status; anything else goes to the door. */
const ACCION_FAILURES: ReadonlySet<ErrorCode> = new Set(['VALIDATION_ERROR', 'PLAZO_VENCIDO', 'ACCION_NO_PERMITIDA', 'CERTIFICATE_REQUIRED'])

/** The catalogue's words plus the specific reason the service gave (context.motivo: order, plazo, the SII's answer). */
function accionFailure(err: TimbreError): Failure {
  const base = failureOf(err)
  const reason = err.extra.context?.motivo
  return typeof reason === 'string' ? { ...base, message: `${base.message} Motivo: ${reason}.` } : base
}

// ------------------------------------------------------------------------------------------------- the files

export const recibidoScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/recibidos', ({ request }) => renderList(deps, request, { notice: NOTICES[new URL(request.url).searchParams.get('aviso') ?? ''] ?? null }))
    .post('/recibidos/importar', async ({ request }) => {
      requireWrite(request)
      const file = formOf(request).get('archivo')
      try {
        if (file === null || typeof file === 'string' || file.size === 0)
          throw validationError([{ field: 'archivo', code: 'REQUIRED', message: 'Adjunte el EnvioDTE en el campo archivo.' }])
        const bytes = new Uint8Array(await file.arrayBuffer())
        const answer = await importRecibidos(deps, { empresaId: empresaIdOf(request), bytes, fileName: file.name === '' ? null : file.name, field: 'archivo' })
        const aviso = answer.status === 200 ? 'ya_importado' : answer.body.estado_recep_env === 0 ? 'importado' : 'importado_rechazado'
        return redirect(`${BASE}?aviso=${aviso}`)
      } catch (err) {
        if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
        return renderList(deps, request, { importFailure: failureOf(err), status: STATUS[err.code] })
      }
    })
    .get('/recibidos/:id', ({ request, params }) =>
      renderDetail(deps, request, pathId(params.id), { notice: NOTICES[new URL(request.url).searchParams.get('aviso') ?? ''] ?? null }),
    )
    .get('/recibidos/:id/xml', ({ request, params }) => {
      const xml = getRecibidoXml(deps, { empresaId: empresaIdOf(request), id: pathId(params.id) })
      return fileResponse(xml.bytes, 'xml', `DTE-${xml.rutEmisor}-${xml.tipoDte}-F${xml.folio}.xml`, 'inline')
    })
    .get('/recibidos/:id/pdf', async ({ request, params }) => {
      const q = new URL(request.url).searchParams
      const pdf = await getRecibidoPdf(deps, {
        empresaId: empresaIdOf(request),
        id: pathId(params.id),
        query: { formato: q.get('formato') ?? undefined, cedible: q.get('cedible') ?? undefined },
      })
      return fileResponse(pdf.bytes, 'pdf', `DTE-${pdf.tipoDte}-F${pdf.folio}.pdf`, 'inline')
    })
    .post('/recibidos/:id/acciones', async ({ request, params }) => {
      requireWrite(request)
      const id = pathId(params.id)
      const form = formOf(request)
      try {
        const { accion, motivo } = accionOf(form)
        const answer = await solicitarAccion(deps, { empresaId: empresaIdOf(request), id, accion, motivo })
        return redirect(`${BASE}/${id}?aviso=${answer.status === 200 ? 'registrada' : 'en_cola'}`)
      } catch (err) {
        if (!(err instanceof TimbreError) || !ACCION_FAILURES.has(err.code)) throw err
        return renderDetail(deps, request, id, { failure: accionFailure(err), form, status: STATUS[err.code] })
      }
    })

