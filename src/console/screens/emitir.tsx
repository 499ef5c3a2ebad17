// The issuance form (DESIGN §14): the form's fields are named with the API's dot paths, the POST builds the very JSON
// body an integrator would send to POST /dte and hands it to the same `emitDte` with the same `validateEmision`, so the
// form validates exactly as the API does and each error of the envelope lands beside the input its path names. The
// hidden idempotency key makes a reload or a double submit replay the first answer instead of issuing twice.
import { Elysia } from 'elysia'
import { santiagoDate } from '../../clock'
import { UNIDADES } from '../../domain/catalogo'
import { TIPOS_DTE, type TipoDte } from '../../domain/emision'
import { TIPOS, type ReceptorRequerido } from '../../domain/tipos'
import { computeTotals, TASA_IVA, type Totales } from '../../domain/totals'
import { TimbreError, type ErrorCode } from '../../errors'
import { STATUS } from '../../contracts/statuses'
import { isUuid } from '../../contracts/common'
import { validateEmision } from '../../contracts/dte'
import { listClientes, type ClienteRecord } from '../../services/clientes'
import type { Deps } from '../../services/deps'
import { emitDte } from '../../services/issue-dte'
import { listProductos, type ProductoRecord } from '../../services/productos'
import { empresaIdOf, formOf, requireWrite, sessionOf, textField } from '../context'
import { ErrorSummary, Field, failureOf, fieldId, formatClp, NO_ERRORS, SelectField, type Failure, type FieldErrors } from '../forms'
import { CONSOLE_PREFIX, CsrfInput, fragmentResponse, redirect, renderPage } from '../page'

const PATH = `${CONSOLE_PREFIX}/documentos/nuevo`

/** The schema's bounds (contracts/dte.ts): `detalle` 1–60 items, `referencias` at most 40. */
const MAX_LINEAS = 60
const MAX_REFERENCIAS = 40
const LINEAS_INICIALES = 3
/** The pickers list the first page the services give (newest first), sorted by name for reading. */
const PICKER_LIMIT = 200

// The types this form can express in full. The others need parts it has no inputs for (43: comisiones; 46: retention
// codes; 110–112: export_data) and are issued through the API.
const TIPOS_FORMULARIO: readonly TipoDte[] = [33, 34, 39, 41, 52, 56, 61]

const LINE_FIELDS = ['nombre', 'dsc_item', 'cantidad', 'unidad', 'precio', 'descuento_pct', 'ind_exe'] as const
const LINE_NUMBERS: ReadonlySet<string> = new Set(['cantidad', 'precio', 'descuento_pct', 'ind_exe'])
const REF_FIELDS = ['tipo_doc_ref', 'folio_ref', 'fecha_ref', 'codigo_ref', 'razon_ref'] as const
const REF_NUMBERS: ReadonlySet<string> = new Set(['folio_ref', 'codigo_ref'])
const RECEPTOR_FIELDS = ['rut', 'razon_social', 'giro', 'direccion', 'comuna', 'ciudad', 'email'] as const

/** Codes besides TipoDTE a small firm references on an invoice (SII table of reference types). */
const OTROS_TIPOS_REF: ReadonlyArray<{ value: string; label: string }> = [
  { value: '801', label: 'Orden de compra' },
  { value: '802', label: 'Nota de pedido' },
  { value: '803', label: 'Contrato' },
]

const IND_TRASLADO: ReadonlyArray<{ value: string; label: string }> = [
  { value: '', label: '— (solo en guía de despacho)' },
  { value: '1', label: '1 · Operación constituye venta' },
  { value: '2', label: '2 · Ventas por efectuar' },
  { value: '3', label: '3 · Consignaciones' },
  { value: '4', label: '4 · Entrega gratuita' },
  { value: '5', label: '5 · Traslado interno' },
  { value: '6', label: '6 · Otros traslados no venta' },
  { value: '7', label: '7 · Guía de devolución' },
  { value: '8', label: '8 · Traslado para exportación (no venta)' },
  { value: '9', label: '9 · Venta para exportación' },
]

const CODIGO_REF: ReadonlyArray<{ value: string; label: string }> = [
  { value: '', label: '—' },
  { value: '1', label: '1 · Anula el documento' },
  { value: '2', label: '2 · Corrige texto' },
  { value: '3', label: '3 · Corrige montos' },
]

