// Certificación ante el SII (DESIGN §15 "Console", issue 28): the five stages as a checklist with the next step in
// words, the set upload and its cases, issuing and re-issuing them, the simulation, the intercambio answers, the
// downloads, and the track ids to declare on the SII's site. The same services as /api/v1/billing/certificacion with the
// same inputs and the same contracts (http/routes/certificacion.ts); a company in producción gets no menu entry and a 409
// page here. Long operations (issuing a set, a simulation) are a plain post/redirect/get: the request stays open while
// the SII answers, and the muestras zip streams; these paths get the API's long idle limit (paths.ts CONSOLE_LONG_OPERATIONS).
import { Elysia } from 'elysia'
import { STATUS } from '../../contracts/statuses'
import { parseEmitirSet, parseEtapa, parseSimulacion } from '../../contracts/certificacion'
import { validateEmision } from '../../contracts/dte'
import { pathId } from '../../contracts/params'
import { ETAPAS, isEtapa, type Etapa } from '../../domain/certificacion-etapas'
import { PESO_CL, isTipoDte } from '../../domain/emision'
import { parseNumeroCL } from '../../domain/numero-cl'
import { TIPOS } from '../../domain/tipos'
import { TimbreError, validationError, type FieldError } from '../../errors'
import { cargarSet, estadoCertificacion, marcarEtapaEnCurso, registrarEtapa, type EstadoCertificacion } from '../../services/certificacion'
import { documentosDeMuestra, consumoFolios } from '../../services/certificacion-boletas'
import { emitirSet, envioXml } from '../../services/certificacion-emitir'
import { answerIntercambio } from '../../services/certificacion-intercambio'
import { construirLibro, enviarLibros, isTipoLibro, type TipoLibro } from '../../services/certificacion-libros'
import { streamMuestrasZip } from '../../services/certificacion-muestras'
import { simular } from '../../services/certificacion-simulacion'
import type { Deps } from '../../services/deps'
import { getEmpresa } from '../../services/empresas'
import { empresaIdOf, fileField, formOf, requireWrite, sessionOf, textField } from '../context'
import { certificacionEstadoBadge, certificacionEstadoLabel, ESTADO_ETAPA_BADGE, ESTADO_ETAPA_LABEL, ETAPA_LABEL } from '../estados'
import { ErrorSummary, Field, SelectField, failureOf, formatDateTime, formatFecha, formatRut, NO_ERRORS, type Failure } from '../forms'
import { fieldLabel } from '../field-labels'
import { parseEnteroCL } from '../numbers'
import { CsrfInput, fileResponse, redirect, renderPage, SECURITY_HEADERS } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const BASE = `${CONSOLE_PREFIX}/certificacion`
const TITLE = 'Certificación ante el SII'
/** The SII asks for between 20 and 100 documents in the simulation (contracts/certificacion.ts SimulacionBody). */
const CANTIDAD_SUGERIDA = 20

const NOTICES: Readonly<Record<string, string>> = {
  cargado: 'Set de pruebas cargado: revise sus casos y emítalos con «Emitir y enviar el set».',
  emitido: 'Casos emitidos y enviados al SII. Sus estados cambian cuando el SII responde: recargue la página para verlos.',
  reemitido: 'Casos rechazados reemitidos con folios nuevos y enviados al SII. Recargue la página para ver lo que responde.',
  libros: 'Libros enviados al SII. Recargue la página para ver lo que responde.',
  simulacion: 'Simulación emitida y enviada al SII en un solo envío. Recargue la página para ver lo que responde.',
  etapa: 'Etapa registrada.',
}

/** The forms of the page: each shows its own failure. */
type FormName = 'set' | 'emitir' | 'libros' | 'simulacion' | 'intercambio' | `etapa:${Etapa}`

interface Failed {
  readonly form: FormName
  readonly failure: Failure
  /** What was typed, put back in the form (never a file). */
  readonly values: Readonly<Record<string, string | null>>
  /** SET_YA_EMITIDO: the «reemplazar» checkbox is offered even if the page would not show it otherwise. */
  readonly offerReplace?: boolean
}

/** The words of the page's own inputs, for the error summary; a case's field (`detalle.0.precio`) in the shared words. */
const LABELS: Readonly<Record<string, string>> = {
  archivo_set: 'Archivo del set de pruebas',
  set: 'Set de pruebas',
  tpo_cambio: 'Tipo de cambio',
  cantidad: 'Cantidad de documentos',
  archivo_intercambio: 'Archivo de intercambio del SII',
  ...Object.fromEntries(ETAPAS.flatMap((e) => [[`${e}.estado`, 'Lo que dijo el SII'], [`${e}.nota`, 'Nota']])),
}
const labelOf = (path: string) => LABELS[path] ?? fieldLabel(path)

