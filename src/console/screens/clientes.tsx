// Clientes (spec 4.5, DESIGN §8, §14; issue 27): the list as GET /clientes pages it, search as GET /clientes/search
// finds, create, edit and delete (soft, as the API deletes), through the same services and the same contracts, so a
// form is refused exactly where the API would refuse its JSON body and each error lands beside its input.
import { Elysia } from 'elysia'
import { SEARCH_LIMIT } from '../../domain/catalogo'
import { TimbreError, validationError } from '../../errors'
import { STATUS } from '../../contracts/statuses'
import { page } from '../../contracts/pagination'
import { BuscarClientesQuery, parseClienteAlta, parseClienteCambios } from '../../contracts/clientes'
import { createCliente, deleteCliente, getCliente, listClientes, searchClientes, updateCliente, type ClienteRecord } from '../../services/clientes'
import type { Deps } from '../../services/deps'
import { empresaIdOf, formOf, requireWrite, sessionOf } from '../context'
import { Field, failureOf, formatRut, fieldErrors, NO_ERRORS, type Failure } from '../forms'
import { CsrfInput, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'
import { afterIdOf, CatalogoSummary, DeleteConfirm, idParam, PAGE_SIZE, Pager, SearchForm, queryErrors, TextAreaField, trimmedOf, typed, type FieldLabels } from './catalogo'

const BASE = `${CONSOLE_PREFIX}/clientes`
const clientePath = (id: string) => `${BASE}/${id}`

const NOTICES: Readonly<Record<string, string>> = {
  creado: 'Cliente guardado: ya aparece en el formulario de emisión para elegirlo como receptor.',
  guardado: 'Cambios guardados. Los documentos ya emitidos conservan los datos con que se emitieron.',
  eliminado: 'Cliente eliminado: ya no aparece en la lista ni en la búsqueda, y su RUT quedó libre.',
}

const OPTIONAL = ['giro', 'direccion', 'comuna', 'ciudad', 'email', 'telefono', 'contacto', 'notas'] as const

const LABELS: FieldLabels = {
  rut: 'RUT',
  razon_social: 'Razón social',
  giro: 'Giro',
  direccion: 'Dirección',
  comuna: 'Comuna',
  ciudad: 'Ciudad',
  email: 'Correo electrónico',
  telefono: 'Teléfono',
  contacto: 'Persona de contacto',
  notas: 'Notas internas',
  q: 'Buscar',
}

/**
 * The form → the JSON body POST /clientes (`alta`) or PUT /clientes/{id} would receive: required texts sent even
 * blank, so the contract says «No puede estar vacío»; a blank optional text is left out of a create and clears the
 * field on an edit (null), as an integrator would send it.
 */
function bodyFrom(form: FormData, mode: 'alta' | 'cambios'): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  if (mode === 'alta') body.rut = trimmedOf(form, 'rut')
  body.razon_social = trimmedOf(form, 'razon_social')
  for (const name of OPTIONAL) {
    const value = trimmedOf(form, name)
    if (value !== undefined && value !== '') body[name] = value
    else if (value === '' && mode === 'cambios') body[name] = null
  }
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined))
}

/** A RUT already taken, told beside the RUT field in words, with the way to the cliente that has it. */
function duplicateFailure(err: TimbreError): { failure: Failure; existing: string | null } {
  const rut = formatRut(String(err.extra.context?.rut ?? ''))
  const existing = typeof err.extra.context?.cliente_id === 'string' ? err.extra.context.cliente_id : null
  return {
    failure: {
      message: `Ya existe un cliente con el RUT ${rut}.`,
      action: 'Un RUT se guarda una sola vez: edite el cliente que ya lo tiene, o revise el RUT escrito.',
      errors: fieldErrors([{ field: 'rut', code: 'INVALID_VALUE', message: `Ya existe un cliente con el RUT ${rut}.` }]),
    },
    existing,
  }
}

interface Refusal {
  readonly form: FormData
  readonly failure: Failure
  readonly existing: string | null
  readonly status: number
}