const RECEPTOR_LABELS: Readonly<Record<(typeof RECEPTOR_FIELDS)[number], string>> = {
  rut: 'RUT',
  razon_social: 'Razón social',
  giro: 'Giro',
  direccion: 'Dirección',
  comuna: 'Comuna',
  ciudad: 'Ciudad',
  email: 'Correo de intercambio',
}

/** "FACTURA ELECTRÓNICA" → "Factura electrónica": the SII's printed name, as a sentence. */
function nombreTipo(tipo: TipoDte): string {
  const lower = TIPOS[tipo].nombre.toLocaleLowerCase('es-CL')
  return lower.charAt(0).toLocaleUpperCase('es-CL') + lower.slice(1)
}

const tipoLabel = (tipo: TipoDte) => `${tipo} · ${nombreTipo(tipo)}`

/** The types whose rules require a receptor field, read from the per-type table so the hint cannot drift from the rule. */
function requiredIn(field: ReceptorRequerido): string | undefined {
  const tipos = TIPOS_FORMULARIO.filter((t) => TIPOS[t].requiredReceptor.includes(field))
  return tipos.length === 0 ? undefined : `Obligatorio en los tipos ${tipos.join(', ')}.`
}

// ------------------------------------------------------------------------------------------------ form → API body

/**
 * A number when the text reads as one (a comma is taken as the decimal mark, as people in Chile write it), else the
 * text itself: the schema then answers INVALID_TYPE at that field, exactly as it would to an integrator.
 */
function numberOr(raw: string): number | string {
  const normalized = /^-?\d+,\d+$/.test(raw) ? raw.replace(',', '.') : raw
  return /^-?\d+(\.\d+)?$/.test(normalized) ? Number(normalized) : raw
}

/** `tipo_doc_ref` is a TipoDTE (a number) or a free code (a string, such as "801"): only a TipoDTE becomes a number. */
function tipoDocRef(raw: string): number | string {
  const n = numberOr(raw)
  return typeof n === 'number' && (TIPOS_DTE as readonly number[]).includes(n) ? n : raw
}

/** How many rows of `prefix` the form carried (its highest index + 1), empty ones included, within `max`. */
function rowsSent(form: FormData, prefix: string, max: number): number {
  const pattern = new RegExp(`^${prefix}\\.(\\d+)\\.`)
  let count = 0
  for (const key of form.keys()) {
    const m = pattern.exec(key)
    const index = m ? Number(m[1]) : -1
    if (index >= 0 && index < max) count = Math.max(count, index + 1)
  }
  return count
}

/**
 * The rows of `prefix` as the API's objects. Only trailing empty rows are dropped: one in the middle stays (and is
 * reported), so every row keeps its index and each error of `detalle.N.*` lands on the input the person typed in.
 */
function rowsOf(form: FormData, prefix: string, fields: readonly string[], parse: (field: string, raw: string) => unknown, max: number) {
  const rows: Array<Record<string, unknown>> = []
  for (let i = 0; i < rowsSent(form, prefix, max); i++) {
    const row: Record<string, unknown> = {}
    for (const field of fields) {
      const raw = textField(form, `${prefix}.${i}.${field}`)
      if (raw !== null) row[field] = parse(field, raw)
    }
    rows.push(row)
  }
  while (rows.length > 0 && Object.keys(rows[rows.length - 1]!).length === 0) rows.pop()
  return rows
}

/** The JSON body POST /dte would receive for this form: empty inputs omitted, numbers sent as numbers. */
function bodyFrom(form: FormData): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  const tipo = textField(form, 'tipo_dte')
  if (tipo !== null) body.tipo_dte = numberOr(tipo)
  const fecha = textField(form, 'fecha_emision')
  if (fecha !== null) body.fecha_emision = fecha
  // Always an object, so a missing RUT or razón social is reported at receptor.rut, beside its input.
  const receptor: Record<string, string> = {}
  for (const field of RECEPTOR_FIELDS) {
    const value = textField(form, `receptor.${field}`)
    if (value !== null) receptor[field] = value
  }
  body.receptor = receptor
  const detalle = rowsOf(form, 'detalle', LINE_FIELDS, (field, raw) => (LINE_NUMBERS.has(field) ? numberOr(raw) : raw), MAX_LINEAS)
  // An empty form still sends its first line, so its errors point at detalle.0.nombre rather than at the list.
  body.detalle = detalle.length > 0 ? detalle : [{}]
  const referencias = rowsOf(
    form,
    'referencias',
    REF_FIELDS,
    (field, raw) => (field === 'tipo_doc_ref' ? tipoDocRef(raw) : REF_NUMBERS.has(field) ? numberOr(raw) : raw),
    MAX_REFERENCIAS,
  )
  if (referencias.length > 0) body.referencias = referencias
  const traslado = textField(form, 'ind_traslado')
  if (traslado !== null) body.ind_traslado = numberOr(traslado)
  return body
}

