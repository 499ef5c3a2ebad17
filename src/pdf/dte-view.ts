// What the printed representation shows, read from the signed DTE and nothing else (DESIGN §12: "the PDF prints the
// signed XML's text"). Values stay as the XML writes them (amounts as decimal text); formatting is the layout's job.
import { childElements, findElement, flattenElement, parseXml, textOf } from '../xml/latin1'

export interface EmisorView {
  readonly rut: string
  readonly razonSocial: string
  readonly giro: string
  readonly acteco: readonly string[]
  readonly direccion?: string
  readonly comuna?: string
  readonly ciudad?: string
  readonly telefonos: readonly string[]
  readonly correo?: string
  readonly sucursal?: string
}

export interface ReceptorView {
  readonly rut: string
  readonly razonSocial: string
  readonly giro?: string
  readonly direccion?: string
  readonly comuna?: string
  readonly ciudad?: string
  readonly contacto?: string
  readonly correo?: string
  readonly nacionalidad?: string
  readonly numId?: string
}

export interface LineaView {
  readonly nro: string
  readonly codigos: readonly string[]
  readonly nombre: string
  readonly descripcion?: string
  readonly cantidad?: string
  readonly unidad?: string
  readonly precio?: string
  readonly descuentoPct?: string
  readonly descuentoMonto?: string
  readonly recargoPct?: string
  readonly recargoMonto?: string
  readonly indExe?: string
  /** Liquidación (43): the code of the liquidated document. */
  readonly tpoDocLiq?: string
  readonly codImpAdic: readonly string[]
  readonly monto: string
}

export interface DescuentoGlobalView {
  readonly tpoMov: string
  readonly glosa?: string
  readonly tpoValor: string
  readonly valor: string
  readonly indExe?: string
}

export interface ReferenciaView {
  readonly tpoDocRef: string
  readonly folioRef: string
  readonly fchRef: string
  readonly codRef?: string
  readonly razonRef?: string
}

export interface ComisionView {
  readonly tipoMovim: string
  readonly glosa: string
  readonly tasa?: string
  readonly neto: string
  readonly exento: string
  readonly iva?: string
}

export interface ImpuestoView {
  readonly tipo: string
  readonly tasa?: string
  readonly monto: string
}

export interface TotalesView {
  /** Exports: the currency of the amounts (TpoMoneda), e.g. `DOLAR USA`. */
  readonly moneda?: string
  readonly neto?: string
  readonly exento?: string
  readonly tasaIva?: string
  readonly iva?: string
  readonly impuestos: readonly ImpuestoView[]
  readonly ivaNoRetenido?: string
  readonly comisionNeto?: string
  readonly comisionExento?: string
  readonly comisionIva?: string
  readonly montoNoFacturable?: string
  readonly total: string
}

export interface OtraMonedaView {
  readonly moneda: string
  readonly tipoCambio?: string
  readonly exento?: string
  readonly total: string
}

export interface DteView {
  readonly tipoDte: number
  readonly folio: string
  readonly fechaEmision: string
  readonly indTraslado?: string
  readonly tipoDespacho?: string
  readonly formaPago?: string
  readonly formaPagoExportacion?: string
  readonly fechaVencimiento?: string
  readonly montosBrutos: boolean
  readonly emisor: EmisorView
  readonly receptor: ReceptorView
  /** Customs data of an export (Transporte/Aduana), as element name → text, in document order. */
  readonly aduana: ReadonlyArray<readonly [string, string]>
  readonly totales: TotalesView
  readonly otraMoneda?: OtraMonedaView
  readonly detalle: readonly LineaView[]
  readonly descuentosGlobales: readonly DescuentoGlobalView[]
  readonly referencias: readonly ReferenciaView[]
  readonly comisiones: readonly ComisionView[]
  /** The TED element flattened, no namespace declarations: the text the PDF417 carries (docs/sii-protocol.md §9). */
  readonly ted: string
}