/** A refusal the person can fix on the form (a bad field, a RUT taken), or null for anything else, which is rethrown. */
function refusalOf(err: unknown, form: FormData): Refusal | null {
  if (!(err instanceof TimbreError)) return null
  // The catalogue's «La solicitud contiene campos inválidos» speaks of a request; a person saved a form.
  if (err.code === 'VALIDATION_ERROR') return { form, failure: { ...failureOf(err), message: 'El cliente no se guardó: hay campos por corregir.' }, existing: null, status: STATUS[err.code] }
  if (err.code === 'CLIENTE_RUT_EXISTS') return { form, ...duplicateFailure(err), status: STATUS[err.code] }
  return null
}

// ------------------------------------------------------------------------------------------------------ list

interface ListState {
  readonly q: string | null
  readonly cursor: string | null
  readonly rows: readonly ClienteRecord[]
  readonly next: string | null
  readonly failure: Failure | null
}

function listState(deps: Deps, empresaId: string, url: URL): ListState {
  const q = url.searchParams.get('q')?.trim() || null
  const cursor = url.searchParams.get('cursor')?.trim() || null
  try {
    if (q !== null) {
      const errors = queryErrors(BuscarClientesQuery, { q })
      if (errors.length > 0) throw validationError(errors)
      return { q, cursor: null, rows: searchClientes(deps, { empresaId, q, limit: SEARCH_LIMIT.max }), next: null, failure: null }
    }
    const { data, next_cursor } = page(listClientes(deps, { empresaId, afterId: afterIdOf(cursor), limit: PAGE_SIZE + 1 }), PAGE_SIZE)
    return { q, cursor, rows: data, next: next_cursor, failure: null }
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
    return { q, cursor, rows: [], next: null, failure: failureOf(err) }
  }
}

