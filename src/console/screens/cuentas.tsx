// The Cuentas screen (DESIGN §14 "People, not keys", issue 27): the people of the company shown, their role, second
// factor and last login; invitations by one-time link, pending ones revocable; a role changed or a person removed.
// The door lets in only the company's administrador and the instance administrator (door.tsx `refusal`).
import { Elysia } from 'elysia'
import { ROLE_LABELS, ROLES } from '../../domain/console-roles'
import { TimbreError } from '../../errors'
import {
  changeRole,
  INVITATION_TTL_MS,
  inviteAccount,
  listInvitations,
  listMembers,
  removeMember,
  removeSecondFactor,
  revokeInvitationOf,
  setAccountDisabled,
  type AccountActor,
  type InvitationListing,
} from '../../services/console-accounts'
import type { Deps } from '../../services/deps'
import { empresaIdOf, formOf, sessionOf, textField } from '../context'
import { fieldLabel } from '../field-labels'
import { ErrorSummary, Field, failureOf, formatDateTime, NO_ERRORS, SelectField, type Failure } from '../forms'
import { CsrfInput, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const BASE = `${CONSOLE_PREFIX}/cuentas`
const TITLE = 'Cuentas'
const NOTICES: Readonly<Record<string, string>> = {
  rol: 'Rol cambiado: rige desde la próxima página que abra esa persona.',
  quitada: 'La persona ya no tiene acceso a esta empresa; si tenía la consola abierta, su sesión terminó.',
  revocada: 'Invitación revocada: su enlace ya no sirve.',
  desactivada: 'Cuenta desactivada: no puede entrar y sus sesiones terminaron.',
  reactivada: 'Cuenta reactivada.',
  sin2fa: 'Verificación en dos pasos quitada: esa persona entra solo con su contraseña hasta que la active de nuevo.',
}
const ROLE_OPTIONS = ROLES.map((r) => ({ value: r, label: ROLE_LABELS[r] }))
const ROLE_HINT = 'Administrador: todo, cuentas incluidas. Emisor: emite, recibe y actúa; no ve certificado, CAF, webhooks, correo ni cuentas. Solo lectura: consulta.'

function actorOf(request: Request): AccountActor {
  return { accountId: sessionOf(request).accountId }
}

interface Created {
  readonly url: string
  readonly invitation: InvitationListing
}

function InvitationLink(props: { created: Created }) {
  const { invitation, url } = props.created
  return (
    <div role="alert" class="invitacion-creada">
      <p>
        <strong>
          Copie este enlace y envíelo a {invitation.email}: no se vuelve a mostrar. Sirve una vez, durante {INVITATION_TTL_MS / 86_400_000} días.
        </strong>
      </p>
      <p class="secret" id="enlace-invitacion">
        {url}
      </p>
      {invitation.resets_password && <p>Esa persona ya tiene cuenta: con este enlace define una contraseña nueva y se cierran sus sesiones abiertas.</p>}
      <p class="muted">Timbre no envía correos de invitación: mándelo usted por el medio que prefiera.</p>
    </div>
  )
}

function InviteForm(props: { request: Request; form: FormData | null; failure: Failure | null }) {
  const v = (name: string) => (props.form ? textField(props.form, name) : null)
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <form method="post" action={`${BASE}/invitar`} class="stack" id="invitar">
      <h2>Invitar a una persona</h2>
      <CsrfInput session={sessionOf(props.request)} />
      <ErrorSummary failure={props.failure} fields={['email', 'role']} label={(path) => (path === 'email' ? 'Correo' : fieldLabel(path))} />
      <div class="grid">
        <Field name="email" label="Correo" type="email" value={v('email')} errors={errors} required autocomplete="off" />
        <SelectField name="role" label="Rol" value={v('role') ?? 'emisor'} errors={errors} options={ROLE_OPTIONS} required />
      </div>
      <p class="hint">{ROLE_HINT}</p>
      <p class="hint">¿Alguien olvidó su contraseña? Invite de nuevo su correo: con el enlace nuevo define otra. Si esa persona trabaja también para empresas que usted no administra, el enlace solo suma esta empresa y la contraseña la repone el administrador de la instalación.</p>
      <div class="actions">
        <button type="submit" class="primary">
          Crear invitación
        </button>
      </div>
    </form>
  )
}

