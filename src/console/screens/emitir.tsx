// The issuance form (DESIGN §14, issue 27): every type the API issues. The form's fields are named with the API's dot
// paths, the POST builds the very JSON body an integrator would send to POST /dte (emitir-body.ts) and hands it to the
// same `emitDte` with the same `validateEmision`, so the form validates exactly as the API does and each error of the
// envelope lands beside the input its path names, told in the form's words (field-labels.ts). The hidden idempotency
// key makes a reload or a double submit replay the first answer instead of issuing twice.
//
// Blocks that only some types use (commissions, retentions, the export data…) carry `data-tipos`: the server renders
// those of the chosen type and hides the others; console.js shows and hides them as the type changes; without script,
// "Mostrar los campos de este tipo" renders the form again for the new type, keeping what was typed.
import type { ComponentChildren } from 'preact'
import { Elysia } from 'elysia'
import { santiagoDate } from '../../clock'
import {
  FORMAS_PAGO_EXPORTACION,
  MODALIDADES_VENTA,
  NOMBRES_BULTOS,
  NOMBRES_CLAUSULAS,
  NOMBRES_PAISES,
  PUERTOS_CHILE,
  PUERTOS_EXTRANJEROS,
  UNIDADES_ADUANA,
  VIAS_TRANSPORTE,
  type CodigoAduana,
} from '../../domain/aduana'
import { UNIDADES } from '../../domain/catalogo'
import { TIPOS_DTE, type TipoDte } from '../../domain/emision'
import { formatMoneda, formatNumeroCL, formatPesos } from '../../domain/numero-cl'
import { CLAUSULAS_VENTA, IMPUESTOS, TIPOS, TIPOS_BULTO, type ReceptorRequerido } from '../../domain/tipos'
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
import { FIELD_LABELS } from '../field-labels'
import { ErrorSummary, Field, failureOf, fieldId, formatRut, NO_ERRORS, SelectField, type Failure, type FieldErrors, type SelectOption } from '../forms'
import { CsrfInput, fragmentResponse, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'
import {
  bodyFrom,
  EXPORT_DATA_FIELDS,
  isForeign,
  LIST_FIELDS,
  MAX_ROWS,
  MONEDAS_FORMULARIO,
  RECEPTOR_FIELDS,
  rowsSent,
  tipoOf,
  tiposOf,
  uses,
  withNumberErrors,
  type Bloque,
  type ListName,
} from './emitir-body'

const PATH = `${CONSOLE_PREFIX}/documentos/nuevo`

const LINEAS_INICIALES = 3
/** The pickers list the first page the services give (newest first), sorted by name for reading. */
const PICKER_LIMIT = 200

const label = (field: string) => FIELD_LABELS[field] ?? field

/** Codes besides TipoDTE a firm references (SII table of reference types; exports: docs/sii-protocol.md §2.6). */
const OTROS_TIPOS_REF: readonly SelectOption[] = [
  { value: '801', label: 'Orden de compra' },
  { value: '802', label: 'Nota de pedido' },
  { value: '803', label: 'Contrato' },
  { value: '807', label: 'DUS' },
  { value: '808', label: 'B/L (conocimiento de embarque)' },
  { value: '809', label: 'AWB (guía aérea)' },
  { value: '810', label: 'MIC/DTA' },
  { value: '811', label: 'Carta de porte' },
]

const NINGUNO: SelectOption = { value: '', label: '—' }

const IND_TRASLADO: readonly SelectOption[] = [
  NINGUNO,
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

/** spec 2.3 ind_servicio, the values an export takes (domain/tipos.ts EXPORTACION.indServicio). */
const IND_SERVICIO_EXPORT: readonly SelectOption[] = [
  { value: '', label: '— (venta de mercancías)' },
  { value: '3', label: '3 · Servicio calificado por Aduana' },
  { value: '4', label: '4 · Servicios de hotelería' },
  { value: '5', label: '5 · Transporte terrestre internacional' },
  { value: '6', label: '6 · Servicios prestados y utilizados en el extranjero' },
]

const CODIGO_REF: readonly SelectOption[] = [
  NINGUNO,
  { value: '1', label: '1 · Anula el documento' },
  { value: '2', label: '2 · Corrige texto' },
  { value: '3', label: '3 · Corrige montos' },
]

const aduanaOptions = (table: readonly CodigoAduana[]): SelectOption[] => [NINGUNO, ...table.map((c) => ({ value: String(c.codigo), label: `${c.nombre} (${c.codigo})` }))]

/** Labels of a table keyed by name (tipos.ts CLAUSULAS_VENTA, TIPOS_BULTO): the API takes the name and writes the code. */
const namedOptions = (table: Readonly<Record<string, number>>, text: (key: string) => string): SelectOption[] => [
  NINGUNO,
  ...Object.keys(table).map((key) => ({ value: key, label: text(key) })),
]

const PAIS_OPTIONS: readonly SelectOption[] = [
  NINGUNO,
  ...Object.entries(NOMBRES_PAISES)
    .map(([code, nombre]) => ({ value: code, label: `${nombre} (${code})` }))
    .sort((a, b) => a.label.localeCompare(b.label, 'es-CL')),
]

const IMPUESTO_GROUPS = [
  { label: 'Impuestos adicionales', clase: 'A' },
  { label: 'Retenciones (factura de compra y sus notas)', clase: 'R' },
].map((g) => ({
  label: g.label,
  options: Object.entries(IMPUESTOS)
    .filter(([, regla]) => regla.clase === g.clase)
    .map(([code, regla]) => ({ value: code, label: `${code} · ${regla.glosa}${regla.tasa === null ? '' : ` (${formatNumeroCL(regla.tasa)} %)`}` })),
}))

/** "FACTURA ELECTRÓNICA" → "Factura electrónica": the SII's printed name, as a sentence. */
function nombreTipo(tipo: TipoDte): string {
  const lower = TIPOS[tipo].nombre.toLocaleLowerCase('es-CL')
  return lower.charAt(0).toLocaleUpperCase('es-CL') + lower.slice(1)
}

const tipoLabel = (tipo: TipoDte) => `${tipo} · ${nombreTipo(tipo)}`

/** The types whose rules require a receptor field, read from the per-type table so the mark cannot drift from the rule. */
const requiredTipos = (field: ReceptorRequerido): TipoDte[] => TIPOS_DTE.filter((t) => TIPOS[t].requiredReceptor.includes(field))

/** Which types a block is for, in words: "Solo en: 43". */
const soloEn = (bloque: Bloque) => `Para los tipos ${tiposOf(bloque).join(', ')}.`

// ------------------------------------------------------------------------------------------------ totals

/** A receptor that passes every type's rules: the receptor never changes an amount (domain/totals.ts). */
const RECEPTOR_PROVISIONAL = { rut: '66666666-6', razon_social: 'Receptor', giro: 'Giro', direccion: 'Dirección', comuna: 'Comuna', ciudad: 'Ciudad' }

/**
 * The totals issuance would store, by the same validation and the same `computeTotals`; null while the lines are not
 * valid yet. What cannot change an amount is set aside first, so the totals show while the receptor is still being
 * typed: the issue date (the rules only check it against today) and, when only the receptor fails, the receptor.
 */
function totalsOf(deps: Pick<Deps, 'clock'>, form: FormData): Totales | null {
  const { body, numberErrors } = bodyFrom(form)
  if (numberErrors.length > 0) return null
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
  const amount = (n: number | null | undefined) => (n === null || n === undefined ? '—' : formatPesos(n))
  const exp = t?.exportacion ?? null
  return (
    <>
      <dl class="totals">
        {exp === null && (
          <>
            <dt>Neto</dt>
            <dd>{amount(t?.monto_neto)}</dd>
          </>
        )}
        <dt>Exento</dt>
        <dd>{exp !== null && exp.tpo_cambio !== null ? formatMoneda(exp.monto_exento, exp.tpo_moneda) : amount(t?.monto_exento)}</dd>
        {exp === null && (
          <>
            <dt>IVA ({TASA_IVA} %)</dt>
            <dd>{amount(t?.iva)}</dd>
          </>
        )}
        {t?.impuestos.map((i) => (
          <>
            <dt>{`${IMPUESTOS[i.tipo_imp]?.glosa ?? 'Impuesto'} (${i.tipo_imp})`}</dt>
            <dd>{formatPesos(i.is_retencion ? -i.monto_imp : i.monto_imp)}</dd>
          </>
        ))}
        {t?.iva_no_retenido !== null && t?.iva_no_retenido !== undefined && (
          <>
            <dt>IVA no retenido</dt>
            <dd>{formatPesos(t.iva_no_retenido)}</dd>
          </>
        )}
        {t?.comisiones && (
          <>
            <dt>Comisiones, neto</dt>
            <dd>{formatPesos(-t.comisiones.val_com_neto)}</dd>
            <dt>Comisiones, exento</dt>
            <dd>{formatPesos(-t.comisiones.val_com_exe)}</dd>
            <dt>Comisiones, IVA</dt>
            <dd>{formatPesos(-t.comisiones.val_com_iva)}</dd>
          </>
        )}
        {exp !== null && exp.tpo_cambio !== null && (
          <>
            <dt>Total en {exp.tpo_moneda}</dt>
            <dd>{formatMoneda(exp.monto_total, exp.tpo_moneda)}</dd>
            <dt>Tipo de cambio</dt>
            <dd>{formatNumeroCL(exp.tpo_cambio, 4)}</dd>
          </>
        )}
        <dt class="total">{exp !== null && exp.tpo_cambio !== null ? 'Total en pesos' : 'Total'}</dt>
        <dd class="total">{amount(t?.monto_total)}</dd>
      </dl>
      {t === null && <p class="muted">Los totales aparecen cuando las líneas (y lo que el tipo pida: referencias, comisiones, datos de exportación) están completas y son válidas.</p>}
    </>
  )
}

// ------------------------------------------------------------------------------------------------ the form

type Rows = Readonly<Record<ListName, number>>

interface FormState {
  /** What was posted, to show it again; null on a fresh form. */
  readonly form: FormData | null
  readonly failure: Failure | null
  /** The refusal's code, for the links to the screen that fixes it. */
  readonly refused: ErrorCode | null
  readonly idempotencyKey: string
  readonly rows: Rows
  /** After "Agregar …", the new row takes the focus. */
  readonly focus: ListName | null
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

/** Every input's path, so the summary links each error to its input (or its list) and lists the others as text. */
function inputPaths(rows: Rows): string[] {
  const paths = ['tipo_dte', 'fecha_emision', 'ind_traslado', 'ind_servicio', 'montos_brutos', 'export_data', ...RECEPTOR_FIELDS.map((f) => `receptor.${f}`)]
  paths.push(...EXPORT_DATA_FIELDS.map((f) => `export_data.${f}`))
  for (const list of Object.keys(MAX_ROWS) as ListName[]) {
    paths.push(list)
    for (let i = 0; i < rows[list]; i++) paths.push(`${list}.${i}`, ...LIST_FIELDS[list].map((f) => `${list}.${i}.${f}`))
  }
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

/** A part of the form for the types that use `bloque`; hidden for the others (console.js follows the type as it changes). */
function ParaTipos(props: { bloque: Bloque; tipo: TipoDte; children: ComponentChildren; class?: string }) {
  return (
    <div class={props.class ?? 'para-tipos'} data-tipos={tiposOf(props.bloque).join(' ')} hidden={!uses(props.tipo, props.bloque)}>
      {props.children}
    </div>
  )
}

function ClientePicker(props: { clientes: readonly ClienteRecord[] }) {
  if (props.clientes.length === 0)
    return (
      <p class="hint">
        Cree clientes en <a href={`${CONSOLE_PREFIX}/clientes/nuevo`}>Clientes</a>.
      </p>
    )
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
            {c.razon_social} ({formatRut(c.rut)})
          </option>
        ))}
      </select>
      <small id="cliente-guardado-ayuda" class="hint">
        Completa los datos del receptor, que puede cambiar antes de emitir.
        {props.clientes.length >= PICKER_LIMIT && ` La lista muestra los ${PICKER_LIMIT} clientes guardados más recientes; para otro, búsquelo en Clientes y copie sus datos.`}
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
      <select id={id} data-fill="" data-fill-prefix={`detalle.${props.index}.`} autofocus={props.autofocus} aria-describedby={`${id}-ayuda`}>
        <option value="">Elegir un producto…</option>
        {props.productos.map((p) => (
          <option
            value={p.id}
            data-values={JSON.stringify({
              nombre: p.nombre,
              dsc_item: p.descripcion,
              // Written as a person would type it, so the form reads it back as the same pesos.
              precio: p.precio_unitario === null ? null : formatNumeroCL(p.precio_unitario, 0),
              unidad: p.unidad,
              ind_exe: p.es_exento ? '1' : '',
            })}
          >
            {p.codigo ? `${p.codigo} · ` : ''}
            {p.nombre}
            {p.precio_unitario === null ? '' : ` (${formatPesos(p.precio_unitario)})`}
          </option>
        ))}
      </select>
      {/* A product's price is in pesos: on an export (110-112) the line's price is in the operation's currency. */}
      <small id={`${id}-ayuda`} class="hint">
        Completa la línea con el precio en pesos del producto; en una exportación, cámbielo por el precio en la moneda de la operación.
        {props.productos.length >= PICKER_LIMIT && ` Se muestran los ${PICKER_LIMIT} productos guardados más recientes.`}
      </small>
    </div>
  )
}