// ------------------------------------------------------------------------------------------------ totals

/** A receptor that passes every type's rules: the receptor never changes an amount (domain/totals.ts). */
const RECEPTOR_PROVISIONAL = { rut: '66666666-6', razon_social: 'Receptor', giro: 'Giro', direccion: 'Dirección', comuna: 'Comuna', ciudad: 'Ciudad' }

/**
 * The totals issuance would store, by the same validation and the same `computeTotals`; null while the lines are not
 * valid yet. What cannot change an amount is set aside first, so the totals show while the receptor is still being
 * typed: the issue date (it only moves an export's exchange rate, and exports are not on this form) and, when only
 * the receptor fails, the receptor itself.
 */
function totalsOf(deps: Pick<Deps, 'clock'>, body: Record<string, unknown>): Totales | null {
  const today = santiagoDate(deps.clock.now())
  const { fecha_emision: _date, ...rest } = body
  const first = validateEmision(rest, today)
  if (first.ok) return computeTotals(first.value)
  if (!first.errors.every((e) => e.field === 'receptor' || e.field.startsWith('receptor.'))) return null
  const second = validateEmision({ ...rest, receptor: RECEPTOR_PROVISIONAL }, today)
  return second.ok ? computeTotals(second.value) : null
}

function TotalesView(props: { totales: Totales | null }) {
  const t = props.totales
  const amount = (n: number | null | undefined) => (n === null || n === undefined ? '—' : formatClp(n))
  return (
    <>
      <dl class="totals">
        <dt>Neto</dt>
        <dd>{amount(t?.monto_neto)}</dd>
        <dt>Exento</dt>
        <dd>{amount(t?.monto_exento)}</dd>
        <dt>IVA ({TASA_IVA} %)</dt>
        <dd>{amount(t?.iva)}</dd>
        <dt class="total">Total</dt>
        <dd class="total">{amount(t?.monto_total)}</dd>
      </dl>
      {t === null && <p class="muted">Los totales aparecen cuando las líneas (y, en las notas, sus referencias) están completas y son válidas.</p>}
    </>
  )
}

// ------------------------------------------------------------------------------------------------ the form

interface FormState {
  /** What was posted, to show it again; null on a fresh form. */
  readonly form: FormData | null
  readonly failure: Failure | null
  /** The refusal's code, for the links to the screen that fixes it. */
  readonly refused: ErrorCode | null
  readonly idempotencyKey: string
  readonly lineas: number
  readonly referencias: number
  /** After "Agregar línea" or "Agregar referencia", the new row takes the focus. */
  readonly focus: 'linea' | 'referencia' | null
}

interface Catalogo {
  readonly clientes: readonly ClienteRecord[]
  readonly productos: readonly ProductoRecord[]
}

function catalogoOf(deps: Deps, empresaId: string): Catalogo {
  const byName = <T,>(items: T[], name: (t: T) => string) => items.sort((a, b) => name(a).localeCompare(name(b), 'es-CL'))
  return {
    clientes: byName(listClientes(deps, { empresaId, afterId: null, limit: PICKER_LIMIT }), (c) => c.razon_social),
    productos: byName(listProductos(deps, { empresaId, afterId: null, limit: PICKER_LIMIT }), (p) => p.nombre),
  }
}

/** Every input's path, so the summary links each error to its input and lists the others as text. */
function inputPaths(lineas: number, referencias: number): string[] {
  const paths = ['tipo_dte', 'fecha_emision', 'ind_traslado', 'detalle', 'referencias', ...RECEPTOR_FIELDS.map((f) => `receptor.${f}`)]
  for (let i = 0; i < lineas; i++) paths.push(`detalle.${i}`, ...LINE_FIELDS.map((f) => `detalle.${i}.${f}`))
  for (let i = 0; i < referencias; i++) paths.push(...REF_FIELDS.map((f) => `referencias.${i}.${f}`))
  return paths
}