function ClienteTable(props: { rows: readonly ClienteRecord[]; canWrite: boolean }) {
  return (
    <div class="table-wrap">
      <table class="catalogo">
        <thead>
          <tr>
            <th scope="col">Razón social</th>
            <th scope="col">RUT</th>
            <th scope="col" class="col-opcional">
              Giro
            </th>
            <th scope="col" class="col-opcional">
              Comuna
            </th>
            <th scope="col" class="col-opcional">
              Correo electrónico
            </th>
            {props.canWrite && (
              <th scope="col">
                <span class="muted">Acciones</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((c) => (
            <tr>
              <td>
                <a href={clientePath(c.id)}>{c.razon_social}</a>
              </td>
              <td class="rut">{formatRut(c.rut)}</td>
              <td class="col-opcional">{c.giro ?? '—'}</td>
              <td class="col-opcional">{c.comuna ?? '—'}</td>
              <td class="col-opcional">{c.email ?? '—'}</td>
              {props.canWrite && (
                <td class="acciones">
                  <a href={clientePath(c.id)} aria-label={`Editar ${c.razon_social}`}>
                    Editar
                  </a>{' '}
                  <a href={`${clientePath(c.id)}/eliminar`} aria-label={`Eliminar ${c.razon_social}`}>
                    Eliminar
                  </a>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function ListPage(props: { request: Request; state: ListState }) {
  const { state } = props
  const canWrite = sessionOf(props.request).canWrite
  const searching = state.q !== null
  return (
    <>
      {canWrite && (
        <p class="actions">
          <a class="button primary" href={`${BASE}/nuevo`}>
            Nuevo cliente
          </a>
        </p>
      )}
      <CatalogoSummary failure={state.failure} labels={LABELS} />
      <SearchForm action={BASE} label="Buscar por razón social o RUT" hint="Sin importar mayúsculas ni tildes; el RUT con o sin puntos." q={state.q} failure={state.failure} />
      {state.failure === null && (
        <section aria-labelledby="resultados">
          <h2 id="resultados">{searching ? `Resultados para «${state.q}»` : 'Clientes guardados'}</h2>
          {state.rows.length === 0 ? (
            <p class="card">
              {searching ? 'Ningún cliente coincide con la búsqueda.' : state.cursor ? 'No hay más clientes.' : 'Aún no hay clientes guardados.'}{' '}
              {!searching && !state.cursor && canWrite && <a href={`${BASE}/nuevo`}>Guardar el primero</a>}
            </p>
          ) : (
            <>
              <ClienteTable rows={state.rows} canWrite={canWrite} />
              {searching && state.rows.length >= SEARCH_LIMIT.max && (
                <p class="muted">Se muestran los primeros {SEARCH_LIMIT.max}: escriba más para acotar la búsqueda.</p>
              )}
            </>
          )}
          {!searching && <Pager base={BASE} cursor={state.cursor} next={state.next} />}
        </section>
      )}
    </>
  )
}

// ------------------------------------------------------------------------------------------------------ form

/** The cliente's fields, filled from what was typed (after a refusal) or from the stored cliente (editing). */
function ClienteFields(props: { value: (name: string) => string | null; failure: Failure | null; rutFixed: string | null }) {
  const { value: v } = props
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <>
      <div class="grid">
        {props.rutFixed === null ? (
          <Field name="rut" label="RUT" value={v('rut')} errors={errors} required autocomplete="off" hint="Con o sin puntos, con guion y dígito verificador: 76.543.210-3." />
        ) : (
          <div class="field">
            <span class="label">RUT</span>
            <span class="rut-fijo">{formatRut(props.rutFixed)}</span>
            <small class="hint">El RUT de un cliente no cambia; si está mal, elimínelo y cree otro.</small>
          </div>
        )}
        <Field name="razon_social" label="Razón social" value={v('razon_social')} errors={errors} required />
        <Field name="giro" label="Giro" value={v('giro')} errors={errors} hint="Requerido para emitirle facturas (33, 34) y guías (52)." />
        <Field name="direccion" label="Dirección" value={v('direccion')} errors={errors} />
        <Field name="comuna" label="Comuna" value={v('comuna')} errors={errors} />
        <Field name="ciudad" label="Ciudad" value={v('ciudad')} errors={errors} />
        <Field name="email" label="Correo electrónico" type="email" value={v('email')} errors={errors} hint="Donde recibe sus DTE." autocomplete="off" />
        <Field name="telefono" label="Teléfono" value={v('telefono')} errors={errors} autocomplete="off" />
        <Field name="contacto" label="Persona de contacto" value={v('contacto')} errors={errors} autocomplete="off" />
      </div>
      <TextAreaField name="notas" label="Notas internas" value={v('notas')} errors={errors} hint="Solo para su empresa: nunca van en un documento." />
    </>
  )
}

function NuevoPage(props: { request: Request; refusal: Refusal | null }) {
  const session = sessionOf(props.request)
  const r = props.refusal
  return (
    <>
      <p>
        <a href={BASE}>← Todos los clientes</a>
      </p>
      <form method="post" action={BASE} class="stack card" novalidate>
        <CsrfInput session={session} />
        <CatalogoSummary failure={r?.failure ?? null} labels={LABELS} extra={r?.existing ? { href: clientePath(r.existing), text: 'Ver el cliente que ya tiene este RUT' } : null} />
        <ClienteFields value={(name) => typed(r?.form ?? null, name)} failure={r?.failure ?? null} rutFixed={null} />
        <div class="actions">
          <button type="submit" class="primary">
            Guardar cliente
          </button>
          <a href={BASE}>Cancelar</a>
        </div>
      </form>
    </>
  )
}

function ClienteFacts(props: { cliente: ClienteRecord }) {
  const c = props.cliente
  const rows: Array<[string, string | null]> = [
    ['RUT', formatRut(c.rut)],
    ['Razón social', c.razon_social],
    ['Giro', c.giro],
    ['Dirección', c.direccion],
    ['Comuna', c.comuna],
    ['Ciudad', c.ciudad],
    ['Correo electrónico', c.email],
    ['Teléfono', c.telefono],
    ['Persona de contacto', c.contacto],
    ['Notas internas', c.notas],
  ]
  return (
    <dl class="facts card">
      {rows.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value ?? '—'}</dd>
        </>
      ))}
    </dl>
  )
}

function ClientePage(props: { request: Request; cliente: ClienteRecord; refusal: Refusal | null }) {
  const session = sessionOf(props.request)
  const { cliente, refusal: r } = props
  const stored = (name: string): string | null => {
    const value = (cliente as unknown as Record<string, unknown>)[name]
    return typeof value === 'string' ? value : null
  }
  return (
    <>
      <p>
        <a href={BASE}>← Todos los clientes</a>
      </p>
      {!session.canWrite ? (
        <ClienteFacts cliente={cliente} />
      ) : (
        <>
          <form method="post" action={clientePath(cliente.id)} class="stack card" novalidate>
            <CsrfInput session={session} />
            <CatalogoSummary failure={r?.failure ?? null} labels={LABELS} />
            <ClienteFields value={(name) => (r ? typed(r.form, name) : stored(name))} failure={r?.failure ?? null} rutFixed={cliente.rut} />
            <div class="actions">
              <button type="submit" class="primary">
                Guardar cambios
              </button>
              <a href={BASE}>Cancelar</a>
            </div>
          </form>
          <p>
            <a class="button danger" href={`${clientePath(cliente.id)}/eliminar`}>
              Eliminar este cliente
            </a>
          </p>
        </>
      )}
    </>
  )
}

// ------------------------------------------------------------------------------------------------------ routes

export const clienteScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/clientes', ({ request, query }) =>
      renderPage(deps, request, {
        title: 'Clientes',
        section: 'clientes',
        notice: NOTICES[String(query.aviso ?? '')] ?? null,
        children: <ListPage request={request} state={listState(deps, empresaIdOf(request), new URL(request.url))} />,
      }),
    )
    .get('/clientes/nuevo', ({ request }) => {
      requireWrite(request)
      empresaIdOf(request)
      return renderPage(deps, request, { title: 'Nuevo cliente', section: 'clientes', children: <NuevoPage request={request} refusal={null} /> })
    })
    .post('/clientes', ({ request }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const form = formOf(request)
      try {
        const created = createCliente(deps, { empresaId, alta: parseClienteAlta(bodyFrom(form, 'alta')) })
        deps.log.info('console.cliente_created', { empresa_id: empresaId, cliente_id: created.id })
        return redirect(`${BASE}?aviso=creado`)
      } catch (err) {
        const refusal = refusalOf(err, form)
        if (refusal === null) throw err
        return renderPage(deps, request, { title: 'Nuevo cliente', section: 'clientes', status: refusal.status, children: <NuevoPage request={request} refusal={refusal} /> })
      }
    })
    .get('/clientes/:id', ({ request, params, query }) => {
      const cliente = getCliente(deps, { empresaId: empresaIdOf(request), id: idParam(params.id) })
      return renderPage(deps, request, {
        title: cliente.razon_social,
        section: 'clientes',
        notice: NOTICES[String(query.aviso ?? '')] ?? null,
        children: <ClientePage request={request} cliente={cliente} refusal={null} />,
      })
    })
    .post('/clientes/:id', ({ request, params }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const id = idParam(params.id)
      const cliente = getCliente(deps, { empresaId, id })
      const form = formOf(request)
      try {
        updateCliente(deps, { empresaId, id, cambios: parseClienteCambios(bodyFrom(form, 'cambios'), cliente.rut) })
        deps.log.info('console.cliente_updated', { empresa_id: empresaId, cliente_id: id })
        return redirect(`${clientePath(id)}?aviso=guardado`)
      } catch (err) {
        const refusal = refusalOf(err, form)
        if (refusal === null) throw err
        return renderPage(deps, request, {
          title: cliente.razon_social,
          section: 'clientes',
          status: refusal.status,
          children: <ClientePage request={request} cliente={cliente} refusal={refusal} />,
        })
      }
    })
    .get('/clientes/:id/eliminar', ({ request, params }) => {
      requireWrite(request)
      const cliente = getCliente(deps, { empresaId: empresaIdOf(request), id: idParam(params.id) })
      return renderPage(deps, request, {
        title: 'Eliminar cliente',
        section: 'clientes',
        children: (
          <DeleteConfirm
            session={sessionOf(request)}
            action={`${clientePath(cliente.id)}/eliminar`}
            cancel={clientePath(cliente.id)}
            question={`¿Eliminar a ${cliente.razon_social} (RUT ${formatRut(cliente.rut)})?`}
            consequences="Deja de aparecer en la lista, en la búsqueda y en el formulario de emisión, y su RUT queda libre para guardarlo de nuevo. Los documentos ya emitidos a este cliente no cambian."
            button="Sí, eliminar cliente"
          />
        ),
      })
    })
    .post('/clientes/:id/eliminar', ({ request, params }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const id = idParam(params.id)
      deleteCliente(deps, { empresaId, id })
      deps.log.info('console.cliente_deleted', { empresa_id: empresaId, cliente_id: id })
      return redirect(`${BASE}?aviso=eliminado`)
    })
