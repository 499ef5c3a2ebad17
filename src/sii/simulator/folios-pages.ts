// The folio pages' HTML (src/sii/folios-protocol.ts; docs/decisions/simulator.md "Folios (timbraje)"): every value an
// `<input name value>` inside a `<form method="post" action>`, the document type a `<select name="COD_DOCTO">`, the texts
// the client tells the pages apart by. Pure: folios-service.ts decides which page and writes it as ISO-8859-1.
import { FOLIOS_ACEPTAR, FOLIOS_FIELDS as F, FOLIOS_PATHS, FOLIOS_TEXTS } from '../folios-protocol'
import { MAX_AUTOR_DEFAULT } from './folios-store'

/** One input of a form: hidden unless editable (a text box the user fills or may change). */
export interface Campo {
  readonly name: string
  readonly value: string
  readonly isEditable?: boolean
}

/** The company a form is about, as RUT_EMP and DV_EMP carry it. */
export interface EmpresaForm {
  readonly rutEmp: string
  readonly dvEmp: string
}

/** What step 3 shows of a type (research §4.2 step 3). */
export interface CifrasTipo {
  readonly maxAutor: number
  readonly foliosDisp: number
}

/** A range on the confirmation, grant and annulment pages. */
export interface Rango extends EmpresaForm {
  readonly tipo: number
  readonly folioIni: number
  readonly folioFin: number
}

const NOMBRES_TIPO: ReadonlyMap<number, string> = new Map([
  [33, 'Factura Electrónica'], [34, 'Factura No Afecta o Exenta Electrónica'], [39, 'Boleta Electrónica'], [41, 'Boleta Exenta Electrónica'],
  [43, 'Liquidación Factura Electrónica'], [46, 'Factura de Compra Electrónica'], [52, 'Guía de Despacho Electrónica'],
  [56, 'Nota de Débito Electrónica'], [61, 'Nota de Crédito Electrónica'], [110, 'Factura de Exportación Electrónica'],
  [111, 'Nota de Débito de Exportación Electrónica'], [112, 'Nota de Crédito de Exportación Electrónica'],
])

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

function page(title: string, body: string): string {
  return '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">' +
    `<title>SII - ${escapeHtml(title)}</title></head><body><h2>${escapeHtml(title)}</h2>${body}</body></html>`
}

function input(c: Campo): string {
  return `<input type="${c.isEditable === true ? 'text' : 'hidden'}" name="${escapeHtml(c.name)}" value="${escapeHtml(c.value)}">`
}

function form(action: string, campos: readonly Campo[], aceptar: string | null, extra = ''): string {
  const submit = aceptar === null ? '' : `<input type="submit" name="${F.aceptar}" value="${escapeHtml(aceptar)}">`
  return `<form method="post" action="${escapeHtml(action)}">${campos.map(input).join('')}${extra}${submit}</form>`
}

function empresaCampos(e: EmpresaForm): Campo[] {
  return [{ name: F.rut, value: e.rutEmp }, { name: F.dv, value: e.dvEmp }]
}

function selectTipo(selected: number | null): string {
  const options = [...MAX_AUTOR_DEFAULT.keys()].map((t) => `<option value="${t}"${t === selected ? ' selected' : ''}>${escapeHtml(NOMBRES_TIPO.get(t) ?? String(t))}</option>`)
  return `<select name="${F.tipo}" onChange="document.forms[0].submit()"><option value="">Seleccione</option>${options.join('')}</select>`
}

/** Step 1: the company's RUT. */
export function solicitaPage(): string {
  return page('Solicitud de Timbraje Electrónico', '<p>Ingrese el RUT de la empresa.</p>' +
    form(FOLIOS_PATHS.solicitaDcto, [{ name: F.rut, value: '', isEditable: true }, { name: F.dv, value: '', isEditable: true }], FOLIOS_ACEPTAR.continuar))
}

/** Step 2: the type to ask for. */
export function tipoPage(e: EmpresaForm): string {
  return page('Solicitud de Timbraje Electrónico', `<p>Empresa ${escapeHtml(e.rutEmp)}-${escapeHtml(e.dvEmp)}. Seleccione el tipo de documento.</p>` +
    form(FOLIOS_PATHS.solicitaDcto, empresaCampos(e), null, selectTipo(null)))
}

