// Folios from the SII on the Folios screen (DESIGN §17, issue 30): ask the SII for a CAF now, the history of requests
// and annulments, automatic mode, and the annulment of a CAF's unused folios. The same services as POST /caf/solicitar,
// GET /caf/solicitudes, PUT /empresa/folios-automaticos and POST /caf/{id}/anular, each form's body checked with the
// route's own contract (contracts/caf.ts), so a form refuses exactly what the API refuses, in the same words.
import type { ComponentChildren } from 'preact'
import { TIPOS_DTE } from '../../domain/emision'
import { TIPOS } from '../../domain/tipos'
import { TimbreError, type FieldError } from '../../errors'
import { AnularCafBody, FoliosAutomaticosBody, SolicitarCafBody } from '../../contracts/caf'
import { parseBody } from '../../contracts/validation'
import type { CafRecord } from '../../services/cafs'
import type { CafSolicitudRecord, FoliosAutomaticosRecord } from '../../services/caf-solicitudes'
import { textField } from '../context'
import { ErrorSummary, Field, FieldNotes, SelectField, describedBy, failureOf, fieldId, formatDateTime, formatFecha, formatNumber, NO_ERRORS, type Failure, type FieldErrors } from '../forms'
import { parseEnteroCL } from '../numbers'
import { CsrfInput } from '../page'
import { CONSOLE_PREFIX } from '../paths'
import type { ConsoleSession } from '../../services/console-sessions'

export const FOLIOS_PATH = `${CONSOLE_PREFIX}/folios`

/** A form of the screen that was sent and refused: shown again with what was typed and its errors. */
export type FailedForm =
  | { readonly kind: 'subir' | 'solicitar' | 'automaticos'; readonly form: FormData; readonly failure: Failure }
  | { readonly kind: 'anular'; readonly cafId: string; readonly form: FormData; readonly failure: Failure }

// ------------------------------------------------------------------------------------------------------ words

const ESTADOS: Readonly<Record<CafSolicitudRecord['estado'], { text: string; badge: string }>> = {
  en_curso: { text: 'En curso', badge: 'badge-info' },
  otorgado: { text: 'Otorgado — descargando', badge: 'badge-warn' },
  descargado: { text: 'Descargado', badge: 'badge-ok' },
  anulado: { text: 'Anulado', badge: 'badge-neutral' },
  fallido: { text: 'Fallido', badge: 'badge-bad' },
}

/** The step of the SII's folio pages where a request stopped (sii/portal/folios.ts EtapaFolios), as a person reads it. */
const ETAPAS: Readonly<Record<string, string>> = {
  ingreso: 'ingreso al sitio del SII con el certificado',
  inicio: 'inicio de la solicitud de timbraje',
  empresa: 'elección de la empresa',
  documento: 'elección del tipo de documento',
  numeracion: 'cantidad de folios',
  folio_inicial: 'confirmación del folio inicial',
  otorgamiento: 'otorgamiento de los folios',
  descarga: 'descarga del CAF',
  anulacion: 'anulación de los folios',
}

const TRAMOS: Readonly<Record<CafRecord['tramos'][number]['estado'], string>> = {
  usado: 'usados',
  disponible: 'disponibles',
  por_anular: 'por anular',
  en_anulacion: 'en anulación',
  anulado: 'anulados',
}

/** The labels of this screen's SII forms, for their error summaries (inputs carry a prefix so ids stay unique). */
const LABELS: Readonly<Record<string, string>> = {
  tipo_dte: 'Tipo de documento',
  cantidad: 'Cantidad de folios',
  activo: 'Pedir folios automáticamente',
  tipos: 'Tipos de documento',
  umbral: 'Umbral de folios libres',
  dias_antes_de_vencer: 'Días antes de vencer',
  motivo: 'Motivo',
}
const labelOf = (path: string) => LABELS[path.split('.').at(-1)!] ?? path