/** An error about a whole list or row (`detalle`, `detalle.2`), shown under its fieldset. */
function GroupError(props: { path: string; errors: FieldErrors }) {
  const messages = props.errors.get(props.path) ?? []
  if (messages.length === 0) return null
  return (
    <p id={`${fieldId(props.path)}-error`} class="field-error">
      {messages.join(' ')}
    </p>
  )
}

function ClientePicker(props: { clientes: readonly ClienteRecord[] }) {
  if (props.clientes.length === 0)
    return <p class="hint">Aún no hay clientes guardados: los que cree por la API (POST /clientes) aparecerán aquí para elegirlos.</p>
  return (
    <div class="field">
      <label for="cliente-guardado">Cliente guardado</label>
      <select id="cliente-guardado" data-fill="" aria-describedby="cliente-guardado-ayuda">
        <option value="">Elegir un cliente…</option>
        {props.clientes.map((c) => (
          <option
            value={c.id}
            data-values={JSON.stringify({
              'receptor.rut': c.rut,
              'receptor.razon_social': c.razon_social,
              'receptor.giro': c.giro,
              'receptor.direccion': c.direccion,
              'receptor.comuna': c.comuna,
              'receptor.ciudad': c.ciudad,
              'receptor.email': c.email,
            })}
          >
            {c.razon_social} ({c.rut})
          </option>
        ))}
      </select>
      <small id="cliente-guardado-ayuda" class="hint">
        Completa los datos del receptor, que puede cambiar antes de emitir.
      </small>
    </div>
  )
}

function ProductoPicker(props: { index: number; productos: readonly ProductoRecord[]; autofocus: boolean }) {
  if (props.productos.length === 0) return null
  const id = `producto-guardado-${props.index}`
  return (
    <div class="field">
      <label for={id}>Producto guardado</label>
      <select id={id} data-fill="" data-fill-prefix={`detalle.${props.index}.`} autofocus={props.autofocus}>
        <option value="">Elegir un producto…</option>
        {props.productos.map((p) => (
          <option
            value={p.id}
            data-values={JSON.stringify({
              nombre: p.nombre,
              dsc_item: p.descripcion,
              precio: p.precio_unitario,
              unidad: p.unidad,
              ind_exe: p.es_exento ? '1' : '',
            })}
          >
            {p.codigo ? `${p.codigo} · ` : ''}
            {p.nombre}
            {p.precio_unitario === null ? '' : ` (${formatClp(p.precio_unitario)})`}
          </option>
        ))}
      </select>
    </div>
  )
}

function Linea(props: { index: number; value: (name: string) => string | null; errors: FieldErrors; productos: readonly ProductoRecord[]; autofocus: boolean }) {
  const { index: i, value: v, errors } = props
  const name = (f: string) => `detalle.${i}.${f}`
  return (
    <fieldset id={fieldId(`detalle.${i}`)}>
      <legend>Línea {i + 1}</legend>
      <GroupError path={`detalle.${i}`} errors={errors} />
      <div class="grid">
        <ProductoPicker index={i} productos={props.productos} autofocus={props.autofocus} />
        <Field name={name('nombre')} label="Nombre" value={v(name('nombre'))} errors={errors} />
        <Field name={name('dsc_item')} label="Descripción" value={v(name('dsc_item'))} errors={errors} />
        <Field name={name('cantidad')} label="Cantidad" value={v(name('cantidad'))} errors={errors} inputmode="decimal" />
        <Field name={name('unidad')} label="Unidad" value={v(name('unidad'))} errors={errors} list="unidades" />
        <Field name={name('precio')} label="Precio unitario" value={v(name('precio'))} errors={errors} inputmode="numeric" />
        <Field name={name('descuento_pct')} label="Descuento %" value={v(name('descuento_pct'))} errors={errors} inputmode="decimal" />
        <SelectField
          name={name('ind_exe')}
          label="Exenta"
          value={v(name('ind_exe')) ?? ''}
          errors={errors}
          options={[
            { value: '', label: 'No' },
            { value: '1', label: 'Sí, exenta de IVA' },
          ]}
        />
      </div>
    </fieldset>
  )
}

