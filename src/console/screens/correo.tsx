// The exchange mailbox (DESIGN §13, §14; docs/decisions/intercambio.md "Mailbox settings"): IMAP to read what
// suppliers send, SMTP to answer. The same services and body rules as /api/v1/billing/empresa/intercambio: the form's
// names are the API's dot paths, so each error lands beside its input; passwords go in and are never rendered back.
import { Elysia } from 'elysia'
import { TimbreError } from '../../errors'
import { parseGuardarIntercambio } from '../../contracts/intercambio'
import type { Deps } from '../../services/deps'
import { DEFAULT_IMAP_FOLDER, getMailbox, mailboxPasswordsStored, removeMailbox, saveMailbox, type MailboxTest, type MailboxView } from '../../services/mailbox'
import { empresaIdOf, formOf, requireWrite, sessionOf, textField } from '../context'
import { ErrorSummary, Field, failureOf, formatDateTime, NO_ERRORS, SelectField, type Failure } from '../forms'
import { CsrfInput, fragmentResponse, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const NOTICES: Readonly<Record<string, string>> = {
  guardado: 'Configuración del buzón guardada.',
  eliminado: 'Configuración del buzón eliminada con sus contraseñas. La casilla de intercambio de la empresa se conserva.',
}

const correoPath = `${CONSOLE_PREFIX}/correo`
const FIELDS = [
  'inbound_email',
  'imap.host', 'imap.port', 'imap.tls', 'imap.user', 'imap.password', 'imap.folder',
  'smtp.host', 'smtp.port', 'smtp.security', 'smtp.user', 'smtp.password', 'smtp.from',
  'test',
]
const KEPT_PASSWORD = 'Guardada; déjela vacía para conservarla.'

/** Drops the keys left undefined, so a blank input reads as "not sent" to the schema, as an omitted JSON field does. */
function sent(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined))
}

/**
 * The form's strings → the API's JSON body. A number or a boolean that does not parse is passed on as typed, so the
 * schema names the field (INVALID_TYPE) exactly as it would for a JSON client. A blank password is left out, which
 * keeps the stored one (the API's rule); passwords are taken untrimmed.
 */
function bodyFrom(form: FormData): Record<string, unknown> {
  const text = (name: string) => textField(form, name) ?? undefined
  const password = (name: string) => {
    const v = form.get(name)
    return typeof v === 'string' && v !== '' ? v : undefined
  }
  const integer = (name: string) => {
    const v = text(name)
    return v !== undefined && /^\d{1,6}$/.test(v) ? Number(v) : v
  }
  const boolean = (name: string) => {
    const v = text(name)
    return v === 'true' ? true : v === 'false' ? false : v
  }
  return sent({
    inbound_email: text('inbound_email'),
    imap: sent({
      host: text('imap.host'),
      port: integer('imap.port'),
      tls: boolean('imap.tls'),
      user: text('imap.user'),
      password: password('imap.password'),
      folder: text('imap.folder'),
    }),
    smtp: sent({
      host: text('smtp.host'),
      port: integer('smtp.port'),
      security: text('smtp.security'),
      user: text('smtp.user'),
      password: password('smtp.password'),
      from: text('smtp.from'),
    }),
    test: form.get('test') === 'true' ? true : undefined,
  })
}

/** The values the form shows: what was typed (after a failed save), else the stored settings, else sensible defaults. */
function valuesOf(view: MailboxView, form: FormData | null): (name: string) => string | null {
  if (form) return (name) => (name.endsWith('.password') ? null : textField(form, name))
  const stored: Record<string, string | number | boolean | null | undefined> = {
    inbound_email: view.inbound_email,
    'imap.host': view.imap?.host,
    'imap.port': view.imap?.port ?? 993,
    'imap.tls': view.imap?.tls ?? true,
    'imap.user': view.imap?.user,
    'imap.folder': view.imap?.folder ?? DEFAULT_IMAP_FOLDER,
    'smtp.host': view.smtp?.host,
    'smtp.port': view.smtp?.port ?? 587,
    'smtp.security': view.smtp?.security ?? 'starttls',
    'smtp.user': view.smtp?.user,
    'smtp.from': view.smtp?.from ?? view.inbound_email,
  }
  return (name) => {
    const v = stored[name]
    return v === undefined || v === null ? null : String(v)
  }
}

