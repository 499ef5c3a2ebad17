// The documents screens (DESIGN §14): GET /dte's list with its filters, the detail with totals, references, tracking,
// the SII's codes and the exchange with the receiver, state badges that follow the SII while it answers, the PDF
// preview and the XML download. Each calls the service its API route calls, with the same inputs (routes/dte.ts,
// routes/dte-pdf.ts), so the console can show nothing the API would not.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Elysia } from 'elysia'
import type { ComponentChildren } from 'preact'
import { isTipoDte, TIPOS_DTE, type Linea, type Moneda } from '../../domain/emision'
import { ESTADOS_DTE, isFinal, isTakenBySubmission, onSubmissionRequested, type EstadoDte } from '../../domain/estados'
import { ESTADO_RESULTADO_DTE, GLOSA_RECEP_DTE, GLOSA_RECEP_ENV, isMailedToReceiver, type EstadoRecepDte, type EstadoRecepEnv } from '../../domain/intercambio'
import { TIPOS } from '../../domain/tipos'
import { computeLineas } from '../../domain/totals'
import { TimbreError, validationError, type DetailCode, type FieldError } from '../../errors'
import { decodeCursor, encodeCursor } from '../../contracts/pagination'
import { pathId } from '../../contracts/params'
import { fieldErrorsFromTypeBox } from '../../contracts/validation'
import { ListarDtesQuery } from '../../contracts/dte-query'
import type { Deps } from '../../services/deps'
import { getDtePdf } from '../../services/dte-pdf'
import { getDte, getDteXml, listDtes, requestSubmission, type DteListQuery, type DteRecord, type HistorialSii, type IntercambioRecord } from '../../services/dtes'
import { getPartesEmitidas } from '../../services/dte-partes'
import { canResendIntercambio, resendIntercambio, resendTarget } from '../../services/resend-intercambio'
import { empresaIdOf, formOf, requireWrite, sessionOf, textField } from '../context'
import { formatPesos } from '../../domain/numero-cl'
import { ErrorSummary, Field, failureOf, formatDateTime, formatFecha, formatNumber, formatRut, NO_ERRORS, SelectField, type Failure } from '../forms'
import { estadoBadge, estadoLabel, INTERCAMBIO_LABEL } from '../estados'
import { CsrfInput, fileResponse, fragmentResponse, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const BASE = `${CONSOLE_PREFIX}/documentos`
/** GET /dte's default page size (routes/dte.ts parseLimit fallback). */
const PAGE_SIZE = 20
/** The query names of GET /dte the list form carries (ListarDtesQuery without cursor and limit). */
const FILTERS = ['estado', 'tipo_dte', 'fecha_desde', 'fecha_hasta', 'rut_receptor'] as const
type Filters = Partial<Record<(typeof FILTERS)[number], string>>

// ------------------------------------------------------------------------------------------------ estado badges

const labelOf = estadoLabel

/**
 * Whether the estado can change without anyone acting: the SII jobs hold it (DESIGN §6). A `firmado` DTE without
 * auto_send waits for "Enviar al SII", so polling it every 3 s would only load the server until someone presses it.
 */
function isMoving(dte: Pick<DteRecord, 'estado' | 'auto_send'>): boolean {
  if (isFinal(dte.estado)) return false
  return dte.estado === 'procesando' || isTakenBySubmission(dte.estado as EstadoDte, dte.auto_send)
}

/** The badge alone: what GET /documentos/:id/estado answers, and what htmx swaps for itself every 3 s while moving. */
function Badge(props: { dte: Pick<DteRecord, 'id' | 'estado' | 'auto_send'>; detail?: boolean }) {
  const { dte } = props
  // The detail page shows far more than the badge (tracking, SII codes, the exchange): it asks to be reloaded once
  // the estado differs from the one it was rendered with; the list only swaps the badge.
  const poll = `${BASE}/${dte.id}/estado?visto=${encodeURIComponent(dte.estado)}${props.detail ? '&detalle=1' : ''}`
  const cls = `badge ${estadoBadge(dte.estado)}`
  if (!isMoving(dte)) return <span class={cls}>{labelOf(dte.estado)}</span>
  return (
    <span class={cls} hx-get={poll} hx-trigger="every 3s" hx-swap="outerHTML">
      {labelOf(dte.estado)}
    </span>
  )
}

/**
 * A DTE's estado as a badge that follows the SII: while the jobs hold the DTE it asks for itself every 3 s and is
 * replaced, inside a polite live region that stays in place so a screen reader hears the new estado; once final (or
 * waiting for a person) it stops asking. `live={false}` gives the badge alone, as the fragment route answers it.
 */
export function EstadoBadge(props: { dte: Pick<DteRecord, 'id' | 'estado' | 'auto_send'>; live?: boolean; detail?: boolean }) {
  if (props.live === false) return <Badge dte={props.dte} detail={props.detail} />
  return (
    <span class="estado" aria-live="polite">
      <Badge dte={props.dte} detail={props.detail} />
    </span>
  )
}

// ------------------------------------------------------------------------------------------------ formatting

const tipoNombre = (tipo: number) => (isTipoDte(tipo) ? TIPOS[tipo].nombre : `Tipo ${tipo}`)

const orDash = (v: string | number | null | undefined) => (v === null || v === undefined || v === '' ? '—' : String(v))

function Facts(props: { rows: ReadonlyArray<readonly [string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {props.rows.map(([term, value]) => (
        <>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  )
}

// ------------------------------------------------------------------------------------------------ list

// The console checks the query with the API's own schema (ListarDtesQuery), so a value the API answers 400 to is
// refused here with the same field; the service then applies its own rules (unknown tipo, RUT, empty range).
const checkQuery = TypeCompiler.Compile(ListarDtesQuery)

function queryErrors(query: Readonly<Record<string, string>>): FieldError[] {
  return checkQuery.Check(query) ? [] : fieldErrorsFromTypeBox(checkQuery.Errors(query))
}

/** The filters as GET /dte reads them: a blank form field is a filter not given. */
function filtersOf(url: URL): Filters {
  const filters: Filters = {}
  for (const name of FILTERS) {
    const value = url.searchParams.get(name)?.trim()
    if (value) filters[name] = value
  }
  return filters
}

function listUrl(filters: Filters, cursor: string | null): string {
  const params = new URLSearchParams(filters as Record<string, string>)
  if (cursor) params.set('cursor', cursor)
  const qs = params.toString()
  return qs ? `${BASE}?${qs}` : BASE
}

interface ListPage {
  readonly rows: readonly DteRecord[]
  readonly total: number
  readonly nextCursor: string | null
}

/**
 * The service's verdict on the filters the schema passed, so one submission names every bad field: the API stops at
 * the schema, but a person fixing the form should not meet a second error only after fixing the first.
 */
function ruleErrors(deps: Deps, empresaId: string, filters: Filters, shape: readonly FieldError[]): FieldError[] {
  const rest: Filters = { ...filters }
  for (const e of shape) delete rest[e.field as keyof Filters]
  try {
    listDtes(deps, { empresaId, query: rest, afterId: null, limit: 1 })
    return []
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
    return (err.extra.details ?? []).filter((r) => !shape.some((e) => e.field === r.field))
  }
}

function listPage(deps: Deps, empresaId: string, filters: Filters, cursor: string | null): ListPage {
  const shape = queryErrors({ ...filters, ...(cursor ? { cursor } : {}) })
  if (shape.length > 0) throw validationError([...shape, ...ruleErrors(deps, empresaId, filters, shape)])
  const query: DteListQuery = filters
  const { rows, total } = listDtes(deps, { empresaId, query, afterId: decodeCursor(cursor ?? undefined), limit: PAGE_SIZE + 1 })
  const items = rows.slice(0, PAGE_SIZE)
  return { rows: items, total, nextCursor: rows.length > PAGE_SIZE ? encodeCursor(items[items.length - 1]!.id) : null }
}

function FilterForm(props: { filters: Filters; failure: Failure | null }) {
  const f = props.filters
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <form method="get" action={BASE} class="filters" role="search" aria-label="Filtrar documentos">
      <SelectField
        name="estado"
        label="Estado"
        value={f.estado ?? ''}
        errors={errors}
        options={[{ value: '', label: 'Todos' }, ...ESTADOS_DTE.filter((e) => e !== 'borrador' && e !== 'generado').map((e) => ({ value: e, label: estadoLabel(e) }))]}
      />
      <SelectField
        name="tipo_dte"
        label="Tipo de documento"
        value={f.tipo_dte ?? ''}
        errors={errors}
        options={[{ value: '', label: 'Todos' }, ...TIPOS_DTE.map((t) => ({ value: String(t), label: `${t} · ${TIPOS[t].nombre}` }))]}
      />
      <Field name="fecha_desde" label="Emitido desde" type="date" value={f.fecha_desde} errors={errors} />
      <Field name="fecha_hasta" label="Emitido hasta" type="date" value={f.fecha_hasta} errors={errors} />
      <Field name="rut_receptor" label="RUT del receptor" type="search" value={f.rut_receptor} errors={errors} autocomplete="off" />
      <div class="actions">
        <button type="submit" class="primary">
          Filtrar
        </button>
        <a href={BASE}>Limpiar</a>
      </div>
    </form>
  )
}

/**
 * On a phone (≤ 640 px, console.css) the lesser columns fold away and the receptor moves under the folio, so folio,
 * total and estado stay on screen without scrolling sideways.
 */
function DteTable(props: { rows: readonly DteRecord[] }) {
  return (
    <div class="table-wrap">
      <table class="plegable">
        <thead>
          <tr>
            <th scope="col" class="col-menor">
              Tipo
            </th>
            <th scope="col">Folio</th>
            <th scope="col" class="col-menor">
              Fecha de emisión
            </th>
            <th scope="col" class="col-menor">
              Receptor
            </th>
            <th scope="col" class="num">
              Total
            </th>
            <th scope="col">Estado</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((d) => (
            <tr>
              <td class="col-menor">
                {tipoNombre(d.tipo_dte)} <span class="muted">({d.tipo_dte})</span>
              </td>
              <td class="folio">
                <a href={`${BASE}/${d.id}`} aria-label={`Ver ${tipoNombre(d.tipo_dte)} folio ${d.folio}`}>
                  {d.folio}
                </a>
                <span class="solo-telefono muted">
                  {tipoNombre(d.tipo_dte)} · <time datetime={d.fecha_emision}>{formatFecha(d.fecha_emision)}</time>
                  <br />
                  {d.razon_social_receptor}
                </span>
              </td>
              <td class="col-menor">
                <time datetime={d.fecha_emision}>{formatFecha(d.fecha_emision)}</time>
              </td>
              <td class="col-menor">
                {d.razon_social_receptor}
                <br />
                <span class="muted">{formatRut(d.rut_receptor)}</span>
              </td>
              <td class="num">{formatPesos(d.monto_total)}</td>
              <td>
                <EstadoBadge dte={d} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function ListBody(props: { request: Request; filters: Filters; cursor: string | null; page: ListPage | null; failure: Failure | null }) {
  const { page, filters } = props
  const filtered = Object.keys(filters).length > 0
  const canWrite = sessionOf(props.request).canWrite
  return (
    <>
      <ErrorSummary failure={props.failure} fields={[...FILTERS]} />
      <FilterForm filters={filters} failure={props.failure} />
      {page && (
        <section aria-labelledby="resultados">
          <h2 id="resultados">
            {page.total === 1 ? '1 documento' : `${formatNumber(page.total)} documentos`}
            {filtered && <span class="muted"> con estos filtros</span>}
          </h2>
          {page.rows.length === 0 ? (
            <p class="card">
              {filtered || props.cursor
                ? 'Ningún documento coincide con estos filtros.'
                : 'Aún no hay documentos emitidos.'}{' '}
              {!filtered && !props.cursor && canWrite && <a href={`${BASE}/nuevo`}>Emitir el primero</a>}
            </p>
          ) : (
            <DteTable rows={page.rows} />
          )}
          <p class="actions">
            {props.cursor && <a href={listUrl(filters, null)}>Primera página</a>}
            {page.nextCursor && (
              <a href={listUrl(filters, page.nextCursor)} rel="next">
                Siguiente página
              </a>
            )}
          </p>
        </section>
      )}
    </>
  )
}

function listResponse(deps: Deps, request: Request): Response {
  const url = new URL(request.url)
  const filters = filtersOf(url)
  const cursor = url.searchParams.get('cursor')?.trim() || null
  const render = (page: ListPage | null, failure: Failure | null, status = 200) =>
    renderPage(deps, request, {
      title: 'Documentos',
      section: 'documentos',
      status,
      children: <ListBody request={request} filters={filters} cursor={cursor} page={page} failure={failure} />,
    })
  try {
    return render(listPage(deps, empresaIdOf(request), filters, cursor), null)
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
    return render(null, failureOf(err), 400)
  }
}

// ------------------------------------------------------------------------------------------------ detail

const NOTICES: Readonly<Record<string, (d: DteRecord) => string>> = {
  emitido: (d) => `Documento emitido y firmado con folio ${d.folio}.`,
  enviado: () => 'Documento en cola para su envío al SII: el estado se actualiza solo mientras el SII responde.',
  reenviado: (d) => `Correo en cola para ${d.intercambio?.email ?? 'el receptor'}: se envía en la próxima pasada del correo.`,
}

/** The stored lines are the request's (spec 2.4); their amounts are recomputed by the same rule the XML was built with. */
function Detalle(props: { dte: DteRecord }) {
  const { dte } = props
  const lineas = dte.detalle as Linea[]
  const calculadas = isTipoDte(dte.tipo_dte)
    ? computeLineas({
        tipo_dte: dte.tipo_dte,
        receptor: { rut: dte.rut_receptor, razon_social: dte.razon_social_receptor },
        detalle: lineas,
        // Only the currency decides the decimals of an export's amounts (domain/totals.ts amountDecimals).
        export_data: dte.moneda ? { tpo_moneda: dte.moneda as Moneda } : undefined,
      })
    : []
  const amount = (n: number) => (dte.moneda ? `${formatNumber(n)} ${dte.moneda}` : formatPesos(n))
  return (
    <section class="card" aria-labelledby="detalle">
      <h2 id="detalle">Detalle</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">N°</th>
              <th scope="col">Nombre</th>
              <th scope="col" class="num">
                Cantidad
              </th>
              <th scope="col" class="num">
                Precio
              </th>
              <th scope="col" class="num">
                Descuento
              </th>
              <th scope="col" class="num">
                Monto
              </th>
            </tr>
          </thead>
          <tbody>
            {lineas.map((l, i) => {
              const c = calculadas[i]
              return (
                <tr>
                  <td>{i + 1}</td>
                  <td>
                    {l.nombre}
                    {c?.is_exenta && <span class="muted"> (exento)</span>}
                    {l.dsc_item && (
                      <>
                        <br />
                        <span class="muted">{l.dsc_item}</span>
                      </>
                    )}
                  </td>
                  <td class="num">
                    {l.cantidad === undefined ? '—' : formatNumber(l.cantidad)}
                    {l.unidad ? ` ${l.unidad}` : ''}
                  </td>
                  <td class="num">{l.precio === undefined ? '—' : amount(l.precio)}</td>
                  <td class="num">{l.descuento_pct ? `${formatNumber(l.descuento_pct)} %` : c?.descuento_monto ? amount(c.descuento_monto) : '—'}</td>
                  <td class="num">{c ? amount(c.monto_item) : orDash(l.monto_item)}</td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
    </section>
  )
}

function Totales(props: { dte: DteRecord }) {
  const { dte } = props
  const rows: Array<[string, string, boolean]> = []
  if (dte.monto_neto !== null) rows.push(['Neto', formatPesos(dte.monto_neto), false])
  if (dte.monto_exento !== null) rows.push(['Exento', formatPesos(dte.monto_exento), false])
  if (dte.iva !== null) rows.push([`IVA (${formatNumber(dte.tasa_iva)} %)`, formatPesos(dte.iva), false])
  if (dte.moneda && dte.monto_total_moneda !== null) rows.push([`Total en ${dte.moneda}`, formatNumber(dte.monto_total_moneda), false])
  rows.push(['Total', formatPesos(dte.monto_total), true])
  return (
    <section class="card" aria-labelledby="totales">
      <h2 id="totales">Totales</h2>
      <dl class="totals">
        {rows.map(([term, value, isTotal]) => (
          <>
            <dt class={isTotal ? 'total' : undefined}>{term}</dt>
            <dd class={isTotal ? 'total' : undefined}>{value}</dd>
          </>
        ))}
      </dl>
    </section>
  )
}

const CODIGO_REF: Readonly<Record<number, string>> = { 1: 'Anula el documento', 2: 'Corrige textos', 3: 'Corrige montos' }

interface ReferenciaVista {
  readonly tipo_doc_ref?: number | string
  readonly folio_ref?: number | string
  readonly fecha_ref?: string
  readonly codigo_ref?: number
  readonly razon_ref?: string
}

function Referencias(props: { dte: DteRecord }) {
  const refs = props.dte.referencias as ReferenciaVista[]
  return (
    <section class="card" aria-labelledby="referencias">
      <h2 id="referencias">Referencias</h2>
      {refs.length === 0 ? (
        <p class="muted">Sin referencias.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Documento</th>
                <th scope="col">Folio</th>
                <th scope="col">Fecha</th>
                <th scope="col">Código</th>
                <th scope="col">Razón</th>
              </tr>
            </thead>
            <tbody>
              {refs.map((r) => (
                <tr>
                  <td>{typeof r.tipo_doc_ref === 'number' ? `${tipoNombre(r.tipo_doc_ref)} (${r.tipo_doc_ref})` : orDash(r.tipo_doc_ref)}</td>
                  <td>{orDash(r.folio_ref)}</td>
                  <td>{formatFecha(r.fecha_ref)}</td>
                  <td>{r.codigo_ref === undefined ? '—' : `${r.codigo_ref} · ${CODIGO_REF[r.codigo_ref] ?? ''}`}</td>
                  <td>{orDash(r.razon_ref)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

const OPERACION_LABEL: Readonly<Record<string, string>> = { upload: 'Envío (upload)', estado_envio: 'Estado del envío', estado_dte: 'Estado del documento' }

function Motivos(props: { motivos: ReadonlyArray<{ codigo: string; glosa: string; detalle: string | null; nivel: number | null }> }) {
  if (props.motivos.length === 0) return null
  return (
    <ul>
      {props.motivos.map((m) => (
        <li>
          <code>{m.codigo}</code> {m.glosa}
          {m.detalle && <span class="muted"> — {m.detalle}</span>}
          {m.nivel !== null && <span class="muted"> (nivel {m.nivel})</span>}
        </li>
      ))}
    </ul>
  )
}

function Historial(props: { entries: readonly HistorialSii[] }) {
  if (props.entries.length === 0) return <p class="muted">El SII aún no ha respondido sobre este documento.</p>
  return (
    <div class="table-wrap">
      <table>
        <caption class="muted">Cada respuesta del SII sobre este documento, en orden.</caption>
        <thead>
          <tr>
            <th scope="col">Fecha</th>
            <th scope="col">Consulta</th>
            <th scope="col">Track ID</th>
            <th scope="col">Estado</th>
            <th scope="col">Glosa y motivos</th>
          </tr>
        </thead>
        <tbody>
          {props.entries.map((h) => (
            <tr>
              <td>
                <time datetime={h.at}>{formatDateTime(h.at)}</time>
              </td>
              <td>
                {OPERACION_LABEL[h.operacion] ?? h.operacion} <span class="muted">({h.canal === 'boleta' ? 'API de boletas' : 'SOAP'})</span>
              </td>
              <td>{orDash(h.track_id)}</td>
              <td>
                <code>{orDash(h.estado)}</code>
              </td>
              <td>
                {orDash(h.glosa)}
                {h.err_code && (
                  <span class="muted">
                    {' '}
                    · ERR_CODE {h.err_code}
                    {h.glosa_err ? `: ${h.glosa_err}` : ''}
                  </span>
                )}
                <Motivos motivos={h.motivos} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function Seguimiento(props: { dte: DteRecord }) {
  const { tracking: t, sii_status: s } = props.dte
  return (
    <section class="card" aria-labelledby="seguimiento">
      <h2 id="seguimiento">Seguimiento en el SII</h2>
      <Facts
        rows={[
          ['Envío automático', props.dte.auto_send ? 'Sí' : 'No: se envía con «Enviar al SII»'],
          ['Track ID', orDash(t.track_id)],
          ['Estado del envío', orDash(t.estado_envio)],
          ['Código del SII', t.codigo_sii ? <code>{t.codigo_sii}</code> : '—'],
          ['Glosa del SII', orDash(t.glosa_sii)],
          ['Documentos del envío', `${t.informados} informados, ${t.aceptados} aceptados, ${t.rechazados} rechazados, ${t.reparos} con reparos`],
          ['Intentos de envío', String(t.intentos)],
        ]}
      />
      {s && (
        <>
          <h3>Última respuesta del SII sobre este documento</h3>
          <Facts
            rows={[
              ['Estado SII', s.estado_sii ? <code>{s.estado_sii}</code> : '—'],
              ['Glosa', orDash(s.glosa ?? s.glosa_estado)],
              // ERR_CODE goes with the ESTADO (DOK 0, FAU 3…: docs/sii-protocol.md §6.6), not only with a failure.
              ['ERR_CODE', s.err_code ? `${s.err_code}${s.glosa_err ? `: ${s.glosa_err}` : ''}` : '—'],
              ['N° de atención', orDash(s.num_atencion)],
              ['Consultado', <time datetime={s.checked_at}>{formatDateTime(s.checked_at)}</time>],
            ]}
          />
          {s.motivos && s.motivos.length > 0 && (
            <>
              <h3>Motivos</h3>
              <Motivos motivos={s.motivos} />
            </>
          )}
        </>
      )}
      <h3>Historial del SII</h3>
      <Historial entries={props.dte.historial_sii ?? []} />
    </section>
  )
}

const RESULTADO_LABEL: Readonly<Record<number, string>> = {
  [ESTADO_RESULTADO_DTE.aceptado]: 'Aceptado',
  [ESTADO_RESULTADO_DTE.aceptadoConDiscrepancias]: 'Aceptado con discrepancias',
  [ESTADO_RESULTADO_DTE.rechazado]: 'Rechazado',
}

const firma = (valida: boolean | undefined) => (valida === false ? ' (firma no verificada)' : '')

function IntercambioFacts(props: { i: IntercambioRecord }) {
  const { i } = props
  const acuse = i.acuse
  const res = i.resultado
  const rows: Array<readonly [string, ComponentChildren]> = [
    ['Estado', INTERCAMBIO_LABEL[i.estado] ?? i.estado],
    ['Correo del receptor', orDash(i.email)],
    ['Enviado', i.enviado_at ? <time datetime={i.enviado_at}>{formatDateTime(i.enviado_at)}</time> : '—'],
  ]
  if (acuse) {
    const env = acuse.estado_recep_env === null ? '—' : `${acuse.estado_recep_env} · ${GLOSA_RECEP_ENV[acuse.estado_recep_env as EstadoRecepEnv] ?? ''}`
    const dte = acuse.estado_recep_dte === null ? '—' : `${acuse.estado_recep_dte} · ${GLOSA_RECEP_DTE[acuse.estado_recep_dte as EstadoRecepDte] ?? ''}`
    rows.push(['Acuse de recibo del envío', `${env}${firma(acuse.firma_valida)}`], ['Acuse del documento', dte], ['Glosa del acuse', orDash(acuse.glosa)], ['Fecha del acuse', orDash(acuse.fecha)])
  } else rows.push(['Acuse de recibo', 'Aún no llega'])
  if (res?.estado_dte !== undefined)
    rows.push(['Resultado comercial', `${RESULTADO_LABEL[res.estado_dte] ?? res.estado_dte}${firma(res.firma_valida)}`], ['Glosa del resultado', orDash(res.glosa)], ['Fecha del resultado', orDash(res.fecha)])
  if (res?.recibo) rows.push(['Recibo de mercaderías', `${orDash(res.recibo.fecha)}${res.recibo.recinto ? ` en ${res.recibo.recinto}` : ''}${firma(res.recibo.firma_valida)}`])
  return <Facts rows={rows} />
}

/**
 * "Reenviar al receptor" for a mail that ended in error or never left for want of an address (services/
 * resend-intercambio.ts), and only for a session that can write: the door refuses the POST of a read-only one anyway.
 */
function Reenviar(props: { deps: Deps; request: Request; dte: DteRecord }) {
  const session = sessionOf(props.request)
  const i = props.dte.intercambio
  if (!session.canWrite || !canResendIntercambio(i?.estado)) return null
  const target = resendTarget(props.deps, { empresaId: empresaIdOf(props.request), id: props.dte.id })
  return (
    <form method="post" action={`${BASE}/${props.dte.id}/intercambio/reenviar`} class="actions">
      <CsrfInput session={session} />
      {/* The address shown is the one sent to: if it changes before the click, the service refuses and says so. */}
      <input type="hidden" name="email" value={target ?? ''} />
      <button type="submit" class="primary">
        Reenviar al receptor
      </button>
      <span class="hint">
        {target === null
          ? 'Antes agregue el correo de intercambio al cliente con el RUT del receptor: se envía a ese correo.'
          : `Se enviará a ${target} (el correo del cliente con ese RUT, si tiene uno; corríjalo en Clientes si no es el correcto).`}
      </span>
    </form>
  )
}

function Intercambio(props: { deps: Deps; request: Request; dte: DteRecord }) {
  const i = props.dte.intercambio
  return (
    <section class="card" aria-labelledby="intercambio">
      <h2 id="intercambio">Intercambio con el receptor</h2>
      {i === null ? (
        <p class="muted">
          {isMailedToReceiver(props.dte.tipo_dte)
            ? 'El documento se envía al receptor cuando el SII lo acepta.'
            : 'Las boletas no se envían al receptor por intercambio.'}
        </p>
      ) : (
        <>
          <IntercambioFacts i={i} />
          <Reenviar deps={props.deps} request={props.request} dte={props.dte} />
          <h3>Acciones del receptor en el SII</h3>
          {i.eventos_receptor.length === 0 ? (
            <p class="muted">Sin acciones registradas.</p>
          ) : (
            <ul>
              {i.eventos_receptor.map((e) => (
                <li>
                  <code>{e.accion}</code> · <time datetime={e.fecha}>{formatDateTime(e.fecha)}</time>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  )
}

function Acciones(props: { request: Request; dte: DteRecord }) {
  const { dte } = props
  const session = sessionOf(props.request)
  const pdf = `${BASE}/${dte.id}/pdf`
  // Only `firmado` can be sent (domain/estados.ts onSubmissionRequested), and only by a session that can write.
  // With auto_send the submission job takes it by itself: the button would only race it.
  const canSend = session.canWrite && !dte.auto_send && onSubmissionRequested(dte.estado as EstadoDte) !== null
  return (
    <div class="actions">
      <a class="button" href={pdf}>
        Abrir PDF
      </a>
      {isTipoDte(dte.tipo_dte) && TIPOS[dte.tipo_dte].isCedible && (
        <a class="button" href={`${pdf}?cedible=true`}>
          PDF cedible
        </a>
      )}
      <a class="button" href={`${pdf}?formato=termico`}>
        PDF formato térmico (80 mm)
      </a>
      <a class="button" href={`${BASE}/${dte.id}/xml`} download>
        Descargar XML
      </a>
      {canSend && (
        <form method="post" action={`${BASE}/${dte.id}/enviar`}>
          <CsrfInput session={session} />
          <button type="submit" class="primary">
            Enviar al SII
          </button>
        </form>
      )}
    </div>
  )
}

/** A place as the XML writes it: the parts it has, comma-separated; a dash when it has none. */
const lugar = (...parts: ReadonlyArray<string | undefined>) => parts.filter((p) => p !== undefined && p !== '').join(', ') || '—'

/**
 * Emisor and receptor as the signed XML names them (services/dte-partes.ts), side by side across the page's width: a
 * cliente or the company edited since does not rewrite what was issued. Optional fields show only when the document
 * has them, except the ones the SII requires of facturas (giro, dirección, comuna), which show a dash when missing.
 */
function Partes(props: { deps: Deps; request: Request; dte: DteRecord }) {
  const { emisor, receptor, emailReceptor } = getPartesEmitidas(props.deps, { empresaId: empresaIdOf(props.request), id: props.dte.id })
  const receptorRows: Array<readonly [string, ComponentChildren]> = [
    ['Razón social', receptor.razonSocial],
    ['RUT', formatRut(receptor.rut)],
    ['Giro', orDash(receptor.giro)],
    ['Dirección', orDash(receptor.direccion)],
    ['Comuna', orDash(receptor.comuna)],
    ['Ciudad', orDash(receptor.ciudad)],
  ]
  if (receptor.contacto) receptorRows.push(['Contacto', receptor.contacto])
  if (emailReceptor) receptorRows.push(['Correo', emailReceptor])
  if (receptor.nacionalidad) receptorRows.push(['Nacionalidad', receptor.nacionalidad])
  if (receptor.numId) receptorRows.push(['Identificación extranjera', receptor.numId])
  const emisorRows: Array<readonly [string, ComponentChildren]> = [
    ['Razón social', emisor.razonSocial],
    ['RUT', formatRut(emisor.rut)],
    ['Giro', orDash(emisor.giro)],
    ['Dirección', lugar(emisor.direccion, emisor.comuna, emisor.ciudad)],
  ]
  if (emisor.acteco.length > 0) emisorRows.push(['Actividad económica', emisor.acteco.join(', ')])
  return (
    <div class="partes">
      <section class="card" aria-labelledby="receptor">
        <h2 id="receptor">Receptor</h2>
        <Facts rows={receptorRows} />
      </section>
      <section class="card" aria-labelledby="emisor">
        <h2 id="emisor">Emisor</h2>
        <Facts rows={emisorRows} />
      </section>
    </div>
  )
}

function DetailBody(props: { deps: Deps; request: Request; dte: DteRecord; failure: Failure | null }) {
  const { dte } = props
  return (
    <>
      <ErrorSummary failure={props.failure} />
      <p>
        <a href={BASE}>← Volver a la lista</a>
      </p>
      <section class="card" aria-labelledby="resumen">
        <h2 id="resumen">Resumen</h2>
        <Facts
          rows={[
            ['Estado', <EstadoBadge dte={dte} detail />],
            ['Tipo', `${tipoNombre(dte.tipo_dte)} (${dte.tipo_dte})`],
            ['Folio', String(dte.folio)],
            ['Fecha de emisión', <time datetime={dte.fecha_emision}>{formatFecha(dte.fecha_emision)}</time>],
            ['Total', formatPesos(dte.monto_total)],
            ['Creado', <time datetime={dte.created_at}>{formatDateTime(dte.created_at)}</time>],
          ]}
        />
        <Acciones request={props.request} dte={dte} />
      </section>
      <Partes deps={props.deps} request={props.request} dte={dte} />
      <Detalle dte={dte} />
      <Totales dte={dte} />
      <Referencias dte={dte} />
      <Seguimiento dte={dte} />
      <Intercambio deps={props.deps} request={props.request} dte={dte} />
      {Object.keys(dte.metadata).length > 0 && (
        <section class="card" aria-labelledby="metadata">
          <h2 id="metadata">Metadata</h2>
          <Facts rows={Object.entries(dte.metadata).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)] as const)} />
        </section>
      )}
      <section class="card" aria-labelledby="vista-pdf">
        <h2 id="vista-pdf">Vista previa</h2>
        <iframe class="pdf" title="Vista previa del PDF" src={`${BASE}/${dte.id}/pdf`}></iframe>
        <p class="hint">
          Si su navegador no muestra el PDF aquí, <a href={`${BASE}/${dte.id}/pdf`}>ábralo</a> o descárguelo.
        </p>
      </section>
    </>
  )
}

function detailResponse(deps: Deps, request: Request, dte: DteRecord, opts: { notice?: string | null; failure?: Failure | null; status?: number } = {}): Response {
  return renderPage(deps, request, {
    title: `${tipoNombre(dte.tipo_dte)} N° ${dte.folio}`,
    section: 'documentos',
    status: opts.status,
    notice: opts.notice ?? null,
    children: <DetailBody deps={deps} request={request} dte={dte} failure={opts.failure ?? null} />,
  })
}

// ------------------------------------------------------------------------------------------------ routes

/** `Content-Disposition` with the API's file name (routes/dte.ts, routes/dte-pdf.ts). */
const fileNameOf = (tipoDte: number, folio: number, ext: 'pdf' | 'xml') => `DTE-${tipoDte}-F${folio}.${ext}`

export const documentoScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/documentos', ({ request }) => listResponse(deps, request))
    .get('/documentos/:id', ({ request, params }) => {
      const dte = getDte(deps, { empresaId: empresaIdOf(request), id: pathId(params.id) })
      const aviso = new URL(request.url).searchParams.get('aviso') ?? ''
      return detailResponse(deps, request, dte, { notice: NOTICES[aviso]?.(dte) ?? null })
    })
    .get('/documentos/:id/estado', ({ request, params }) => {
      const dte = getDte(deps, { empresaId: empresaIdOf(request), id: pathId(params.id) })
      const url = new URL(request.url)
      const detail = url.searchParams.get('detalle') === '1'
      const response = fragmentResponse(<EstadoBadge dte={dte} live={false} detail={detail} />)
      if (detail && url.searchParams.get('visto') !== dte.estado) response.headers.set('HX-Refresh', 'true')
      return response
    })
    .post('/documentos/:id/enviar', ({ request, params }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const id = pathId(params.id)
      try {
        requestSubmission(deps, { empresaId, id })
        return redirect(`${BASE}/${id}?aviso=enviado`)
      } catch (err) {
        if (!(err instanceof TimbreError) || err.code !== 'DTE_NOT_SENDABLE') throw err
        const dte = getDte(deps, { empresaId, id })
        const failure: Failure = { ...failureOf(err), action: `Está en estado «${labelOf(dte.estado)}»: solo un documento firmado se envía.` }
        return detailResponse(deps, request, dte, { failure, status: 409 })
      }
    })
    .post('/documentos/:id/intercambio/reenviar', ({ request, params }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const id = pathId(params.id)
      try {
        resendIntercambio(deps, { empresaId, id, expectedEmail: textField(formOf(request), 'email') })
        return redirect(`${BASE}/${id}?aviso=reenviado`)
      } catch (err) {
        if (!(err instanceof TimbreError) || err.code !== 'ACCION_NO_PERMITIDA') throw err
        const failure: Failure = { ...failureOf(err), action: null }
        return detailResponse(deps, request, getDte(deps, { empresaId, id }), { failure, status: 409 })
      }
    })
    .get('/documentos/:id/pdf', async ({ request, params }) => {
      const q = new URL(request.url).searchParams
      const pdf = await getDtePdf(deps, {
        empresaId: empresaIdOf(request),
        id: pathId(params.id),
        query: { formato: q.get('formato') ?? undefined, cedible: q.get('cedible') ?? undefined },
      })
      return fileResponse(pdf.bytes, 'pdf', fileNameOf(pdf.tipoDte, pdf.folio, 'pdf'), 'inline')
    })
    .get('/documentos/:id/xml', ({ request, params }) => {
      const xml = getDteXml(deps, { empresaId: empresaIdOf(request), id: pathId(params.id) })
      return fileResponse(xml.bytes, 'xml', fileNameOf(xml.tipoDte, xml.folio, 'xml'), 'attachment')
    })
