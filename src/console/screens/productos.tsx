// Productos (spec 4.6, DESIGN §8, §14; issue 27): the list as GET /productos pages and filters it, search as GET
// /productos/search finds, create, edit and delete (soft, as the API deletes), through the same services and
// contracts. Prices are whole pesos typed and read as in Chile: `12.500` is twelve thousand five hundred.
import { Elysia } from 'elysia'
import { SEARCH_LIMIT, UNIDADES, type Unidad } from '../../domain/catalogo'
import { TimbreError, validationError, type FieldError } from '../../errors'
import { STATUS } from '../../contracts/statuses'
import { page } from '../../contracts/pagination'
import { BuscarProductosQuery, ListarProductosQuery, parseProductoAlta, parseProductoCambios } from '../../contracts/productos'
import { createProducto, deleteProducto, getProducto, listProductos, searchProductos, updateProducto, type ProductoRecord } from '../../services/productos'
import type { Deps } from '../../services/deps'
import { empresaIdOf, formOf, requireWrite, sessionOf } from '../context'
import { Field, SelectField, failureOf, fieldErrors, fieldId, NO_ERRORS, type Failure } from '../forms'
import { formatPesos } from '../../domain/numero-cl'
import { parseEnteroCL, pesosForInput } from '../numbers'
import { CsrfInput, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'
import { afterIdOf, CatalogoSummary, DeleteConfirm, idParam, PAGE_SIZE, Pager, queryErrors, SearchForm, TextAreaField, trimmedOf, typed, type FieldLabels } from './catalogo'

const BASE = `${CONSOLE_PREFIX}/productos`
const productoPath = (id: string) => `${BASE}/${id}`

const NOTICES: Readonly<Record<string, string>> = {
  creado: 'Producto guardado: ya aparece en el formulario de emisión para elegirlo en una línea.',
  guardado: 'Cambios guardados. Los documentos ya emitidos conservan las líneas con que se emitieron.',
  eliminado: 'Producto eliminado: ya no aparece en la lista ni en la búsqueda, y su código quedó libre.',
}

const UNIDAD_LABEL: Readonly<Record<Unidad, string>> = {
  UN: 'Unidad',
  HR: 'Hora',
  KG: 'Kilogramo',
  LT: 'Litro',
  MT: 'Metro',
  M2: 'Metro cuadrado',
  M3: 'Metro cúbico',
}

const LABELS: FieldLabels = {
  codigo: 'Código',
  nombre: 'Nombre',
  descripcion: 'Descripción',
  precio_unitario: 'Precio unitario',
  unidad: 'Unidad',
  es_exento: 'Exento de IVA',
  categoria: 'Categoría',
  q: 'Buscar',
}

const OPTIONAL_TEXTS = ['codigo', 'descripcion', 'categoria'] as const

const PRECIO_NO_ENTERO: FieldError = {
  field: 'precio_unitario',
  code: 'INVALID_TYPE',
  message: 'Escriba el precio en pesos, sin decimales: 12.500 o 12500.',
}

/**
 * The form → the JSON body POST /productos (`alta`) or PUT /productos/{id} would receive, and the price's own error
 * when it is not a whole number as Chileans type one: the API would get a number, so the console reads the text first.
 * A blank optional field is left out of a create and cleared (null) on an edit, as an integrator would send it.
 */
function bodyFrom(form: FormData, mode: 'alta' | 'cambios'): { body: Record<string, unknown>; errors: FieldError[] } {
  const body: Record<string, unknown> = { nombre: trimmedOf(form, 'nombre') }
  const errors: FieldError[] = []
  for (const name of OPTIONAL_TEXTS) {
    const value = trimmedOf(form, name)
    if (value !== undefined && value !== '') body[name] = value
    else if (value === '' && mode === 'cambios') body[name] = null
  }
  const precio = trimmedOf(form, 'precio_unitario')
  if (precio !== undefined && precio !== '') {
    const pesos = parseEnteroCL(precio)
    if (pesos === null) errors.push(PRECIO_NO_ENTERO)
    else body.precio_unitario = pesos
  } else if (precio === '' && mode === 'cambios') body.precio_unitario = null
  const unidad = trimmedOf(form, 'unidad')
  if (unidad) body.unidad = unidad
  body.es_exento = form.has('es_exento')
  return { body: Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)), errors }
}