function Referencia(props: { index: number; value: (name: string) => string | null; errors: FieldErrors }) {
  const { index: i, value: v, errors } = props
  const name = (f: string) => `referencias.${i}.${f}`
  return (
    <fieldset>
      <legend>Referencia {i + 1}</legend>
      <div class="grid">
        <Field name={name('tipo_doc_ref')} label="Tipo del documento referenciado" value={v(name('tipo_doc_ref'))} errors={errors} list="tipos-doc-ref" />
        <Field name={name('folio_ref')} label="Folio referenciado" value={v(name('folio_ref'))} errors={errors} inputmode="numeric" />
        <Field name={name('fecha_ref')} label="Fecha del documento referenciado" type="date" value={v(name('fecha_ref'))} errors={errors} />
        <SelectField name={name('codigo_ref')} label="Código de referencia" value={v(name('codigo_ref')) ?? ''} errors={errors} options={CODIGO_REF} />
        <Field name={name('razon_ref')} label="Razón de la referencia" value={v(name('razon_ref'))} errors={errors} />
      </div>
    </fieldset>
  )
}

/** Where a refusal for lack of folios or of a certificate is fixed, one click away. */
function RefusalLinks(props: { code: ErrorCode | null }) {
  if (props.code === 'NO_FOLIOS_AVAILABLE')
    return (
      <p class="actions">
        <a href={`${CONSOLE_PREFIX}/folios`}>Cargar un CAF en Folios</a>
      </p>
    )
  if (props.code === 'CERTIFICATE_REQUIRED')
    return (
      <p class="actions">
        <a href={`${CONSOLE_PREFIX}/certificado`}>Subir el certificado digital</a>
      </p>
    )
  if (props.code === 'IDEMPOTENCY_BODY_MISMATCH')
    return (
      <p>
        Este formulario ya emitió un documento con otros datos (véalo en <a href={`${CONSOLE_PREFIX}/documentos`}>Documentos</a>). Si lo envía de
        nuevo tal como está, se emitirá un documento nuevo.
      </p>
    )
  return null
}