// ------------------------------------------------------------------------------------------------ pieces of the page

/** A track id inside `siguiente_paso` in a <code> of its own, so it is selected and copied whole. */
function WithTrackIds(props: { text: string }) {
  const parts = props.text.split(/(?<=track id )(\d+)/)
  return <>{parts.map((p, i) => (i % 2 === 1 ? <code class="copiable">{p}</code> : p))}</>
}

function EtapaForm(props: { request: Request; etapa: Etapa; failed: Failed | null }) {
  const f = props.failed?.form === `etapa:${props.etapa}` ? props.failed : null
  const errors = f?.failure.errors ?? NO_ERRORS
  return (
    <details class="registrar" open={f !== null}>
      <summary>Registrar lo que dijo el SII</summary>
      <form method="post" action={`${BASE}/etapas/${props.etapa}`} class="stack" novalidate>
        <CsrfInput session={sessionOf(props.request)} />
        <ErrorSummary failure={f?.failure ?? null} fields={[`${props.etapa}.estado`, `${props.etapa}.nota`]} label={labelOf} />
        <div class="grid">
          <SelectField
            name={`${props.etapa}.estado`}
            label="Lo que dijo el SII"
            value={f?.values.estado ?? 'aprobado'}
            errors={errors}
            options={[
              { value: 'aprobado', label: 'Aprobado por el SII' },
              { value: 'pendiente', label: 'Pendiente (deshace una aprobación registrada)' },
            ]}
          />
          <Field name={`${props.etapa}.nota`} label="Nota (opcional)" value={f?.values.nota ?? null} errors={errors} hint="Fecha de aprobación u observaciones del SII; hasta 500 caracteres." />
        </div>
        <div class="actions">
          <button type="submit">Registrar</button>
        </div>
      </form>
    </details>
  )
}

function Etapas(props: { request: Request; estado: EstadoCertificacion; canWrite: boolean; failed: Failed | null }) {
  return (
    <section aria-labelledby="etapas-titulo">
      <h2 id="etapas-titulo">Etapas</h2>
      <ol class="etapas">
        {props.estado.etapas.map((e, i) => (
          <li class="card etapa" id={`etapa-${e.etapa}`}>
            <h3>
              <span>
                {i + 1}. {ETAPA_LABEL[e.etapa] ?? e.etapa}
              </span>{' '}
              <span class={`badge ${ESTADO_ETAPA_BADGE[e.estado] ?? 'badge-neutral'}`}>{ESTADO_ETAPA_LABEL[e.estado] ?? e.estado}</span>
            </h3>
            <p class="siguiente-paso">
              <WithTrackIds text={e.siguiente_paso} />
            </p>
            {e.actualizado_at !== null && <p class="muted">Última marca: {formatDateTime(e.actualizado_at)}</p>}
            {props.canWrite && <EtapaForm request={props.request} etapa={e.etapa} failed={props.failed} />}
          </li>
        ))}
      </ol>
    </section>
  )
}

type SetEstado = EstadoCertificacion['sets'][number]