/** Step 3: the type's figures and the quantity to ask for (AFECTO_IVA for boletas only). */
export function cifrasPage(e: EmpresaForm, tipo: number, cifras: CifrasTipo): string {
  const campos: Campo[] = [
    ...empresaCampos(e),
    { name: F.maxAutor, value: String(cifras.maxAutor) },
    { name: F.foliosDisp, value: String(cifras.foliosDisp) },
    { name: F.factor, value: '1' },
    { name: F.conCredito, value: '0' },
    { name: F.conAjuste, value: '0' },
    { name: F.cantidad, value: '', isEditable: true },
    ...(tipo === 39 || tipo === 41 ? [{ name: F.afectoIva, value: tipo === 39 ? 'S' : 'N', isEditable: true }] : []),
  ]
  return page('Solicitud de Timbraje Electrónico',
    `<p>Máximo autorizado: ${cifras.maxAutor}. Folios disponibles sin usar: ${cifras.foliosDisp}.</p>` +
    form(FOLIOS_PATHS.solicitaDcto, campos, FOLIOS_ACEPTAR.solicitar, selectTipo(tipo)))
}

/** Step 4 on a type's first timbraje: the initial folio, which the user may change. */
export function confirmarInicialPage(e: EmpresaForm, tipo: number, cantidad: number, folioIni: number): string {
  const campos: Campo[] = [...empresaCampos(e), { name: F.tipo, value: String(tipo) }, { name: F.cantidad, value: String(cantidad) }, { name: F.folioIni, value: String(folioIni), isEditable: true }]
  return page('Solicitud de Timbraje Electrónico', `<p>Es el primer timbraje de este tipo de documento. ${FOLIOS_TEXTS.confirmarInicial}.</p>` +
    form(FOLIOS_PATHS.confirma, campos, FOLIOS_ACEPTAR.confirmarInicial))
}

/** Step 4: the range the grant will give, to confirm with Obtener Folios. */
export function confirmaPage(r: Rango, nomUsu: string): string {
  const campos: Campo[] = [
    ...empresaCampos(r), { name: F.tipo, value: String(r.tipo) }, { name: F.folioIni, value: String(r.folioIni) }, { name: F.folioFin, value: String(r.folioFin) },
    { name: F.nomUsu, value: nomUsu }, { name: F.cantidad, value: String(r.folioFin - r.folioIni + 1) },
  ]
  return page('Solicitud de Timbraje Electrónico', `<p>Se otorgarán los folios ${r.folioIni} al ${r.folioFin}.</p>` + form(FOLIOS_PATHS.genera, campos, FOLIOS_ACEPTAR.obtener))
}

/** Step 5: the grant done; the CAF is downloaded from here (and again later with the same form). */
export function otorgadoPage(r: Rango, fecha: string): string {
  const campos: Campo[] = [
    ...empresaCampos(r), { name: F.tipo, value: String(r.tipo) }, { name: F.folioIni, value: String(r.folioIni) }, { name: F.folioFin, value: String(r.folioFin) },
    { name: F.fecha, value: fecha },
  ]
  return page('Folios Otorgados', `<p>Se otorgaron los folios ${r.folioIni} al ${r.folioFin} con fecha ${fecha}. Para obtener el archivo haga clic</p>` +
    form(FOLIOS_PATHS.archivo, campos, FOLIOS_ACEPTAR.descargar))
}

/** The annulment done. */
export function anuladoPage(r: Rango): string {
  return page('Anulación de Folios', `<p>Folios anulados: tipo ${r.tipo}, del ${r.folioIni} al ${r.folioFin}.</p>`)
}

/** Every refusal: the SII's generic sentence, then a code (when there is one) and why. Never a form. */
export function rechazoPage(motivo: string, codigo: string | null = null): string {
  return page('Solicitud de Timbraje Electrónico', `<p>${FOLIOS_TEXTS.noPosible}.</p><p>${codigo === null ? '' : `${escapeHtml(codigo)}: `}${escapeHtml(motivo)}</p>`)
}

/** The inputs pagina_cambiada renames: a portal that changed its form under the client. */
const NOMBRES_CAMBIADOS: ReadonlyArray<readonly [string, string]> = [
  [F.maxAutor, 'MAXIMO'], [F.foliosDisp, 'DISPONIBLES'], [F.cantidad, 'CANTIDAD'], [F.folioIni, 'FOLIO_INICIAL'], [F.folioFin, 'FOLIO_FINAL'], [F.fecha, 'FECHA_AUT'],
]

/** Whether the page carries an input pagina_cambiada would rename: the fault waits for such a page. */
export function tieneNombresCambiables(html: string): boolean {
  return NOMBRES_CAMBIADOS.some(([from]) => html.includes(`name="${from}"`))
}

/** The page with its inputs renamed (the pagina_cambiada fault). */
export function conNombresCambiados(html: string): string {
  return NOMBRES_CAMBIADOS.reduce((text, [from, to]) => text.replaceAll(`name="${from}"`, `name="${to}"`), html)
}