function EmitirForm(props: { request: Request; state: FormState; catalogo: Catalogo; totales: Totales | null }) {
  const { state, catalogo, totales } = props
  const session = sessionOf(props.request)
  const errors = state.failure?.errors ?? NO_ERRORS
  const form = state.form
  // What the person typed, untrimmed, exactly as it came.
  const v = (name: string): string | null => {
    const value = form?.get(name)
    return typeof value === 'string' ? value : null
  }
  const tipo = Number(v('tipo_dte') ?? 33)
  const hasReferencias =
    (form !== null && rowsOf(form, 'referencias', REF_FIELDS, (_f, raw) => raw, MAX_REFERENCIAS).length > 0) ||
    [...errors.keys()].some((k) => k === 'referencias' || k.startsWith('referencias.')) ||
    state.focus === 'referencia' ||
    ((TIPOS_DTE as readonly number[]).includes(tipo) && TIPOS[tipo as TipoDte].requiresReferencias)
  return (
    <form method="post" action={PATH} class="stack" id="emitir">
      <CsrfInput session={session} />
      <input type="hidden" name="idempotency_key" value={state.idempotencyKey} />
      <ErrorSummary failure={state.failure} fields={inputPaths(state.lineas, state.referencias)} />
      <RefusalLinks code={state.refused} />

      <section class="card stack" aria-labelledby="emitir-documento">
        <h2 id="emitir-documento">Documento</h2>
        <div class="grid">
          <SelectField
            name="tipo_dte"
            label="Tipo de documento"
            value={v('tipo_dte') ?? '33'}
            errors={errors}
            required
            options={TIPOS_FORMULARIO.map((t) => ({ value: String(t), label: tipoLabel(t) }))}
          />
          <Field name="fecha_emision" label="Fecha de emisión" type="date" value={v('fecha_emision')} errors={errors} hint="Si la deja vacía, se usa la de hoy." />
          <SelectField name="ind_traslado" label="Tipo de traslado" value={v('ind_traslado') ?? ''} errors={errors} options={IND_TRASLADO} />
        </div>
        <p class="hint">Liquidaciones-factura (43), facturas de compra (46) y documentos de exportación (110–112) se emiten por la API.</p>
      </section>

      <fieldset id={fieldId('receptor')} class="stack">
        <legend>Receptor</legend>
        <ClientePicker clientes={catalogo.clientes} />
        <div class="grid">
          {RECEPTOR_FIELDS.map((f) => (
            <Field
              name={`receptor.${f}`}
              label={RECEPTOR_LABELS[f]}
              value={v(`receptor.${f}`)}
              errors={errors}
              required={f === 'rut' || f === 'razon_social'}
              type={f === 'email' ? 'email' : 'text'}
              hint={
                f === 'rut'
                  ? 'Con dígito verificador. En una boleta sin datos del comprador: 66666666-6.'
                  : f === 'email'
                    ? 'Opcional: la casilla a la que se envía el DTE cuando el SII lo acepta.'
                    : f === 'giro' || f === 'direccion' || f === 'comuna' || f === 'ciudad'
                      ? requiredIn(f)
                      : undefined
              }
            />
          ))}
        </div>
      </fieldset>

      <section id="lineas" class="stack" aria-labelledby="lineas-titulo">
        <h2 id="lineas-titulo">Detalle</h2>
        <p class="hint" id={fieldId('detalle')} tabindex={-1}>
          Precio unitario neto en pesos, sin separador de miles (en boletas 39, con IVA incluido). Las líneas vacías al final no se envían.
        </p>
        <GroupError path="detalle" errors={errors} />
        {Array.from({ length: state.lineas }, (_, i) => (
          <Linea index={i} value={v} errors={errors} productos={catalogo.productos} autofocus={state.focus === 'linea' && i === state.lineas - 1} />
        ))}
        {state.lineas < MAX_LINEAS && (
          <div class="actions">
            {/* A submit button, so it works without script; htmx swaps in just this section when it runs. */}
            <button type="submit" name="accion" value="agregar-linea" formnovalidate hx-post={PATH} hx-select="#lineas" hx-target="#lineas" hx-swap="outerHTML">
              Agregar línea
            </button>
          </div>
        )}
      </section>

      <section class="card" aria-labelledby="totales-titulo">
        <h2 id="totales-titulo">Totales</h2>
        <div
          id="totales"
          aria-live="polite"
          hx-post={`${PATH}/totales`}
          hx-trigger="input changed delay:400ms from:closest form"
          hx-include="closest form"
          hx-swap="innerHTML"
        >
          <TotalesView totales={totales} />
        </div>
      </section>

      <details id={fieldId('referencias')} open={hasReferencias}>
        <summary>Referencias (obligatorias en notas de crédito y débito; también orden de compra)</summary>
        <div id="referencias-lista" class="stack">
          <GroupError path="referencias" errors={errors} />
          {Array.from({ length: state.referencias }, (_, i) => (
            <Referencia index={i} value={v} errors={errors} />
          ))}
          {state.referencias < MAX_REFERENCIAS && (
            <div class="actions">
              <button
                type="submit"
                name="accion"
                value="agregar-referencia"
                formnovalidate
                hx-post={PATH}
                hx-select="#referencias-lista"
                hx-target="#referencias-lista"
                hx-swap="outerHTML"
              >
                Agregar referencia
              </button>
            </div>
          )}
        </div>
      </details>

      <datalist id="unidades">
        {UNIDADES.map((u) => (
          <option value={u} />
        ))}
      </datalist>
      <datalist id="tipos-doc-ref">
        {TIPOS_DTE.map((t) => (
          <option value={String(t)}>{tipoLabel(t)}</option>
        ))}
        {OTROS_TIPOS_REF.map((o) => (
          <option value={o.value}>{`${o.value} · ${o.label}`}</option>
        ))}
      </datalist>

      <div class="actions">
        <button type="submit" class="primary">
          Emitir documento
        </button>
      </div>
    </form>
  )
}

// ------------------------------------------------------------------------------------------------ routes

const TITLE = 'Emitir documento'

function clampRows(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Number.isFinite(n) ? Math.trunc(n) : min))
}

/** The key the form carried, when it is one the API would take (spec 4.8: a UUID). */
function keyOf(form: FormData): string | null {
  const key = textField(form, 'idempotency_key')
  return key !== null && isUuid(key) ? key.toLowerCase() : null
}

function stateFor(form: FormData, extra: Partial<FormState> = {}): FormState {
  return {
    form,
    failure: null,
    refused: null,
    idempotencyKey: keyOf(form) ?? crypto.randomUUID(),
    lineas: clampRows(rowsSent(form, 'detalle', MAX_LINEAS), LINEAS_INICIALES, MAX_LINEAS),
    referencias: clampRows(rowsSent(form, 'referencias', MAX_REFERENCIAS), 1, MAX_REFERENCIAS),
    focus: null,
    ...extra,
  }
}

