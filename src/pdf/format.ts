// How values read on paper in Chile: thousands with '.', decimals with ',', RUT with dots, dates in Spanish, and the
// codes SII-FMT marks "P" (print as words, docs/sii-protocol.md §9) turned into words.
import { parseRut, formatRutWithDots } from '../domain/rut'
import { TIPOS } from '../domain/tipos'
import { isTipoDte } from '../domain/emision'

/** `1234567.5` → `1.234.567,5`, from the XML's decimal text (never through a float, so no digit is lost). */
export function formatNumber(decimal: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(decimal.trim())
  if (match === null) return decimal
  const [, sign, int, frac] = match as unknown as [string, string, string, string | undefined]
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, '.')
  return `${sign}${grouped}${frac === undefined ? '' : `,${frac}`}`
}

/** Amounts in pesos carry the `$` sign; amounts in another currency are printed bare beside the currency's name. */
export function formatMonto(decimal: string, moneda?: string): string {
  return moneda === undefined || moneda === 'PESO CL' ? `$ ${formatNumber(decimal)}` : formatNumber(decimal)
}

/** `12345678-5` → `12.345.678-5`; anything unreadable is printed as written. */
export function formatRut(rut: string): string {
  const parsed = parseRut(rut)
  return parsed === null ? rut : formatRutWithDots(parsed)
}

const MESES = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre']

/** `2025-06-30` → `30 de junio de 2025`. */
export function formatFechaLarga(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso)
  const mes = m === null ? undefined : MESES[Number(m[2]) - 1]
  return m === null || mes === undefined ? iso : `${Number(m[3])} de ${mes} de ${m[1]}`
}

/** `2025-06-30` → `30-06-2025`, for tables. */
export function formatFecha(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso)
  return m === null ? iso : `${m[3]}-${m[2]}-${m[1]}`
}

/** Printed name of a document type code: the SII's names for DTEs, the usual ones for paper documents and SII codes. */
export function nombreTipoDocumento(code: string): string {
  const n = Number(code)
  if (/^\d+$/.test(code) && isTipoDte(n)) return TIPOS[n].nombre
  return TIPOS_DOC_REF[code] ?? code
}

// SII-FMT "TpoDocRef": paper documents (30–60) and the 801–815 references; unknown codes are printed as written.
const TIPOS_DOC_REF: Readonly<Record<string, string>> = {
  '30': 'FACTURA',
  '32': 'FACTURA NO AFECTA O EXENTA',
  '35': 'BOLETA',
  '38': 'BOLETA EXENTA',
  '45': 'FACTURA DE COMPRA',
  '50': 'GUÍA DE DESPACHO',
  '55': 'NOTA DE DÉBITO',
  '60': 'NOTA DE CRÉDITO',
  '801': 'ORDEN DE COMPRA',
  '802': 'NOTA DE PEDIDO',
  '803': 'CONTRATO',
  '804': 'RESOLUCIÓN',
  '805': 'PROCESO CHILECOMPRA',
  '806': 'FICHA CHILECOMPRA',
  '807': 'DUS',
  '808': 'B/L (CONOCIMIENTO DE EMBARQUE)',
  '809': 'AWB (GUÍA AÉREA)',
  '810': 'MIC/DTA',
  '811': 'CARTA DE PORTE',
  '812': 'RESOLUCIÓN DEL SNA',
  '813': 'PASAPORTE',
  '814': 'CERTIFICADO DE DEPÓSITO BOLSA PROD. CHILE',
  '815': 'VALE DE PRENDA BOLSA PROD. CHILE',
  SET: 'SET DE PRUEBAS SII',
  HES: 'HOJA DE ENTRADA DE SERVICIO',
}

/** docs/sii-protocol.md §2.2: CodRef. */
export const COD_REF: Readonly<Record<string, string>> = {
  '1': 'Anula documento de referencia',
  '2': 'Corrige texto del documento de referencia',
  '3': 'Corrige montos',
}

/** docs/sii-protocol.md §2.2: IndTraslado of a guía (52). */
export const IND_TRASLADO: Readonly<Record<string, string>> = {
  '1': 'Operación constituye venta',
  '2': 'Ventas por efectuar',
  '3': 'Consignaciones',
  '4': 'Entrega gratuita',
  '5': 'Traslado interno',
  '6': 'Otros traslados no venta',
  '7': 'Guía de devolución',
  '8': 'Traslado para exportación (no venta)',
  '9': 'Venta para exportación',
}

/** docs/sii-protocol.md §2.2: TipoDespacho. */
export const TIPO_DESPACHO: Readonly<Record<string, string>> = {
  '1': 'Por cuenta del receptor',
  '2': 'Por cuenta del emisor a instalaciones del cliente',
  '3': 'Por cuenta del emisor a otras instalaciones',
}

/** docs/sii-protocol.md §2.2: FmaPago. */
export const FORMA_PAGO: Readonly<Record<string, string>> = { '1': 'Contado', '2': 'Crédito', '3': 'Sin costo (entrega gratuita)' }

/** Labels of the Customs (Aduana) fields of an export (DTE_v10.xsd names → words). */
export const ADUANA_LABELS: Readonly<Record<string, string>> = {
  CodModVenta: 'Modalidad de venta',
  CodClauVenta: 'Cláusula de venta',
  TotClauVenta: 'Total cláusula',
  CodViaTransp: 'Vía de transporte',
  NombreTransp: 'Transporte',
  RUTCiaTransp: 'RUT cía. transporte',
  NomCiaTransp: 'Cía. transporte',
  Booking: 'Booking',
  Operador: 'Operador',
  CodPtoEmbarque: 'Puerto de embarque',
  IdAdicPtoEmb: 'Puerto de embarque',
  CodPtoDesemb: 'Puerto de desembarque',
  IdAdicPtoDesemb: 'Puerto de desembarque',
  Tara: 'Tara',
  CodUnidMedTara: 'Unidad tara',
  PesoBruto: 'Peso bruto',
  CodUnidPesoBruto: 'Unidad peso bruto',
  PesoNeto: 'Peso neto',
  CodUnidPesoNeto: 'Unidad peso neto',
  TotItems: 'Total ítems',
  TotBultos: 'Total bultos',
  CodTpoBultos: 'Tipo de bulto',
  CantBultos: 'Cantidad de bultos',
  Marcas: 'Marcas',
  IdContainer: 'Contenedor',
  Sello: 'Sello',
  EmisorSello: 'Emisor sello',
  MntFlete: 'Flete',
  MntSeguro: 'Seguro',
  CodPaisRecep: 'País receptor',
  CodPaisDestin: 'País destino',
}

/** A code of `table` with its name, `5 (FOB)`, when the project knows the name (domain/tipos.ts tables). */
export function codeWithName(code: string, table: Readonly<Record<string, number>>): string {
  const name = Object.keys(table).find((k) => String(table[k]) === code)
  return name === undefined ? code : `${code} (${name})`
}