const tipoLabel = (t: number) => (t in TIPOS ? `${t} · ${TIPOS[t as keyof typeof TIPOS].nombre}` : String(t))
const rango = (desde: number | null, hasta: number | null) => (desde === null || hasta === null ? '—' : `${formatNumber(desde)} – ${formatNumber(hasta)}`)

export const isOpenSolicitud = (r: CafSolicitudRecord) => r.estado === 'en_curso' || r.estado === 'otorgado'

// ------------------------------------------------------------------------------------------------------ form → body

/**
 * A whole number typed in a form, for a body the contract then checks: blank is absent, a number is the number, and
 * anything else goes as typed (the contract refuses its type) with a rule saying how to write it instead.
 */
function integerInput(form: FormData, name: string, field: string, rules: FieldError[]): number | string | undefined {
  const text = textField(form, name)
  if (text === null) return undefined
  const n = parseEnteroCL(text)
  if (n !== null) return n
  rules.push({ field, code: 'INVALID_TYPE', message: 'Escriba un número entero, sin decimales.' })
  return text
}

/** The field errors of a refused body, moved to the names this form's inputs carry. */
export function prefixedFailure(err: TimbreError, prefix: string): Failure {
  const base = failureOf(err)
  return { ...base, errors: new Map([...base.errors].map(([field, messages]) => [`${prefix}.${field}`, messages])) }
}

/** The request form → POST /caf/solicitar's body, checked as the route checks it (SolicitarCafBody). */
export function solicitarBodyOf(form: FormData): { tipo_dte: number; cantidad?: number } {
  const rules: FieldError[] = []
  const tipo = textField(form, 'solicitar.tipo_dte')
  const body: Record<string, unknown> = {}
  if (tipo !== null) body.tipo_dte = /^\d+$/.test(tipo) ? Number(tipo) : tipo
  const cantidad = integerInput(form, 'solicitar.cantidad', 'cantidad', rules)
  if (cantidad !== undefined) body.cantidad = cantidad
  return parseBody(SolicitarCafBody, body, () => rules)
}

/** The automatic-mode form → PUT /empresa/folios-automaticos' body (FoliosAutomaticosBody); a blank umbral is null. */
export function automaticosBodyOf(form: FormData): { activo: boolean; tipos: number[]; cantidad: number; umbral: number | null; dias_antes_de_vencer?: number } {
  const rules: FieldError[] = []
  const body: Record<string, unknown> = {
    activo: form.get('auto.activo') === 'true',
    tipos: form.getAll('auto.tipos').map((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v)),
    umbral: integerInput(form, 'auto.umbral', 'umbral', rules) ?? null,
  }
  const cantidad = integerInput(form, 'auto.cantidad', 'cantidad', rules)
  if (cantidad !== undefined) body.cantidad = cantidad
  const dias = integerInput(form, 'auto.dias_antes_de_vencer', 'dias_antes_de_vencer', rules)
  if (dias !== undefined) body.dias_antes_de_vencer = dias
  return parseBody(FoliosAutomaticosBody, body, () => rules)
}

/**
 * The annulment form → POST /caf/{id}/anular's body (AnularCafBody). Trimmed as the service stores it, so a motivo of
 * blanks reads as the empty one it is («No puede estar vacío»), not as a format.
 */
export function anularBodyOf(form: FormData): { motivo: string } {
  return parseBody(AnularCafBody, { motivo: textField(form, 'motivo') ?? '' }, () => [])
}

// ------------------------------------------------------------------------------------------------------ request now