type Value = (name: string) => string | null

interface RowProps {
  readonly index: number
  readonly value: Value
  readonly errors: FieldErrors
  readonly tipo: TipoDte
  readonly autofocus: boolean
}

function Linea(props: RowProps & { productos: readonly ProductoRecord[] }) {
  const { index: i, value: v, errors, tipo } = props
  const name = (f: string) => `detalle.${i}.${f}`
  const field = (f: string, extra: { inputmode?: 'decimal' | 'numeric'; hint?: string; list?: string } = {}) => (
    <Field name={name(f)} label={label(f)} value={v(name(f))} errors={errors} {...extra} />
  )
  return (
    <fieldset id={fieldId(`detalle.${i}`)}>
      <legend>Línea {i + 1}</legend>
      <GroupError path={`detalle.${i}`} errors={errors} />
      <div class="grid">
        {props.productos.length > 0 ? <ProductoPicker index={i} productos={props.productos} autofocus={props.autofocus} /> : null}
        {field('nombre')}
        {field('dsc_item')}
        <ParaTipos bloque="tipo_doc_liq" tipo={tipo}>
          {field('tipo_doc_liq', { list: 'tipos-doc-liq', hint: 'El documento de la venta que se liquida: 33, 34…' })}
        </ParaTipos>
        {field('cantidad', { inputmode: 'decimal' })}
        {field('unidad', { list: 'unidades' })}
        {field('precio', { inputmode: 'decimal' })}
        <ParaTipos bloque="monto_item" tipo={tipo}>
          {field('monto_item', { inputmode: 'decimal', hint: 'Solo si la línea no es cantidad × precio; negativo para descontar un anticipo.' })}
        </ParaTipos>
        <ParaTipos bloque="descuentos_linea" tipo={tipo}>
          {field('descuento_pct', { inputmode: 'decimal' })}
        </ParaTipos>
        <ParaTipos bloque="descuentos_linea" tipo={tipo}>
          {field('recargo_pct', { inputmode: 'decimal' })}
        </ParaTipos>
        <ParaTipos bloque="ind_exe" tipo={tipo}>
          <SelectField
            name={name('ind_exe')}
            label={label('ind_exe')}
            value={v(name('ind_exe')) ?? ''}
            errors={errors}
            options={[
              { value: '', label: 'No' },
              { value: '1', label: 'Sí, exenta de IVA' },
            ]}
          />
        </ParaTipos>
        <ParaTipos bloque="cod_imp_adic" tipo={tipo}>
          <SelectField name={name('cod_imp_adic')} label={label('cod_imp_adic')} value={v(name('cod_imp_adic')) ?? ''} errors={errors} options={[{ value: '', label: 'Ninguno' }]} groups={IMPUESTO_GROUPS} />
        </ParaTipos>
      </div>
    </fieldset>
  )
}