/** The contract's range for a price, told in pesos as the input reads them rather than as a bare 16-digit number. */
function inPesos(details: readonly FieldError[]): FieldError[] {
  return details.map((d) =>
    d.field === 'precio_unitario' && d.code === 'OUT_OF_RANGE' ? { ...d, message: `Debe estar entre ${formatPesos(0)} y ${formatPesos(Number.MAX_SAFE_INTEGER)}.` } : d,
  )
}

/** Parses with the API's contract and adds the price's own error, so one submission names every bad field. */
function parseWith<T>(parse: (body: unknown) => T, form: FormData, mode: 'alta' | 'cambios'): T {
  const { body, errors } = bodyFrom(form, mode)
  try {
    const parsed = parse(body)
    if (errors.length > 0) throw validationError(errors)
    return parsed
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR' || err.extra.details === undefined) throw err
    throw validationError(inPesos([...err.extra.details.filter((d) => !errors.some((e) => e.field === d.field)), ...errors]))
  }
}

interface Refusal {
  readonly form: FormData
  readonly failure: Failure
  readonly existing: string | null
  readonly status: number
}

/** A código already taken, told beside its field in words, with the way to the producto that has it. */
function refusalOf(err: unknown, form: FormData): Refusal | null {
  if (!(err instanceof TimbreError)) return null
  // The catalogue's «La solicitud contiene campos inválidos» speaks of a request; a person saved a form.
  if (err.code === 'VALIDATION_ERROR') return { form, failure: { ...failureOf(err), message: 'El producto no se guardó: hay campos por corregir.' }, existing: null, status: STATUS[err.code] }
  if (err.code !== 'PRODUCTO_CODIGO_EXISTS') return null
  const codigo = String(err.extra.context?.codigo ?? '')
  const existing = err.extra.context?.producto_id
  return {
    form,
    failure: {
      message: `Ya existe un producto con el código ${codigo}.`,
      action: 'Un código se usa una sola vez: elija otro, o deje el campo vacío.',
      errors: fieldErrors([{ field: 'codigo', code: 'INVALID_VALUE', message: `Ya existe un producto con el código ${codigo}.` }]),
    },
    existing: typeof existing === 'string' ? existing : null,
    status: STATUS[err.code],
  }
}

// ------------------------------------------------------------------------------------------------------ list

interface ListState {
  readonly q: string | null
  readonly categoria: string | null
  readonly cursor: string | null
  readonly rows: readonly ProductoRecord[]
  readonly next: string | null
  readonly failure: Failure | null
}

function listState(deps: Deps, empresaId: string, url: URL): ListState {
  const q = url.searchParams.get('q')?.trim() || null
  const categoria = url.searchParams.get('categoria')?.trim() || null
  const cursor = url.searchParams.get('cursor')?.trim() || null
  try {
    if (q !== null) {
      const errors = queryErrors(BuscarProductosQuery, { q })
      if (errors.length > 0) throw validationError(errors)
      return { q, categoria: null, cursor: null, rows: searchProductos(deps, { empresaId, q, limit: SEARCH_LIMIT.max }), next: null, failure: null }
    }
    const errors = queryErrors(ListarProductosQuery, categoria === null ? {} : { categoria })
    if (errors.length > 0) throw validationError(errors)
    const rows = listProductos(deps, { empresaId, categoria: categoria ?? undefined, afterId: afterIdOf(cursor), limit: PAGE_SIZE + 1 })
    const { data, next_cursor } = page(rows, PAGE_SIZE)
    return { q, categoria, cursor, rows: data, next: next_cursor, failure: null }
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
    return { q, categoria, cursor, rows: [], next: null, failure: failureOf(err) }
  }
}