export function SolicitarForm(props: { session: ConsoleSession; failed: FailedForm | null; hasCertificate: boolean }) {
  const failed = props.failed?.kind === 'solicitar' ? props.failed : null
  const errors = failed?.failure.errors ?? NO_ERRORS
  const v = (name: string) => (failed ? textField(failed.form, name) : null)
  return (
    <form method="post" action={`${FOLIOS_PATH}/solicitar`} class="stack card" id="pedir-sii" novalidate>
      <h2>Pedir folios al SII</h2>
      <p class="muted">
        Timbre entra al sitio de timbraje del SII con el certificado de la empresa, pide los folios, descarga el CAF, lo revisa y lo carga. El resultado
        aparece en el historial de solicitudes en unos segundos.
      </p>
      {!props.hasCertificate && (
        <p>
          <span class="badge badge-warn">Sin certificado activo</span> Para pedir folios al SII suba antes el certificado de la empresa en{' '}
          <a href={`${CONSOLE_PREFIX}/certificado`}>Certificado</a>.
        </p>
      )}
      <CsrfInput session={props.session} />
      <ErrorSummary failure={failed?.failure ?? null} fields={['solicitar.tipo_dte', 'solicitar.cantidad']} label={labelOf} />
      <div class="grid">
        <SelectField
          name="solicitar.tipo_dte"
          label="Tipo de documento"
          required
          value={v('solicitar.tipo_dte') ?? ''}
          errors={errors}
          options={[{ value: '', label: 'Elija el tipo' }, ...TIPOS_DTE.map((t) => ({ value: String(t), label: tipoLabel(t) }))]}
        />
        <Field
          name="solicitar.cantidad"
          label="Cantidad de folios"
          value={v('solicitar.cantidad')}
          errors={errors}
          inputmode="numeric"
          hint="Vacío pide el máximo que autoriza el SII; una cantidad mayor se limita a ese máximo."
        />
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Pedir al SII
        </button>
      </div>
    </form>
  )
}

// ------------------------------------------------------------------------------------------------------ history

function Cantidades(props: { r: CafSolicitudRecord }) {
  const { r } = props
  if (r.operacion === 'anulacion') return <>{r.folio_desde !== null && r.folio_hasta !== null ? `${formatNumber(r.folio_hasta - r.folio_desde + 1)} folios` : '—'}</>
  const parts = [
    `Pedida: ${r.cantidad_pedida === null ? 'el máximo' : formatNumber(r.cantidad_pedida)}`,
    r.cantidad_solicitada === null ? null : `solicitada: ${formatNumber(r.cantidad_solicitada)}`,
    r.max_autor === null ? null : `máximo del SII: ${formatNumber(r.max_autor)}`,
  ]
  return <>{parts.filter(Boolean).join(' · ')}</>
}

function Detalle(props: { r: CafSolicitudRecord }) {
  const { r } = props
  const etapa = r.falla?.etapa ? ` (paso: ${ETAPAS[r.falla.etapa] ?? r.falla.etapa})` : ''
  if (r.estado === 'otorgado')
    return (
      <>
        El SII otorgó los folios {rango(r.folio_desde, r.folio_hasta)}; Timbre sigue descargando el CAF
        {r.proximo_intento_at ? ` (próximo intento: ${formatDateTime(r.proximo_intento_at)})` : ''}. Nunca los pide de nuevo.
        {r.falla && <span class="muted"> Último intento: {r.falla.mensaje}{etapa}</span>}
      </>
    )
  if (r.estado === 'fallido' && r.falla)
    return (
      <>
        {r.falla.mensaje}
        {etapa}
      </>
    )
  if (r.operacion === 'anulacion') return <>Motivo: {r.motivo_anulacion ?? '—'}</>
  if (r.estado === 'descargado' && r.caf_id) return <a href={`#caf-${r.caf_id}`}>Ver el CAF</a>
  if (r.estado === 'en_curso') return <span class="muted">Timbre la procesa en segundos.</span>
  return null
}

/**
 * The newest requests and annulments. While one is open the region asks for itself every 3 s; once none is, the
 * answer asks for a full reload instead (HX-Refresh, see the route), so the new CAF shows in its table.
 */