// ------------------------------------------------------------------------------------------------------ pieces

const STATUS_BADGES: Readonly<Record<MailboxView['inbound_status'], { label: string; badge: string }>> = {
  sin_configurar: { label: 'Sin configurar', badge: 'badge-neutral' },
  activo: { label: 'Activo', badge: 'badge-ok' },
  error: { label: 'Error', badge: 'badge-bad' },
}

function Status(props: { view: MailboxView }) {
  const v = props.view
  const status = STATUS_BADGES[v.inbound_status]
  return (
    <section class="card" aria-labelledby="estado-buzon">
      <h2 id="estado-buzon">Estado del buzón</h2>
      <dl class="facts">
        <dt>Casilla de intercambio</dt>
        <dd>{v.inbound_email ?? <span class="muted">Sin indicar</span>}</dd>
        <dt>Estado</dt>
        <dd>
          <span class={`badge ${status.badge}`} id="estado-intercambio">
            {status.label}
          </span>
        </dd>
        <dt>Última lectura</dt>
        <dd>{v.last_poll_at === null ? <span class="muted">Aún no se ha leído</span> : formatDateTime(v.last_poll_at)}</dd>
        <dt>Último error</dt>
        <dd>{v.last_error ?? <span class="muted">Ninguno</span>}</dd>
        {v.imap && (
          <>
            <dt>IMAP</dt>
            <dd>
              {v.imap.user} en {v.imap.host}:{v.imap.port} ({v.imap.tls ? 'TLS' : 'sin TLS implícito'}), carpeta {v.imap.folder}; contraseña guardada
            </dd>
          </>
        )}
        {v.smtp && (
          <>
            <dt>SMTP</dt>
            <dd>
              {v.smtp.host}:{v.smtp.port} ({v.smtp.security}), {v.smtp.user ? `usuario ${v.smtp.user}${v.smtp.password_set ? ', contraseña guardada' : ''}` : 'sin autenticación'};
              remitente {v.smtp.from}
            </dd>
          </>
        )}
      </dl>
      {v.imap === null && <p>El buzón no está configurado: Timbre no lee los DTE que le envían los proveedores ni responde por correo.</p>}
    </section>
  )
}

function Check(props: { protocol: string; check: MailboxTest['imap'] }) {
  const c = props.check
  return (
    <li id={`prueba-${props.protocol.toLowerCase()}`}>
      <strong>{props.protocol}:</strong>{' '}
      {c.ok ? (
        <span class="badge badge-ok">Conexión correcta</span>
      ) : (
        <>
          <span class="badge badge-bad">Falló</span> {c.error}
        </>
      )}
    </li>
  )
}

/** What a test said; `undefined` = no test asked (the live region stays empty), null = nothing stored to test. */
function TestResults(props: { test: MailboxTest | null | undefined }) {
  const t = props.test
  if (t === undefined) return null
  if (t === null) return <p>No hay buzón guardado que probar.</p>
  return (
    <ul>
      <Check protocol="IMAP" check={t.imap} />
      <Check protocol="SMTP" check={t.smtp} />
    </ul>
  )
}

/**
 * The connection test. The region is on the page from the start so assistive technology announces what lands in it;
 * with htmx the button fills it in place (the test takes up to 10 s), without script the whole page comes back.
 */
