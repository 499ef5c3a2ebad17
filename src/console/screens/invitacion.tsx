// Accepting an invitation (DESIGN §14 "People, not keys", issue 27), before any session: the link an administrator
// copied from the Cuentas screen. Like the administrator's link, the GET only shows the form and the POST spends it,
// so a mail or chat preview that fetches the URL cannot use it up.
import { ROLE_LABELS } from '../../domain/console-roles'
import { PASSWORD_MIN_LENGTH, type InvitationView } from '../../services/console-accounts'
import { ErrorSummary, Field, NO_ERRORS, type Failure } from '../forms'
import { Shell } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const INVITATION_FIELDS = ['nombre', 'password', 'password_repetida', 'actual', 'codigo']

export function InvitationPage(props: { csrf: string; token: string; view: InvitationView | null; failure: Failure | null; nombre?: string | null }) {
  const { view, failure } = props
  const errors = failure?.errors ?? NO_ERRORS
  return (
    <Shell title="Invitación" session={null}>
      <main id="contenido" class="login">
        <h1>Timbre · Invitación</h1>
        <div class="card">
          <ErrorSummary failure={failure} fields={INVITATION_FIELDS} />
          {view === null ? (
            <p>
              <a href={`${CONSOLE_PREFIX}/entrar`}>Ir a la página de entrada</a>
            </p>
          ) : (
            <form method="post" action={`${CONSOLE_PREFIX}/invitacion`} class="stack" id="aceptar-invitacion">
              <input type="hidden" name="_csrf" value={props.csrf} />
              <input type="hidden" name="token" value={props.token} />
              <p>
                Lo invitaron a <strong>{view.razon_social}</strong> con el rol <strong>{ROLE_LABELS[view.role]}</strong>.
              </p>
              <p>
                Correo: <strong id="invitacion-email">{view.email}</strong>
              </p>
              {view.mode === 'nueva' && <p>Cree su contraseña para entrar a la consola con este correo.</p>}
              {view.mode === 'restablecer' && <p>Defina una contraseña nueva. Al guardarla se cierran todas las sesiones abiertas de su cuenta.</p>}
              {view.mode === 'confirmar' && <p>Ya tiene una cuenta con este correo: escriba su contraseña para sumar esta empresa a su cuenta. Si la olvidó, este enlace no la repone: pídale al administrador de la instalación una invitación nueva.</p>}
              {view.mode === 'nueva' && <Field name="nombre" label="Su nombre" value={props.nombre ?? null} errors={errors} autocomplete="name" hint="Opcional: así lo reconocen en la lista de cuentas." />}
              {view.mode === 'confirmar' ? (
                <>
                  <Field name="actual" label="Su contraseña" type="password" errors={errors} required autocomplete="current-password" />
                  {view.needsTotp && <Field name="codigo" label="Código de su aplicación de autenticación" errors={errors} required inputmode="numeric" autocomplete="one-time-code" />}
                </>
              ) : (
                <>
                  <Field name="password" label="Contraseña nueva" type="password" errors={errors} required autocomplete="new-password" hint={`Al menos ${PASSWORD_MIN_LENGTH} caracteres; una frase larga es más fácil de recordar.`} />
                  <Field name="password_repetida" label="Repita la contraseña" type="password" errors={errors} required autocomplete="new-password" />
                </>
              )}
              <button type="submit" class="primary">
                {view.mode === 'confirmar' ? 'Sumar la empresa' : 'Guardar y entrar'}
              </button>
            </form>
          )}
        </div>
      </main>
    </Shell>
  )
}
