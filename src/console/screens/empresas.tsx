// The administrator's screens (DESIGN §14): every company of the instance, switching between them, creating a
// company and its API keys. A company user never reaches them: they answer 404 as another company's data would.
import { Elysia } from 'elysia'
import { AMBIENTES, type EmpresaAlta } from '../../domain/empresa'
import { TimbreError } from '../../errors'
import { createApiKey, listApiKeys, revokeApiKey } from '../../services/api-keys'
import { selectEmpresa } from '../../services/console-sessions'
import type { Deps } from '../../services/deps'
import { createEmpresa, listEmpresas } from '../../services/empresas'
import { backupConsoleLine, backupReadiness } from '../../services/backup-status'
import { formOf, sessionOf, textField } from '../context'
import { ErrorSummary, Field, failureOf, formatAmbiente, formatDateTime, NO_ERRORS, SelectField, type Failure } from '../forms'
import { CsrfInput, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const NOTICES: Readonly<Record<string, string>> = {
  creada: 'Empresa creada. Ahora suba su certificado y sus CAF.',
  revocada: 'API key revocada: deja de funcionar de inmediato, también en la consola.',
}

function requireAdmin(request: Request): void {
  if (sessionOf(request).kind !== 'admin') throw new TimbreError('NOT_FOUND')
}

const EMPRESA_FIELDS = ['rut', 'razon_social', 'giro', 'acteco', 'direccion', 'comuna', 'ciudad', 'ambiente', 'fecha_resolucion', 'numero_resolucion']

/** The form's strings → the service's input; what does not parse is passed on as is, so the service names the field. */
function altaFrom(form: FormData): Partial<EmpresaAlta> {
  const text = (name: string) => textField(form, name) ?? undefined
  const acteco = text('acteco')
  const numero = text('numero_resolucion')
  return {
    rut: text('rut'),
    razon_social: text('razon_social'),
    giro: text('giro'),
    direccion: text('direccion'),
    comuna: text('comuna'),
    ciudad: text('ciudad'),
    acteco: acteco === undefined ? undefined : acteco.split(/[\s,;]+/).filter(Boolean).map(Number),
    ambiente: text('ambiente') as EmpresaAlta['ambiente'] | undefined,
    fecha_resolucion: text('fecha_resolucion'),
    numero_resolucion: numero === undefined ? undefined : Number(numero),
  }
}

function EmpresaForm(props: { request: Request; form: FormData | null; failure: Failure | null }) {
  const session = sessionOf(props.request)
  const v = (name: string) => (props.form ? textField(props.form, name) : null)
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <form method="post" action={`${CONSOLE_PREFIX}/empresas`} class="stack card" id="nueva-empresa">
      <h2>Nueva empresa</h2>
      <CsrfInput session={session} />
      <ErrorSummary failure={props.failure} fields={EMPRESA_FIELDS} />
      <div class="grid">
        <Field name="rut" label="RUT" value={v('rut')} errors={errors} required hint="Con guion y dígito verificador, p. ej. 76.543.210-3." />
        <Field name="razon_social" label="Razón social" value={v('razon_social')} errors={errors} required />
        <Field name="giro" label="Giro" value={v('giro')} errors={errors} required />
        <Field name="acteco" label="Actividades económicas (Acteco)" value={v('acteco')} errors={errors} required hint="Hasta 4 códigos de 6 dígitos, separados por coma." inputmode="numeric" />
        <Field name="direccion" label="Dirección" value={v('direccion')} errors={errors} required />
        <Field name="comuna" label="Comuna" value={v('comuna')} errors={errors} required />
        <Field name="ciudad" label="Ciudad" value={v('ciudad')} errors={errors} required />
        <SelectField
          name="ambiente"
          label="Ambiente del SII"
          value={v('ambiente') ?? 'certificacion'}
          errors={errors}
          options={AMBIENTES.map((a) => ({ value: a, label: a === 'certificacion' ? 'Certificación (maullin)' : 'Producción (palena)' }))}
        />
        <Field name="fecha_resolucion" label="Fecha de resolución" type="date" value={v('fecha_resolucion')} errors={errors} hint="Si la deja vacía, se usa la de hoy." />
        <Field name="numero_resolucion" label="Número de resolución" value={v('numero_resolucion')} errors={errors} inputmode="numeric" hint="0 en certificación." />
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Crear empresa
        </button>
      </div>
    </form>
  )
}

