// "Mi cuenta" (DESIGN §14 "People, not keys", issue 27): a person's own password and TOTP second factor. Reachable
// by any account session, a read-only one included (door.tsx lets these posts through); other sessions get 404.
import { Elysia } from 'elysia'
import { ROLE_LABELS } from '../../domain/console-roles'
import { TimbreError } from '../../errors'
import {
  accountProfile,
  cancelTotpEnrolment,
  changePassword,
  confirmTotp,
  disableTotp,
  PASSWORD_MIN_LENGTH,
  startTotpEnrolment,
  totpQrPng,
  type AccountProfile,
} from '../../services/console-accounts'
import type { Deps } from '../../services/deps'
import { formOf, sessionOf, textField } from '../context'
import { ErrorSummary, Field, failureOf, NO_ERRORS, type Failure } from '../forms'
import { CsrfInput, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const BASE = `${CONSOLE_PREFIX}/mi-cuenta`
const TITLE = 'Mi cuenta'
const NOTICES: Readonly<Record<string, string>> = {
  contrasena: 'Contraseña cambiada. Sus otras sesiones abiertas terminaron.',
  activada: 'Verificación en dos pasos activada: desde ahora, al entrar se le pedirá el código de su aplicación.',
  desactivada: 'Verificación en dos pasos desactivada.',
  cancelada: 'Activación cancelada.',
}

function accountIdOf(request: Request): string {
  const { accountId } = sessionOf(request)
  if (accountId === null) throw new TimbreError('NOT_FOUND')
  return accountId
}

/** `ABCD EFGH …`: a secret typed by hand is read in groups of four. */
const grouped = (secret: string) => secret.replace(/(.{4})/g, '$1 ').trim()

function PasswordForm(props: { request: Request; failure: Failure | null }) {
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <form method="post" action={`${BASE}/contrasena`} class="stack card" id="cambiar-contrasena">
      <h2>Cambiar contraseña</h2>
      <CsrfInput session={sessionOf(props.request)} />
      <ErrorSummary failure={props.failure} fields={['actual', 'password', 'password_repetida']} />
      <Field name="actual" label="Contraseña actual" type="password" errors={errors} required autocomplete="current-password" />
      <Field name="password" label="Contraseña nueva" type="password" errors={errors} required autocomplete="new-password" hint={`Al menos ${PASSWORD_MIN_LENGTH} caracteres.`} />
      <Field name="password_repetida" label="Repita la contraseña nueva" type="password" errors={errors} required autocomplete="new-password" />
      <div class="actions">
        <button type="submit" class="primary">
          Cambiar contraseña
        </button>
      </div>
    </form>
  )
}

function CodeForm(props: { request: Request; action: string; button: string; failure: Failure | null; danger?: boolean }) {
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <form method="post" action={`${BASE}/2fa/${props.action}`} class="stack">
      <CsrfInput session={sessionOf(props.request)} />
      <ErrorSummary failure={props.failure} fields={['codigo']} />
      <Field name="codigo" label="Código de 6 dígitos de la aplicación" errors={errors} required inputmode="numeric" autocomplete="one-time-code" />
      <div class="actions">
        <button type="submit" class={props.danger ? 'danger' : 'primary'}>
          {props.button}
        </button>
      </div>
    </form>
  )
}

function SecondFactor(props: { request: Request; profile: AccountProfile; qr: string | null; failure: Failure | null }) {
  const { profile } = props
  const session = sessionOf(props.request)
  return (
    <section class="card" aria-labelledby="dos-pasos" id="verificacion">
      <h2 id="dos-pasos">Verificación en dos pasos</h2>
      {profile.totp ? (
        <>
          <p>
            <span class="badge badge-ok">Activa</span> Al entrar se pide, además de la contraseña, el código de su aplicación de autenticación.
          </p>
          <p>Para desactivarla, escriba un código actual:</p>
          <CodeForm request={props.request} action="desactivar" button="Desactivar" failure={props.failure} danger />
        </>
      ) : profile.pendingTotp ? (
        <>
          <ol>
            <li>Abra su aplicación de autenticación (Google Authenticator, Microsoft Authenticator, 1Password, Aegis…).</li>
            <li>Escanee el código QR, o agregue la cuenta a mano con la clave de abajo.</li>
            <li>Escriba el código de 6 dígitos que muestra la aplicación para confirmar.</li>
          </ol>
          {props.qr && <img class="qr" src={props.qr} alt="Código QR con la clave de verificación en dos pasos" width={200} height={200} />}
          <p>
            Clave: <code id="totp-clave">{grouped(profile.pendingTotp.secret)}</code>
          </p>
          <p>Enlace para la aplicación, si la suya lo acepta pegado:</p>
          <p class="secret" id="totp-uri">
            {profile.pendingTotp.uri}
          </p>
          <CodeForm request={props.request} action="confirmar" button="Confirmar y activar" failure={props.failure} />
          <form method="post" action={`${BASE}/2fa/cancelar`} class="cancelar">
            <CsrfInput session={session} />
            <button type="submit">Cancelar</button>
          </form>
        </>
      ) : (
        <>
          <p>
            <span class="badge badge-neutral">No activa</span> Con ella, quien sepa su contraseña no puede entrar sin su teléfono.
          </p>
          <form method="post" action={`${BASE}/2fa/iniciar`}>
            <CsrfInput session={session} />
            <button type="submit" class="primary">
              Activar verificación en dos pasos
            </button>
          </form>
        </>
      )}
    </section>
  )
}

