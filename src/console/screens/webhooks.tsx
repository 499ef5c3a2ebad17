// Webhooks (DESIGN §7, §14): the company's subscriptions, registering one (its signing secret shown once), deleting
// it, a test ping, and each webhook's delivery log with redelivery. The same services and body rules as
// /api/v1/billing/webhooks, so an error lands beside the field the API would name.
import { Elysia } from 'elysia'
import { EVENT_TYPES, PING } from '../../domain/events'
import { TimbreError } from '../../errors'
import { isUuid } from '../../contracts/common'
import { parseRegistrarWebhook } from '../../contracts/webhooks'
import type { Deps } from '../../services/deps'
import { listWebhooks, redeliver, registerWebhook, removeWebhook, sendTestPing, webhookDeliveries, type DeliveryRecord, type WebhookRecord } from '../../services/webhooks'
import { empresaIdOf, formOf, requireWrite, sessionOf, textField } from '../context'
import { ErrorSummary, Field, failureOf, fieldId, formatDateTime, NO_ERRORS, type Failure } from '../forms'
import { CsrfInput, fragmentResponse, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const NOTICES: Readonly<Record<string, string>> = {
  eliminado: 'Webhook eliminado: sus entregas pendientes quedaron canceladas.',
  prueba: 'Evento de prueba (ping) en cola: aparecerá abajo en cuanto se entregue.',
  reenviado: 'Entrega en cola para reenviarse ahora.',
}

/** What each event announces, for the checkboxes; the code itself is what the API and the receiver see. */
const EVENT_LABELS: Readonly<Record<(typeof EVENT_TYPES)[number], string>> = {
  'dte.created': 'DTE emitido (firmado)',
  'dte.accepted': 'DTE aceptado por el SII',
  'dte.rejected': 'DTE rechazado por el SII',
  'dte.repaired': 'DTE aceptado con reparos por el SII',
  'caf.low_stock': 'Quedan pocos folios de un tipo',
  'certificado.expiring': 'El certificado está por vencer',
  'recibido.created': 'Llegó un DTE de un proveedor',
  'recibido.plazo_por_vencer': 'Vence el plazo para responder un DTE recibido',
  'recibido.accion': 'Se aceptó o reclamó un DTE recibido',
  'dte.acuse_recibo': 'El receptor acusó recibo de un DTE',
  'dte.resultado_receptor': 'El receptor informó el resultado de su revisión',
  'dte.aceptado_receptor': 'El receptor aceptó el DTE en el SII',
  'dte.reclamado': 'El receptor reclamó el DTE en el SII',
  'backup.failed': 'Falló un respaldo automático de la instancia',
  'rcv.sincronizado': 'Terminó una lectura del RCV del SII (bien o con falla)',
  'caf.obtenido': 'Llegó un CAF pedido al SII',
  'caf.anulado': 'El SII anuló los folios sin usar de un CAF',
  'caf.solicitud_fallida': 'Falló una solicitud o anulación de folios en el SII',
}

/** As many deliveries per page as the API's default page. */
const PAGE_SIZE = 20
const REGISTER_FIELDS = ['url', 'events', 'secret']

const webhooksPath = `${CONSOLE_PREFIX}/webhooks`
const webhookPath = (id: string) => `${webhooksPath}/${id}`

/** A malformed id is 404 like an unknown one (DESIGN §12), as the API's path ids are. */
function idParam(raw: string): string {
  if (!isUuid(raw)) throw new TimbreError('NOT_FOUND')
  return raw.toLowerCase()
}

/** The company's live webhook, or 404 as the API answers for an unknown id or another company's. */
function webhookOf(deps: Deps, empresaId: string, id: string): WebhookRecord {
  const webhook = listWebhooks(deps, { empresaId }).find((w) => w.id === id)
  if (!webhook) throw new TimbreError('NOT_FOUND')
  return webhook
}

/** The form → the API's JSON body: only what was sent, so a missing field is REQUIRED exactly as in the API. */
function registrarBodyFrom(form: FormData): Record<string, unknown> {
  const body: Record<string, unknown> = { events: form.getAll('events').filter((v): v is string => typeof v === 'string') }
  const url = textField(form, 'url')
  if (url !== null) body.url = url
  // A secret is kept as typed (spaces included): it is the HMAC key the receiver also holds.
  const secret = form.get('secret')
  if (typeof secret === 'string' && secret !== '') body.secret = secret
  return body
}

// ------------------------------------------------------------------------------------------------------ deliveries

const STATE_LABELS: Readonly<Record<string, { label: string; badge: string }>> = {
  delivered: { label: 'Entregada', badge: 'badge-ok' },
  failed: { label: 'Fallida', badge: 'badge-bad' },
  cancelled: { label: 'Cancelada', badge: 'badge-neutral' },
}

function DeliveryState(props: { delivery: Pick<DeliveryRecord, 'status' | 'attempt'> }) {
  const d = props.delivery
  if (d.status === 'pending')
    return d.attempt === 0 ? <span class="badge badge-info">Pendiente</span> : <span class="badge badge-warn">Reintentando</span>
  const known = STATE_LABELS[d.status]
  return <span class={`badge ${known?.badge ?? 'badge-neutral'}`}>{known?.label ?? d.status}</span>
}

/** The log's coarse error classes (DESIGN §7) in the console's words; the class itself stays in the cell's title. */
const ERROR_CLASS_LABELS: Readonly<Record<string, string>> = {
  timeout: 'sin respuesta en 10 s',
  connection_refused: 'conexión rechazada',
  tls: 'error de TLS o certificado',
  dns: 'el nombre no se resuelve',
  too_large: 'encabezados de respuesta demasiado grandes',
  address_refused: 'dirección no permitida',
}

/** The last attempt's answer: the receiver's HTTP status and the coarse error class the log keeps (DESIGN §7). */
function LastAnswer(props: { delivery: DeliveryRecord }) {
  const d = props.delivery
  if (d.attempt === 0) return <span class="muted">Aún sin intentos</span>
  // `http_status` only says the status was not a 2xx, which "HTTP 500" already shows.
  const error = d.error === null || d.error === 'http_status' || d.error === `HTTP ${d.status_code}` ? null : d.error
  return (
    <>
      {d.status_code !== null ? <span>HTTP {d.status_code}</span> : <span class="muted">Sin respuesta</span>}
      {error !== null && (
        <>
          {' '}
          <span class="muted" title={error}>
            {ERROR_CLASS_LABELS[error] ?? error}
          </span>
        </>
      )}
      {d.duration_ms !== null && <small class="hint">{d.duration_ms} ms</small>}
    </>
  )
}

interface DeliveriesPage {
  readonly rows: readonly DeliveryRecord[]
  /** The id after which the next (older) page starts; null on the last page. */
  readonly next: string | null
}

/** One page as the API pages it: newest first, limit + 1 rows to know whether an older page exists. */
function deliveriesPage(deps: Deps, empresaId: string, webhookId: string, afterId: string | null): DeliveriesPage {
  const rows = webhookDeliveries(deps, { empresaId, webhookId, afterId, limit: PAGE_SIZE + 1 })
  const shown = rows.slice(0, PAGE_SIZE)
  return { rows: shown, next: rows.length > PAGE_SIZE && shown.length > 0 ? shown[shown.length - 1]!.id : null }
}

/** `?despues=<id>`: the console's page cursor (a delivery id); one we did not make is refused like the API's cursor. */
function afterIdOf(raw: unknown): string | null {
  if (raw === undefined || raw === '') return null
  if (typeof raw !== 'string' || !isUuid(raw))
    throw new TimbreError('VALIDATION_ERROR', { details: [{ field: 'despues', code: 'INVALID_FORMAT', message: 'Página inválida; use el enlace «Entregas anteriores».' }] })
  return raw.toLowerCase()
}

/**
 * The delivery table. While a delivery is pending or retrying the region asks for itself again every 3 s and replaces
 * itself; once nothing is pending it comes back without the trigger, so the polling stops on its own.
 */
function DeliveriesRegion(props: { request: Request; webhookId: string; page: DeliveriesPage; afterId: string | null }) {
  const { webhookId, page, afterId } = props
  const session = sessionOf(props.request)
  const live = page.rows.some((d) => d.status === 'pending')
  const self = `${webhookPath(webhookId)}/entregas${afterId ? `?despues=${afterId}` : ''}`
  const polling = live ? { 'hx-get': self, 'hx-trigger': 'every 3s', 'hx-swap': 'outerHTML' } : {}
  return (
    <div id="entregas" aria-live="polite" {...polling}>
      {page.rows.length === 0 ? (
        <p>{afterId ? 'No hay entregas más antiguas.' : 'Aún no hay entregas. Use «Enviar prueba» para mandar un ping firmado.'}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="muted">
              {live ? 'Hay entregas pendientes: la tabla se actualiza sola cada 3 segundos.' : 'Las más recientes primero.'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Evento</th>
                <th scope="col">Estado</th>
                <th scope="col" class="num">
                  Intentos
                </th>
                <th scope="col">Último intento</th>
                <th scope="col">Entregada</th>
                <th scope="col">Próximo intento</th>
                {session.canWrite && (
                  <th scope="col">
                    <span class="muted">Acción</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {page.rows.map((d) => (
                <tr id={`entrega-${d.id}`}>
                  <td>
                    <code>{d.event_type}</code>
                    {d.event_type === PING && <span class="muted"> (prueba)</span>}
                    <small class="hint">Evento {d.event_id}</small>
                  </td>
                  <td>
                    <DeliveryState delivery={d} />
                  </td>
                  <td class="num">{d.attempt}</td>
                  <td>
                    <LastAnswer delivery={d} />
                  </td>
                  <td>{formatDateTime(d.delivered_at)}</td>
                  <td>{formatDateTime(d.next_retry_at)}</td>
                  {session.canWrite && (
                    <td>
                      <form method="post" action={`${webhookPath(webhookId)}/entregas/${d.id}/reenviar`}>
                        <CsrfInput session={session} />
                        {/* An id lets htmx give focus back to this button after each 3 s refresh. */}
                        <button type="submit" id={`reenviar-${d.id}`} aria-label={`Reenviar la entrega de ${d.event_type} (evento ${d.event_id})`}>
                          Reenviar
                        </button>
                      </form>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(page.next !== null || afterId !== null) && (
        <p class="actions">
          {afterId !== null && <a href={webhookPath(webhookId)}>Entregas más recientes</a>}
          {page.next !== null && <a href={`${webhookPath(webhookId)}?despues=${page.next}`}>Entregas anteriores</a>}
        </p>
      )}
    </div>
  )
}

// ------------------------------------------------------------------------------------------------------ pages

function EventsFieldset(props: { checked: readonly string[]; failure: Failure | null }) {
  // events.1 (an unknown name) and events (none chosen) both belong to the group as a whole.
  const messages = [...(props.failure?.errors ?? NO_ERRORS).entries()].filter(([field]) => field === 'events' || field.startsWith('events.')).flatMap(([, m]) => m)
  const id = fieldId('events')
  return (
    <fieldset id={id} class={messages.length > 0 ? 'field-invalid' : undefined} aria-describedby={messages.length > 0 ? `${id}-error` : undefined}>
      <legend>
        Eventos<span aria-hidden="true"> *</span>
      </legend>
      <div class="grid">
        {EVENT_TYPES.map((e) => {
          const inputId = fieldId(`events.${e}`)
          return (
            <span>
              <input type="checkbox" id={inputId} name="events" value={e} checked={props.checked.includes(e)} />{' '}
              <label for={inputId}>
                <code>{e}</code> <span class="muted">{EVENT_LABELS[e]}</span>
              </label>
            </span>
          )
        })}
      </div>
      {messages.length > 0 && (
        <p id={`${id}-error`} class="field-error">
          {messages.join(' ')}
        </p>
      )}
    </fieldset>
  )
}

function RegisterForm(props: { request: Request; form: FormData | null; failure: Failure | null }) {
  const session = sessionOf(props.request)
  const errors = props.failure?.errors ?? NO_ERRORS
  const checked = props.form ? props.form.getAll('events').filter((v): v is string => typeof v === 'string') : []
  return (
    <form method="post" action={webhooksPath} class="stack card" id="nuevo-webhook">
      <h2>Registrar un webhook</h2>
      <CsrfInput session={session} />
      <ErrorSummary failure={props.failure} fields={REGISTER_FIELDS} />
      <Field
        name="url"
        label="URL que recibe los eventos"
        type="url"
        value={props.form ? textField(props.form, 'url') : null}
        errors={errors}
        required
        hint="https://… Recibe un POST JSON firmado en el encabezado Timbre-Signature."
      />
      <EventsFieldset checked={checked} failure={props.failure} />
      <Field
        name="secret"
        label="Secreto de firma (opcional)"
        type="password"
        errors={errors}
        autocomplete="new-password"
        hint="16 caracteres o más. Si lo deja vacío se genera uno (whsec_…). Se muestra una sola vez."
      />
      <div class="actions">
        <button type="submit" class="primary">
          Registrar webhook
        </button>
      </div>
    </form>
  )
}

/** The latest delivery of a webhook, for the list (one indexed row per webhook, at most 20 webhooks). */
function LastDelivery(props: { deps: Deps; empresaId: string; webhookId: string }) {
  const [last] = webhookDeliveries(props.deps, { empresaId: props.empresaId, webhookId: props.webhookId, afterId: null, limit: 1 })
  if (!last) return <span class="muted">Sin entregas</span>
  return (
    <>
      <DeliveryState delivery={last} /> <code>{last.event_type}</code>
      <small class="hint">{formatDateTime(last.delivered_at)}</small>
    </>
  )
}

function WebhooksPage(props: { deps: Deps; request: Request; form: FormData | null; failure: Failure | null; created: WebhookRecord | null }) {
  const session = sessionOf(props.request)
  const empresaId = empresaIdOf(props.request)
  const webhooks = listWebhooks(props.deps, { empresaId })
  const created = props.created
  return (
    <>
      {created && (
        <section class="card" aria-labelledby="webhook-creado">
          <h2 id="webhook-creado">Webhook registrado</h2>
          <div role="alert">
            <p>
              <strong>Copie este secreto de firma ahora: no se vuelve a mostrar.</strong> Con él su receptor verifica el encabezado
              Timbre-Signature (HMAC-SHA256).
            </p>
            <p class="secret" id="secreto-webhook">
              {created.secret}
            </p>
          </div>
          <p>
            <a href={webhookPath(created.id)}>Ver sus entregas y enviar una prueba</a>
          </p>
        </section>
      )}
      <section class="card" aria-labelledby="lista-webhooks">
        <h2 id="lista-webhooks">Webhooks registrados</h2>
        {webhooks.length === 0 ? (
          <p>Aún no hay webhooks. {session.canWrite ? 'Registre el primero con el formulario de abajo.' : ''}</p>
        ) : (
          <div class="table-wrap">
            <table>
              <caption class="muted">El secreto se muestra solo por sus últimos 4 caracteres.</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Eventos</th>
                  <th scope="col">Estado</th>
                  <th scope="col">Secreto</th>
                  <th scope="col">Creado</th>
                  <th scope="col">Última entrega</th>
                </tr>
              </thead>
              <tbody>
                {webhooks.map((w) => (
                  <tr>
                    <td>
                      <a href={webhookPath(w.id)}>{w.url}</a>
                    </td>
                    <td>
                      {w.events.map((e) => (
                        <code class="hint">{e}</code>
                      ))}
                    </td>
                    <td>{w.is_active ? <span class="badge badge-ok">Activo</span> : <span class="badge badge-neutral">Inactivo</span>}</td>
                    <td>
                      <code>{w.secret}</code>
                    </td>
                    <td>{formatDateTime(w.created_at)}</td>
                    <td>
                      <LastDelivery deps={props.deps} empresaId={empresaId} webhookId={w.id} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {session.canWrite && <RegisterForm request={props.request} form={props.form} failure={props.failure} />}
    </>
  )
}

function WebhookPage(props: { request: Request; webhook: WebhookRecord; page: DeliveriesPage; afterId: string | null }) {
  const session = sessionOf(props.request)
  const w = props.webhook
  return (
    <>
      <p>
        <a href={webhooksPath}>← Todos los webhooks</a>
      </p>
      <section class="card" aria-labelledby="datos-webhook">
        <h2 id="datos-webhook">Datos</h2>
        <dl class="facts">
          <dt>URL</dt>
          <dd>
            <code>{w.url}</code>
          </dd>
          <dt>Eventos</dt>
          <dd>
            {w.events.map((e) => (
              <code class="hint">{e}</code>
            ))}
          </dd>
          <dt>Estado</dt>
          <dd>{w.is_active ? <span class="badge badge-ok">Activo</span> : <span class="badge badge-neutral">Inactivo</span>}</dd>
          <dt>Secreto</dt>
          <dd>
            <code>{w.secret}</code>
          </dd>
          <dt>Creado</dt>
          <dd>{formatDateTime(w.created_at)}</dd>
        </dl>
        {session.canWrite && (
          <div class="actions">
            <form method="post" action={`${webhookPath(w.id)}/probar`}>
              <CsrfInput session={session} />
              <button type="submit" class="primary">
                Enviar prueba (ping)
              </button>
            </form>
            <form method="post" action={`${webhookPath(w.id)}/eliminar`} data-confirm="¿Eliminar este webhook? Sus entregas pendientes se cancelan.">
              <CsrfInput session={session} />
              <button type="submit" class="danger">
                Eliminar webhook
              </button>
            </form>
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="titulo-entregas">
        <h2 id="titulo-entregas">Entregas</h2>
        <p class="muted">
          Cada entrega se reintenta tras 1 min, 5 min, 30 min, 2 h, 5 h, 10 h y 10 h; después queda fallida. «Reenviar» la pone en cola
          de inmediato, con el mismo id de evento.
        </p>
        <DeliveriesRegion request={props.request} webhookId={w.id} page={props.page} afterId={props.afterId} />
      </section>
    </>
  )
}

export const webhookScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/webhooks', ({ request, query }) =>
      renderPage(deps, request, {
        title: 'Webhooks',
        section: 'webhooks',
        notice: NOTICES[String(query.aviso ?? '')] ?? null,
        children: <WebhooksPage deps={deps} request={request} form={null} failure={null} created={null} />,
      }),
    )
    .post('/webhooks', async ({ request }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const form = formOf(request)
      try {
        const { url, events, secret } = parseRegistrarWebhook(registrarBodyFrom(form), deps.config)
        const created = await registerWebhook(deps, { empresaId, url, events, secret })
        deps.log.info('console.webhook_registered', { empresa_id: empresaId, webhook_id: created.id })
        // The secret is in this answer only (no redirect), so it never sits in a URL or the history.
        return renderPage(deps, request, {
          title: 'Webhooks',
          section: 'webhooks',
          children: <WebhooksPage deps={deps} request={request} form={null} failure={null} created={created} />,
        })
      } catch (err) {
        // The quota is the person's to act on (delete one), so it is shown on the form like a field error, not as the
        // generic error page.
        if (!(err instanceof TimbreError) || (err.code !== 'VALIDATION_ERROR' && err.code !== 'WEBHOOK_LIMIT_REACHED')) throw err
        return renderPage(deps, request, {
          title: 'Webhooks',
          section: 'webhooks',
          status: err.code === 'WEBHOOK_LIMIT_REACHED' ? 422 : 400,
          children: <WebhooksPage deps={deps} request={request} form={form} failure={failureOf(err)} created={null} />,
        })
      }
    })
    .get('/webhooks/:id', ({ request, params, query }) => {
      const empresaId = empresaIdOf(request)
      const webhook = webhookOf(deps, empresaId, idParam(params.id))
      const afterId = afterIdOf(query.despues)
      return renderPage(deps, request, {
        title: 'Webhook',
        section: 'webhooks',
        notice: NOTICES[String(query.aviso ?? '')] ?? null,
        children: <WebhookPage request={request} webhook={webhook} page={deliveriesPage(deps, empresaId, webhook.id, afterId)} afterId={afterId} />,
      })
    })
    .get('/webhooks/:id/entregas', ({ request, params, query }) => {
      const empresaId = empresaIdOf(request)
      const id = idParam(params.id)
      const afterId = afterIdOf(query.despues)
      return fragmentResponse(<DeliveriesRegion request={request} webhookId={id} page={deliveriesPage(deps, empresaId, id, afterId)} afterId={afterId} />)
    })
    .post('/webhooks/:id/eliminar', ({ request, params }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const id = idParam(params.id)
      removeWebhook(deps, { empresaId, id })
      deps.log.info('console.webhook_removed', { empresa_id: empresaId, webhook_id: id })
      return redirect(`${webhooksPath}?aviso=eliminado`)
    })
    .post('/webhooks/:id/probar', ({ request, params }) => {
      requireWrite(request)
      const id = idParam(params.id)
      sendTestPing(deps, { empresaId: empresaIdOf(request), webhookId: id })
      return redirect(`${webhookPath(id)}?aviso=prueba`)
    })
    .post('/webhooks/:id/entregas/:deliveryId/reenviar', ({ request, params }) => {
      requireWrite(request)
      const id = idParam(params.id)
      redeliver(deps, { empresaId: empresaIdOf(request), webhookId: id, deliveryId: idParam(params.deliveryId) })
      return redirect(`${webhookPath(id)}?aviso=reenviado`)
    })
