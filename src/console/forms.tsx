// Form pieces every screen shares (DESIGN §14): each error of the API's envelope shown beside the field its dot path
// names, the field marked aria-invalid and described by it, and a summary at the top whose links move focus there.
import type { ComponentChildren, JSX } from 'preact'
import { formatRutWithDots, parseRut } from '../domain/rut'
import { CATALOG, TimbreError, type ErrorCode, type FieldError } from '../errors'
import { fieldLabel, messageInWords } from './field-labels'

/** Field path (the API's dot notation) → the messages for it. */
export type FieldErrors = ReadonlyMap<string, readonly string[]>

export const NO_ERRORS: FieldErrors = new Map()

/** Each field's messages, told in the form's words (field-labels.ts): an API field name in a message becomes its label. */
export function fieldErrors(details: readonly FieldError[]): FieldErrors {
  const byField = new Map<string, string[]>()
  for (const d of details) byField.set(d.field, [...(byField.get(d.field) ?? []), messageInWords(d.message)])
  return byField
}

/** An element id for a dot path: `detalle.0.precio` → `f-detalle-0-precio`. */
export function fieldId(path: string): string {
  return `f-${path.replace(/[^A-Za-z0-9_-]/g, '-')}`
}

/** What a failed action tells the person: the catalogue's message and what to do, plus the field errors. */
export interface Failure {
  readonly message: string
  readonly action: string | null
  readonly errors: FieldErrors
}

/**
 * The catalogue's actions speak to an integrator (headers, `details`, API paths); a person at the console is told the
 * same thing in the console's terms. Codes not listed here already read well on a page.
 */
const CONSOLE_ACTIONS: Partial<Record<ErrorCode, string>> = {
  VALIDATION_ERROR: 'Corrija los campos marcados y vuelva a enviar el formulario.',
  UNAUTHORIZED: 'Vuelva a entrar a la consola.',
  API_KEY_READ_ONLY: 'Entró con una API key de solo lectura: pida al administrador una con escritura.',
  CERTIFICATE_NOT_FOUND: 'Suba el certificado de la empresa en la sección Certificado.',
  CERTIFICATE_REQUIRED: 'Suba el certificado de la empresa en la sección Certificado.',
  NO_FOLIOS_AVAILABLE: 'Cargue un CAF nuevo de este tipo en la sección Folios.',
  DTE_NOT_SENDABLE: 'Solo un documento firmado se envía; su estado actual se ve en el detalle.',
  IDEMPOTENCY_IN_PROGRESS: 'El mismo formulario se está procesando: espere unos segundos y recargue el documento.',
  IDEMPOTENCY_BODY_MISMATCH: 'Este formulario ya emitió un documento con otros valores: envíe el formulario nuevo para emitir otro.',
  WEBHOOK_LIMIT_REACHED: 'Elimine en esta página un webhook que ya no use; un mismo webhook puede suscribir varios eventos.',
  PLAZO_VENCIDO: 'Pasaron los 8 días: el documento quedó aceptado tácitamente (Ley 19.983) y ya no admite acciones.',
  ACCION_NO_PERMITIDA:
    'Solo 33, 34 y 43 admiten acciones; una vez aceptado o reclamado no se cambia, y el recibo de mercaderías va una vez y no después de un reclamo.',
  CAF_RANGE_EXISTS: 'Ese CAF ya está cargado (véalo en Folios), o pida al SII uno cuyos folios no se superpongan.',
  CLIENTE_RUT_EXISTS: 'Ese cliente ya está guardado: búsquelo en Clientes y modifíquelo ahí.',
  PRODUCTO_CODIGO_EXISTS: 'Ese código ya es de otro producto: búsquelo en Productos o use otro código.',
  UNSUPPORTED_MEDIA_TYPE: 'Vuelva a cargar la página y envíe el formulario de nuevo.',
  INTERNAL_ERROR: 'Reintente; si persiste, avise al administrador de Timbre.',
  SET_YA_EMITIDO: 'Para cargar el set nuevo que dio el SII, marque «Reemplazar el set ya emitido» y súbalo otra vez: sus casos se emitirán de nuevo, con folios nuevos.',
  CAF_SOLICITUD_EN_CURSO: 'Ya se pidieron folios de ese tipo al SII: espere el resultado en el historial de solicitudes.',
  CAF_NO_ANULABLE: 'Ese CAF ya no tiene folios que anular: se usaron, ya se anularon o su anulación está en curso.',
  RCV_NO_SINCRONIZADO: 'Lea primero el RCV de ese período con «Leer del SII» en Cierre del mes, y descárguelo cuando diga «Sincronizado».',
  NOT_IN_CERTIFICATION: 'Solo una empresa en ambiente de certificación pasa por la certificación del SII; una que ya emite en producción no la repite.',
}

