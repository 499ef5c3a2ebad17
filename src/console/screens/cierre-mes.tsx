// Cierre del mes (DESIGN §16 "Console", issue 29): for the company shown, one period's RCV mirror (its sync state, the
// SII's summaries, «Leer del SII»), the reconciliation's findings, the F29 proposal and the SII's files; for the instance
// administrator, every company's month in one table (and as a CSV); and the pending-acceptance board, whose accept and
// claim go through the Recibidos screen's own action route. The same services as the API's /rcv, /conciliacion, /f29 and
// GET /recibidos?pendientes=true (http/routes/rcv.ts, routes/recibidos.ts); this file turns their records into pages.
import { Elysia } from 'elysia'
import { STATUS } from '../../contracts/statuses'
import { pathId } from '../../contracts/params'
import { isTipoDte } from '../../domain/emision'
import { PLAZO_AVISO_DIAS } from '../../domain/intercambio'
import { formatPesos } from '../../domain/numero-cl'
import { SECCIONES_COMPRAS, type ResumenTipoRcv } from '../../domain/rcv'
import { TIPOS } from '../../domain/tipos'
import { TimbreError } from '../../errors'
import { conciliacionDe, f29De, mesDeEmpresas, pendientesDe, type ConciliacionRecord, type F29Record, type HallazgoRecord, type MesEmpresaRecord, type PendienteRecord } from '../../services/cierre-mes'
import { empresasOfAccount } from '../../services/console-accounts'
import { selectEmpresa } from '../../services/console-sessions'
import type { Deps } from '../../services/deps'
import { listEmpresas } from '../../services/empresas'
import { archivoRcv, checkPeriodo, estadoRcv, periodoAnterior, periodoOf, solicitarSincronizacion, type EstadoRcvRecord } from '../../services/rcv'
import { empresaIdOf, formOf, requireWrite, sessionOf, textField } from '../context'
import { HALLAZGO_LABEL, rcvEstadoBadge, rcvEstadoLabel, SECCION_COMPRAS_LABEL } from '../estados'
import { ErrorSummary, failureOf, formatDateTime, formatFecha, formatRut, SelectField, NO_ERRORS, type Failure } from '../forms'
import { CsrfInput, redirect, renderPage, SECURITY_HEADERS } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const BASE = `${CONSOLE_PREFIX}/cierre-mes`
const TITLE = 'Cierre del mes'
/** How many months back the period picker offers; an older period is still reachable by its URL. */
const MESES_EN_SELECTOR = 24

const NOTICES: Readonly<Record<string, string>> = {
  lectura: 'Lectura del RCV pedida: el trabajo rcv la hace en unos segundos. Recargue la página para ver el resultado.',
}

const MESES = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre']

/** `202603` → `marzo de 2026`. */
export function periodoEnPalabras(periodo: string): string {
  return `${MESES[Number(periodo.slice(4, 6)) - 1] ?? periodo.slice(4, 6)} de ${periodo.slice(0, 4)}`
}

const nombreTipo = (tipo: number) => (isTipoDte(tipo) ? TIPOS[tipo].nombre : `Tipo ${tipo}`)

// ------------------------------------------------------------------------------------------------ the period

/** The period a page shows: `?periodo=`, or the month before the current one (the month being closed). */
function periodoPedido(deps: Deps, url: URL): string {
  return url.searchParams.get('periodo')?.trim() || periodoAnterior(periodoOf(deps.clock.now()))
}

/** The current month and the ones before it, newest first, never before the RCV exists (08/2017). */
function periodosOfrecidos(now: Date, elegido: string): string[] {
  const out: string[] = []
  for (let p = periodoOf(now); out.length < MESES_EN_SELECTOR && p >= '201708'; p = periodoAnterior(p)) out.push(p)
  return /^\d{6}$/.test(elegido) && !out.includes(elegido) ? [...out, elegido] : out
}

function PeriodoPicker(props: { action: string; periodo: string; now: Date; failure: Failure | null }) {
  const options = periodosOfrecidos(props.now, props.periodo).map((p) => ({ value: p, label: `${periodoEnPalabras(p)} (${p})` }))
  return (
    <form method="get" action={props.action} class="filters" aria-label="Período">
      <ErrorSummary failure={props.failure} fields={['periodo']} label={() => 'Período'} />
      <SelectField name="periodo" label="Período tributario" value={props.periodo} options={options} errors={props.failure?.errors ?? NO_ERRORS} />
      <div class="actions">
        <button type="submit">Ver</button>
      </div>
    </form>
  )
}

/** A period the services refuse (format, before 08/2017, not begun): the picker shows why, with the API's 400. */
function periodoFailure(deps: Deps, periodo: string): Failure | null {
  try {
    checkPeriodo(periodo, deps.clock.now())
    return null
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'VALIDATION_ERROR') throw err
    return failureOf(err)
  }
}