/** Reads the stored, signed DTE (the XML text, already decoded from ISO-8859-1). Throws when it is not a DTE. */
export function readDteView(xml: string): DteView {
  const root = parseXml(xml).documentElement
  const doc = childElements(root).find((e) => ['Documento', 'Liquidacion', 'Exportaciones'].includes(e.localName))
  if (doc === undefined) throw new Error('not a DTE: no Documento, Liquidacion or Exportaciones')
  const encabezado = need(doc, 'Encabezado')
  const idDoc = need(encabezado, 'IdDoc')
  const ted = findElement(doc, 'TED')
  if (ted === null) throw new Error('DTE without TED')
  const otra = kid(encabezado, 'OtraMoneda')
  return {
    tipoDte: Number(text(idDoc, 'TipoDTE')),
    folio: text(idDoc, 'Folio'),
    fechaEmision: text(idDoc, 'FchEmis'),
    indTraslado: opt(idDoc, 'IndTraslado'),
    tipoDespacho: opt(idDoc, 'TipoDespacho'),
    formaPago: opt(idDoc, 'FmaPago'),
    formaPagoExportacion: opt(idDoc, 'FmaPagExp'),
    fechaVencimiento: opt(idDoc, 'FchVenc'),
    montosBrutos: opt(idDoc, 'MntBruto') === '1',
    emisor: readEmisor(need(encabezado, 'Emisor')),
    receptor: readReceptor(need(encabezado, 'Receptor')),
    aduana: readAduana(kid(encabezado, 'Transporte')),
    totales: readTotales(need(encabezado, 'Totales')),
    otraMoneda: otra === undefined ? undefined : { moneda: text(otra, 'TpoMoneda'), tipoCambio: opt(otra, 'TpoCambio'), exento: opt(otra, 'MntExeOtrMnda'), total: text(otra, 'MntTotOtrMnda') },
    detalle: kids(doc, 'Detalle').map(readLinea),
    descuentosGlobales: kids(doc, 'DscRcgGlobal').map((d) => ({
      tpoMov: text(d, 'TpoMov'),
      glosa: opt(d, 'GlosaDR'),
      tpoValor: text(d, 'TpoValor'),
      valor: text(d, 'ValorDR'),
      indExe: opt(d, 'IndExeDR'),
    })),
    referencias: kids(doc, 'Referencia').map((r) => ({
      tpoDocRef: text(r, 'TpoDocRef'),
      folioRef: text(r, 'FolioRef'),
      fchRef: text(r, 'FchRef'),
      codRef: opt(r, 'CodRef'),
      razonRef: opt(r, 'RazonRef'),
    })),
    comisiones: kids(doc, 'Comisiones').map((c) => ({
      tipoMovim: text(c, 'TipoMovim'),
      glosa: text(c, 'Glosa'),
      tasa: opt(c, 'TasaComision'),
      neto: text(c, 'ValComNeto'),
      exento: text(c, 'ValComExe'),
      iva: opt(c, 'ValComIVA'),
    })),
    ted: flattenElement(ted),
  }
}

function readEmisor(e: Element): EmisorView {
  // Boletas spell the issuer's name and activity RznSocEmisor / GiroEmisor (EnvioBOLETA_v11.xsd) and carry no Acteco.
  return {
    rut: text(e, 'RUTEmisor'),
    razonSocial: opt(e, 'RznSoc') ?? text(e, 'RznSocEmisor'),
    giro: opt(e, 'GiroEmis') ?? opt(e, 'GiroEmisor') ?? '',
    acteco: kids(e, 'Acteco').map(textOf),
    direccion: opt(e, 'DirOrigen'),
    comuna: opt(e, 'CmnaOrigen'),
    ciudad: opt(e, 'CiudadOrigen'),
    telefonos: kids(e, 'Telefono').map(textOf),
    correo: opt(e, 'CorreoEmisor'),
    sucursal: opt(e, 'Sucursal'),
  }
}