function Referencia(props: RowProps) {
  const { index: i, value: v, errors } = props
  const name = (f: string) => `referencias.${i}.${f}`
  return (
    <fieldset id={fieldId(`referencias.${i}`)}>
      <legend>Referencia {i + 1}</legend>
      <div class="grid">
        <Field name={name('tipo_doc_ref')} label={label('tipo_doc_ref')} value={v(name('tipo_doc_ref'))} errors={errors} list="tipos-doc-ref" />
        <Field name={name('folio_ref')} label={label('folio_ref')} value={v(name('folio_ref'))} errors={errors} inputmode="numeric" />
        <Field name={name('fecha_ref')} label={label('fecha_ref')} type="date" value={v(name('fecha_ref'))} errors={errors} />
        <SelectField name={name('codigo_ref')} label={label('codigo_ref')} value={v(name('codigo_ref')) ?? ''} errors={errors} options={CODIGO_REF} />
        <Field name={name('razon_ref')} label={label('razon_ref')} value={v(name('razon_ref'))} errors={errors} />
      </div>
    </fieldset>
  )
}

function Comision(props: RowProps) {
  const { index: i, value: v, errors } = props
  const name = (f: string) => `comisiones.${i}.${f}`
  return (
    <fieldset id={fieldId(`comisiones.${i}`)}>
      <legend>Comisión {i + 1}</legend>
      <div class="grid">
        <SelectField
          name={name('tipo_movim')}
          label={label('tipo_movim')}
          value={v(name('tipo_movim')) ?? 'C'}
          errors={errors}
          options={[
            { value: 'C', label: 'Comisión' },
            { value: 'O', label: 'Otros cargos' },
          ]}
        />
        <Field name={name('glosa')} label={label('glosa')} value={v(name('glosa'))} errors={errors} />
        <Field name={name('tasa_comision')} label={label('tasa_comision')} value={v(name('tasa_comision'))} errors={errors} inputmode="decimal" />
        <Field name={name('val_com_neto')} label={label('val_com_neto')} value={v(name('val_com_neto'))} errors={errors} inputmode="numeric" />
        <Field name={name('val_com_exe')} label={label('val_com_exe')} value={v(name('val_com_exe'))} errors={errors} inputmode="numeric" />
        <Field name={name('val_com_iva')} label={label('val_com_iva')} value={v(name('val_com_iva'))} errors={errors} inputmode="numeric" hint={`Si lo deja vacío, ${TASA_IVA} % del valor neto.`} />
      </div>
    </fieldset>
  )
}

