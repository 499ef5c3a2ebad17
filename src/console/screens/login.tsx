// The pages before a session (DESIGN §14): a person types their email and password (and a code, issue 27); an
// integrator types an API key; an administrator confirms the one-time link `timbre console link` printed. The link is
// spent by a POST, so a chat or mail preview that fetches the URL cannot use it up.
import { Shell } from '../page'
import { CONSOLE_PREFIX } from '../paths'

function Errors(props: { error: string | null }) {
  return props.error ? (
    <div class="error-summary" role="alert" tabindex={-1}>
      <p>
        <strong>{props.error}</strong>
      </p>
    </div>
  ) : null
}

/** Which of the login page's two forms an error belongs to. */
export type LoginForm = 'cuenta' | 'api_key'

export function LoginPage(props: { csrf: string; error: string | null; errorFor?: LoginForm; email?: string | null; notice?: string | null }) {
  const forAccount = props.errorFor !== 'api_key'
  const accountError = forAccount ? props.error : null
  const keyError = forAccount ? null : props.error
  return (
    <Shell title="Entrar" session={null}>
      <main id="contenido" class="login">
        <h1>Timbre · Entrar</h1>
        {props.notice && (
          <p class="notice" role="status">
            {props.notice}
          </p>
        )}
        <section class="card" aria-labelledby="con-cuenta">
          <h2 id="con-cuenta">Con su cuenta</h2>
          <Errors error={accountError} />
          <form method="post" action={`${CONSOLE_PREFIX}/entrar/cuenta`} class="stack">
            <input type="hidden" name="_csrf" value={props.csrf} />
            <div class={accountError ? 'field field-invalid' : 'field'}>
              <label for="email">Correo</label>
              <input id="email" name="email" type="email" autoComplete="username" required value={props.email ?? undefined} aria-invalid={accountError ? 'true' : undefined} />
            </div>
            <div class={accountError ? 'field field-invalid' : 'field'}>
              <label for="password">Contraseña</label>
              <input id="password" name="password" type="password" autoComplete="current-password" required aria-invalid={accountError ? 'true' : undefined} />
            </div>
            <button type="submit" class="primary">
              Entrar
            </button>
          </form>
          <p class="muted">¿Olvidó su contraseña? Pida a un administrador de su empresa una invitación nueva para su correo (si trabaja para varias empresas, al administrador de la instalación).</p>
        </section>
        <details class="card" open={keyError !== null}>
          <summary>Con una API key (integradores)</summary>
          <Errors error={keyError} />
          <form method="post" action={`${CONSOLE_PREFIX}/entrar`} class="stack">
            <input type="hidden" name="_csrf" value={props.csrf} />
            <div class={keyError ? 'field field-invalid' : 'field'}>
              <label for="api_key">API key de la empresa</label>
              <input id="api_key" name="api_key" type="password" autoComplete="off" required aria-describedby="api_key-ayuda" aria-invalid={keyError ? 'true' : undefined} />
              <small id="api_key-ayuda" class="hint">
                La que entregó el administrador (timbre_…). Una API key de solo lectura abre la consola en modo consulta.
              </small>
            </div>
            <button type="submit">Entrar con API key</button>
          </form>
        </details>
        <p class="muted">¿Administra la instalación? Ejecute <code>timbre console link</code> en el servidor y abra el enlace que imprime.</p>
      </main>
    </Shell>
  )
}

/** The second step of a login with password, when the account has a TOTP second factor. */
export function CodePage(props: { csrf: string; pending: string; error: string | null }) {
  return (
    <Shell title="Código de verificación" session={null}>
      <main id="contenido" class="login">
        <h1>Timbre · Verificación en dos pasos</h1>
        <div class="card">
          <Errors error={props.error} />
          <form method="post" action={`${CONSOLE_PREFIX}/entrar/codigo`} class="stack">
            <input type="hidden" name="_csrf" value={props.csrf} />
            <input type="hidden" name="pendiente" value={props.pending} />
            <div class={props.error ? 'field field-invalid' : 'field'}>
              <label for="codigo">Código de su aplicación de autenticación</label>
              <input id="codigo" name="codigo" type="text" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]*" maxLength={7} required autoFocus aria-describedby="codigo-ayuda" aria-invalid={props.error ? 'true' : undefined} />
              <small id="codigo-ayuda" class="hint">
                Los 6 dígitos que muestra ahora la aplicación (Google Authenticator, Microsoft Authenticator, 1Password…).
              </small>
            </div>
            <button type="submit" class="primary">
              Verificar
            </button>
          </form>
        </div>
        <p class="muted">
          <a href={`${CONSOLE_PREFIX}/entrar`}>Volver a empezar</a>
        </p>
      </main>
    </Shell>
  )
}

export function LinkPage(props: { csrf: string; linkToken: string; error: string | null }) {
  return (
    <Shell title="Entrar como administrador" session={null}>
      <main id="contenido" class="login">
        <h1>Timbre · Administrador</h1>
        <div class="card">
          <Errors error={props.error} />
          {props.linkToken !== '' ? (
            <form method="post" action={`${CONSOLE_PREFIX}/enlace`} class="stack">
              <input type="hidden" name="_csrf" value={props.csrf} />
              <input type="hidden" name="token" value={props.linkToken} />
              <p>Este enlace de un solo uso abre la consola como administrador de la instalación: verá todas las empresas.</p>
              <button type="submit" class="primary">
                Entrar como administrador
              </button>
            </form>
          ) : (
            <p>
              Pida un enlace nuevo con <code>timbre console link</code> o <a href={`${CONSOLE_PREFIX}/entrar`}>entre con una API key</a>.
            </p>
          )}
        </div>
      </main>
    </Shell>
  )
}