function readReceptor(r: Element): ReceptorView {
  const ext = kid(r, 'Extranjero')
  return {
    rut: text(r, 'RUTRecep'),
    razonSocial: text(r, 'RznSocRecep'),
    giro: opt(r, 'GiroRecep'),
    direccion: opt(r, 'DirRecep'),
    comuna: opt(r, 'CmnaRecep'),
    ciudad: opt(r, 'CiudadRecep'),
    contacto: opt(r, 'Contacto'),
    correo: opt(r, 'CorreoRecep'),
    nacionalidad: ext === undefined ? undefined : opt(ext, 'Nacionalidad'),
    numId: ext === undefined ? undefined : opt(ext, 'NumId'),
  }
}

function readAduana(transporte: Element | undefined): ReadonlyArray<readonly [string, string]> {
  const aduana = transporte === undefined ? undefined : kid(transporte, 'Aduana')
  if (aduana === undefined) return []
  const out: Array<readonly [string, string]> = []
  for (const e of childElements(aduana)) {
    if (e.localName !== 'TipoBultos') out.push([e.localName, textOf(e)])
    else for (const b of childElements(e)) out.push([b.localName, textOf(b)])
  }
  return out
}

function readTotales(t: Element): TotalesView {
  const com = kid(t, 'Comisiones')
  return {
    moneda: opt(t, 'TpoMoneda'),
    neto: opt(t, 'MntNeto'),
    exento: opt(t, 'MntExe'),
    tasaIva: opt(t, 'TasaIVA'),
    iva: opt(t, 'IVA'),
    impuestos: kids(t, 'ImptoReten').map((i) => ({ tipo: text(i, 'TipoImp'), tasa: opt(i, 'TasaImp'), monto: text(i, 'MontoImp') })),
    ivaNoRetenido: opt(t, 'IVANoRet'),
    comisionNeto: com === undefined ? undefined : opt(com, 'ValComNeto'),
    comisionExento: com === undefined ? undefined : opt(com, 'ValComExe'),
    comisionIva: com === undefined ? undefined : opt(com, 'ValComIVA'),
    montoNoFacturable: opt(t, 'MontoNF'),
    total: text(t, 'MntTotal'),
  }
}

function readLinea(d: Element): LineaView {
  return {
    nro: text(d, 'NroLinDet'),
    codigos: kids(d, 'CdgItem').map((c) => opt(c, 'VlrCodigo') ?? '').filter((c) => c !== ''),
    nombre: text(d, 'NmbItem'),
    descripcion: opt(d, 'DscItem'),
    cantidad: opt(d, 'QtyItem'),
    unidad: opt(d, 'UnmdItem'),
    precio: opt(d, 'PrcItem'),
    descuentoPct: opt(d, 'DescuentoPct'),
    descuentoMonto: opt(d, 'DescuentoMonto'),
    recargoPct: opt(d, 'RecargoPct'),
    recargoMonto: opt(d, 'RecargoMonto'),
    indExe: opt(d, 'IndExe'),
    tpoDocLiq: opt(d, 'TpoDocLiq'),
    codImpAdic: kids(d, 'CodImpAdic').map(textOf),
    monto: text(d, 'MontoItem'),
  }
}

function kids(parent: Element, name: string): Element[] {
  return childElements(parent).filter((e) => e.localName === name)
}

function kid(parent: Element, name: string): Element | undefined {
  return childElements(parent).find((e) => e.localName === name)
}

function need(parent: Element, name: string): Element {
  const found = kid(parent, name)
  if (found === undefined) throw new Error(`DTE: missing ${parent.localName}/${name}`)
  return found
}

function text(parent: Element, name: string): string {
  return textOf(need(parent, name))
}

function opt(parent: Element, name: string): string | undefined {
  const found = kid(parent, name)
  return found === undefined ? undefined : textOf(found)
}