function Impuesto(props: RowProps) {
  const { index: i, value: v, errors } = props
  const name = (f: string) => `impuestos_retenciones.${i}.${f}`
  return (
    <fieldset id={fieldId(`impuestos_retenciones.${i}`)}>
      <legend>Impuesto o retención {i + 1}</legend>
      <div class="grid">
        <SelectField name={name('tipo_imp')} label={label('tipo_imp')} value={v(name('tipo_imp')) ?? ''} errors={errors} options={[NINGUNO]} groups={IMPUESTO_GROUPS} />
        <Field name={name('tasa_imp')} label={label('tasa_imp')} value={v(name('tasa_imp'))} errors={errors} inputmode="decimal" hint="Si la deja vacía, la tasa legal del código." />
        <Field name={name('monto_imp')} label={label('monto_imp')} value={v(name('monto_imp'))} errors={errors} inputmode="numeric" hint="Solo si no es la tasa sobre el neto." />
      </div>
    </fieldset>
  )
}

function DescuentoGlobal(props: RowProps) {
  const { index: i, value: v, errors } = props
  const name = (f: string) => `descuentos_globales.${i}.${f}`
  return (
    <fieldset id={fieldId(`descuentos_globales.${i}`)}>
      <legend>Descuento o recargo global {i + 1}</legend>
      <div class="grid">
        <SelectField
          name={name('tpo_mov')}
          label={label('tpo_mov')}
          value={v(name('tpo_mov')) ?? 'D'}
          errors={errors}
          options={[
            { value: 'D', label: 'Descuento' },
            { value: 'R', label: 'Recargo' },
          ]}
        />
        <SelectField
          name={name('tpo_valor')}
          label={label('tpo_valor')}
          value={v(name('tpo_valor')) ?? '%'}
          errors={errors}
          options={[
            { value: '%', label: 'Porcentaje (%)' },
            { value: '$', label: 'Monto ($)' },
          ]}
        />
        <Field name={name('valor_dr')} label={label('valor_dr')} value={v(name('valor_dr'))} errors={errors} inputmode="decimal" />
        <Field name={name('glosa_dr')} label={label('glosa_dr')} value={v(name('glosa_dr'))} errors={errors} />
        <SelectField
          name={name('ind_exe_dr')}
          label={label('ind_exe_dr')}
          value={v(name('ind_exe_dr')) ?? ''}
          errors={errors}
          options={[
            { value: '', label: 'Lo afecto a IVA (en exentos y exportaciones, lo exento)' },
            { value: '1', label: 'Lo exento' },
            { value: '2', label: 'Lo no facturable' },
          ]}
        />
      </div>
    </fieldset>
  )
}