function TestSection(props: { request: Request; view: MailboxView; test: MailboxTest | null | undefined }) {
  const session = sessionOf(props.request)
  return (
    <section class="card" aria-labelledby="titulo-prueba">
      <h2 id="titulo-prueba">Prueba de conexión</h2>
      <div id="prueba-resultado" role="status" aria-live="polite">
        <TestResults test={props.test} />
      </div>
      {props.view.imap === null && <p class="muted">Guarde la configuración para poder probarla.</p>}
      {session.canWrite && props.view.imap !== null && (
        <form method="post" action={`${correoPath}/probar`} hx-post={`${correoPath}/probar`} hx-target="#prueba-resultado" hx-swap="innerHTML" hx-disabled-elt="find button">
          <CsrfInput session={session} />
          <p class="hint">Se conecta con la configuración guardada (hasta 10 s por protocolo) y no cambia nada.</p>
          <button type="submit">Probar conexión</button>
        </form>
      )}
    </section>
  )
}

function SettingsForm(props: { request: Request; view: MailboxView; form: FormData | null; failure: Failure | null }) {
  const session = sessionOf(props.request)
  const errors = props.failure?.errors ?? NO_ERRORS
  const v = valuesOf(props.view, props.form)
  const imapKept = props.view.imap !== null
  const smtpKept = props.view.smtp?.password_set === true
  return (
    <form method="post" action={correoPath} class="stack card" id="configuracion-buzon">
      <h2>Configuración</h2>
      <CsrfInput session={session} />
      <ErrorSummary failure={props.failure} fields={FIELDS} />
      <Field
        name="inbound_email"
        label="Casilla de intercambio"
        type="email"
        value={v('inbound_email')}
        errors={errors}
        required
        inputmode="email"
        hint="La registrada en el SII, donde los proveedores envían sus DTE."
      />
      <fieldset>
        <legend>IMAP (lectura)</legend>
        <div class="grid">
          <Field name="imap.host" label="Servidor" value={v('imap.host')} errors={errors} required hint="Nombre o dirección IP, p. ej. mail.example.cl." />
          <Field name="imap.port" label="Puerto" type="number" min="1" step="1" value={v('imap.port')} errors={errors} required inputmode="numeric" hint="993 con TLS, 143 sin él." />
          <SelectField
            name="imap.tls"
            label="Seguridad"
            value={v('imap.tls')}
            errors={errors}
            options={[
              { value: 'true', label: 'TLS implícito (993)' },
              { value: 'false', label: 'Sin TLS implícito (143; STARTTLS si el servidor lo ofrece)' },
            ]}
          />
          <Field name="imap.user" label="Usuario" value={v('imap.user')} errors={errors} required autocomplete="off" />
          <Field
            name="imap.password"
            label="Contraseña"
            type="password"
            errors={errors}
            required={!imapKept}
            autocomplete="new-password"
            hint={imapKept ? KEPT_PASSWORD : 'Requerida la primera vez.'}
          />
          <Field name="imap.folder" label="Carpeta" value={v('imap.folder')} errors={errors} hint={`Por defecto ${DEFAULT_IMAP_FOLDER}.`} />
        </div>
      </fieldset>
      <fieldset>
        <legend>SMTP (envío)</legend>
        <div class="grid">
          <Field name="smtp.host" label="Servidor" value={v('smtp.host')} errors={errors} required />
          <Field name="smtp.port" label="Puerto" type="number" min="1" step="1" value={v('smtp.port')} errors={errors} required inputmode="numeric" hint="587 con STARTTLS, 465 con TLS." />
          <SelectField
            name="smtp.security"
            label="Seguridad"
            value={v('smtp.security')}
            errors={errors}
            options={[
              { value: 'starttls', label: 'STARTTLS (587)' },
              { value: 'tls', label: 'TLS implícito (465)' },
              { value: 'none', label: 'Sin cifrado (solo un relay en la red local)' },
            ]}
          />
          <Field name="smtp.user" label="Usuario" value={v('smtp.user')} errors={errors} autocomplete="off" hint="Vacío para un relay sin autenticación (borra la contraseña guardada)." />
          <Field
            name="smtp.password"
            label="Contraseña"
            type="password"
            errors={errors}
            autocomplete="new-password"
            hint={smtpKept ? KEPT_PASSWORD : 'Requerida si indica usuario.'}
          />
          <Field name="smtp.from" label="Remitente (From)" type="email" value={v('smtp.from')} errors={errors} required inputmode="email" />
        </div>
      </fieldset>
      <div class="field">
        <span>
          <input type="checkbox" id="f-test" name="test" value="true" checked={props.form?.get('test') === 'true'} />{' '}
          <label for="f-test">Probar ambas conexiones al guardar (se guarda igual si fallan)</label>
        </span>
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Guardar configuración
        </button>
      </div>
    </form>
  )
}