// ------------------------------------------------------------------------------------------------ the company: RCV

function EstadoRcvBadge(props: { estado: string }) {
  return <span class={`badge ${rcvEstadoBadge(props.estado)}`}>{rcvEstadoLabel(props.estado)}</span>
}

function SyncSection(props: { request: Request; estado: EstadoRcvRecord; failure: Failure | null }) {
  const { estado } = props
  const session = sessionOf(props.request)
  return (
    <section class="card" id="rcv" aria-labelledby="rcv-titulo">
      <h2 id="rcv-titulo">Copia del RCV del SII</h2>
      <dl class="facts">
        <dt>Estado</dt>
        <dd id="estado-rcv">
          <EstadoRcvBadge estado={estado.estado} />
        </dd>
        <dt>Leída del SII</dt>
        <dd>{estado.sincronizado_at === null ? 'nunca' : formatDateTime(estado.sincronizado_at)}</dd>
        {estado.solicitado_at !== null && (
          <>
            <dt>Lectura pedida</dt>
            <dd>{formatDateTime(estado.solicitado_at)}</dd>
          </>
        )}
        <dt>Último intento</dt>
        <dd>{formatDateTime(estado.ultimo_intento_at)}</dd>
        {estado.falla !== null && (
          <>
            <dt>Última falla</dt>
            <dd id="falla-rcv">
              {formatDateTime(estado.falla.at)}: {estado.falla.mensaje} <code>{estado.falla.motivo}</code>
              {estado.sincronizado_at !== null && <> Se mantiene la copia leída el {formatDateTime(estado.sincronizado_at)}.</>}
            </dd>
          </>
        )}
      </dl>
      <p class="muted">El RCV se lee en el portal del SII con el certificado de la empresa. Timbre solo lo copia: nunca lo modifica.</p>
      <ErrorSummary failure={props.failure} />
      {session.canWrite && (
        <form method="post" action={`${BASE}/sincronizar`} class="actions">
          <CsrfInput session={session} />
          <input type="hidden" name="periodo" value={estado.periodo} />
          <button type="submit" class="primary">
            Leer del SII
          </button>
        </form>
      )}
    </section>
  )
}