const ROW_VIEWS: Readonly<Record<Exclude<ListName, 'detalle'>, (p: RowProps) => ComponentChildren>> = {
  referencias: Referencia,
  comisiones: Comision,
  impuestos_retenciones: Impuesto,
  descuentos_globales: DescuentoGlobal,
}

/** The `accion` of each "Agregar …" button. */
const ADD_ACTIONS: Readonly<Record<ListName, string>> = {
  detalle: 'agregar-linea',
  referencias: 'agregar-referencia',
  comisiones: 'agregar-comision',
  impuestos_retenciones: 'agregar-impuesto',
  descuentos_globales: 'agregar-descuento',
}

const ADD_LABELS: Readonly<Record<ListName, string>> = {
  detalle: 'Agregar línea',
  referencias: 'Agregar referencia',
  comisiones: 'Agregar comisión',
  impuestos_retenciones: 'Agregar impuesto o retención',
  descuentos_globales: 'Agregar descuento o recargo',
}

/** The "Agregar …" button: a submit, so it works without script; htmx swaps in just its list when it runs. */
function AddButton(props: { list: ListName; count: number }) {
  if (props.count >= MAX_ROWS[props.list]) return null
  const target = `#${props.list}-lista`
  return (
    <div class="actions">
      <button type="submit" name="accion" value={ADD_ACTIONS[props.list]} formnovalidate hx-post={PATH} hx-select={target} hx-target={target} hx-swap="outerHTML">
        {ADD_LABELS[props.list]}
      </button>
    </div>
  )
}

/** A folded list of rows (referencias, comisiones…), open when it holds something, is required, or was just added to. */
function RowList(props: {
  list: Exclude<ListName, 'detalle'>
  summary: string
  state: FormState
  value: Value
  errors: FieldErrors
  tipo: TipoDte
  /** The types that require the list: it opens for them, and console.js opens it when one is chosen. */
  openFor: readonly TipoDte[]
}) {
  const { list, state } = props
  const Row = ROW_VIEWS[list]
  const count = state.rows[list]
  const open =
    props.openFor.includes(props.tipo) ||
    (state.form !== null && rowsSent(state.form, list) > 0 && hasValues(state.form, list)) ||
    [...props.errors.keys()].some((k) => k === list || k.startsWith(`${list}.`)) ||
    state.focus === list
  return (
    <details id={fieldId(list)} open={open} data-open-tipos={props.openFor.length > 0 ? props.openFor.join(' ') : undefined}>
      <summary>{props.summary}</summary>
      <div id={`${list}-lista`} class="stack">
        <GroupError path={list} errors={props.errors} />
        {Array.from({ length: count }, (_, i) => (
          <Row index={i} value={props.value} errors={props.errors} tipo={props.tipo} autofocus={state.focus === list && i === count - 1} />
        ))}
        <AddButton list={list} count={count} />
      </div>
    </details>
  )
}

/** Whether any input of `list` holds a value other than a select's default. */
function hasValues(form: FormData, list: ListName): boolean {
  const defaults = new Set(['C', 'D', '%'])
  for (const [key, value] of form.entries())
    if (key.startsWith(`${list}.`) && typeof value === 'string' && value.trim() !== '' && !defaults.has(value)) return true
  return false
}