function ApiKeys(props: { deps: Deps; request: Request; empresaId: string; created: { key: string; write: boolean } | null }) {
  const session = sessionOf(props.request)
  const keys = listApiKeys(props.deps, { empresaId: props.empresaId })
  return (
    <section class="card" aria-labelledby="api-keys">
      <h2 id="api-keys">API keys de la empresa activa</h2>
      {props.created && (
        <div role="alert">
          <p>
            <strong>Copie esta API key {props.created.write ? 'de escritura' : 'de solo lectura'} ahora: no se vuelve a mostrar.</strong>
          </p>
          <p class="secret" id="api-key-creada">
            {props.created.key}
          </p>
        </div>
      )}
      {keys.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="muted">Se guardan solo como hash; aquí se ve su prefijo.</caption>
            <thead>
              <tr>
                <th scope="col">Prefijo</th>
                <th scope="col">Nombre</th>
                <th scope="col">Permiso</th>
                <th scope="col">Creada</th>
                <th scope="col">Último uso</th>
                <th scope="col">Estado</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.nombre ?? '—'}</td>
                  <td>{k.write ? 'Escritura' : 'Solo lectura'}</td>
                  <td>{formatDateTime(k.created_at)}</td>
                  <td>{formatDateTime(k.last_used_at)}</td>
                  <td>
                    {k.revoked_at ? (
                      <span class="badge badge-neutral">Revocada</span>
                    ) : (
                      <form method="post" action={`${CONSOLE_PREFIX}/empresas/api-keys/${k.id}/revocar`} data-confirm="¿Revocar esta API key? Deja de funcionar de inmediato.">
                        <CsrfInput session={session} />
                        <button type="submit" class="danger">
                          Revocar
                        </button>
                      </form>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form method="post" action={`${CONSOLE_PREFIX}/empresas/api-keys`} class="stack">
        <CsrfInput session={session} />
        <div class="grid">
          <Field name="nombre" label="Nombre de la API key" hint="Para reconocerla, p. ej. «ERP» o «Contador»." />
          <div class="field">
            <span>
              <input type="checkbox" id="f-write" name="write" value="true" /> <label for="f-write">Con escritura (emitir, subir CAF…)</label>
            </span>
          </div>
        </div>
        <div class="actions">
          <button type="submit">Crear API key</button>
        </div>
      </form>
    </section>
  )
}

function EmpresasPage(props: { deps: Deps; request: Request; form: FormData | null; failure: Failure | null; created: { key: string; write: boolean } | null }) {
  const session = sessionOf(props.request)
  const empresas = listEmpresas(props.deps)
  return (
    <>
      <BackupLine deps={props.deps} />
      <section class="card" aria-labelledby="lista-empresas">
        <h2 id="lista-empresas">Empresas de esta instalación</h2>
        {empresas.length === 0 ? (
          <p>Aún no hay empresas: cree la primera con el formulario de abajo.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Razón social</th>
                  <th scope="col">RUT</th>
                  <th scope="col">Ambiente</th>
                  <th scope="col">Creada</th>
                  <th scope="col">
                    <span class="muted">Acción</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {empresas.map((e) => (
                  <tr>
                    <td>
                      {e.razon_social} {e.is_demo && <span class="badge badge-info">Demo</span>}
                    </td>
                    <td>{e.rut}</td>
                    <td>{formatAmbiente(e.ambiente)}</td>
                    <td>{formatDateTime(e.created_at)}</td>
                    <td>
                      {e.id === session.empresaId ? (
                        <span class="badge badge-ok">Activa</span>
                      ) : (
                        <form method="post" action={`${CONSOLE_PREFIX}/empresas/seleccionar`}>
                          <CsrfInput session={session} />
                          <input type="hidden" name="empresa_id" value={e.id} />
                          <button type="submit" aria-label={`Usar ${e.razon_social}`}>
                            Usar
                          </button>
                        </form>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {session.empresaId !== null && <ApiKeys deps={props.deps} request={props.request} empresaId={session.empresaId} created={props.created} />}
      <EmpresaForm request={props.request} form={props.form} failure={props.failure} />
    </>
  )
}

/** Issue 26: the instance's scheduled backups in one Spanish line, for the administrator; an alert when one failed. */
function BackupLine(props: { deps: Deps }) {
  const line = backupConsoleLine(props.deps, (iso) => formatDateTime(iso))
  if (line === null) return null
  const failing = backupReadiness(props.deps).check === 'fail'
  return (
    <p class={failing ? 'error-summary' : 'card muted'} id="respaldos" role={failing ? 'alert' : undefined}>
      {line}
    </p>
  )
}

export const empresaScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/empresas', ({ request, query }) => {
      requireAdmin(request)
      return renderPage(deps, request, {
        title: 'Empresas',
        section: 'empresas',
        notice: NOTICES[String(query.aviso ?? '')] ?? null,
        children: <EmpresasPage deps={deps} request={request} form={null} failure={null} created={null} />,
      })
    })
    .post('/empresas', ({ request }) => {
      requireAdmin(request)
      const form = formOf(request)
      try {
        const empresa = createEmpresa(deps, altaFrom(form))
        selectEmpresa(deps, { session: sessionOf(request), empresaId: empresa.id })
        return redirect(`${CONSOLE_PREFIX}/empresas?aviso=creada`)
      } catch (err) {
        if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
        return renderPage(deps, request, {
          title: 'Empresas',
          section: 'empresas',
          status: 400,
          children: <EmpresasPage deps={deps} request={request} form={form} failure={failureOf(err)} created={null} />,
        })
      }
    })
    .post('/empresas/seleccionar', ({ request }) => {
      const id = textField(formOf(request), 'empresa_id')
      if (id === null) return redirect(`${CONSOLE_PREFIX}/empresas`)
      selectEmpresa(deps, { session: sessionOf(request), empresaId: id })
      return redirect(`${CONSOLE_PREFIX}/documentos`)
    })
    .post('/empresas/api-keys', ({ request }) => {
      requireAdmin(request)
      const session = sessionOf(request)
      if (session.empresaId === null) return redirect(`${CONSOLE_PREFIX}/empresas`)
      const form = formOf(request)
      const created = createApiKey(deps, { empresaId: session.empresaId, write: form.get('write') === 'true', nombre: textField(form, 'nombre') })
      deps.log.info('console.api_key_created', { empresa_id: session.empresaId, api_key_id: created.id, write: created.write })
      // Shown in this answer only (no redirect), so the key never sits in a URL or the history.
      return renderPage(deps, request, {
        title: 'Empresas',
        section: 'empresas',
        children: <EmpresasPage deps={deps} request={request} form={null} failure={null} created={{ key: created.key, write: created.write }} />,
      })
    })
    .post('/empresas/api-keys/:id/revocar', ({ request, params }) => {
      requireAdmin(request)
      const session = sessionOf(request)
      const key = listApiKeys(deps, { empresaId: session.empresaId ?? '' }).find((k) => k.id === params.id)
      if (!key) throw new TimbreError('NOT_FOUND')
      revokeApiKey(deps, { id: key.id })
      return redirect(`${CONSOLE_PREFIX}/empresas?aviso=revocada`)
    })