/** Catalogue messages that name the API's mechanics (a header) where the console has a form instead. */
const CONSOLE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  IDEMPOTENCY_IN_PROGRESS: 'Este mismo formulario aún se está procesando.',
  IDEMPOTENCY_BODY_MISMATCH: 'Este formulario ya se envió antes con otros datos.',
}

export function failureOf(err: TimbreError): Failure {
  const message = err.message === CATALOG[err.code]?.message ? (CONSOLE_MESSAGES[err.code] ?? err.message) : err.message
  return { message, action: CONSOLE_ACTIONS[err.code] ?? CATALOG[err.code]?.action ?? null, errors: fieldErrors(err.extra.details ?? []) }
}

/**
 * The failure at the top of a form. Each error names its field as the form labels it (`label`, by default the shared
 * table of field-labels.ts: "Línea 1, Nombre"), never by the API's dot path.
 */
export function ErrorSummary(props: { failure: Failure | null; fields?: readonly string[]; label?: (path: string) => string }) {
  const f = props.failure
  if (f === null) return null
  const label = props.label ?? fieldLabel
  // Errors whose field has no input on this form are listed here in full, so nothing the API said is hidden.
  const entries = [...f.errors.entries()]
  return (
    <div class="error-summary" role="alert" tabindex={-1} id="errores">
      <p>
        <strong>{f.message}</strong>
      </p>
      {f.action && <p>{f.action}</p>}
      {entries.length > 0 && (
        <ul>
          {entries.map(([field, messages]) =>
            props.fields === undefined || props.fields.includes(field) ? (
              <li>
                <a href={`#${fieldId(field)}`}>
                  {label(field)}: {messages.join(' ')}
                </a>
              </li>
            ) : (
              <li>
                {label(field)}: {messages.join(' ')}
              </li>
            ),
          )}
        </ul>
      )}
    </div>
  )
}

interface FieldProps {
  readonly name: string
  readonly label: string
  readonly value?: string | number | null
  readonly errors?: FieldErrors
  readonly type?: 'text' | 'date' | 'number' | 'email' | 'url' | 'password' | 'file' | 'search'
  readonly required?: boolean
  /**
   * Types of document for which the field is required, when that depends on the type chosen in the same form: the
   * mark and `required` follow the type (console.js switches them as the type changes; `required` is the state now).
   */
  readonly requiredTipos?: readonly number[]
  readonly hint?: string
  readonly inputmode?: 'numeric' | 'decimal' | 'email' | 'text'
  readonly list?: string
  readonly autocomplete?: string
  readonly disabled?: boolean
  readonly step?: string
  readonly min?: string
  readonly accept?: string
}

/**
 * The input's attributes. Preact types <input> per `type` value; ours comes from a prop, so the union is built here
 * once and handed over as the element's own attribute type.
 */
function inputAttributes(p: FieldProps, id: string, invalid: boolean, described: string): JSX.IntrinsicElements['input'] {
  const attrs: Record<string, unknown> = {
    id,
    name: p.name,
    type: p.type ?? 'text',
    value: p.value === null || p.value === undefined ? undefined : String(p.value),
    required: p.required,
    'aria-required': p.required ? 'true' : undefined,
    'data-required-tipos': p.requiredTipos?.join(' '),
    'aria-invalid': invalid ? 'true' : undefined,
    'aria-describedby': described || undefined,
    inputMode: p.inputmode,
    list: p.list,
    autoComplete: p.autocomplete,
    disabled: p.disabled,
    step: p.step,
    min: p.min,
    accept: p.accept,
  }
  return attrs as JSX.IntrinsicElements['input']
}

/** The ids an input's `aria-describedby` names: its hint and its errors, when it has them. */
export function describedBy(id: string, hint: string | undefined, messages: readonly string[]): string {
  return [hint ? `${id}-ayuda` : null, messages.length > 0 ? `${id}-error` : null].filter(Boolean).join(' ')
}