/** Refusals the person fixes on this form or one click away; any other error is the door's to show. */
const FORM_REFUSALS: ReadonlySet<ErrorCode> = new Set([
  'VALIDATION_ERROR',
  'NO_FOLIOS_AVAILABLE',
  'CERTIFICATE_REQUIRED',
  'IDEMPOTENCY_BODY_MISMATCH',
  'IDEMPOTENCY_IN_PROGRESS',
])

function ReadOnly() {
  return (
    <section class="card">
      <p>Entró con una API key de solo lectura: puede consultar los documentos, pero no emitirlos.</p>
      <p>Para emitir, entre con una API key con escritura.</p>
      <p>
        <a href={`${CONSOLE_PREFIX}/documentos`}>Ver los documentos emitidos</a>
      </p>
    </section>
  )
}

export const emitirScreens = (deps: Deps) => {
  const page = (request: Request, state: FormState, status = 200) => {
    const empresaId = empresaIdOf(request)
    return renderPage(deps, request, {
      title: TITLE,
      section: 'emitir',
      status,
      children: (
        <EmitirForm request={request} state={state} catalogo={catalogoOf(deps, empresaId)} totales={state.form === null ? null : totalsOf(deps, bodyFrom(state.form))} />
      ),
    })
  }

  return new Elysia({ normalize: false })
    .get('/documentos/nuevo', ({ request, query }) => {
      empresaIdOf(request)
      if (!sessionOf(request).canWrite) return renderPage(deps, request, { title: TITLE, section: 'emitir', children: <ReadOnly /> })
      const lineas = clampRows(Number(query.lineas ?? LINEAS_INICIALES), LINEAS_INICIALES, MAX_LINEAS)
      return page(request, { form: null, failure: null, refused: null, idempotencyKey: crypto.randomUUID(), lineas, referencias: 1, focus: null })
    })
    .post('/documentos/nuevo/totales', ({ request }) => {
      empresaIdOf(request)
      // Computes only: no folio is taken, nothing is stored.
      return fragmentResponse(<TotalesView totales={totalsOf(deps, bodyFrom(formOf(request)))} />)
    })
    .post('/documentos/nuevo', async ({ request }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const form = formOf(request)
      const accion = textField(form, 'accion')
      if (accion === 'agregar-linea') {
        const state = stateFor(form, { focus: 'linea' })
        return page(request, { ...state, lineas: Math.min(MAX_LINEAS, state.lineas + 1) })
      }
      if (accion === 'agregar-referencia') {
        const state = stateFor(form, { focus: 'referencia' })
        return page(request, { ...state, referencias: Math.min(MAX_REFERENCIAS, state.referencias + 1) })
      }
      const idempotencyKey = keyOf(form)
      if (idempotencyKey === null) {
        const err = new TimbreError('VALIDATION_ERROR', {
          details: [{ field: 'idempotency_key', code: 'INVALID_FORMAT', message: 'El formulario no traía una clave de envío válida; revise los datos y emita de nuevo.' }],
        })
        return page(request, stateFor(form, { failure: failureOf(err) }), STATUS.VALIDATION_ERROR)
      }
      try {
        // The same call as POST /dte (routes/dte.ts): a key already answered replays that answer, so a reload or a
        // second click lands on the document the first one issued. A refused body stores nothing under the key, so the
        // corrected form goes out again with the same one.
        const answer = await emitDte(deps, { empresaId, idempotencyKey, body: bodyFrom(form), check: validateEmision })
        const { id } = answer.body as { id: string }
        return redirect(`${CONSOLE_PREFIX}/documentos/${id}?aviso=emitido`)
      } catch (err) {
        if (!(err instanceof TimbreError) || !FORM_REFUSALS.has(err.code)) throw err
        // The key already went with another body: a fresh one, so sending this form again issues what it now says.
        const key = err.code === 'IDEMPOTENCY_BODY_MISMATCH' ? crypto.randomUUID() : idempotencyKey
        return page(request, stateFor(form, { failure: failureOf(err), refused: err.code, idempotencyKey: key }), STATUS[err.code])
      }
    })
}
