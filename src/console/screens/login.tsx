// The two pages before a session (DESIGN §14): a company user types an API key; an administrator confirms the
// one-time link `timbre console link` printed. The link is spent by a POST, so a chat or mail preview that fetches
// the URL cannot use it up.
import { Shell, CONSOLE_PREFIX } from '../page'

function Errors(props: { error: string | null }) {
  return props.error ? (
    <div class="error-summary" role="alert" tabindex={-1}>
      <p>
        <strong>{props.error}</strong>
      </p>
    </div>
  ) : null
}

export function LoginPage(props: { csrf: string; error: string | null }) {
  return (
    <Shell title="Entrar" session={null}>
      <main id="contenido" class="login">
        <h1>Timbre · Entrar</h1>
        <div class="card">
          <Errors error={props.error} />
          <form method="post" action={`${CONSOLE_PREFIX}/entrar`} class="stack">
            <input type="hidden" name="_csrf" value={props.csrf} />
            <div class={props.error ? 'field field-invalid' : 'field'}>
              <label for="api_key">API key de la empresa</label>
              <input id="api_key" name="api_key" type="password" autoComplete="off" required aria-describedby="api_key-ayuda" aria-invalid={props.error ? 'true' : undefined} />
              <small id="api_key-ayuda" class="hint">
                La que entregó el administrador (timbre_…). Una API key de solo lectura abre la consola en modo consulta.
              </small>
            </div>
            <button type="submit" class="primary">
              Entrar
            </button>
          </form>
        </div>
        <p class="muted">¿Administra la instalación? Ejecute <code>timbre console link</code> en el servidor y abra el enlace que imprime.</p>
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