interface State {
  readonly passwordFailure?: Failure | null
  readonly codeFailure?: Failure | null
}

async function page(deps: Deps, request: Request, state: State, status = 200, notice: string | null = null): Promise<Response> {
  const profile = accountProfile(deps, { accountId: accountIdOf(request) })
  const qr = profile.pendingTotp ? `data:image/png;base64,${Buffer.from(await totpQrPng(profile.pendingTotp.uri)).toString('base64')}` : null
  return renderPage(deps, request, {
    title: TITLE,
    section: 'mi-cuenta',
    status,
    notice,
    children: (
      <>
        <section class="card" aria-labelledby="datos">
          <h2 id="datos">Sus datos</h2>
          <p>
            Correo: <strong>{profile.email}</strong>
            {profile.nombre && <> · {profile.nombre}</>}
          </p>
          <ul>
            {profile.empresas.map((e) => (
              <li>
                {e.razon_social} ({e.rut}): {ROLE_LABELS[e.role]}
              </li>
            ))}
          </ul>
        </section>
        <PasswordForm request={request} failure={state.passwordFailure ?? null} />
        <SecondFactor request={request} profile={profile} qr={qr} failure={state.codeFailure ?? null} />
      </>
    ),
  })
}

/** A refused code or password re-renders the page with the message beside its field; anything else is a fault. */
function refusedFailure(err: unknown): Failure {
  if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
  return failureOf(err)
}

export const miCuentaScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/mi-cuenta', ({ request, query }) => page(deps, request, {}, 200, NOTICES[String(query.aviso ?? '')] ?? null))
    .post('/mi-cuenta/contrasena', async ({ request }) => {
      const form = formOf(request)
      const session = sessionOf(request)
      try {
        await changePassword(deps, {
          accountId: accountIdOf(request),
          sessionId: session.id,
          current: String(form.get('actual') ?? ''),
          password: String(form.get('password') ?? ''),
          passwordRepeat: String(form.get('password_repetida') ?? ''),
        })
        deps.log.info('console.password_changed', { account_id: session.accountId })
        return redirect(`${BASE}?aviso=contrasena`)
      } catch (err) {
        return page(deps, request, { passwordFailure: refusedFailure(err) }, 400)
      }
    })
    .post('/mi-cuenta/2fa/iniciar', ({ request }) => {
      startTotpEnrolment(deps, { accountId: accountIdOf(request) })
      return redirect(`${BASE}#verificacion`)
    })
    .post('/mi-cuenta/2fa/cancelar', ({ request }) => {
      cancelTotpEnrolment(deps, { accountId: accountIdOf(request) })
      return redirect(`${BASE}?aviso=cancelada`)
    })
    .post('/mi-cuenta/2fa/confirmar', async ({ request }) => {
      try {
        confirmTotp(deps, { accountId: accountIdOf(request), code: textField(formOf(request), 'codigo') })
        deps.log.info('console.totp_enabled', { account_id: sessionOf(request).accountId })
        return redirect(`${BASE}?aviso=activada`)
      } catch (err) {
        return page(deps, request, { codeFailure: refusedFailure(err) }, 400)
      }
    })
    .post('/mi-cuenta/2fa/desactivar', async ({ request }) => {
      try {
        disableTotp(deps, { accountId: accountIdOf(request), code: textField(formOf(request), 'codigo') })
        deps.log.info('console.totp_disabled', { account_id: sessionOf(request).accountId })
        return redirect(`${BASE}?aviso=desactivada`)
      } catch (err) {
        return page(deps, request, { codeFailure: refusedFailure(err) }, 400)
      }
    })