function RemoveForm(props: { request: Request }) {
  return (
    <section class="card" aria-labelledby="titulo-eliminar">
      <h2 id="titulo-eliminar">Eliminar configuración</h2>
      <p>Borra el servidor, el usuario y las contraseñas; Timbre deja de leer el buzón. La casilla de intercambio se conserva.</p>
      <form method="post" action={`${correoPath}/eliminar`} data-confirm="¿Eliminar la configuración del buzón y sus contraseñas?">
        <CsrfInput session={sessionOf(props.request)} />
        <button type="submit" class="danger">
          Eliminar configuración
        </button>
      </form>
    </section>
  )
}

function CorreoPage(props: { request: Request; view: MailboxView; form: FormData | null; failure: Failure | null; test?: MailboxTest | null }) {
  const session = sessionOf(props.request)
  return (
    <>
      <Status view={props.view} />
      <TestSection request={props.request} view={props.view} test={props.test} />
      {session.canWrite && <SettingsForm request={props.request} view={props.view} form={props.form} failure={props.failure} />}
      {session.canWrite && props.view.imap !== null && <RemoveForm request={props.request} />}
    </>
  )
}

export const correoScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/correo', async ({ request, query }) => {
      const view = await getMailbox(deps, { empresaId: empresaIdOf(request), test: false })
      return renderPage(deps, request, {
        title: 'Correo de intercambio',
        section: 'correo',
        notice: NOTICES[String(query.aviso ?? '')] ?? null,
        children: <CorreoPage request={request} view={view} form={null} failure={null} />,
      })
    })
    .post('/correo', async ({ request }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const form = formOf(request)
      try {
        const { settings, test } = parseGuardarIntercambio(bodyFrom(form), mailboxPasswordsStored(deps, { empresaId }))
        const saved = await saveMailbox(deps, { empresaId, settings, test })
        deps.log.info('console.mailbox_saved', { empresa_id: empresaId, tested: test })
        if (!test) return redirect(`${correoPath}?aviso=guardado`)
        // The test's outcome exists only in this answer: shown here rather than lost in a redirect.
        return renderPage(deps, request, {
          title: 'Correo de intercambio',
          section: 'correo',
          notice: NOTICES.guardado,
          children: <CorreoPage request={request} view={saved} form={null} failure={null} test={saved.test ?? null} />,
        })
      } catch (err) {
        if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
        return renderPage(deps, request, {
          title: 'Correo de intercambio',
          section: 'correo',
          status: 400,
          children: <CorreoPage request={request} view={await getMailbox(deps, { empresaId, test: false })} form={form} failure={failureOf(err)} />,
        })
      }
    })
    .post('/correo/probar', async ({ request }) => {
      const view = await getMailbox(deps, { empresaId: empresaIdOf(request), test: true })
      if (request.headers.get('hx-request') === 'true') return fragmentResponse(<div><TestResults test={view.test ?? null} /></div>)
      return renderPage(deps, request, {
        title: 'Correo de intercambio',
        section: 'correo',
        children: <CorreoPage request={request} view={view} form={null} failure={null} test={view.test ?? null} />,
      })
    })
    .post('/correo/eliminar', ({ request }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      removeMailbox(deps, { empresaId })
      deps.log.info('console.mailbox_removed', { empresa_id: empresaId })
      return redirect(`${correoPath}?aviso=eliminado`)
    })