function Members(props: { deps: Deps; request: Request; rowFailure: { accountId: string; failure: Failure } | null }) {
  const session = sessionOf(props.request)
  const members = listMembers(props.deps, { empresaId: empresaIdOf(props.request) })
  if (members.length === 0) return <p>Aún nadie entra con su propia cuenta a esta empresa: invite a la primera persona con el formulario de abajo.</p>
  return (
    <div class="table-wrap">
      <table id="tabla-cuentas">
        <thead>
          <tr>
            <th scope="col">Correo</th>
            <th scope="col">Nombre</th>
            <th scope="col">Rol</th>
            <th scope="col">Verificación en dos pasos</th>
            <th scope="col">Último ingreso</th>
            <th scope="col">
              <span class="muted">Acciones</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => {
            const self = m.account_id === session.accountId
            const failure = props.rowFailure?.accountId === m.account_id ? props.rowFailure.failure : null
            return (
              <tr>
                <td>
                  {m.email} {m.disabled && <span class="badge badge-bad">Desactivada</span>}
                  {self && <span class="badge badge-neutral">Usted</span>}
                </td>
                <td>{m.nombre ?? '—'}</td>
                <td>
                  {self ? (
                    ROLE_LABELS[m.role]
                  ) : (
                    <form method="post" action={`${BASE}/${m.account_id}/rol`} class="inline-form">
                      <CsrfInput session={session} />
                      <label class="visually-hidden" for={`rol-${m.account_id}`}>
                        Rol de {m.email}
                      </label>
                      <select id={`rol-${m.account_id}`} name="role">
                        {ROLE_OPTIONS.map((o) => (
                          <option value={o.value} selected={o.value === m.role}>
                            {o.label}
                          </option>
                        ))}
                      </select>
                      <button type="submit" aria-label={`Cambiar el rol de ${m.email}`}>
                        Cambiar
                      </button>
                    </form>
                  )}
                  {failure && <p class="field-error">{failure.errors.get('role')?.join(' ') ?? failure.message}</p>}
                </td>
                <td>{m.totp ? <span class="badge badge-ok">Activa</span> : <span class="badge badge-neutral">No</span>}</td>
                <td>{formatDateTime(m.last_login_at)}</td>
                <td class="acciones">
                  {!self && (
                    <form method="post" action={`${BASE}/${m.account_id}/quitar`} data-confirm={`¿Quitar a ${m.email} de esta empresa? Deja de tener acceso de inmediato.`}>
                      <CsrfInput session={session} />
                      <button type="submit" class="danger" aria-label={`Quitar a ${m.email} de la empresa`}>
                        Quitar
                      </button>
                    </form>
                  )}
                  {session.kind === 'admin' && m.totp && (
                    <form method="post" action={`${BASE}/${m.account_id}/quitar-2fa`} data-confirm={`¿Quitar la verificación en dos pasos de ${m.email}? Hágalo solo si perdió su teléfono.`}>
                      <CsrfInput session={session} />
                      <button type="submit" aria-label={`Quitar la verificación en dos pasos de ${m.email}`}>
                        Quitar 2FA
                      </button>
                    </form>
                  )}
                  {session.kind === 'admin' && (
                    <form method="post" action={`${BASE}/${m.account_id}/${m.disabled ? 'reactivar' : 'desactivar'}`}>
                      <CsrfInput session={session} />
                      <button type="submit" aria-label={`${m.disabled ? 'Reactivar' : 'Desactivar'} la cuenta de ${m.email} en toda la instalación`}>
                        {m.disabled ? 'Reactivar' : 'Desactivar'}
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

function PendingInvitations(props: { deps: Deps; request: Request }) {
  const session = sessionOf(props.request)
  const pending = listInvitations(props.deps, { empresaId: empresaIdOf(props.request) })
  if (pending.length === 0) return null
  return (
    <section class="card" aria-labelledby="pendientes">
      <h2 id="pendientes">Invitaciones pendientes</h2>
      <div class="table-wrap">
        <table id="tabla-invitaciones">
          <thead>
            <tr>
              <th scope="col">Correo</th>
              <th scope="col">Rol</th>
              <th scope="col">Creada</th>
              <th scope="col">Vence</th>
              <th scope="col">
                <span class="muted">Acción</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {pending.map((i) => (
              <tr>
                <td>
                  {i.email} {i.resets_password && <span class="badge badge-info">Contraseña nueva</span>}
                </td>
                <td>{ROLE_LABELS[i.role]}</td>
                <td>{formatDateTime(i.created_at)}</td>
                <td>{formatDateTime(i.expires_at)}</td>
                <td>
                  <form method="post" action={`${BASE}/invitaciones/${i.id}/revocar`}>
                    <CsrfInput session={session} />
                    <button type="submit" class="danger" aria-label={`Revocar la invitación de ${i.email}`}>
                      Revocar
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}

interface PageState {
  readonly form?: FormData | null
  readonly failure?: Failure | null
  readonly created?: Created | null
  readonly rowFailure?: { accountId: string; failure: Failure } | null
}

function CuentasPage(props: { deps: Deps; request: Request; state: PageState }) {
  const { state } = props
  return (
    <>
      <section class="card" aria-labelledby="personas">
        <h2 id="personas">Personas con acceso a esta empresa</h2>
        <Members deps={props.deps} request={props.request} rowFailure={state.rowFailure ?? null} />
      </section>
      <PendingInvitations deps={props.deps} request={props.request} />
      <section class="card">
        {state.created && <InvitationLink created={state.created} />}
        <InviteForm request={props.request} form={state.form ?? null} failure={state.failure ?? null} />
      </section>
    </>
  )
}

function page(deps: Deps, request: Request, state: PageState, status = 200, notice: string | null = null): Response {
  return renderPage(deps, request, { title: TITLE, section: 'cuentas', status, notice, children: <CuentasPage deps={deps} request={request} state={state} /> })
}

/** A role change or a removal the service refused (an administrador acting on themselves): shown on that row. */
function rowAction(deps: Deps, request: Request, accountId: string, act: () => void, aviso: string): Response {
  try {
    act()
    return redirect(`${BASE}?aviso=${aviso}`)
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
    return page(deps, request, { rowFailure: { accountId, failure: failureOf(err) } }, 400)
  }
}

function requireInstanceAdmin(request: Request): void {
  if (sessionOf(request).kind !== 'admin') throw new TimbreError('NOT_FOUND')
}

export const cuentaScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/cuentas', ({ request, query }) => page(deps, request, {}, 200, NOTICES[String(query.aviso ?? '')] ?? null))
    .post('/cuentas/invitar', ({ request }) => {
      const form = formOf(request)
      const empresaId = empresaIdOf(request)
      try {
        const { token, invitation } = inviteAccount(deps, { empresaId, email: textField(form, 'email') ?? '', role: textField(form, 'role'), actor: actorOf(request) })
        deps.log.info('console.invitation_created', { empresa_id: empresaId, invitation_id: invitation.id, role: invitation.role, resets_password: invitation.resets_password })
        const url = `${new URL(request.url).origin}${CONSOLE_PREFIX}/invitacion?token=${encodeURIComponent(token)}`
        // Shown in this answer only (no redirect), as an API key is, so the link never sits in this page's history.
        return page(deps, request, { created: { url, invitation } })
      } catch (err) {
        if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
        return page(deps, request, { form, failure: failureOf(err) }, 400)
      }
    })
    .post('/cuentas/:id/rol', ({ request, params }) =>
      rowAction(deps, request, params.id, () => changeRole(deps, { empresaId: empresaIdOf(request), accountId: params.id, role: textField(formOf(request), 'role'), actor: actorOf(request) }), 'rol'),
    )
    .post('/cuentas/:id/quitar', ({ request, params }) =>
      rowAction(deps, request, params.id, () => removeMember(deps, { empresaId: empresaIdOf(request), accountId: params.id, actor: actorOf(request) }), 'quitada'),
    )
    .post('/cuentas/invitaciones/:id/revocar', ({ request, params }) => {
      revokeInvitationOf(deps, { empresaId: empresaIdOf(request), id: params.id })
      return redirect(`${BASE}?aviso=revocada`)
    })
    .post('/cuentas/:id/desactivar', ({ request, params }) => {
      requireInstanceAdmin(request)
      setAccountDisabled(deps, { accountId: params.id, disabled: true })
      return redirect(`${BASE}?aviso=desactivada`)
    })
    .post('/cuentas/:id/quitar-2fa', ({ request, params }) => {
      requireInstanceAdmin(request)
      removeSecondFactor(deps, { accountId: params.id })
      deps.log.info('console.totp_removed', { account_id: params.id })
      return redirect(`${BASE}?aviso=sin2fa`)
    })
    .post('/cuentas/:id/reactivar', ({ request, params }) => {
      requireInstanceAdmin(request)
      setAccountDisabled(deps, { accountId: params.id, disabled: false })
      return redirect(`${BASE}?aviso=reactivada`)
    })