export function Historial(props: { rows: readonly CafSolicitudRecord[]; highlight: string | null }) {
  const live = props.rows.some(isOpenSolicitud)
  const polling = live ? { 'hx-get': `${FOLIOS_PATH}/historial`, 'hx-trigger': 'every 3s', 'hx-swap': 'outerHTML' } : {}
  return (
    <section class="card" aria-labelledby="titulo-historial" id="historial" {...polling}>
      <h2 id="titulo-historial">Historial de solicitudes</h2>
      {props.rows.length === 0 ? (
        <p>Aún no se han pedido ni anulado folios en el SII desde Timbre.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="muted">
              {live ? 'Hay solicitudes en curso: la tabla se actualiza sola cada 3 segundos.' : 'Las más recientes primero.'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Fecha</th>
                <th scope="col">Operación</th>
                <th scope="col">Origen</th>
                <th scope="col">Tipo</th>
                <th scope="col">Estado</th>
                <th scope="col">Rango</th>
                <th scope="col">Cantidad</th>
                <th scope="col">Detalle</th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((r) => (
                <tr id={`solicitud-${r.id}`} data-estado={r.estado} aria-current={r.id === props.highlight ? 'true' : undefined}>
                  <td>{formatDateTime(r.created_at)}</td>
                  <td>{r.operacion === 'solicitud' ? 'Solicitud' : 'Anulación'}</td>
                  <td>{r.origen === 'automatica' ? 'Automática' : 'Manual'}</td>
                  <td>{r.tipo_dte}</td>
                  <td>
                    <span class={`badge ${ESTADOS[r.estado].badge}`}>{ESTADOS[r.estado].text}</span>
                  </td>
                  <td>{rango(r.folio_desde, r.folio_hasta)}</td>
                  <td>
                    <Cantidades r={r} />
                  </td>
                  <td>
                    <Detalle r={r} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

// ------------------------------------------------------------------------------------------------------ automatic mode

function Automaticos(props: { setting: FoliosAutomaticosRecord; hasCertificate: boolean }) {
  const s = props.setting
  return (
    <dl class="facts">
      <dt>Estado</dt>
      <dd>{s.activo ? <span class="badge badge-ok">Activado</span> : <span class="badge badge-neutral">Desactivado</span>}</dd>
      <dt>Tipos</dt>
      <dd>{s.tipos.length === 0 ? '—' : s.tipos.map(tipoLabel).join(', ')}</dd>
      <dt>Folios por solicitud</dt>
      <dd>{s.cantidad === null ? '—' : `${formatNumber(s.cantidad)} (limitados al máximo que autoriza el SII)`}</dd>
      <dt>Umbral</dt>
      <dd>
        Pide cuando quedan {formatNumber(s.umbral_efectivo)} folios libres o menos{s.umbral === null ? ' (el umbral de esta instalación)' : ''}
      </dd>
      <dt>Días antes de vencer</dt>
      <dd>Los folios que vencen dentro de {formatNumber(s.dias_antes_de_vencer)} días no cuentan como libres</dd>
      {s.updated_at && (
        <>
          <dt>Modificado</dt>
          <dd>{formatDateTime(s.updated_at)}</dd>
        </>
      )}
      {s.activo && !props.hasCertificate && (
        <>
          <dt>Aviso</dt>
          <dd>
            <span class="badge badge-warn">Sin certificado activo</span> Timbre no puede entrar al SII: no pedirá folios hasta que suba el certificado.
          </dd>
        </>
      )}
    </dl>
  )
}

function TiposFieldset(props: { checked: readonly string[]; errors: FieldErrors }) {
  const id = fieldId('auto.tipos')
  const messages = [...props.errors.entries()].filter(([f]) => f === 'auto.tipos' || f.startsWith('auto.tipos.')).flatMap(([, m]) => m)
  return (
    <fieldset id={id} class={messages.length > 0 ? 'field-invalid' : undefined} aria-describedby={describedBy(id, undefined, messages) || undefined}>
      <legend>Tipos de documento</legend>
      <div class="grid">
        {TIPOS_DTE.map((t) => (
          <label class="checkbox" for={fieldId(`auto.tipos.${t}`)}>
            <input type="checkbox" id={fieldId(`auto.tipos.${t}`)} name="auto.tipos" value={String(t)} checked={props.checked.includes(String(t))} />
            {tipoLabel(t)}
          </label>
        ))}
      </div>
      <FieldNotes id={id} messages={messages} />
    </fieldset>
  )
}

export function AutomaticosSection(props: {
  session: ConsoleSession
  setting: FoliosAutomaticosRecord
  /** TIMBRE_CAF_LOW_STOCK, which a blank umbral follows. */
  umbralInstancia: number
  failed: FailedForm | null
  canEdit: boolean
  hasCertificate: boolean
}) {
  const s = props.setting
  const failed = props.failed?.kind === 'automaticos' ? props.failed : null
  const errors = failed?.failure.errors ?? NO_ERRORS
  // What was typed after a refusal; the stored setting otherwise.
  const v = (name: string, stored: number | null) => (failed ? textField(failed.form, `auto.${name}`) : stored === null ? null : String(stored))
  const activo = failed ? failed.form.get('auto.activo') === 'true' : s.activo
  const tipos = failed ? failed.form.getAll('auto.tipos').map(String) : s.tipos.map(String)
  return (
    <section class="card stack" aria-labelledby="titulo-automaticos" id="automaticos">
      <h2 id="titulo-automaticos">Folios automáticos</h2>
      <p class="muted">
        Timbre pide al SII el CAF siguiente por sí solo cuando a un tipo le quedan pocos folios libres o los que tiene vencen pronto. Cargar un CAF a mano
        sigue disponible.
      </p>
      <Automaticos setting={s} hasCertificate={props.hasCertificate} />
      {props.canEdit && (
        <details open={failed !== null}>
          <summary>Cambiar el modo automático</summary>
          <form method="post" action={`${FOLIOS_PATH}/automaticos`} class="stack" id="form-automaticos" novalidate>
            <CsrfInput session={props.session} />
            <ErrorSummary
              failure={failed?.failure ?? null}
              fields={['auto.tipos', 'auto.cantidad', 'auto.umbral', 'auto.dias_antes_de_vencer']}
              label={labelOf}
            />
            <label class="checkbox" for="f-auto-activo">
              <input type="checkbox" id="f-auto-activo" name="auto.activo" value="true" checked={activo} />
              Pedir folios automáticamente
            </label>
            <TiposFieldset checked={tipos} errors={errors} />
            <div class="grid">
              <Field name="auto.cantidad" label="Folios por solicitud" value={v('cantidad', s.cantidad)} errors={errors} required inputmode="numeric" hint="Se limitan al máximo que autoriza el SII." />
              <Field
                name="auto.umbral"
                label="Umbral de folios libres"
                value={v('umbral', s.umbral)}
                errors={errors}
                inputmode="numeric"
                hint={`Vacío sigue el de esta instalación (${formatNumber(props.umbralInstancia)} folios).`}
              />
              <Field
                name="auto.dias_antes_de_vencer"
                label="Días antes de vencer"
                value={v('dias_antes_de_vencer', s.dias_antes_de_vencer)}
                errors={errors}
                inputmode="numeric"
                hint="Los folios que vencen dentro de estos días no cuentan como libres (de 0 a 179)."
              />
            </div>
            <div class="actions">
              <button type="submit" class="primary">
                Guardar modo automático
              </button>
            </div>
          </form>
        </details>
      )}
    </section>
  )
}

// ------------------------------------------------------------------------------------------------------ stretches and annulment

/** The CAF's range in stretches (the folio gap report), compactly: `1 – 1 usados · 2 – 40 por anular`. */
export function Tramos(props: { caf: CafRecord }) {
  return (
    <span class="tramos">
      {props.caf.tramos.map((t, i) => (
        <>
          {i > 0 && ' · '}
          <span data-tramo={t.estado}>
            {rango(t.desde, t.hasta)} {TRAMOS[t.estado]}
          </span>
        </>
      ))}
    </span>
  )
}

/** Where the unused folios an annulment would take lie: from the first to the last stretch never used nor annulled. */
export function tramoAnulable(caf: CafRecord): { desde: number; hasta: number } | null {
  const libres = caf.tramos.filter((t) => t.estado === 'disponible' || t.estado === 'por_anular' || t.estado === 'en_anulacion')
  return libres.length > 0 ? { desde: libres[0]!.desde, hasta: libres.at(-1)!.hasta } : null
}

const MOTIVO_HINT = 'El SII lo guarda con la anulación, p. ej. «Folios vencidos sin usar».'

/** The annulment's form for one CAF, with its warning: what the SII annuls cannot be used again. */
export function AnularForm(props: { session: ConsoleSession; caf: CafRecord; failed: FailedForm | null; children?: ComponentChildren }) {
  const failed = props.failed?.kind === 'anular' && props.failed.cafId === props.caf.id ? props.failed : null
  const name = `anular-${props.caf.id}.motivo`
  const id = fieldId(name)
  const messages = failed?.failure.errors.get(name) ?? []
  const tramo = tramoAnulable(props.caf)
  const typed = failed ? failed.form.get('motivo') : null
  return (
    <form method="post" action={`${FOLIOS_PATH}/${props.caf.id}/anular`} class="stack" id={`anular-${props.caf.id}`} novalidate>
      <CsrfInput session={props.session} />
      <ErrorSummary failure={failed?.failure ?? null} fields={[name]} label={labelOf} />
      <p class="warning">
        <strong>No se puede deshacer:</strong> el SII anula los folios{tramo ? ` ${rango(tramo.desde, tramo.hasta)}` : ''} de este CAF y nunca más sirven. El
        CAF deja de entregar folios al instante.
      </p>
      <div class={messages.length > 0 ? 'field field-invalid' : 'field'}>
        <label for={id}>
          Motivo<span class="required-mark" aria-hidden="true"> *</span>
        </label>
        <input
          id={id}
          name="motivo"
          type="text"
          maxLength={200}
          required
          aria-required="true"
          aria-invalid={messages.length > 0 ? 'true' : undefined}
          aria-describedby={describedBy(id, MOTIVO_HINT, messages)}
          value={typeof typed === 'string' ? typed : undefined}
        />
        <FieldNotes id={id} hint={MOTIVO_HINT} messages={messages} />
      </div>
      <div class="actions">
        <button type="submit" class="danger">
          {props.children ?? 'Anular folios sin usar'}
        </button>
      </div>
    </form>
  )
}

/** The housekeeping list (GET /caf?por_anular=true): expired CAFs whose unused folios must be annulled at the SII. */
export function PorAnularSection(props: { session: ConsoleSession; cafs: readonly CafRecord[]; failed: FailedForm | null; canEdit: boolean; openAnulaciones: ReadonlySet<string> }) {
  return (
    <section class="card stack" aria-labelledby="titulo-por-anular" id="por-anular">
      <h2 id="titulo-por-anular">Por anular</h2>
      {props.cafs.length === 0 ? (
        <p>Ningún CAF vencido tiene folios sin usar: no hay nada que anular.</p>
      ) : (
        <>
          <p>Estos CAF vencieron con folios sin usar. El SII pide anularlos; Timbre lo hace en su sitio con el certificado de la empresa.</p>
          {props.cafs.map((c) => (
            <article class="stack" id={`por-anular-${c.id}`} aria-labelledby={`por-anular-${c.id}-titulo`}>
              <h3 id={`por-anular-${c.id}-titulo`}>
                {tipoLabel(c.tipo_dte)}, folios {rango(c.folio_desde, c.folio_hasta)}
              </h3>
              <p>
                Venció el {formatFecha(c.vence_el)}. <Tramos caf={c} />
              </p>
              {props.openAnulaciones.has(c.id) ? (
                <p>
                  <span class="badge badge-warn">Anulación en curso</span> El resultado aparece en el historial.
                </p>
              ) : (
                props.canEdit && <AnularForm session={props.session} caf={c} failed={props.failed} />
              )}
            </article>
          ))}
        </>
      )}
    </section>
  )
}