const categoriaHref = (categoria: string) => `${BASE}?${new URLSearchParams({ categoria })}`

function ProductoTable(props: { rows: readonly ProductoRecord[]; canWrite: boolean }) {
  return (
    <div class="table-wrap">
      <table class="catalogo">
        <thead>
          <tr>
            <th scope="col">Nombre</th>
            <th scope="col">Código</th>
            <th scope="col" class="num">
              Precio unitario
            </th>
            <th scope="col" class="col-opcional">
              Unidad
            </th>
            <th scope="col" class="col-opcional">
              IVA
            </th>
            <th scope="col" class="col-opcional">
              Categoría
            </th>
            {props.canWrite && (
              <th scope="col">
                <span class="muted">Acciones</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((p) => (
            <tr>
              <td>
                <a href={productoPath(p.id)}>{p.nombre}</a>
              </td>
              <td>{p.codigo ?? '—'}</td>
              <td class="num">{p.precio_unitario === null ? '—' : formatPesos(p.precio_unitario)}</td>
              <td class="col-opcional">{UNIDAD_LABEL[p.unidad]}</td>
              <td class="col-opcional">{p.es_exento ? 'Exento' : 'Afecto'}</td>
              <td class="col-opcional">{p.categoria === null ? '—' : <a href={categoriaHref(p.categoria)}>{p.categoria}</a>}</td>
              {props.canWrite && (
                <td class="acciones">
                  <a href={productoPath(p.id)} aria-label={`Editar ${p.nombre}`}>
                    Editar
                  </a>{' '}
                  <a href={`${productoPath(p.id)}/eliminar`} aria-label={`Eliminar ${p.nombre}`}>
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
  const heading = searching ? `Resultados para «${state.q}»` : state.categoria !== null ? `Categoría «${state.categoria}»` : 'Productos guardados'
  return (
    <>
      {canWrite && (
        <p class="actions">
          <a class="button primary" href={`${BASE}/nuevo`}>
            Nuevo producto
          </a>
        </p>
      )}
      <CatalogoSummary failure={state.failure} labels={LABELS} />
      <SearchForm action={BASE} label="Buscar por nombre o código" hint="Sin importar mayúsculas ni tildes." q={state.q} failure={state.failure} />
      {state.failure === null && (
        <section aria-labelledby="resultados">
          <h2 id="resultados">{heading}</h2>
          {state.categoria !== null && (
            <p>
              <a href={BASE}>Quitar el filtro de categoría</a>
            </p>
          )}
          {state.rows.length === 0 ? (
            <p class="card">
              {searching || state.categoria !== null ? 'Ningún producto coincide.' : state.cursor ? 'No hay más productos.' : 'Aún no hay productos guardados.'}{' '}
              {!searching && state.categoria === null && !state.cursor && canWrite && <a href={`${BASE}/nuevo`}>Guardar el primero</a>}
            </p>
          ) : (
            <>
              <ProductoTable rows={state.rows} canWrite={canWrite} />
              {searching && state.rows.length >= SEARCH_LIMIT.max && (
                <p class="muted">Se muestran los primeros {SEARCH_LIMIT.max}: escriba más para acotar la búsqueda.</p>
              )}
            </>
          )}
          {!searching && <Pager base={BASE} cursor={state.cursor} next={state.next} params={state.categoria === null ? {} : { categoria: state.categoria }} />}
        </section>
      )}
    </>
  )
}

// ------------------------------------------------------------------------------------------------------ form

function ExentoField(props: { checked: boolean }) {
  const id = fieldId('es_exento')
  return (
    <div class="field field-check">
      <span>
        <input type="checkbox" id={id} name="es_exento" value="1" checked={props.checked} aria-describedby={`${id}-ayuda`} /> <label for={id}>Exento de IVA</label>
      </span>
      <small id={`${id}-ayuda`} class="hint">
        En una factura, la línea va como exenta (no suma IVA).
      </small>
    </div>
  )
}

/** The producto's fields, from what was typed (after a refusal) or from the stored producto (editing). */
function ProductoFields(props: { value: (name: string) => string | null; exento: boolean; failure: Failure | null }) {
  const { value: v } = props
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <>
      <div class="grid">
        <Field name="nombre" label="Nombre" value={v('nombre')} errors={errors} required hint="Como aparece en la línea del documento." />
        <Field name="codigo" label="Código" value={v('codigo')} errors={errors} autocomplete="off" hint="Opcional; si lo usa, no se repite entre productos." />
        <Field name="precio_unitario" label="Precio unitario" value={v('precio_unitario')} errors={errors} inputmode="numeric" autocomplete="off" hint="En pesos, sin decimales: 12.500. Opcional." />
        <SelectField
          name="unidad"
          label="Unidad"
          value={v('unidad') ?? 'UN'}
          errors={errors}
          options={UNIDADES.map((u) => ({ value: u, label: `${UNIDAD_LABEL[u]} (${u})` }))}
        />
        <Field name="categoria" label="Categoría" value={v('categoria')} errors={errors} autocomplete="off" hint="Opcional; agrupa la lista." />
      </div>
      <ExentoField checked={props.exento} />
      <TextAreaField name="descripcion" label="Descripción" value={v('descripcion')} errors={errors} hint="Opcional; va bajo el nombre en la línea del documento." />
    </>
  )
}

function NuevoPage(props: { request: Request; refusal: Refusal | null }) {
  const session = sessionOf(props.request)
  const r = props.refusal
  return (
    <>
      <p>
        <a href={BASE}>← Todos los productos</a>
      </p>
      <form method="post" action={BASE} class="stack card" novalidate>
        <CsrfInput session={session} />
        <CatalogoSummary failure={r?.failure ?? null} labels={LABELS} extra={r?.existing ? { href: productoPath(r.existing), text: 'Ver el producto que ya tiene este código' } : null} />
        <ProductoFields value={(name) => typed(r?.form ?? null, name)} exento={r ? r.form.has('es_exento') : false} failure={r?.failure ?? null} />
        <div class="actions">
          <button type="submit" class="primary">
            Guardar producto
          </button>
          <a href={BASE}>Cancelar</a>
        </div>
      </form>
    </>
  )
}

/** A stored producto as its inputs show it: the price grouped as it is typed (`12.500`). */
function storedValue(p: ProductoRecord, name: string): string | null {
  if (name === 'precio_unitario') return p.precio_unitario === null ? null : pesosForInput(p.precio_unitario)
  const value = (p as unknown as Record<string, unknown>)[name]
  return typeof value === 'string' ? value : null
}

function ProductoFacts(props: { producto: ProductoRecord }) {
  const p = props.producto
  const rows: Array<[string, string | null]> = [
    ['Nombre', p.nombre],
    ['Código', p.codigo],
    ['Precio unitario', p.precio_unitario === null ? null : formatPesos(p.precio_unitario)],
    ['Unidad', UNIDAD_LABEL[p.unidad]],
    ['IVA', p.es_exento ? 'Exento' : 'Afecto'],
    ['Categoría', p.categoria],
    ['Descripción', p.descripcion],
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

function ProductoPage(props: { request: Request; producto: ProductoRecord; refusal: Refusal | null }) {
  const session = sessionOf(props.request)
  const { producto, refusal: r } = props
  if (!session.canWrite)
    return (
      <>
        <p>
          <a href={BASE}>← Todos los productos</a>
        </p>
        <ProductoFacts producto={producto} />
      </>
    )
  return (
    <>
      <p>
        <a href={BASE}>← Todos los productos</a>
      </p>
      <form method="post" action={productoPath(producto.id)} class="stack card" novalidate>
        <CsrfInput session={session} />
        <CatalogoSummary failure={r?.failure ?? null} labels={LABELS} extra={r?.existing ? { href: productoPath(r.existing), text: 'Ver el producto que ya tiene este código' } : null} />
        <ProductoFields value={(name) => (r ? typed(r.form, name) : storedValue(producto, name))} exento={r ? r.form.has('es_exento') : producto.es_exento} failure={r?.failure ?? null} />
        <div class="actions">
          <button type="submit" class="primary">
            Guardar cambios
          </button>
          <a href={BASE}>Cancelar</a>
        </div>
      </form>
      <p>
        <a class="button danger" href={`${productoPath(producto.id)}/eliminar`}>
          Eliminar este producto
        </a>
      </p>
    </>
  )
}

// ------------------------------------------------------------------------------------------------------ routes

export const productoScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/productos', ({ request, query }) =>
      renderPage(deps, request, {
        title: 'Productos',
        section: 'productos',
        notice: NOTICES[String(query.aviso ?? '')] ?? null,
        children: <ListPage request={request} state={listState(deps, empresaIdOf(request), new URL(request.url))} />,
      }),
    )
    .get('/productos/nuevo', ({ request }) => {
      requireWrite(request)
      empresaIdOf(request)
      return renderPage(deps, request, { title: 'Nuevo producto', section: 'productos', children: <NuevoPage request={request} refusal={null} /> })
    })
    .post('/productos', ({ request }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const form = formOf(request)
      try {
        const created = createProducto(deps, { empresaId, alta: parseWith(parseProductoAlta, form, 'alta') })
        deps.log.info('console.producto_created', { empresa_id: empresaId, producto_id: created.id })
        return redirect(`${BASE}?aviso=creado`)
      } catch (err) {
        const refusal = refusalOf(err, form)
        if (refusal === null) throw err
        return renderPage(deps, request, { title: 'Nuevo producto', section: 'productos', status: refusal.status, children: <NuevoPage request={request} refusal={refusal} /> })
      }
    })
    .get('/productos/:id', ({ request, params, query }) => {
      const producto = getProducto(deps, { empresaId: empresaIdOf(request), id: idParam(params.id) })
      return renderPage(deps, request, {
        title: producto.nombre,
        section: 'productos',
        notice: NOTICES[String(query.aviso ?? '')] ?? null,
        children: <ProductoPage request={request} producto={producto} refusal={null} />,
      })
    })
    .post('/productos/:id', ({ request, params }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const id = idParam(params.id)
      const producto = getProducto(deps, { empresaId, id })
      const form = formOf(request)
      try {
        updateProducto(deps, { empresaId, id, cambios: parseWith(parseProductoCambios, form, 'cambios') })
        deps.log.info('console.producto_updated', { empresa_id: empresaId, producto_id: id })
        return redirect(`${productoPath(id)}?aviso=guardado`)
      } catch (err) {
        const refusal = refusalOf(err, form)
        if (refusal === null) throw err
        return renderPage(deps, request, {
          title: producto.nombre,
          section: 'productos',
          status: refusal.status,
          children: <ProductoPage request={request} producto={producto} refusal={refusal} />,
        })
      }
    })
    .get('/productos/:id/eliminar', ({ request, params }) => {
      requireWrite(request)
      const producto = getProducto(deps, { empresaId: empresaIdOf(request), id: idParam(params.id) })
      return renderPage(deps, request, {
        title: 'Eliminar producto',
        section: 'productos',
        children: (
          <DeleteConfirm
            session={sessionOf(request)}
            action={`${productoPath(producto.id)}/eliminar`}
            cancel={productoPath(producto.id)}
            question={`¿Eliminar ${producto.nombre}${producto.codigo ? ` (código ${producto.codigo})` : ''}?`}
            consequences="Deja de aparecer en la lista, en la búsqueda y en el formulario de emisión, y su código queda libre. Los documentos ya emitidos guardan su propia copia de cada línea y no cambian."
            button="Sí, eliminar producto"
          />
        ),
      })
    })
    .post('/productos/:id/eliminar', ({ request, params }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const id = idParam(params.id)
      deleteProducto(deps, { empresaId, id })
      deps.log.info('console.producto_deleted', { empresa_id: empresaId, producto_id: id })
      return redirect(`${BASE}?aviso=eliminado`)
    })