/** What every field shows under its control: the hint, then its errors, with the ids describedBy names. */
export function FieldNotes(props: { id: string; hint?: string; messages: readonly string[] }) {
  return (
    <>
      {props.hint && (
        <small id={`${props.id}-ayuda`} class="hint">
          {props.hint}
        </small>
      )}
      {props.messages.length > 0 && (
        <p id={`${props.id}-error`} class="field-error">
          {props.messages.join(' ')}
        </p>
      )}
    </>
  )
}

/** A labelled input with its hint and its errors beside it. */
export function Field(p: FieldProps) {
  const id = fieldId(p.name)
  const messages = p.errors?.get(p.name) ?? []
  const described = describedBy(id, p.hint, messages)
  return (
    <div class={messages.length > 0 ? 'field field-invalid' : 'field'}>
      <label for={id}>
        {p.label}
        <RequiredMark required={p.required === true} switchable={p.requiredTipos !== undefined} />
      </label>
      <input {...inputAttributes(p, id, messages.length > 0, described)} />
      <FieldNotes id={id} hint={p.hint} messages={messages} />
    </div>
  )
}

/**
 * The visible mark of a required field, with its meaning in words for screen readers left to `aria-required`. A mark
 * that follows the document type is always rendered and hidden while not required, so console.js only toggles it.
 */
function RequiredMark(props: { required: boolean; switchable: boolean }) {
  if (!props.required && !props.switchable) return null
  return (
    <span class="required-mark" aria-hidden="true" hidden={!props.required}>
      {' *'}
    </span>
  )
}

export interface SelectOption {
  readonly value: string
  readonly label: string
}

export function SelectField(p: {
  name: string
  label: string
  options: ReadonlyArray<SelectOption>
  /** Options in named groups, after `options` (Customs tables: Chilean ports, then foreign ones). */
  groups?: ReadonlyArray<{ label: string; options: ReadonlyArray<SelectOption> }>
  value?: string | null
  errors?: FieldErrors
  required?: boolean
  hint?: string
  children?: ComponentChildren
}) {
  const id = fieldId(p.name)
  const messages = p.errors?.get(p.name) ?? []
  const described = describedBy(id, p.hint, messages)
  const option = (o: SelectOption) => (
    <option value={o.value} selected={o.value === (p.value ?? '')}>
      {o.label}
    </option>
  )
  return (
    <div class={messages.length > 0 ? 'field field-invalid' : 'field'}>
      <label for={id}>
        {p.label}
        <RequiredMark required={p.required === true} switchable={false} />
      </label>
      <select
        id={id}
        name={p.name}
        required={p.required}
        aria-required={p.required ? 'true' : undefined}
        aria-invalid={messages.length > 0 ? 'true' : undefined}
        aria-describedby={described || undefined}
      >
        {p.options.map(option)}
        {p.groups?.map((g) => <optgroup label={g.label}>{g.options.map(option)}</optgroup>)}
      </select>
      <FieldNotes id={id} hint={p.hint} messages={messages} />
    </div>
  )
}

/** Dates and amounts as people in Chile read them. */
export const formatNumber = (n: number) => new Intl.NumberFormat('es-CL', { maximumFractionDigits: 6 }).format(n)
/** `2026-03-02` → `02-03-2026` (dd-mm-aaaa, as dates are read in Chile); anything else as it came, a missing one as a dash. */
export function formatFecha(date: string | null | undefined): string {
  if (!date) return '—'
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  return m ? `${m[3]}-${m[2]}-${m[1]}` : date
}

const SANTIAGO_PARTS = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'America/Santiago',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
})

/**
 * An RFC 3339 instant as Santiago's wall clock, `27-11-2026 14:05`: the same dd-mm-aaaa as `formatFecha`, so every
 * screen shows one date format. Built from parts, because es-CL's own short style (`27-11-26, 14:05`) cuts the year.
 */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—'
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return iso
  const part = Object.fromEntries(SANTIAGO_PARTS.formatToParts(at).map((p) => [p.type, p.value]))
  return `${part.day}-${part.month}-${part.year} ${part.hour}:${part.minute}`
}

/** The company's ambiente as a person reads it; the stored and API value stays `certificacion` (spec 1, "ambiente"). */
export function formatAmbiente(ambiente: string): string {
  if (ambiente === 'certificacion') return 'Certificación'
  if (ambiente === 'produccion') return 'Producción'
  return ambiente
}

/** A RUT with its dots and dash, `76.086.428-5`, as it is printed on every Chilean document; an unparsable one as it came. */
export function formatRut(rut: string): string {
  const parsed = parseRut(rut)
  return parsed ? formatRutWithDots(parsed) : rut
}