function ResumenTable(props: { id: string; caption: string; filas: readonly ResumenTipoRcv[] }) {
  if (props.filas.length === 0)
    return (
      <p id={props.id}>
        <strong>{props.caption}:</strong> sin documentos.
      </p>
    )
  return (
    <div class="table-wrap">
      <table id={props.id} class="plegable resumen-rcv">
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Tipo</th>
            <th scope="col" class="num col-menor">
              Documentos
            </th>
            <th scope="col" class="num col-menor">
              Exento
            </th>
            <th scope="col" class="num col-menor">
              Neto
            </th>
            <th scope="col" class="num">
              IVA
            </th>
            <th scope="col" class="num col-menor">
              IVA no recuperable
            </th>
            <th scope="col" class="num col-menor">
              IVA uso común
            </th>
            <th scope="col" class="num">
              Total
            </th>
          </tr>
        </thead>
        <tbody>
          {props.filas.map((r) => (
            <tr>
              <td>
                <abbr title={nombreTipo(r.tipoDoc)}>{r.tipoDoc}</abbr>
                <span class="solo-telefono muted">
                  {nombreTipo(r.tipoDoc)} · {r.cantidad === 1 ? '1 documento' : `${r.cantidad} documentos`}
                </span>
              </td>
              <td class="num col-menor">{r.cantidad}</td>
              <td class="num col-menor">{formatPesos(r.montoExento)}</td>
              <td class="num col-menor">{formatPesos(r.montoNeto)}</td>
              <td class="num">{formatPesos(r.montoIva)}</td>
              <td class="num col-menor">{formatPesos(r.montoIvaNoRecuperable)}</td>
              <td class="num col-menor">{formatPesos(r.ivaUsoComun)}</td>
              <td class="num">{formatPesos(r.montoTotal)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function ResumenSection(props: { estado: EstadoRcvRecord }) {
  const resumen = props.estado.resumen
  return (
    <section class="card" aria-labelledby="rcv-resumen">
      <h2 id="rcv-resumen">Resumen del RCV</h2>
      {resumen === null ? (
        <p>Este período aún no tiene una copia del RCV: use «Leer del SII».</p>
      ) : (
        <>
          <h3>Registro de Compras</h3>
          {SECCIONES_COMPRAS.map((s) => (
            <ResumenTable id={`resumen-compras-${s}`} caption={`Compras · ${SECCION_COMPRAS_LABEL[s]}`} filas={resumen.compras[s] ?? []} />
          ))}
          <h3>Registro de Ventas</h3>
          <ResumenTable id="resumen-ventas" caption="Ventas" filas={resumen.ventas} />
        </>
      )}
    </section>
  )
}

// ------------------------------------------------------------------------------------------------ findings

/** Findings about sales point at issued documents (Documentos); the rest at received ones (Recibidos). */
const HALLAZGOS_DE_VENTAS = new Set(['emitido_sin_registro', 'venta_sin_documento', 'boleta_duplicada'])

function enlaceDe(h: HallazgoRecord, id: string): string {
  const deVentas = HALLAZGOS_DE_VENTAS.has(h.tipo) || h.documentos.some((d) => d.registro === 'ventas')
  return `${CONSOLE_PREFIX}/${deVentas ? 'documentos' : 'recibidos'}/${id}`
}

function DocumentoHallazgo(props: { h: HallazgoRecord; d: HallazgoRecord['documentos'][number] }) {
  const { d } = props
  const texto = `${nombreTipo(d.tipo_dte)} N° ${d.folio}, RUT ${formatRut(d.rut)}`
  const donde = d.origen === 'timbre' ? 'en Timbre' : d.registro === 'ventas' ? 'en el Registro de Ventas' : `en el Registro de Compras (${SECCION_COMPRAS_LABEL[d.registro ?? ''] ?? d.registro})`
  return (
    <li>
      {d.id !== null ? <a href={enlaceDe(props.h, d.id)}>{texto}</a> : texto} <span class="muted">{donde}</span>
    </li>
  )
}

function Hallazgo(props: { h: HallazgoRecord }) {
  const { h } = props
  return (
    <li class="hallazgo">
      <p>
        {h.mensaje}
        {h.dias_restantes !== undefined && (
          <>
            {' '}
            <DiasBadge dias={h.dias_restantes} />
          </>
        )}
      </p>
      <ul>
        {h.documentos.map((d) => (
          <DocumentoHallazgo h={h} d={d} />
        ))}
      </ul>
      {h.diferencias && h.diferencias.length > 0 && (
        <ul class="muted">
          {h.diferencias.map((d) => (
            <li>
              {d.campo}: Timbre {formatPesos(d.timbre)}, SII {formatPesos(d.sii)}
            </li>
          ))}
        </ul>
      )}
    </li>
  )
}

function HallazgosSection(props: { c: ConciliacionRecord }) {
  const { c } = props
  const tipos = Object.keys(c.por_tipo)
  return (
    <section class="card" aria-labelledby="hallazgos">
      <h2 id="hallazgos">Conciliación con el RCV</h2>
      {!c.completa && (
        <p class="muted">Sin copia del RCV: solo se muestra lo que Timbre sabe por sí mismo (compras por aceptar, notas sobre facturas reclamadas).</p>
      )}
      <p id="hallazgos-total">{c.total === 0 ? 'Sin hallazgos.' : c.total === 1 ? '1 hallazgo.' : `${c.total} hallazgos.`}</p>
      {tipos.map((tipo) => (
        <section aria-labelledby={`hallazgo-${tipo}`} class={`hallazgos hallazgos-${tipo}`}>
          <h3 id={`hallazgo-${tipo}`}>
            {HALLAZGO_LABEL[tipo] ?? tipo} ({c.por_tipo[tipo]})
          </h3>
          <ul>
            {c.hallazgos
              .filter((h) => h.tipo === tipo)
              .map((h) => (
                <Hallazgo h={h} />
              ))}
          </ul>
        </section>
      ))}
    </section>
  )
}

// ------------------------------------------------------------------------------------------------ F29

/** The F29's count lines (503, 519, …) carry documents, not pesos: domain/f29.ts names each «Cantidad de …». */
const esCantidad = (c: { glosa: string }) => c.glosa.startsWith('Cantidad')

function F29Section(props: { f: F29Record }) {
  const { f } = props
  return (
    <section class="card" aria-labelledby="f29">
      <h2 id="f29">Propuesta de F29</h2>
      <p>
        {f.origen === 'rcv' ? 'Calculada con la copia del RCV.' : 'Calculada con los documentos de Timbre (sin copia del RCV).'}{' '}
        {f.limpia ? <span class="badge badge-ok">Sin bloqueos</span> : <span class="badge badge-bad">Con advertencias que bloquean</span>}
      </p>
      <div class="table-wrap">
        <table id="f29-codigos" class="plegable">
          <caption class="muted">Solo los códigos que salen de documentos; los demás se completan en el formulario del SII.</caption>
          <thead>
            <tr>
              <th scope="col">Código</th>
              <th scope="col">Glosa</th>
              <th scope="col" class="num">
                Valor
              </th>
              <th scope="col" class="num col-menor">
                Documentos
              </th>
            </tr>
          </thead>
          <tbody>
            {f.codigos.map((c) => (
              <tr id={`f29-${c.codigo}`} class={c.codigo === f.resultado.codigo ? 'resultado' : undefined}>
                <td>{c.codigo}</td>
                <td>
                  {c.glosa}
                  {!c.confirmado && (
                    <>
                      {' '}
                      <span class="badge badge-warn">Sin confirmar</span>
                      <br />
                      <small class="muted">{c.fuente}</small>
                    </>
                  )}
                </td>
                <td class="num">{esCantidad(c) ? c.valor : formatPesos(c.valor)}</td>
                <td class="num col-menor">{c.documentos.length}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {f.advertencias.length > 0 && (
        <>
          <h3>Advertencias</h3>
          <ul id="f29-advertencias">
            {f.advertencias.map((a) => (
              <li>
                {a.bloquea ? <span class="badge badge-bad">Bloquea</span> : <span class="badge badge-neutral">Aviso</span>} {a.mensaje}
                {a.documentos.length > 0 && <span class="muted"> ({a.documentos.length === 1 ? '1 documento' : `${a.documentos.length} documentos`})</span>}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}

// ------------------------------------------------------------------------------------------------ downloads

const descarga = (archivo: string, periodo: string, extra: Record<string, string> = {}) =>
  `${BASE}/${archivo}?${new URLSearchParams({ periodo, ...extra }).toString()}`

function DescargasSection(props: { estado: EstadoRcvRecord; failure: Failure | null }) {
  const { periodo } = props.estado
  return (
    <section class="card" id="descargas" aria-labelledby="descargas-titulo">
      <h2 id="descargas-titulo">Descargas del RCV</h2>
      <ErrorSummary failure={props.failure} />
      {props.estado.sincronizado_at === null ? (
        <p>Las planillas del RCV salen de su copia: use «Leer del SII» y descárguelas cuando la copia esté al día.</p>
      ) : (
        <>
          <p class="muted">Los CSV tienen las columnas del SII (separados por punto y coma); las planillas .xlsx, un resumen y una hoja por sección.</p>
          <ul class="descargas">
            {SECCIONES_COMPRAS.map((s) => (
              <li>
                <a href={descarga('compras.csv', periodo, { seccion: s })} download>
                  Compras · {SECCION_COMPRAS_LABEL[s]} (CSV)
                </a>
              </li>
            ))}
            <li>
              <a href={descarga('ventas.csv', periodo)} download>
                Ventas (CSV)
              </a>
            </li>
            <li>
              <a href={descarga('compras.xlsx', periodo)} download>
                Registro de Compras (.xlsx)
              </a>
            </li>
            <li>
              <a href={descarga('ventas.xlsx', periodo)} download>
                Registro de Ventas (.xlsx)
              </a>
            </li>
          </ul>
        </>
      )}
    </section>
  )
}

function fileDownload(bytes: Uint8Array | string, contentType: string, fileName: string): Response {
  return new Response(typeof bytes === 'string' ? bytes : Buffer.from(bytes), {
    headers: { ...SECURITY_HEADERS, 'Content-Type': contentType, 'Content-Disposition': `attachment; filename="${fileName}"` },
  })
}

// ------------------------------------------------------------------------------------------------ the company's page

/** Failures shown inside the page, each beside what caused it: the «Leer del SII» form or the downloads. */
interface CompanyFailures {
  readonly sync?: Failure | null
  readonly descargas?: Failure | null
}

/** `periodo`: the one a POST's form named (its URL carries none); else the URL's. */
function companyPage(deps: Deps, request: Request, opts: { periodo?: string; failures?: CompanyFailures; status?: number; notice?: string | null } = {}): Response {
  const session = sessionOf(request)
  const periodo = opts.periodo ?? periodoPedido(deps, new URL(request.url))
  const empresaId = empresaIdOf(request)
  const now = deps.clock.now()
  const failure = periodoFailure(deps, periodo)
  const links = (
    <p class="actions">
      <a href={`${BASE}/pendientes`}>Compras por aceptar</a>
      {session.kind === 'admin' && <a href={`${BASE}/empresas?periodo=${encodeURIComponent(periodo)}`}>Todas las empresas</a>}
    </p>
  )
  if (failure !== null)
    return renderPage(deps, request, {
      title: TITLE,
      section: 'cierre-mes',
      status: STATUS.VALIDATION_ERROR,
      children: (
        <>
          <PeriodoPicker action={BASE} periodo={periodo} now={now} failure={failure} />
          {links}
        </>
      ),
    })
  const estado = estadoRcv(deps, { empresaId, periodo })
  return renderPage(deps, request, {
    title: `${TITLE}: ${periodoEnPalabras(periodo)}`,
    section: 'cierre-mes',
    status: opts.status,
    notice: opts.notice ?? null,
    children: (
      <>
        <PeriodoPicker action={BASE} periodo={periodo} now={now} failure={null} />
        {links}
        <SyncSection request={request} estado={estado} failure={opts.failures?.sync ?? null} />
        <ResumenSection estado={estado} />
        <HallazgosSection c={conciliacionDe(deps, { empresaId, periodo })} />
        <F29Section f={f29De(deps, { empresaId, periodo })} />
        <DescargasSection estado={estado} failure={opts.failures?.descargas ?? null} />
      </>
    ),
  })
}

/** The catalogue's words are the API's (POST /rcv/{periodo}/sincronizar); on a page the way out is the button. */
function noSincronizado(err: TimbreError): Failure {
  return { ...failureOf(err), action: 'Use «Leer del SII» en esta página y descargue cuando el estado diga «Copia al día».' }
}

/** A download of a period never read: the page again, with the API's 409 and the reason beside the downloads. */
async function withCopia(deps: Deps, request: Request, build: () => Response | Promise<Response>): Promise<Response> {
  try {
    return await build()
  } catch (err) {
    if (!(err instanceof TimbreError) || err.code !== 'RCV_NO_SINCRONIZADO') throw err
    return companyPage(deps, request, { failures: { descargas: noSincronizado(err) }, status: STATUS.RCV_NO_SINCRONIZADO })
  }
}

// ------------------------------------------------------------------------------------------------ the administrator's month

function requireAdmin(request: Request): void {
  // As empresas.tsx: the administrator's screens answer 404 to anyone else, as another company's data would.
  if (sessionOf(request).kind !== 'admin') throw new TimbreError('NOT_FOUND')
}

/** IVA a pagar in words: a negative value is a remanente de crédito fiscal (code 77), shown as such. */
function IvaResultado(props: { valor: number }) {
  if (props.valor < 0) return <span class="remanente">Remanente {formatPesos(-props.valor)}</span>
  return <>{formatPesos(props.valor)}</>
}

function MesTable(props: { request: Request; periodo: string; filas: readonly MesEmpresaRecord[] }) {
  const session = sessionOf(props.request)
  if (props.filas.length === 0) return <p>Aún no hay empresas en esta instalación.</p>
  return (
    <div class="table-wrap">
      <table id="mes-empresas" class="plegable">
        <caption class="muted">Débito (538), crédito (537) y el resultado: IVA a pagar (89) o remanente de crédito fiscal (77).</caption>
        <thead>
          <tr>
            <th scope="col">Empresa</th>
            <th scope="col" class="col-menor">
              RCV
            </th>
            <th scope="col" class="num col-menor">
              Hallazgos
            </th>
            <th scope="col" class="num col-menor">
              Por aceptar
            </th>
            <th scope="col" class="num col-menor">
              Débito
            </th>
            <th scope="col" class="num col-menor">
              Crédito
            </th>
            <th scope="col" class="num">
              IVA a pagar
            </th>
            <th scope="col" class="col-menor">
              Lista para declarar
            </th>
          </tr>
        </thead>
        <tbody>
          {props.filas.map((f) => (
            <tr data-empresa={f.empresa.id}>
              <td class="empresa">
                <span class="razon-social">{f.empresa.razon_social}</span>
                <br />
                <span class="muted rut">{formatRut(f.empresa.rut)}</span>
                {/* On a phone the folded columns come here: the name cell wraps, the amount cells do not. */}
                <span class="solo-telefono muted">
                  <EstadoRcvBadge estado={f.rcv.estado} />
                  <br />
                  Débito {formatPesos(f.debito)} · crédito {formatPesos(f.credito)} · {f.hallazgos === 1 ? '1 hallazgo' : `${f.hallazgos} hallazgos`}
                </span>
                <form method="post" action={`${BASE}/empresas/ver`}>
                  <CsrfInput session={session} />
                  <input type="hidden" name="empresa_id" value={f.empresa.id} />
                  <input type="hidden" name="periodo" value={props.periodo} />
                  <button type="submit" aria-label={`Ver el cierre de ${f.empresa.razon_social}`}>
                    Ver
                  </button>
                </form>
              </td>
              <td class="col-menor rcv">
                <EstadoRcvBadge estado={f.rcv.estado} />
                {f.rcv.falla !== null && <span class="muted"> {f.rcv.falla.mensaje}</span>}
              </td>
              <td class="num col-menor hallazgos">{f.hallazgos}</td>
              <td class="num col-menor pendientes">{f.pendientes}</td>
              <td class="num col-menor debito">{formatPesos(f.debito)}</td>
              <td class="num col-menor credito">{formatPesos(f.credito)}</td>
              <td class="num iva">
                <IvaResultado valor={f.iva_a_pagar} />
              </td>
              <td class="col-menor limpia">{f.limpia ? <span class="badge badge-ok">Sí</span> : <span class="badge badge-warn">No</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** A CSV cell: `;`, quotes and line breaks quoted with doubled quotes (RFC 4180), as the RCV's own CSV does (domain/rcv.ts). */
const celda = (v: string | number) => {
  const t = String(v)
  return /[;"\r\n]/.test(t) ? `"${t.replaceAll('"', '""')}"` : t
}

/**
 * The month table as a CSV: `;` and CRLF as the SII's RCV files, whole pesos without separators, the result both as a
 * signed number and in words. A UTF-8 BOM in front: this file is for a spreadsheet, and Excel reads a CSV without one
 * in the machine's code page, which turns «Ñuñoa» into mojibake (the RCV files follow the SII's own encoding instead).
 */
export function mesEmpresasCsv(periodo: string, filas: readonly MesEmpresaRecord[]): string {
  const header = ['Periodo', 'RUT', 'Razon social', 'Ambiente', 'Estado RCV', 'Sincronizado', 'Hallazgos', 'Pendientes de aceptacion', 'Debito (538)', 'Credito (537)', 'IVA a pagar', 'Resultado', 'Lista para declarar', 'Origen F29']
  const rows = filas.map((f) => [
    periodo, f.empresa.rut, f.empresa.razon_social, f.empresa.ambiente, f.rcv.estado, f.rcv.sincronizado_at ?? '', f.hallazgos, f.pendientes,
    f.debito, f.credito, f.iva_a_pagar, f.iva_a_pagar < 0 ? 'Remanente de credito fiscal (77)' : 'IVA a pagar (89)', f.limpia ? 'si' : 'no', f.origen_f29,
  ])
  return `\uFEFF${[header, ...rows].map((r) => `${r.map(celda).join(';')}\r\n`).join('')}`
}

function mesPage(deps: Deps, request: Request): Response {
  requireAdmin(request)
  const periodo = periodoPedido(deps, new URL(request.url))
  const now = deps.clock.now()
  const failure = periodoFailure(deps, periodo)
  const filas = failure === null ? mesDeEmpresas(deps, { periodo }) : []
  return renderPage(deps, request, {
    title: failure === null ? `${TITLE}: todas las empresas, ${periodoEnPalabras(periodo)}` : `${TITLE}: todas las empresas`,
    section: 'cierre-mes',
    status: failure === null ? 200 : STATUS.VALIDATION_ERROR,
    children: (
      <>
        <PeriodoPicker action={`${BASE}/empresas`} periodo={periodo} now={now} failure={failure} />
        <p class="actions">
          <a href={`${BASE}/pendientes`}>Compras por aceptar de todas las empresas</a>
          {failure === null && (
            <a href={`${BASE}/empresas.csv?periodo=${encodeURIComponent(periodo)}`} download>
              Descargar esta tabla (CSV)
            </a>
          )}
        </p>
        {failure === null && (
          <section class="card" aria-labelledby="mes">
            <h2 id="mes">Empresas</h2>
            <MesTable request={request} periodo={periodo} filas={filas} />
          </section>
        )}
      </>
    ),
  })
}

// ------------------------------------------------------------------------------------------------ pending board

function DiasBadge(props: { dias: number | null }) {
  const { dias } = props
  if (dias === null) return <span class="badge badge-info">Aún sin plazo</span>
  if (dias <= 0) return <span class="badge badge-bad">Vencido</span>
  return <span class={`badge ${dias <= PLAZO_AVISO_DIAS ? 'badge-warn' : 'badge-ok'}`}>{dias === 1 ? '1 día' : `${dias} días`}</span>
}

/**
 * The accept and claim of one row, by the Recibidos screen's own route (POST /recibidos/{id}/acciones, which checks the
 * plazo and order again); a claim needs its motivo, so it opens the document's form. A row of another company (the
 * administrator's board) first switches the console to that company.
 */
function PendienteAcciones(props: { request: Request; p: PendienteRecord }) {
  const { p } = props
  const session = sessionOf(props.request)
  const recibido = `${CONSOLE_PREFIX}/recibidos/${p.id}`
  if (p.empresa_id !== session.empresaId)
    return (
      <form method="post" action={`${BASE}/empresas/ver`}>
        <CsrfInput session={session} />
        <input type="hidden" name="empresa_id" value={p.empresa_id} />
        <input type="hidden" name="recibido_id" value={p.id} />
        <button type="submit">Responder en su empresa</button>
      </form>
    )
  if (!session.canWrite) return <a href={recibido}>Ver</a>
  return (
    <div class="actions">
      <form method="post" action={`${recibido}/acciones`} data-confirm="¿Aceptar el contenido del documento en el SII? No se puede deshacer.">
        <CsrfInput session={session} />
        <input type="hidden" name="accion" value="ACD" />
        <button type="submit" class="primary" aria-label={`Aceptar tipo ${p.tipo_dte} folio ${p.folio} de ${p.razon_social_emisor}`}>
          Aceptar
        </button>
      </form>
      <a class="button" href={`${recibido}#responder`} aria-label={`Reclamar tipo ${p.tipo_dte} folio ${p.folio} de ${p.razon_social_emisor}`}>
        Reclamar
      </a>
    </div>
  )
}

function PendientesTable(props: { request: Request; filas: readonly PendienteRecord[]; empresas: ReadonlyMap<string, { rut: string; razon_social: string }> | null }) {
  if (props.filas.length === 0) return <p id="sin-pendientes">No hay compras esperando aceptación.</p>
  return (
    <div class="table-wrap">
      <table id="pendientes" class="plegable">
        <caption class="muted">Facturas (33, 34) y liquidaciones-factura (43) sin aceptar ni reclamar; el plazo más próximo primero.</caption>
        <thead>
          <tr>
            {props.empresas !== null && <th scope="col">Empresa</th>}
            <th scope="col" class="col-menor">
              Emisor
            </th>
            <th scope="col">Documento</th>
            <th scope="col" class="num col-menor">
              Total
            </th>
            <th scope="col">Días restantes</th>
            <th scope="col">
              <span class="muted">Acciones</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.filas.map((p) => {
            const empresa = props.empresas?.get(p.empresa_id)
            return (
              <tr data-recibido={p.id}>
                {props.empresas !== null && (
                  <td>
                    {empresa?.razon_social ?? p.empresa_id}
                    {empresa && <span class="muted rut"> {formatRut(empresa.rut)}</span>}
                  </td>
                )}
                <td class="col-menor">
                  {p.razon_social_emisor}
                  <br />
                  <span class="muted">{formatRut(p.rut_emisor)}</span>
                </td>
                <td>
                  <abbr title={nombreTipo(p.tipo_dte)}>{p.tipo_dte}</abbr> N° {p.folio}
                  <span class="solo-telefono muted">
                    {p.razon_social_emisor} · {formatPesos(p.monto_total)}
                  </span>
                  <span class="muted"> · emitido el {formatFecha(p.fecha_emision)}</span>
                </td>
                <td class="num col-menor">{formatPesos(p.monto_total)}</td>
                <td class="dias">
                  <DiasBadge dias={p.dias_restantes} />
                  {p.plazo !== null && <span class="muted"> hasta {formatDateTime(p.plazo)}</span>}
                </td>
                <td>
                  <PendienteAcciones request={props.request} p={p} />
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

function pendientesPage(deps: Deps, request: Request): Response {
  const session = sessionOf(request)
  // The companies the person can see (DESIGN §16 "Pending acceptance board"): the administrator every one, a person
  // with an account each company of theirs, a company user (API key) its own.
  const visibles = session.kind === 'admin'
    ? listEmpresas(deps).map((e) => ({ id: e.id, rut: e.rut, razon_social: e.razon_social }))
    : session.kind === 'cuenta' && session.accountId !== null
      ? empresasOfAccount(deps, { accountId: session.accountId }).map((e) => ({ id: e.empresa_id, rut: e.rut, razon_social: e.razon_social }))
      : null
  const empresas = visibles !== null && visibles.length > 1 ? visibles : null
  const ids = visibles === null ? [empresaIdOf(request)] : visibles.map((e) => e.id)
  const filas = pendientesDe(deps, ids)
  return renderPage(deps, request, {
    title: 'Compras por aceptar',
    section: 'cierre-mes',
    children: (
      <section class="card" aria-labelledby="tablero">
        <h2 id="tablero">{empresas === null ? 'Compras de esta empresa por aceptar' : 'Compras por aceptar de todas las empresas'}</h2>
        <p class="muted">
          Pasados 8 días desde la recepción en el SII, una factura sin reclamo queda aceptada (Ley 19.983) y su crédito entra al mes.
        </p>
        <PendientesTable request={request} filas={filas} empresas={empresas === null ? null : new Map(empresas.map((e) => [e.id, { rut: e.rut, razon_social: e.razon_social }]))} />
      </section>
    ),
  })
}

// ------------------------------------------------------------------------------------------------ routes

export const cierreMesScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/cierre-mes', ({ request }) => {
      const session = sessionOf(request)
      // An administrator with no company chosen starts from the month of every company.
      if (session.kind === 'admin' && session.empresaId === null) return redirect(`${BASE}/empresas${new URL(request.url).search}`)
      return companyPage(deps, request, { notice: NOTICES[new URL(request.url).searchParams.get('aviso') ?? ''] ?? null })
    })
    .post('/cierre-mes/sincronizar', ({ request }) => {
      requireWrite(request)
      const periodo = textField(formOf(request), 'periodo') ?? ''
      try {
        solicitarSincronizacion(deps, { empresaId: empresaIdOf(request), periodo })
        return redirect(`${BASE}?${new URLSearchParams({ periodo, aviso: 'lectura' }).toString()}`)
      } catch (err) {
        if (!(err instanceof TimbreError) || (err.code !== 'CERTIFICATE_REQUIRED' && err.code !== 'VALIDATION_ERROR')) throw err
        const failure = err.code === 'CERTIFICATE_REQUIRED' ? { ...failureOf(err), action: 'Suba el certificado de la empresa en la sección Certificado.' } : failureOf(err)
        return companyPage(deps, request, { periodo, failures: { sync: failure }, status: STATUS[err.code] })
      }
    })
    // The same files as the API's (services/rcv.ts archivoRcv): one writer, the same bytes.
    .get('/cierre-mes/compras.csv', ({ request }) =>
      withCopia(deps, request, async () => {
        const { empresaId, periodo } = copiaPedida(deps, request)
        const file = await archivoRcv(deps, { empresaId, periodo, registro: 'compras', formato: 'csv', seccion: new URL(request.url).searchParams.get('seccion') ?? undefined, })
        return fileDownload(file.bytes, file.contentType, file.fileName)
      }),
    )
    .get('/cierre-mes/ventas.csv', ({ request }) =>
      withCopia(deps, request, async () => {
        const { empresaId, periodo } = copiaPedida(deps, request)
        const file = await archivoRcv(deps, { empresaId, periodo, registro: 'ventas', formato: 'csv', })
        return fileDownload(file.bytes, file.contentType, file.fileName)
      }),
    )
    .get('/cierre-mes/compras.xlsx', ({ request }) =>
      withCopia(deps, request, async () => {
        const { empresaId, periodo } = copiaPedida(deps, request)
        const file = await archivoRcv(deps, { empresaId, periodo, registro: 'compras', formato: 'xlsx', })
        return fileDownload(file.bytes, file.contentType, file.fileName)
      }),
    )
    .get('/cierre-mes/ventas.xlsx', ({ request }) =>
      withCopia(deps, request, async () => {
        const { empresaId, periodo } = copiaPedida(deps, request)
        const file = await archivoRcv(deps, { empresaId, periodo, registro: 'ventas', formato: 'xlsx', })
        return fileDownload(file.bytes, file.contentType, file.fileName)
      }),
    )
    .get('/cierre-mes/empresas', ({ request }) => mesPage(deps, request))
    .get('/cierre-mes/empresas.csv', ({ request }) => {
      requireAdmin(request)
      const periodo = checkPeriodo(periodoPedido(deps, new URL(request.url)), deps.clock.now())
      return fileDownload(mesEmpresasCsv(periodo, mesDeEmpresas(deps, { periodo })), 'text/csv; charset=utf-8', `cierre_${periodo}.csv`)
    })
    .post('/cierre-mes/empresas/ver', ({ request }) => {
      // The administrator's table and the board switch company; a person may switch only to one of theirs
      // (selectEmpresa refuses any other with 404, as another company's data).
      if (sessionOf(request).kind !== 'admin' && sessionOf(request).kind !== 'cuenta') throw new TimbreError('NOT_FOUND')
      const form = formOf(request)
      const empresaId = textField(form, 'empresa_id')
      if (empresaId === null) return redirect(`${BASE}/empresas`)
      selectEmpresa(deps, { session: sessionOf(request), empresaId })
      const recibidoId = textField(form, 'recibido_id')
      if (recibidoId !== null) return redirect(`${CONSOLE_PREFIX}/recibidos/${pathId(recibidoId)}#responder`)
      const periodo = textField(form, 'periodo')
      return redirect(periodo === null ? BASE : `${BASE}?${new URLSearchParams({ periodo }).toString()}`)
    })
    .get('/cierre-mes/pendientes', ({ request }) => pendientesPage(deps, request))

/** The company and the checked period of a download (400 for a bad period, as the API). */
function copiaPedida(deps: Deps, request: Request): { empresaId: string; periodo: string } {
  return { empresaId: empresaIdOf(request), periodo: periodoPedido(deps, new URL(request.url)) }
}
