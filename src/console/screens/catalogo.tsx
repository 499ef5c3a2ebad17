// What the clientes and productos screens share (issue 27): the list's search box and cursor paging as the API pages,
// an error summary that names each field as its form labels it, a text area with its error beside it, and the
// delete confirmation, a page of its own so it works without script.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { TObject } from '@sinclair/typebox'
import { fieldErrorsFromTypeBox } from '../../contracts/validation'
import { decodeCursor } from '../../contracts/pagination'
import { isUuid } from '../../contracts/common'
import { TimbreError, validationError, type FieldError } from '../../errors'
import type { ConsoleSession } from '../../services/console-sessions'
import { describedBy, fieldId, FieldNotes, NO_ERRORS, type Failure, type FieldErrors } from '../forms'
import { CsrfInput } from '../page'

/** As many rows per page as the API's default page (DESIGN §8). */
export const PAGE_SIZE = 20

/** Field name → the label the form shows, so an error is told in the form's words, never as `razon_social`. */
export type FieldLabels = Readonly<Record<string, string>>

/** A malformed id is 404 like an unknown one (DESIGN §12), as the API's path ids are. */
export function idParam(raw: string): string {
  if (!isUuid(raw)) throw new TimbreError('NOT_FOUND')
  return raw.toLowerCase()
}

/**
 * The id after which the page starts, from the `cursor` of the link «Siguiente página». A cursor we did not make is
 * refused as the API refuses it, told in the console's words (the API's message speaks of `next_cursor`).
 */
export function afterIdOf(cursor: string | null): string | null {
  try {
    return decodeCursor(cursor ?? undefined)
  } catch (err) {
    if (!(err instanceof TimbreError)) throw err
    throw validationError([{ field: 'cursor', code: 'INVALID_FORMAT', message: 'El enlace de la página está incompleto o no es de esta lista: vuelva a la primera página.' }])
  }
}

/** A list's query (a search's `q`, a filter) checked with the API's own query schema, as GET would check it. */
export function queryErrors(schema: TObject, query: Readonly<Record<string, string>>): FieldError[] {
  const check = compiledQuery(schema)
  return check.Check(query) ? [] : fieldErrorsFromTypeBox(check.Errors(query))
}

const compiled = new WeakMap<TObject, ReturnType<typeof TypeCompiler.Compile>>()
function compiledQuery(schema: TObject) {
  let c = compiled.get(schema)
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)))
  return c
}

/** A form's value as typed, to put back in its input after a refusal; null when the field was not sent. */
export function typed(form: FormData | null, name: string): string | null {
  const value = form?.get(name)
  return typeof value === 'string' ? value : null
}

/** A form's text field trimmed; blank is '' (the contract then says it may not be empty), absent is undefined. */
export function trimmedOf(form: FormData, name: string): string | undefined {
  const value = form.get(name)
  return typeof value === 'string' ? value.trim() : undefined
}

/**
 * The summary at the top of a refused form: the failure, what to do, and each field's error under the field's label,
 * linked to its input. `extra` carries a link the failure calls for (the cliente that already has this RUT).
 */
export function CatalogoSummary(props: { failure: Failure | null; labels: FieldLabels; extra?: { href: string; text: string } | null }) {
  const f = props.failure
  if (f === null) return null
  const entries = [...f.errors.entries()]
  return (
    <div class="error-summary" role="alert" tabindex={-1} id="errores">
      <p>
        <strong>{f.message}</strong>
      </p>
      {f.action && <p>{f.action}</p>}
      {props.extra && (
        <p>
          <a href={props.extra.href}>{props.extra.text}</a>
        </p>
      )}
      {entries.length > 0 && (
        <ul>
          {entries.map(([field, messages]) => {
            const label = props.labels[field]
            return label === undefined ? (
              <li>{messages.join(' ')}</li>
            ) : (
              <li>
                <a href={`#${fieldId(field)}`}>
                  {label}: {messages.join(' ')}
                </a>
              </li>
            )
          })}
        </ul>
      )}
    </div>
  )
}

/** A labelled multi-line text (notas, descripción) with its hint and its errors beside it, as forms.tsx Field does. */
export function TextAreaField(p: { name: string; label: string; value: string | null; errors: FieldErrors; hint?: string; rows?: number }) {
  const id = fieldId(p.name)
  const messages = p.errors.get(p.name) ?? []
  const described = describedBy(id, p.hint, messages)
  return (
    <div class={messages.length > 0 ? 'field field-invalid field-wide' : 'field field-wide'}>
      <label for={id}>{p.label}</label>
      <textarea id={id} name={p.name} rows={p.rows ?? 3} aria-invalid={messages.length > 0 ? 'true' : undefined} aria-describedby={described || undefined}>
        {p.value ?? ''}
      </textarea>
      <FieldNotes id={id} hint={p.hint} messages={messages} />
    </div>
  )
}

/** The search box of a list: a plain GET form, so a search is a link that can be kept and shared. */
export function SearchForm(props: { action: string; label: string; hint: string; q: string | null; failure: Failure | null; hidden?: Readonly<Record<string, string>> }) {
  const id = fieldId('q')
  const messages = (props.failure?.errors ?? NO_ERRORS).get('q') ?? []
  return (
    <form method="get" action={props.action} role="search" aria-label={props.label} class="catalogo-buscar">
      {Object.entries(props.hidden ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <div class={messages.length > 0 ? 'field field-invalid' : 'field'}>
        <label for={id}>{props.label}</label>
        <input
          id={id}
          name="q"
          type="search"
          value={props.q ?? ''}
          autoComplete="off"
          aria-invalid={messages.length > 0 ? 'true' : undefined}
          aria-describedby={`${id}-ayuda${messages.length > 0 ? ` ${id}-error` : ''}`}
        />
        <small id={`${id}-ayuda`} class="hint">
          {props.hint}
        </small>
        {messages.length > 0 && (
          <p id={`${id}-error`} class="field-error">
            {messages.join(' ')}
          </p>
        )}
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Buscar
        </button>
        {props.q !== null && <a href={props.action}>Ver todos</a>}
      </div>
    </form>
  )
}

/** «Primera página» and «Siguiente página», the API's cursor carried in the link. */
export function Pager(props: { base: string; cursor: string | null; next: string | null; params?: Readonly<Record<string, string>> }) {
  if (props.cursor === null && props.next === null) return null
  const link = (cursor: string | null) => {
    const params = new URLSearchParams(props.params ?? {})
    if (cursor) params.set('cursor', cursor)
    const qs = params.toString()
    return qs ? `${props.base}?${qs}` : props.base
  }
  return (
    <nav class="actions" aria-label="Páginas">
      {props.cursor !== null && <a href={link(null)}>Primera página</a>}
      {props.next !== null && (
        <a href={link(props.next)} rel="next">
          Siguiente página
        </a>
      )}
    </nav>
  )
}

/**
 * The confirmation of a delete, a page of its own: the person reads what goes and what stays, and only the POST of
 * this form deletes, so no script (window.confirm) is needed for the question to be asked.
 */
export function DeleteConfirm(props: { session: ConsoleSession; action: string; cancel: string; question: string; consequences: string; button: string }) {
  return (
    <section class="card confirmar" aria-labelledby="confirmar">
      <h2 id="confirmar">{props.question}</h2>
      <p>{props.consequences}</p>
      <form method="post" action={props.action} class="actions">
        <CsrfInput session={props.session} />
        <button type="submit" class="danger">
          {props.button}
        </button>
        <a href={props.cancel}>Cancelar</a>
      </form>
    </section>
  )
}