function SetCard(props: { set: SetEstado; index: number }) {
  const { set } = props
  const headingId = `set-${props.index}`
  return (
    <section class="card" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {set.nombre} <span class="muted">· número de atención {set.numero_atencion}</span>
      </h3>
      <p class="muted">Cargado el {formatDateTime(set.cargado_at)}</p>
      {set.casos.length === 0 ? (
        <p>Este set no trae documentos que emitir: pide un libro.</p>
      ) : (
        <div class="table-wrap">
          <table class="casos plegable">
            <thead>
              <tr>
                <th scope="col">Caso</th>
                <th scope="col" class="col-menor">
                  Tipo
                </th>
                <th scope="col" class="num">
                  Folio
                </th>
                <th scope="col">Estado</th>
                <th scope="col" class="col-menor">
                  Glosa del SII
                </th>
              </tr>
            </thead>
            <tbody>
              {set.casos.map((c) => {
                const tipo = `${c.tipo_dte} · ${isTipoDte(c.tipo_dte) ? TIPOS[c.tipo_dte].nombre : ''}`
                return (
                  <tr>
                    <td class="caso">
                      {c.caso}
                      {/* On a phone the tipo goes under the caso and the glosa under the estado (docs: «Teléfono»). */}
                      <span class="solo-telefono muted">{tipo}</span>
                    </td>
                    <td class="col-menor">{tipo}</td>
                    <td class="num">{c.dte_id !== null && c.folio !== null ? <a href={`${CONSOLE_PREFIX}/documentos/${c.dte_id}`}>{c.folio}</a> : '—'}</td>
                    <td>
                      <span class={`badge ${certificacionEstadoBadge(c.estado)}`}>{certificacionEstadoLabel(c.estado)}</span>
                      {c.glosa_sii && <span class="solo-telefono glosa">{c.glosa_sii}</span>}
                    </td>
                    <td class="glosa col-menor">{c.glosa_sii ?? ''}</td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

/** The foreign currencies of the loaded export cases: the set text gives no exchange rate, the person does. */
function monedasExtranjeras(estado: EstadoCertificacion): string[] {
  const monedas = estado.sets.flatMap((s) => s.casos.flatMap((c): string[] => (c.documento.export_data?.tpo_moneda ? [c.documento.export_data.tpo_moneda] : [])))
  return [...new Set(monedas.filter((m) => m !== PESO_CL))]
}

const objetados = (estado: EstadoCertificacion) => estado.sets.some((s) => s.casos.some((c) => c.estado === 'rechazado' || c.estado === 'con_reparos'))

function EmitirForm(props: { request: Request; estado: EstadoCertificacion; failed: Failed | null }) {
  const f = props.failed?.form === 'emitir' ? props.failed : null
  const monedas = monedasExtranjeras(props.estado)
  return (
    <form method="post" action={`${BASE}/emitir`} class="stack card" id="emitir-set" novalidate>
      <h3>Emitir y enviar</h3>
      <p class="muted">
        Emite, en el orden del set, cada caso que aún no tiene documento (con la referencia SET y los folios de los casos que cita) y envía al SII un envío por set. Un caso ya
        emitido no se emite de nuevo. Puede tardar varios segundos.
      </p>
      <CsrfInput session={sessionOf(props.request)} />
      <ErrorSummary failure={f?.failure ?? null} fields={monedas.length > 0 ? ['tpo_cambio'] : []} label={labelOf} />
      {monedas.length > 0 && (
        <div class="grid">
          <Field
            name="tpo_cambio"
            label={`Tipo de cambio (pesos por ${monedas.join(', ')})`}
            inputmode="decimal"
            value={f?.values.tpo_cambio ?? null}
            errors={f?.failure.errors ?? NO_ERRORS}
            hint="El set de exportación no lo trae: use el del Banco Central del día de emisión, con coma decimal (950,25)."
          />
        </div>
      )}
      <div class="actions">
        <button type="submit" name="accion" value="emitir" class="primary">
          Emitir y enviar el set
        </button>
        {objetados(props.estado) && (
          <button type="submit" name="accion" value="reemitir">
            Reemitir rechazados
          </button>
        )}
      </div>
      {objetados(props.estado) && (
        <p class="muted">«Reemitir rechazados» emite de nuevo, con folios nuevos y un envío nuevo, los casos que el SII rechazó o reparó y los que los citan.</p>
      )}
    </form>
  )
}

function SetUploadForm(props: { request: Request; estado: EstadoCertificacion; failed: Failed | null }) {
  const f = props.failed?.form === 'set' ? props.failed : null
  const emitido = props.estado.sets.some((s) => s.casos.some((c) => c.dte_id !== null))
  return (
    <form method="post" action={`${BASE}/set`} enctype="multipart/form-data" class="stack card" id="subir-set" novalidate>
      <h3>{props.estado.sets.length === 0 ? 'Cargar el set de pruebas' : 'Cargar otro set de pruebas'}</h3>
      <p class="muted">
        El archivo SIISetDePruebas….txt tal como lo descargó del SII, sin abrirlo ni guardarlo con otro programa. Los sets se guardan por nombre: el BASICO de un archivo nuevo
        reemplaza al BASICO cargado, y los demás quedan.
      </p>
      <CsrfInput session={sessionOf(props.request)} />
      <ErrorSummary failure={f?.failure ?? null} fields={['archivo_set']} label={labelOf} />
      <Field name="archivo_set" label="Archivo del set de pruebas" type="file" accept=".txt,text/plain" required errors={f?.failure.errors ?? NO_ERRORS} />
      {(emitido || f?.offerReplace === true) && (
        <div class="field">
          <label class="checkbox" for="f-reemplazar">
            <input type="checkbox" id="f-reemplazar" name="reemplazar" value="si" aria-describedby="f-reemplazar-ayuda" checked={f?.values.reemplazar === 'si'} />
            Reemplazar el set ya emitido
          </label>
          <small id="f-reemplazar-ayuda" class="hint">
            El SII evalúa el último set que entregó: los casos de un set reemplazado se emiten de nuevo, con folios nuevos.
          </small>
        </div>
      )}
      <div class="actions">
        <button type="submit" class="primary">
          Cargar el set
        </button>
      </div>
    </form>
  )
}

function SetSection(props: { request: Request; estado: EstadoCertificacion; canWrite: boolean; failed: Failed | null }) {
  const { estado } = props
  const conDocumentos = estado.sets.some((s) => s.casos.length > 0)
  return (
    <section aria-labelledby="set-titulo">
      <h2 id="set-titulo">Set de pruebas</h2>
      {estado.sets.length === 0 && <p class="card">Aún no hay un set cargado.</p>}
      {estado.sets.map((s, i) => (
        <SetCard set={s} index={i} />
      ))}
      {props.canWrite && conDocumentos && <EmitirForm request={props.request} estado={estado} failed={props.failed} />}
      <LibrosCard request={props.request} estado={estado} canWrite={props.canWrite} failed={props.failed} />
      {props.canWrite && <SetUploadForm request={props.request} estado={estado} failed={props.failed} />}
    </section>
  )
}

function claseDe(envio: EstadoCertificacion['envios'][number]): string {
  if (envio.clase === 'simulacion') return 'Simulación'
  if (envio.clase === 'boletas') return 'Set de boletas'
  return `Set ${envio.sets.join(', ')}`
}

/** An envío the SII no longer evaluates (`vigente: false`): kept as history, never declared. */
function Historial() {
  return (
    <>
      {' '}
      <span class="badge badge-neutral">Historial</span>
    </>
  )
}

const LIBRO_LABEL: Readonly<Record<string, string>> = { ventas: 'Libro de ventas', compras: 'Libro de compras', guias: 'Libro de guías' }
/** The set block that asks for each libro (services/certificacion-libros.ts SET_DEL_LIBRO). */
const SET_DEL_LIBRO: ReadonlyArray<readonly [TipoLibro, string]> = [['ventas', 'LIBRO DE VENTAS'], ['compras', 'LIBRO DE COMPRAS'], ['guias', 'LIBRO DE GUIAS']]

const librosPedidos = (estado: EstadoCertificacion): TipoLibro[] =>
  SET_DEL_LIBRO.filter(([, nombre]) => estado.sets.some((s) => s.nombre === nombre)).map(([tipo]) => tipo)

function LibrosCard(props: { request: Request; estado: EstadoCertificacion; canWrite: boolean; failed: Failed | null }) {
  const pedidos = librosPedidos(props.estado)
  if (pedidos.length === 0) return null
  const f = props.failed?.form === 'libros' ? props.failed : null
  return (
    <section class="card stack" id="libros" aria-labelledby="libros-titulo">
      <h3 id="libros-titulo">Libros que pide el set</h3>
      <p class="muted">
        Timbre arma cada libro con lo que tiene: el de ventas con los documentos emitidos del set BASICO, el de compras con la grilla del set LIBRO DE COMPRAS, el de guías con las
        guías del set GUIA DE DESPACHO. Se firman con el certificado de la empresa.
      </p>
      <ul class="descargas">
        {pedidos.map((tipo) => (
          <li>
            <a href={`${BASE}/libros/${tipo}`} download>
              Descargar el {LIBRO_LABEL[tipo]!.toLowerCase()} (XML)
            </a>
          </li>
        ))}
      </ul>
      {props.canWrite && (
        <form method="post" action={`${BASE}/libros/enviar`} class="stack" novalidate>
          <CsrfInput session={sessionOf(props.request)} />
          <ErrorSummary failure={f?.failure ?? null} fields={[]} label={labelOf} />
          <div class="actions">
            <button type="submit">Enviar los libros al SII</button>
          </div>
          <small class="hint">Un libro ya enviado y no rechazado no se envía de nuevo.</small>
        </form>
      )}
    </section>
  )
}

function TrackId(props: { id: string | null }) {
  return props.id === null ? <span class="muted">Sin track id aún</span> : <code class="copiable">{props.id}</code>
}

/** The cells an envío and a libro share: track id, when it was sent, the SII's estado and its words (on a phone, under the estado). */
function RespuestaSii(props: { trackId: string | null; enviado: string; estado: string; glosa: string | null }) {
  return (
    <>
      <td>
        <TrackId id={props.trackId} />
      </td>
      <td class="col-menor">{props.enviado}</td>
      <td>
        <span class={`badge ${certificacionEstadoBadge(props.estado)}`}>{certificacionEstadoLabel(props.estado)}</span>
        {props.glosa && <span class="solo-telefono glosa">{props.glosa}</span>}
      </td>
      <td class="glosa col-menor">{props.glosa ?? ''}</td>
    </>
  )
}

function EnviosSection(props: { estado: EstadoCertificacion }) {
  const { envios, libros } = props.estado
  return (
    <section aria-labelledby="envios-titulo">
      <h2 id="envios-titulo">Envíos al SII</h2>
      <p class="muted">
        Los track ids y las fechas que el SII pide al «Declarar avance» en su sitio. Un envío marcado «Historial» ya no lo evalúa el SII: sus documentos se reemitieron, o hubo
        uno posterior; no se declara.
      </p>
      {envios.length === 0 ? (
        <p class="card">Aún no hay envíos.</p>
      ) : (
        <div class="table-wrap">
          <table class="envios plegable">
            <thead>
              <tr>
                <th scope="col">Envío</th>
                <th scope="col" class="num col-menor">
                  Documentos
                </th>
                <th scope="col">Track id</th>
                <th scope="col" class="col-menor">
                  Enviado
                </th>
                <th scope="col">Estado</th>
                <th scope="col" class="col-menor">
                  Glosa del SII
                </th>
                <th scope="col" class="col-menor">
                  XML
                </th>
              </tr>
            </thead>
            <tbody>
              {envios.map((e) => {
                const enviado = e.enviado_at ? formatDateTime(e.enviado_at) : '—'
                const xml = `${BASE}/envios/${e.id}/xml`
                return (
                  <tr id={`envio-${e.id}`} class={e.vigente ? undefined : 'historial'}>
                    <td>
                      {claseDe(e)}
                      {!e.vigente && <Historial />}
                      <span class="solo-telefono muted">
                        {e.documentos} documentos · enviado {enviado} ·{' '}
                        <a href={xml} download>
                          XML
                        </a>
                      </span>
                    </td>
                    <td class="num col-menor">{e.documentos}</td>
                    <RespuestaSii trackId={e.track_id} enviado={enviado} estado={e.estado} glosa={e.glosa_sii} />
                    <td class="col-menor">
                      <a href={xml} download>
                        Descargar
                      </a>
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      {libros.length > 0 && (
        <div class="table-wrap">
          <table class="libros plegable">
            <caption>Libros</caption>
            <thead>
              <tr>
                <th scope="col">Libro</th>
                <th scope="col">Track id</th>
                <th scope="col" class="col-menor">
                  Enviado
                </th>
                <th scope="col">Estado</th>
                <th scope="col" class="col-menor">
                  Glosa del SII
                </th>
              </tr>
            </thead>
            <tbody>
              {libros.map((l) => {
                const enviado = l.enviado_at ? formatDateTime(l.enviado_at) : '—'
                return (
                  <tr class={l.vigente ? undefined : 'historial'}>
                    <td>
                      {LIBRO_LABEL[l.tipo] ?? l.tipo}
                      {!l.vigente && <Historial />}
                      <span class="solo-telefono muted">enviado {enviado}</span>
                    </td>
                    <RespuestaSii trackId={l.track_id} enviado={enviado} estado={l.estado} glosa={l.glosa_sii} />
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

function SimulacionSection(props: { request: Request; canWrite: boolean; failed: Failed | null }) {
  const f = props.failed?.form === 'simulacion' ? props.failed : null
  return (
    <section aria-labelledby="simulacion-titulo">
      <h2 id="simulacion-titulo">Simulación</h2>
      {props.canWrite ? (
        <form method="post" action={`${BASE}/simulacion`} class="stack card" id="simulacion" novalidate>
          <p class="muted">
            Emite documentos representativos de la empresa, de los tipos que cubrió el set (con sus clientes y productos cuando los tiene) y los envía al SII en un solo envío.
            Puede tardar.
          </p>
          <CsrfInput session={sessionOf(props.request)} />
          <ErrorSummary failure={f?.failure ?? null} fields={['cantidad']} label={labelOf} />
          <div class="grid">
            <Field
              name="cantidad"
              label="Cantidad de documentos"
              type="number"
              inputmode="numeric"
              min="20"
              step="1"
              value={f?.values.cantidad ?? CANTIDAD_SUGERIDA}
              errors={f?.failure.errors ?? NO_ERRORS}
              hint="Entre 20 y 100, como pide el SII."
            />
          </div>
          <div class="actions">
            <button type="submit" class="primary">
              Generar simulación
            </button>
          </div>
        </form>
      ) : (
        <p class="card muted">La simulación la genera una persona que puede emitir.</p>
      )}
    </section>
  )
}

function IntercambioSection(props: { request: Request; canWrite: boolean; failed: Failed | null }) {
  const f = props.failed?.form === 'intercambio' ? props.failed : null
  return (
    <section aria-labelledby="intercambio-titulo">
      <h2 id="intercambio-titulo">Intercambio de información</h2>
      {props.canWrite ? (
        <form method="post" action={`${BASE}/intercambio`} enctype="multipart/form-data" class="stack card" id="intercambio" novalidate>
          <p class="muted">
            Suba el envío de prueba que entrega el SII (emisor 88888888-8): se descarga un zip con las tres respuestas firmadas (1_RecepcionDTE.xml, 2_EnvioRecibos.xml,
            3_ResultadoDTE.xml) para subirlas en el sitio del SII. Después recargue esta página: la etapa queda en curso.
          </p>
          <CsrfInput session={sessionOf(props.request)} />
          <ErrorSummary failure={f?.failure ?? null} fields={['archivo_intercambio']} label={labelOf} />
          <Field
            name="archivo_intercambio"
            label="Envío de intercambio del SII (XML)"
            type="file"
            accept=".xml,application/xml,text/xml"
            required
            errors={f?.failure.errors ?? NO_ERRORS}
          />
          <div class="actions">
            <button type="submit" class="primary">
              Generar las respuestas (zip)
            </button>
          </div>
        </form>
      ) : (
        <p class="card muted">Las respuestas de intercambio las genera una persona que puede emitir.</p>
      )}
    </section>
  )
}

function DescargasSection(props: { estado: EstadoCertificacion }) {
  const { estado } = props
  const hayMuestras = estado.sets.some((s) => s.casos.some((c) => c.dte_id !== null)) || estado.envios.some((e) => e.clase === 'simulacion')
  const hayBoletas = estado.envios.some((e) => e.clase === 'boletas')
  return (
    <section aria-labelledby="descargas-titulo">
      <h2 id="descargas-titulo">Muestras de impresión y descargas</h2>
      <div class="card stack">
        {hayMuestras ? (
          <p>
            <a class="button" href={`${BASE}/muestras`} download>
              Descargar las muestras de impresión (zip)
            </a>
            <small class="hint">
              Un PDF por documento del set y de la última simulación, y la copia cedible de 33, 34, 46 y 52, para el «Sistema de Validación Archivos PDF de DTE» del SII.
              Puede tardar: se dibuja cada PDF.
            </small>
          </p>
        ) : (
          <p class="muted">Las muestras de impresión se descargan cuando haya documentos del set o de la simulación.</p>
        )}
        {hayBoletas && (
          <p>
            <a class="button" href={`${BASE}/consumo-folios`} download>
              Descargar el consumo de folios de las boletas (XML)
            </a>
          </p>
        )}
        <p class="muted">El XML firmado de cada envío se descarga en la tabla de envíos.</p>
      </div>
    </section>
  )
}

function CertificacionPage(props: { request: Request; estado: EstadoCertificacion; failed: Failed | null }) {
  const { estado } = props
  const canWrite = sessionOf(props.request).canWrite
  return (
    <>
      <p class="card">
        {estado.empresa.razon_social} ({formatRut(estado.empresa.rut)}) está en ambiente de certificación
        {estado.empresa.fecha_resolucion ? `, autorizada el ${formatFecha(estado.empresa.fecha_resolucion)}` : ''}. Timbre hace cada paso que se puede hacer con software; lo
        que hay que hacer en el sitio del SII se dice en cada etapa.
        {!canWrite && ' Usted ve esta página en solo lectura.'}
      </p>
      <Etapas request={props.request} estado={estado} canWrite={canWrite} failed={props.failed} />
      <SetSection request={props.request} estado={estado} canWrite={canWrite} failed={props.failed} />
      <EnviosSection estado={estado} />
      <SimulacionSection request={props.request} canWrite={canWrite} failed={props.failed} />
      <IntercambioSection request={props.request} canWrite={canWrite} failed={props.failed} />
      <DescargasSection estado={estado} />
    </>
  )
}

// ------------------------------------------------------------------------------------------------ answers

function page(deps: Deps, request: Request, opts: { failed?: Failed | null; status?: number; notice?: string | null }): Response {
  const estado = estadoCertificacion(deps, { empresaId: empresaIdOf(request) })
  return renderPage(deps, request, {
    title: TITLE,
    section: 'certificacion',
    status: opts.status,
    notice: opts.notice ?? null,
    children: <CertificacionPage request={request} estado={estado} failed={opts.failed ?? null} />,
  })
}

/** A company in producción: the certification does not apply (DESIGN §15 "Where it applies"), as the API's 409 says. */
function notApplicable(deps: Deps, request: Request): Response {
  const err = new TimbreError('NOT_IN_CERTIFICATION')
  const failure = failureOf(err)
  return renderPage(deps, request, {
    title: 'Certificación',
    section: null,
    status: STATUS.NOT_IN_CERTIFICATION,
    children: (
      <div class="card">
        <p>
          <strong>{failure.message}</strong>
        </p>
        {failure.action && <p>{failure.action}</p>}
      </div>
    ),
  })
}

const inCertificacion = (deps: Deps, request: Request) => getEmpresa(deps, { empresaId: empresaIdOf(request) }).ambiente === 'certificacion'

/**
 * A refused action: the page again with the failure beside its form, and the status the API would answer. Errors the
 * service names by the API's field (`estado`, `nota`) are moved to this form's input.
 */
function failedAction(deps: Deps, request: Request, err: unknown, form: FormName, values: Record<string, string | null>, rename: (field: string) => string = (f) => f): Response {
  if (!(err instanceof TimbreError)) throw err
  if (err.code === 'NOT_IN_CERTIFICATION') return notApplicable(deps, request)
  const base = failureOf(err)
  const errors = new Map([...base.errors].map(([field, messages]) => [rename(field), messages]))
  const failure: Failure = { ...base, errors }
  return page(deps, request, { failed: { form, failure, values }, status: STATUS[err.code] })
}

/** SET_YA_EMITIDO names the sets it is about beside the file, and offers the checkbox that replaces them. */
function setFailure(err: TimbreError): { failure: Failure; offerReplace: boolean } {
  const base = failureOf(err)
  if (err.code === 'VALIDATION_ERROR') return { failure: base, offerReplace: false }
  const sets = (err.extra.context as { sets?: unknown } | undefined)?.sets
  const which = Array.isArray(sets) && sets.length > 0 ? ` (${sets.join(', ')})` : ''
  return { failure: { ...base, errors: new Map([['archivo_set', [`${err.message.replace(/\.$/, '')}${which}.`]]]) }, offerReplace: err.code === 'SET_YA_EMITIDO' }
}

function zipResponse(body: Uint8Array | ReadableStream<Uint8Array>, fileName: string): Response {
  return new Response(body instanceof Uint8Array ? Buffer.from(body) : body, {
    headers: { ...SECURITY_HEADERS, 'Content-Type': 'application/zip', 'Content-Disposition': `attachment; filename="${fileName}"` },
  })
}

/** The form's exchange rate, read as Chileans type it (950,25), then the API's own bounds (parseEmitirSet). */
function emitirInputOf(form: FormData): { enviar: boolean; tpoCambio?: number; reemitir: boolean } {
  const raw = textField(form, 'tpo_cambio')
  const reemitir = textField(form, 'accion') === 'reemitir'
  if (raw === null) return parseEmitirSet({ reemitir })
  const read = parseNumeroCL(raw, { decimales: true })
  if (!read.ok) throw validationError([{ field: 'tpo_cambio', code: 'INVALID_TYPE', message: read.message }])
  return parseEmitirSet({ reemitir, tpo_cambio: read.value })
}

function cantidadOf(form: FormData): number {
  const raw = textField(form, 'cantidad')
  const n = raw === null ? null : parseEnteroCL(raw)
  const errors: FieldError[] = []
  if (raw === null) errors.push({ field: 'cantidad', code: 'REQUIRED', message: 'Indique cuántos documentos, entre 20 y 100.' })
  else if (n === null) errors.push({ field: 'cantidad', code: 'INVALID_TYPE', message: 'Escriba un número entero entre 20 y 100.' })
  if (errors.length > 0 || n === null) throw validationError(errors)
  return parseSimulacion({ cantidad: n }).cantidad
}

async function uploadedFile(form: FormData, field: string, what: string): Promise<{ bytes: Uint8Array; name: string | null }> {
  const bytes = await fileField(form, field)
  if (bytes === null) throw validationError([{ field, code: 'REQUIRED', message: `Adjunte ${what}.` }])
  const file = form.get(field)
  return { bytes, name: file instanceof File && file.name !== '' ? file.name : null }
}

export const certificacionScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/certificacion', ({ request }) => {
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      return page(deps, request, { notice: NOTICES[new URL(request.url).searchParams.get('aviso') ?? ''] ?? null })
    })
    .post('/certificacion/set', async ({ request }) => {
      requireWrite(request)
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      const form = formOf(request)
      const values = { reemplazar: textField(form, 'reemplazar') }
      try {
        const { bytes } = await uploadedFile(form, 'archivo_set', 'el archivo del set de pruebas (SIISetDePruebas….txt)')
        await cargarSet(deps, { empresaId: empresaIdOf(request), bytes, field: 'archivo_set', reemplazar: values.reemplazar === 'si', check: validateEmision })
        return redirect(`${BASE}?aviso=cargado`)
      } catch (err) {
        if (!(err instanceof TimbreError) || (err.code !== 'VALIDATION_ERROR' && err.code !== 'SET_YA_EMITIDO')) return failedAction(deps, request, err, 'set', values)
        const { failure, offerReplace } = setFailure(err)
        return page(deps, request, { failed: { form: 'set', failure, values, offerReplace }, status: STATUS[err.code] })
      }
    })
    .post('/certificacion/emitir', async ({ request }) => {
      requireWrite(request)
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      const form = formOf(request)
      try {
        const input = emitirInputOf(form)
        await emitirSet(deps, { empresaId: empresaIdOf(request), ...input, check: validateEmision })
        return redirect(`${BASE}?aviso=${input.reemitir ? 'reemitido' : 'emitido'}`)
      } catch (err) {
        return failedAction(deps, request, err, 'emitir', { tpo_cambio: textField(form, 'tpo_cambio') })
      }
    })
    .post('/certificacion/libros/enviar', async ({ request }) => {
      requireWrite(request)
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      try {
        await enviarLibros(deps, { empresaId: empresaIdOf(request) })
        return redirect(`${BASE}?aviso=libros`)
      } catch (err) {
        return failedAction(deps, request, err, 'libros', {})
      }
    })
    .get('/certificacion/libros/:tipo', ({ request, params }) => {
      const tipo = params.tipo
      if (!isTipoLibro(tipo)) throw new TimbreError('NOT_FOUND')
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      return fileResponse(construirLibro(deps, { empresaId: empresaIdOf(request), tipo }), 'xml', `Libro_${tipo}.xml`, 'attachment')
    })
    .post('/certificacion/simulacion', async ({ request }) => {
      requireWrite(request)
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      const form = formOf(request)
      try {
        await simular(deps, { empresaId: empresaIdOf(request), cantidad: cantidadOf(form), check: validateEmision })
        return redirect(`${BASE}?aviso=simulacion`)
      } catch (err) {
        return failedAction(deps, request, err, 'simulacion', { cantidad: textField(form, 'cantidad') })
      }
    })
    .post('/certificacion/intercambio', async ({ request }) => {
      requireWrite(request)
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      const empresaId = empresaIdOf(request)
      try {
        const file = await uploadedFile(formOf(request), 'archivo_intercambio', 'el envío de intercambio que entrega el SII (XML)')
        const { zip } = await answerIntercambio(deps, { empresaId, bytes: file.bytes, field: 'archivo_intercambio', fileName: file.name, now: deps.clock.now() })
        marcarEtapaEnCurso(deps, { empresaId, etapa: 'intercambio' })
        return zipResponse(zip, 'intercambio.zip')
      } catch (err) {
        return failedAction(deps, request, err, 'intercambio', {})
      }
    })
    .post('/certificacion/etapas/:etapa', ({ request, params }) => {
      requireWrite(request)
      const etapa = params.etapa
      if (!isEtapa(etapa)) throw new TimbreError('NOT_FOUND')
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      const form = formOf(request)
      const values = { estado: textField(form, `${etapa}.estado`), nota: textField(form, `${etapa}.nota`) }
      try {
        const input = parseEtapa({ ...(values.estado !== null ? { estado: values.estado } : {}), ...(values.nota !== null ? { nota: values.nota } : {}) })
        registrarEtapa(deps, { empresaId: empresaIdOf(request), etapa, estado: input.estado, ...(input.nota !== undefined ? { nota: input.nota } : {}) })
        return redirect(`${BASE}?aviso=etapa`)
      } catch (err) {
        return failedAction(deps, request, err, `etapa:${etapa}`, values, (field) => `${etapa}.${field}`)
      }
    })
    .get('/certificacion/envios/:id/xml', ({ request, params }) => {
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      const xml = envioXml(deps, { empresaId: empresaIdOf(request), id: pathId(params.id) })
      return fileResponse(xml.bytes, 'xml', xml.fileName, 'attachment')
    })
    .get('/certificacion/muestras', ({ request }) => {
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      const empresaId = empresaIdOf(request)
      const dtes = documentosDeMuestra(deps, { empresaId })
      if (dtes.length === 0) throw new TimbreError('NOT_FOUND', { message: 'Aún no hay documentos del set ni de la simulación: no hay muestras que imprimir.' })
      return zipResponse(streamMuestrasZip(deps, { empresaId, dtes }), 'muestras.zip')
    })
    .get('/certificacion/consumo-folios', ({ request }) => {
      if (!inCertificacion(deps, request)) return notApplicable(deps, request)
      return fileResponse(consumoFolios(deps, { empresaId: empresaIdOf(request) }), 'xml', 'ConsumoFolios.xml', 'attachment')
    })