function ExportData(props: { value: Value; errors: FieldErrors; tipo: TipoDte }) {
  const { value: v, errors } = props
  const name = (f: string) => `export_data.${f}`
  const select = (f: string, options: readonly SelectOption[], extra: { hint?: string; required?: boolean; groups?: Parameters<typeof SelectField>[0]['groups'] } = {}) => (
    <SelectField name={name(f)} label={label(f)} value={v(name(f)) ?? ''} errors={errors} options={options} {...extra} />
  )
  const number = (f: string, hint?: string) => <Field name={name(f)} label={label(f)} value={v(name(f))} errors={errors} inputmode="decimal" hint={hint} />
  return (
    <fieldset id={fieldId('export_data')} class="stack">
      <legend>Exportación</legend>
      <p class="hint">Los precios, el flete y el seguro van en la moneda de la operación; los decimales con coma (12,5).</p>
      <GroupError path="export_data" errors={errors} />
      <div class="grid">
        {select(
          'tpo_moneda',
          MONEDAS_FORMULARIO.map((m) => ({ value: m, label: m })),
          { required: true },
        )}
        {number('tpo_cambio', 'Pesos por unidad de la moneda (Banco Central, día de emisión). Obligatorio si no es PESO CL.')}
        <SelectField name="ind_servicio" label={label('ind_servicio')} value={v('ind_servicio') ?? ''} errors={errors} options={IND_SERVICIO_EXPORT} />
        {select('forma_pago_exp', aduanaOptions(FORMAS_PAGO_EXPORTACION))}
        {select('modalidad_venta', aduanaOptions(MODALIDADES_VENTA))}
        {select('clausula_venta', namedOptions(CLAUSULAS_VENTA, (k) => `${k} · ${NOMBRES_CLAUSULAS[k] ?? k}`))}
        {number('total_clausula')}
        {select('via_transporte', aduanaOptions(VIAS_TRANSPORTE))}
        {select('puerto_embarque', aduanaOptions(PUERTOS_CHILE))}
        {select('puerto_desembarque', aduanaOptions(PUERTOS_EXTRANJEROS))}
        {select('pais_recep', PAIS_OPTIONS)}
        {select('pais_dest', PAIS_OPTIONS)}
        {select('nacionalidad', PAIS_OPTIONS)}
        <Field name={name('num_id')} label={label('num_id')} value={v(name('num_id'))} errors={errors} hint="Pasaporte o identificación tributaria en su país." />
        {select('tipo_bulto', namedOptions(TIPOS_BULTO, (k) => NOMBRES_BULTOS[k] ?? k))}
        <Field name={name('total_bultos')} label={label('total_bultos')} value={v(name('total_bultos'))} errors={errors} inputmode="numeric" />
        <Field name={name('marcas')} label={label('marcas')} value={v(name('marcas'))} errors={errors} />
        <Field name={name('tara')} label={label('tara')} value={v(name('tara'))} errors={errors} inputmode="numeric" />
        {select('unidad_tara', aduanaOptions(UNIDADES_ADUANA))}
        {number('peso_bruto')}
        {select('unidad_peso_bruto', aduanaOptions(UNIDADES_ADUANA))}
        {number('peso_neto')}
        {select('unidad_peso_neto', aduanaOptions(UNIDADES_ADUANA))}
        {number('mnt_flete', 'En la moneda de la operación; para que sume al total, agréguelo también como recargo global.')}
        {number('mnt_seguro', 'En la moneda de la operación.')}
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

function ReceptorFields(props: { value: Value; errors: FieldErrors; tipo: TipoDte }) {
  const { value: v, errors, tipo } = props
  const hints: Partial<Record<(typeof RECEPTOR_FIELDS)[number], string>> = {
    rut: 'Con dígito verificador. Boleta sin datos del comprador: 66666666-6. Receptor extranjero (exportación): 55555555-5.',
    email: 'Opcional: la casilla a la que se envía el DTE cuando el SII lo acepta.',
  }
  return (
    <div class="grid">
      {RECEPTOR_FIELDS.map((f) => {
        const byType = f === 'giro' || f === 'direccion' || f === 'comuna' || f === 'ciudad' ? requiredTipos(f) : null
        return (
          <Field
            name={`receptor.${f}`}
            label={label(f)}
            value={v(`receptor.${f}`)}
            errors={errors}
            required={byType === null ? f === 'rut' || f === 'razon_social' : byType.includes(tipo)}
            requiredTipos={byType ?? undefined}
            type={f === 'email' ? 'email' : 'text'}
            hint={hints[f] ?? (byType === null || byType.length === 0 ? undefined : byType.length === 1 ? `Obligatorio en el tipo ${byType[0]}.` : `Obligatorio en los tipos ${byType.join(', ')}.`)}
          />
        )
      })}
    </div>
  )
}

function EmitirForm(props: { request: Request; state: FormState; catalogo: Catalogo; totales: Totales | null }) {
  const { state, catalogo, totales } = props
  const session = sessionOf(props.request)
  const errors = state.failure?.errors ?? NO_ERRORS
  const form = state.form
  // What the person typed, untrimmed, exactly as it came.
  const v: Value = (name) => {
    const value = form?.get(name)
    return typeof value === 'string' ? value : null
  }
  const tipo = tipoOf(form)
  const foreign = isForeign(form, tipo)
  return (
    <form method="post" action={PATH} class="stack" id="emitir">
      <CsrfInput session={session} />
      <input type="hidden" name="idempotency_key" value={state.idempotencyKey} />
      <ErrorSummary failure={state.failure} fields={inputPaths(state.rows)} />
      <RefusalLinks code={state.refused} />

      <section class="card stack" aria-labelledby="emitir-documento">
        <h2 id="emitir-documento">Documento</h2>
        <div class="grid">
          <SelectField
            name="tipo_dte"
            label={label('tipo_dte')}
            value={String(tipo)}
            errors={errors}
            required
            options={TIPOS_DTE.map((t) => ({ value: String(t), label: tipoLabel(t) }))}
          />
          <Field name="fecha_emision" label={label('fecha_emision')} type="date" value={v('fecha_emision')} errors={errors} hint="Si la deja vacía, se usa la de hoy." />
          <ParaTipos bloque="ind_traslado" tipo={tipo}>
            <SelectField name="ind_traslado" label={label('ind_traslado')} value={v('ind_traslado') ?? ''} errors={errors} required={uses(tipo, 'ind_traslado')} options={IND_TRASLADO} />
          </ParaTipos>
          <ParaTipos bloque="montos_brutos" tipo={tipo}>
            <div class={errors.has('montos_brutos') ? 'field field-invalid' : 'field'}>
              <span class="checkbox">
                <input
                  type="checkbox"
                  id={fieldId('montos_brutos')}
                  name="montos_brutos"
                  value="1"
                  checked={v('montos_brutos') !== null}
                  aria-describedby={`${fieldId('montos_brutos')}-ayuda${errors.has('montos_brutos') ? ` ${fieldId('montos_brutos')}-error` : ''}`}
                />
                <label for={fieldId('montos_brutos')}>{label('montos_brutos')}</label>
              </span>
              <small id={`${fieldId('montos_brutos')}-ayuda`} class="hint">
                Los precios y los descuentos en $ incluyen el IVA (notas sobre boletas). {soloEn('montos_brutos')}
              </small>
              <GroupError path="montos_brutos" errors={errors} />
            </div>
          </ParaTipos>
        </div>
        <div class="actions" data-sin-js="">
          <button type="submit" name="accion" value="cambiar-tipo" formnovalidate>
            Mostrar los campos de este tipo
          </button>
        </div>
      </section>

      <fieldset id={fieldId('receptor')} class="stack">
        <legend>Receptor</legend>
        <ClientePicker clientes={catalogo.clientes} />
        <ReceptorFields value={v} errors={errors} tipo={tipo} />
      </fieldset>

      <ParaTipos bloque="export_data" tipo={tipo}>
        <ExportData value={v} errors={errors} tipo={tipo} />
      </ParaTipos>

      <section id="detalle-lista" class="stack" aria-labelledby="lineas-titulo">
        <h2 id="lineas-titulo">Detalle</h2>
        <p class="hint" id={fieldId('detalle')} tabindex={-1}>
          Números como se escriben en Chile: 12.500 son doce mil quinientos; los decimales van con coma (1,5) en cantidades, porcentajes y
          {foreign ? ' en los precios de esta exportación.' : ' precios en moneda extranjera (exportaciones).'} Precio neto, salvo en boletas 39 y con precios con IVA
          incluido. Las líneas vacías al final no se envían.
        </p>
        <GroupError path="detalle" errors={errors} />
        {Array.from({ length: state.rows.detalle }, (_, i) => (
          <Linea index={i} value={v} errors={errors} tipo={tipo} productos={catalogo.productos} autofocus={state.focus === 'detalle' && i === state.rows.detalle - 1} />
        ))}
        <AddButton list="detalle" count={state.rows.detalle} />
      </section>

      <ParaTipos bloque="comisiones" tipo={tipo}>
        <RowList list="comisiones" summary={`Comisiones (obligatorias en la liquidación factura 43). ${soloEn('comisiones')}`} state={state} value={v} errors={errors} tipo={tipo} openFor={TIPOS_DTE.filter((t) => TIPOS[t].comisiones === 'required')} />
      </ParaTipos>
      <ParaTipos bloque="descuentos_globales" tipo={tipo}>
        <RowList list="descuentos_globales" summary="Descuentos y recargos globales" state={state} value={v} errors={errors} tipo={tipo} openFor={[]} />
      </ParaTipos>
      <ParaTipos bloque="impuestos_retenciones" tipo={tipo}>
        <RowList
          list="impuestos_retenciones"
          summary="Impuestos adicionales y retenciones (tasa o monto distintos del legal, o códigos sin tasa fija)"
          state={state}
          value={v}
          errors={errors}
          tipo={tipo}
          openFor={[]}
        />
      </ParaTipos>
      <RowList list="referencias" summary="Referencias (obligatorias en notas de crédito y débito; también orden de compra)" state={state} value={v} errors={errors} tipo={tipo} openFor={TIPOS_DTE.filter((t) => TIPOS[t].requiresReferencias)} />

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
      <datalist id="tipos-doc-liq">
        {([33, 34, 46, 56, 61] as const).map((t) => (
          <option value={String(t)}>{tipoLabel(t)}</option>
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

function freshRows(lineas: number): Rows {
  return { detalle: lineas, referencias: 1, comisiones: 1, impuestos_retenciones: 1, descuentos_globales: 1 }
}

function stateFor(form: FormData, extra: Partial<FormState> = {}): FormState {
  const rows = Object.fromEntries(
    (Object.keys(MAX_ROWS) as ListName[]).map((list) => [list, clampRows(rowsSent(form, list), list === 'detalle' ? LINEAS_INICIALES : 1, MAX_ROWS[list])]),
  ) as Record<ListName, number>
  return { form, failure: null, refused: null, idempotencyKey: keyOf(form) ?? crypto.randomUUID(), rows, focus: null, ...extra }
}

/** Refusals the person fixes on this form or one click away; any other error is the door's to show. */
const FORM_REFUSALS: ReadonlySet<ErrorCode> = new Set([
  'VALIDATION_ERROR',
  'NO_FOLIOS_AVAILABLE',
  'CERTIFICATE_REQUIRED',
  'IDEMPOTENCY_BODY_MISMATCH',
  'IDEMPOTENCY_IN_PROGRESS',
])

/** A session that cannot issue: a read-only API key, or a person whose role in this company is `lectura`. */
function ReadOnly(props: { byRole: boolean }) {
  return (
    <section class="card">
      {props.byRole ? (
        <>
          <p>Su rol en esta empresa es de solo lectura: puede consultar los documentos, pero no emitirlos.</p>
          <p>Para emitir, pida a un administrador de la empresa el rol de emisor.</p>
        </>
      ) : (
        <>
          <p>Entró con una API key de solo lectura: puede consultar los documentos, pero no emitirlos.</p>
          <p>Para emitir, entre con una API key con escritura.</p>
        </>
      )}
      <p>
        <a href={`${CONSOLE_PREFIX}/documentos`}>Ver los documentos emitidos</a>
      </p>
    </section>
  )
}

function listToAdd(accion: string | null): ListName | null {
  return (Object.keys(ADD_ACTIONS) as ListName[]).find((list) => ADD_ACTIONS[list] === accion) ?? null
}

export const emitirScreens = (deps: Deps) => {
  const page = (request: Request, state: FormState, status = 200) => {
    const empresaId = empresaIdOf(request)
    return renderPage(deps, request, {
      title: TITLE,
      section: 'emitir',
      status,
      children: <EmitirForm request={request} state={state} catalogo={catalogoOf(deps, empresaId)} totales={state.form === null ? null : totalsOf(deps, state.form)} />,
    })
  }

  return new Elysia({ normalize: false })
    .get('/documentos/nuevo', ({ request, query }) => {
      empresaIdOf(request)
      if (!sessionOf(request).canWrite) return renderPage(deps, request, { title: TITLE, section: 'emitir', children: <ReadOnly byRole={sessionOf(request).role !== null} /> })
      const lineas = clampRows(Number(query.lineas ?? LINEAS_INICIALES), LINEAS_INICIALES, MAX_ROWS.detalle)
      return page(request, { form: null, failure: null, refused: null, idempotencyKey: crypto.randomUUID(), rows: freshRows(lineas), focus: null })
    })
    .post('/documentos/nuevo/totales', ({ request }) => {
      empresaIdOf(request)
      // Computes only: no folio is taken, nothing is stored.
      return fragmentResponse(<TotalesView totales={totalsOf(deps, formOf(request))} />)
    })
    .post('/documentos/nuevo', async ({ request }) => {
      requireWrite(request)
      const empresaId = empresaIdOf(request)
      const form = formOf(request)
      const accion = textField(form, 'accion')
      const adding = listToAdd(accion)
      if (adding !== null) {
        const state = stateFor(form, { focus: adding })
        return page(request, { ...state, rows: { ...state.rows, [adding]: Math.min(MAX_ROWS[adding], state.rows[adding] + 1) } })
      }
      // "Mostrar los campos de este tipo", or any other button: the form again, never an issuance, which only the
      // "Emitir documento" button (no `accion`) asks for.
      if (accion !== null) return page(request, stateFor(form))
      const idempotencyKey = keyOf(form)
      if (idempotencyKey === null) {
        const err = new TimbreError('VALIDATION_ERROR', {
          details: [{ field: 'idempotency_key', code: 'INVALID_FORMAT', message: 'El formulario no traía una clave de envío válida; revise los datos y emita de nuevo.' }],
        })
        return page(request, stateFor(form, { failure: failureOf(err) }), STATUS.VALIDATION_ERROR)
      }
      const { body, numberErrors } = bodyFrom(form)
      try {
        // The same call as POST /dte (routes/dte.ts): a key already answered replays that answer, so a reload or a
        // second click lands on the document the first one issued. A refused body stores nothing under the key, so the
        // corrected form goes out again with the same one.
        const answer = await emitDte(deps, { empresaId, idempotencyKey, body, check: validateEmision })
        const { id } = answer.body as { id: string }
        return redirect(`${CONSOLE_PREFIX}/documentos/${id}?aviso=emitido`)
      } catch (err) {
        if (!(err instanceof TimbreError) || !FORM_REFUSALS.has(err.code)) throw err
        // The key already went with another body: a fresh one, so sending this form again issues what it now says.
        const key = err.code === 'IDEMPOTENCY_BODY_MISMATCH' ? crypto.randomUUID() : idempotencyKey
        const shown =
          err.code === 'VALIDATION_ERROR' && numberErrors.length > 0
            ? new TimbreError('VALIDATION_ERROR', { ...err.extra, details: withNumberErrors(err.extra.details ?? [], numberErrors) })
            : err
        return page(request, stateFor(form, { failure: failureOf(shown), refused: err.code, idempotencyKey: key }), STATUS[err.code])
      }
    })
}
