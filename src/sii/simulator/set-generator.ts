// The simulator's "Generación de set de pruebas" (DESIGN §15 "Simulator"): a new set text in the SII's 2026 layout
// (research/next-capabilities.md §1.3), as the SII writes it for a company in certification, so a company can rehearse
// the whole set against the simulated SII. Each set's cases follow the SII's real texts (test/fixtures/sii/sets/, the
// older layout, and sintetico-2026.txt for the header and the separators); item names, quantities, prices, discounts,
// customs data and the compras grid vary with the seed. Pure and seeded: the same seed and sets give the same bytes.
// Whatever this writes, domain/set-pruebas.ts reads back as exactly these cases (test/unit/sii/set-generator.test.ts).
import type { TipoDte } from '../../domain/emision'
import type { NombreSet } from '../../domain/set-pruebas'

/** What `--sets` offers: one word per documents set, and `libros` for the libros that go with them. */
export const SETS_GENERABLES = ['basico', 'exenta', 'guia', 'compra', 'exportacion1', 'exportacion2', 'libros'] as const
export type SetGenerable = (typeof SETS_GENERABLES)[number]

export interface SetGenerationInput {
  readonly seed: number
  /** At least one; order does not matter: the file follows the SII's order (NOMBRES_SET). */
  readonly sets: readonly SetGenerable[]
  /** The first set's número de atención; the following sets take the next numbers. */
  readonly numeroAtencion: number
}

/** One item line as the case writes it; absent fields are not written (a note's rows give only what changes). */
export interface ItemGenerado {
  readonly nombre: string
  readonly cantidad?: number
  readonly precio?: number
  readonly unidad?: string
  readonly descuento_pct?: number
  /** Set by a sentence after the table ("%10 RECARGO EN LA LINEA DE ITEM …"), not by a column. */
  readonly recargo_pct?: number
}

export interface CasoGenerado {
  /** `<n>-<k>`. */
  readonly caso: string
  readonly tipoDte: TipoDte
  readonly items: readonly ItemGenerado[]
  readonly referencia?: { readonly caso: string; readonly razon: string }
  readonly descuentoGlobalPct?: number
}

export interface CompraGenerada {
  readonly tipoDocumento: string
  readonly folio: number
  readonly observacion: string
  readonly montoExento: number
  readonly montoAfecto: number
}

export interface SetGenerado {
  readonly nombre: NombreSet
  readonly numeroAtencion: number
  readonly casos: readonly CasoGenerado[]
  readonly compras?: readonly CompraGenerada[]
  readonly factorProporcionalidad?: number
  /** LIBRO DE GUIAS: the cases (k) of GUIA DE DESPACHO invoiced in the period and annulled. */
  readonly guiaFacturada?: number
  readonly guiaAnulada?: number
}

export interface ArchivoGenerado {
  /** The file as the SII hands it over: ISO-8859-1, CRLF line ends. */
  readonly bytes: Uint8Array
  readonly sets: readonly SetGenerado[]
}

/**
 * Which sets the file holds, in the SII's order. `libros` brings LIBRO DE COMPRAS always, LIBRO DE VENTAS only with
 * BASICO or FACTURA EXENTA (it is built from their documents) and LIBRO DE GUIAS only with GUIA DE DESPACHO (research
 * §1.2: "LibroGuia if the guía set was requested").
 */
export function setsOf(chosen: readonly SetGenerable[]): NombreSet[] {
  const has = (s: SetGenerable) => chosen.includes(s)
  const libros = has('libros')
  const names: [boolean, NombreSet][] = [
    [has('basico'), 'BASICO'],
    [has('exenta'), 'FACTURA EXENTA'],
    [has('guia'), 'GUIA DE DESPACHO'],
    [has('compra'), 'FACTURA DE COMPRA'],
    [has('exportacion1'), 'EXPORTACION 1'],
    [has('exportacion2'), 'EXPORTACION 2'],
    [libros && (has('basico') || has('exenta')), 'LIBRO DE VENTAS'],
    [libros, 'LIBRO DE COMPRAS'],
    [libros && has('guia'), 'LIBRO DE GUIAS'],
  ]
  return names.filter(([included]) => included).map(([, nombre]) => nombre)
}

export function generateSetPruebas(input: SetGenerationInput): ArchivoGenerado {
  const nombres = setsOf(input.sets)
  if (nombres.length === 0) throw new RangeError('generateSetPruebas: no sets chosen')
  const rng = new Rng(input.seed)
  const lines = [...INDICACIONES]
  const sets = nombres.map((nombre, i) => {
    const numero = input.numeroAtencion + i
    const block = new Block(numero)
    const set = WRITERS[nombre](block, rng)
    lines.push(RULE_SETS, `SET ${nombre} - NUMERO DE ATENCION: ${numero}`, '', ...block.lines)
    return { nombre, numeroAtencion: numero, casos: block.casos, ...set }
  })
  return { bytes: latin1(`${lines.join('\r\n')}\r\n`), sets }
}

// ------------------------------------------------------------------------------------------------ layout

/** The 2026 layout's header (research §1.3), as sintetico-2026.txt writes it. */
const INDICACIONES = [
  'INDICACIONES GENERALES:',
  '',
  '- IMPRIMA LOS DOCUMENTOS DEL SET EN SU EJEMPLAR TRIBUTARIO Y, PARA LOS TIPOS 33, 34, 52 Y 46,',
  '  TAMBIEN LA COPIA CEDIBLE.',
  '- UTILICE LOS DATOS DE LA EMPRESA REGISTRADOS EN MI SII.',
  '- NO UTILICE ABREVIATURAS EN LOS GIROS.',
  '',
]
const RULE_SETS = '-'.repeat(80)
const RULE_CASO = '='.repeat(14)
const RULE_COMPRAS = '='.repeat(74)

/** DOCUMENTO glosas as the SII writes them (the parser's TIPOS_DOCUMENTO). */
const GLOSAS: Readonly<Record<number, string>> = {
  33: 'FACTURA ELECTRONICA',
  34: 'FACTURA NO AFECTA O EXENTA ELECTRONICA',
  46: 'FACTURA DE COMPRA ELECTRONICA',
  52: 'GUIA DE DESPACHO',
  56: 'NOTA DE DEBITO ELECTRONICA',
  61: 'NOTA DE CREDITO ELECTRONICA',
  110: 'FACTURA DE EXPORTACION ELECTRONICA',
  111: 'NOTA DE DEBITO DE EXPORTACION ELECTRONICA',
  112: 'NOTA DE CREDITO DE EXPORTACION ELECTRONICA',
}

/** Numbers right-aligned in 7 characters, as the SII's columns. */
const num = (n: number): string => String(n).padStart(7)
const pct = (n: number): string => `${n}%`.padStart(7)

type Columna = 'cantidad' | 'unidad' | 'precio' | 'valor_unitario' | 'valor_linea' | 'descuento_pct'
const ENCABEZADOS: Readonly<Record<Columna, string>> = {
  cantidad: 'CANTIDAD', unidad: 'UNIDAD MEDIDA', precio: 'PRECIO UNITARIO', valor_unitario: 'VALOR UNITARIO', valor_linea: 'VALOR LINEA', descuento_pct: 'DESCUENTO ITEM',
}

/** One set's lines and cases while they are written. */
class Block {
  readonly lines: string[] = []
  readonly casos: CasoGenerado[] = []

  constructor(readonly numero: number) {}

  /** `CASO n-k` under its rule, the DOCUMENTO line and, for a note, the reference to an earlier case `k` of this set. */
  caso(tipoDte: TipoDte, ref?: { readonly k: number; readonly razon: string }): void {
    const caso = `${this.numero}-${this.casos.length + 1}`
    const cited = ref === undefined ? undefined : this.casos[ref.k - 1]!
    // The SII indents a note's glosa one tab further than an invoice's (001-basico.txt).
    this.lines.push(`CASO ${caso}`, RULE_CASO, `DOCUMENTO\t${cited ? '\t' : ''}${GLOSAS[tipoDte]}`)
    if (cited && ref) {
      this.lines.push(`REFERENCIA\t\t${GLOSAS[cited.tipoDte]} CORRESPONDIENTE A CASO ${cited.caso}`, `RAZON REFERENCIA\t${ref.razon}`)
    }
    this.casos.push({ caso, tipoDte, items: [], ...(cited && ref ? { referencia: { caso: cited.caso, razon: ref.razon } } : {}) })
  }

  /** The item table: a header naming the columns, one row per item with a value in every column, a blank line. */
  items(columnas: readonly Columna[], items: readonly ItemGenerado[], values: (item: ItemGenerado) => readonly string[]): void {
    this.lines.push('', ['ITEM\t\t', ...columnas.map((c) => ENCABEZADOS[c])].join('\t'))
    for (const item of items) this.lines.push([item.nombre, ...values(item)].join('\t'))
    this.lines.push('')
    this.setLast({ items })
  }

  setLast(extra: Partial<CasoGenerado>): void {
    const last = this.casos.length - 1
    this.casos[last] = { ...this.casos[last]!, ...extra }
  }

  end(): void {
    this.lines.push('')
  }
}

// ------------------------------------------------------------------------------------------------ seeded choices

/** mulberry32: small, seedable, the same sequence for the same seed on every platform. */
class Rng {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!
  }

  /** `n` distinct items, in the order drawn. */
  sample<T>(items: readonly T[], n: number): T[] {
    const pool = [...items]
    return Array.from({ length: n }, () => pool.splice(this.int(0, pool.length - 1), 1)[0]!)
  }

  /** A decimal with two places, as the SII writes customs amounts (`460.59`). */
  decimal(min: number, max: number): string {
    return (this.int(min * 100, max * 100) / 100).toFixed(2)
  }
}

// Item names in the SII's style: mixed case with AFECTO or EXENTO in BASICO, capitals elsewhere. The real texts keep an
// accented letter here and there ("Cajón", "Pañuelo", "CIGUEÑALES"): the first item of BASICO and of EXENTA's third
// invoice always carries one, so every generated file that has them exercises the ISO-8859-1 path.
const AFECTOS_CON_ACENTO = ['Cajón', 'Pañuelo', 'Caña de pescar', 'Piñón de bicicleta', 'Limón de pica', 'Sillón de mimbre']
const AFECTOS = [
  'Relleno', 'Pintura B&W', 'Tornillo cabeza hexagonal', 'Tuerca de seguridad', 'Carrete', 'Martillo carpintero',
  'Alicate universal', 'Cinta aislante', 'Guantes de cuero', 'Candado de bronce', 'Brocha 2 pulgadas', 'Clavos de acero',
  'Cuaderno universitario', 'Taladro percutor', 'Silla de oficina', 'Manguera de riego', 'Escalera de aluminio',
]
const SERVICIOS_EXENTOS = ['SERVICIO', 'ASESORIA TRIBUTARIA', 'SERVICIO DE INSTALACION', 'CAPACITACION', 'MANTENCION']
const HORAS = ['HORAS PROGRAMADOR', 'HORAS CONSULTOR', 'HORAS DISEÑADOR GRAFICO', 'HORAS SOPORTE TECNICO']
const CONSULTORIAS = [
  'SERV CONSULTORIA FACT ELECTRONICA', 'SERV CONSULTORIA GUIA DESPACHO ELECT', 'SERV AUDITORIA CONTABLE',
  'SERV DESARROLLO SITIO WEB', 'SERV ARRIENDO DE SOFTWARE', 'SERV RESPALDO DE DATOS',
]
const CAPACITACIONES_CON_ACENTO = ['CAPACITACION USO CIGUEÑALES', 'CAPACITACION DISEÑO INDUSTRIAL', 'CAPACITACION MONTAJE DE PIÑONES']
const CAPACITACIONES = ["CAPACITACION USO PLC's CNC", 'CAPACITACION SOLDADURA MIG', 'CAPACITACION OFIMATICA', 'CAPACITACION PREVENCION DE RIESGOS']
const PRODUCTOS = [
  'Producto 1', 'Producto 2', 'Sacos de cemento', 'Fierro de construccion', 'Planchas de zinc', 'Tablas de pino',
  'Cajas de tornillos', 'Rollos de alambre', 'Tubos de PVC', 'Bolsas de arena',
]
const MERCADERIAS = [
  'Cajas de fruta', 'Pallets de madera', 'Sacos de harina', 'Tambores de aceite', 'Rollos de tela', 'Bidones de agua',
  'Planchas de terciado', 'Cajas de azulejos', 'Sacos de fertilizante',
]
const EXPORTABLES = [
  'CHATARRA DE ALUMINIO', 'CAJAS DE CEREZAS FRESCAS', 'CAJAS CIRUELAS TIERNIZADAS SIN CAROZO CALIBRE 60/70',
  'CAJAS DE PASAS DE UVA FLAME MORENA SIN SEMILLA MEDIANAS', 'CAJAS DE NUECES CON CASCARA', 'BARRAS DE COBRE REFINADO',
  'CAJAS DE ARANDANOS FRESCOS', 'BOTELLAS DE VINO CABERNET SAUVIGNON', 'SACOS DE HARINA DE PESCADO',
]
const SERVICIOS_EXPORTACION = ['ASESORIAS Y PROYECTOS PROFESIONALES', 'SERVICIO DE CONSULTORIA EN INGENIERIA', 'ASESORIA EN COMERCIO EXTERIOR']
const ALOJAMIENTOS = ['ALOJAMIENTO HABITACIONES', 'ALOJAMIENTO EN HOTEL', 'HOTEL HABITACION DOBLE']

// ------------------------------------------------------------------------------------------------ documents sets

/** What a set holds besides its cases: the libros' grid and facts. */
type SetExtra = Pick<SetGenerado, 'compras' | 'factorProporcionalidad' | 'guiaFacturada' | 'guiaAnulada'>
type Writer = (block: Block, rng: Rng) => SetExtra
const NONE: SetExtra = {}

/** 001-basico.txt: four invoices (plain; line discounts; an exempt line; an exempt line and a global discount), then CORRIGE, DEVOLUCION, ANULA and a débito note annulling the first credit note. */
function writeBasico(b: Block, rng: Rng): SetExtra {
  const afectos = rng.sample(AFECTOS, 7).map((n) => `${n} AFECTO`)
  const exentos = rng.sample(SERVICIOS_EXENTOS, 2).map((n) => `${n} EXENTO`)
  const priced = (nombre: string, qty: [number, number] = [10, 250]): ItemGenerado => ({ nombre, cantidad: rng.int(...qty), precio: rng.int(300, 3000) })
  const basic = (item: ItemGenerado) => [`${num(item.cantidad!)}\t`, num(item.precio!)]

  b.caso(33)
  b.items(['cantidad', 'precio'], [priced(`${rng.pick(AFECTOS_CON_ACENTO)} AFECTO`), priced(afectos[0]!)], basic)
  b.end()
  b.caso(33)
  const conDescuento = [afectos[1]!, afectos[2]!].map((n) => ({ ...priced(n, [100, 250]), descuento_pct: rng.int(2, 15) }))
  b.items(['cantidad', 'precio', 'descuento_pct'], conDescuento, (i) => [`${num(i.cantidad!)}\t`, `${num(i.precio!)}\t\t`, pct(i.descuento_pct!)])
  b.end()
  b.caso(33)
  b.items(['cantidad', 'precio'], [priced(afectos[3]!), priced(afectos[4]!), { nombre: exentos[0]!, cantidad: 1, precio: rng.int(10_000, 60_000) }], basic)
  b.end()
  b.caso(33)
  b.items(['cantidad', 'precio'], [priced(afectos[5]!), priced(afectos[6]!), { nombre: exentos[1]!, cantidad: rng.int(1, 3), precio: rng.int(3_000, 9_000) }], basic)
  const global = rng.int(3, 12)
  b.lines.push(`DESCUENTO GLOBAL ITEMES AFECTOS\t\t${pct(global)}`)
  b.setLast({ descuentoGlobalPct: global })
  b.end()
  b.caso(61, { k: 1, razon: 'CORRIGE GIRO DEL RECEPTOR' })
  b.end()
  b.caso(61, { k: 2, razon: 'DEVOLUCION DE MERCADERIAS' })
  b.items(['cantidad'], conDescuento.map((i) => ({ nombre: i.nombre, cantidad: rng.int(1, i.cantidad! - 1) })), (i) => [num(i.cantidad!)])
  b.end()
  b.caso(61, { k: 3, razon: 'ANULA FACTURA' })
  b.end()
  b.caso(56, { k: 5, razon: 'ANULA NOTA DE CREDITO ELECTRONICA' })
  b.end()
  return NONE
}

/** 004-factura_exenta.txt: hours with a unit, a MODIFICA MONTO note, services, CORRIGE, ANULA, and a credit and a débito note over the third invoice. */
function writeExenta(b: Block, rng: Rng): SetExtra {
  const valor = (i: ItemGenerado) => [num(i.precio!)]
  const horas = { nombre: rng.pick(HORAS), cantidad: rng.int(5, 40), unidad: 'Hora', precio: rng.int(4_000, 12_000) }
  b.caso(34)
  b.items(['cantidad', 'unidad', 'valor_unitario'], [horas], (i) => [`${num(i.cantidad!)}\t`, `${i.unidad!}\t`, num(i.precio!)])
  b.end()
  b.caso(61, { k: 1, razon: 'MODIFICA MONTO' })
  b.items(['valor_unitario'], [{ nombre: horas.nombre, precio: rng.int(200, horas.precio - 1) }], valor)
  b.end()
  b.caso(34)
  const consultorias = rng.sample(CONSULTORIAS, 2).map((nombre) => ({ nombre, cantidad: 1, precio: rng.int(150_000, 450_000) }))
  b.items(['cantidad', 'valor_unitario'], consultorias, (i) => [`${i.cantidad!}\t`, num(i.precio!)])
  b.end()
  b.caso(61, { k: 3, razon: 'CORRIGE GIRO' })
  b.end()
  b.caso(56, { k: 4, razon: 'ANULA NOTA DE CREDITO ELECTRONICA' })
  b.end()
  b.caso(34)
  const capacitaciones = [rng.pick(CAPACITACIONES_CON_ACENTO), rng.pick(CAPACITACIONES)].map((nombre) => ({ nombre, cantidad: 1, precio: rng.int(150_000, 400_000) }))
  b.items(['cantidad', 'valor_unitario'], capacitaciones, (i) => [`${i.cantidad!}\t`, num(i.precio!)])
  b.end()
  b.caso(61, { k: 6, razon: 'MODIFICA MONTO' })
  b.items(['valor_unitario'], [{ nombre: capacitaciones[0]!.nombre, precio: Math.floor(capacitaciones[0]!.precio / 2) }], valor)
  b.end()
  b.caso(56, { k: 6, razon: 'MODIFICA MONTO' })
  b.items(['valor_unitario'], [{ nombre: capacitaciones[1]!.nombre, precio: rng.int(10_000, 60_000) }], valor)
  b.end()
  return NONE
}

/** 005-guia_despacho.txt: a traslado between the company's warehouses, a sale delivered by the issuer, one fetched by the client. */
function writeGuia(b: Block, rng: Rng): SetExtra {
  const [a, c, d] = [rng.sample(MERCADERIAS, 3), rng.sample(MERCADERIAS, 2), rng.sample(MERCADERIAS, 2)]
  const qty = (i: ItemGenerado) => [`\t${num(i.cantidad!)}`]
  const priced = (i: ItemGenerado) => [`\t${num(i.cantidad!)}\t`, num(i.precio!)]
  b.caso(52)
  b.lines.push('MOTIVO:\t\tTRASLADO DE MATERIALES ENTRE BODEGAS DE LA EMPRESA')
  b.items(['cantidad'], a!.map((nombre) => ({ nombre, cantidad: rng.int(10, 400) })), qty)
  b.end()
  b.caso(52)
  b.lines.push('MOTIVO:\t\tVENTA', 'TRASLADO POR: \tEMISOR DEL DOCUMENTO AL LOCAL DEL CLIENTE')
  b.items(['cantidad', 'precio'], c!.map((nombre) => ({ nombre, cantidad: rng.int(10, 400), precio: rng.int(500, 5_000) })), priced)
  b.end()
  b.caso(52)
  b.lines.push('MOTIVO:\t\tVENTA', 'TRASLADO POR: \tCLIENTE')
  b.items(['cantidad', 'precio'], d!.map((nombre) => ({ nombre, cantidad: rng.int(10, 400), precio: rng.int(500, 5_000) })), priced)
  b.end()
  return NONE
}

/** 008-factura_compra.txt: a factura de compra, a devolución over it with the invoice's prices, a débito note annulling it. */
function writeCompra(b: Block, rng: Rng): SetExtra {
  const productos = rng.sample(PRODUCTOS, 2).map((nombre) => ({ nombre, cantidad: rng.int(20, 1_500), precio: rng.int(1_000, 9_000) }))
  b.caso(46)
  b.items(['cantidad', 'precio'], productos, (i) => [`${num(i.cantidad!)}\t`, num(i.precio!)])
  b.end()
  b.caso(61, { k: 1, razon: 'DEVOLUCION DE MERCADERIA ITEMS 1 Y 2' })
  b.items(['cantidad'], productos.map((p) => ({ nombre: p.nombre, cantidad: rng.int(1, p.cantidad - 1) })), (i) => [num(i.cantidad!)])
  b.lines.push('LOS PRECIOS UNITARIOS DE LOS ITEMS DEBEN SER LOS MISMOS DE LA FACTURA', '')
  b.caso(56, { k: 2, razon: 'ANULA NOTA DE CREDITO ELECTRONICA' })
  b.end()
  return NONE
}

// ------------------------------------------------------------------------------------------------ exports

/** A destination the customs tables know: the port of arrival, its country, and how the goods get there. */
const DESTINOS: readonly { puerto: string; pais: string; via: string; embarque: readonly string[] }[] = [
  { puerto: 'SIDNEY', pais: 'AUSTRALIA', via: 'MARITIMA, FLUVIAL Y LACUSTRE', embarque: ['VALPARAISO', 'SAN ANTONIO', 'CALDERA'] },
  { puerto: 'BARCELONA', pais: 'ESPANA', via: 'MARITIMA, FLUVIAL Y LACUSTRE', embarque: ['SAN ANTONIO', 'VALPARAISO'] },
  { puerto: 'SHANGHAI', pais: 'CHINA', via: 'MARITIMA, FLUVIAL Y LACUSTRE', embarque: ['SAN ANTONIO', 'COQUIMBO', 'ANTOFAGASTA'] },
  { puerto: 'ROTTERDAM', pais: 'PAISES BAJOS', via: 'MARITIMA, FLUVIAL Y LACUSTRE', embarque: ['VALPARAISO', 'TALCAHUANO'] },
  { puerto: 'YOKOHAMA', pais: 'JAPON', via: 'MARITIMA, FLUVIAL Y LACUSTRE', embarque: ['SAN ANTONIO', 'SAN VICENTE'] },
  { puerto: 'NUEVA YORK', pais: 'ESTADOS UNIDOS', via: 'MARITIMA, FLUVIAL Y LACUSTRE', embarque: ['VALPARAISO', 'SAN ANTONIO'] },
  { puerto: 'MENDOZA', pais: 'ARGENTINA', via: 'CARRETERO/TERRESTRE', embarque: ['LOS LIBERTADORES'] },
]
const MONEDAS_EXPORTACION = ['DOLAR USA', 'EURO', 'LIBRA EST']
const FORMAS_PAGO = ['COBRANZA', 'ANTICIPO', 'SIN PAGO', 'ACRED']
const MODALIDADES = ['A FIRME', 'BAJO CONDICION', 'EN CONSIGNACION LIBRE', 'EN CONSIGNACION CON UN MINIMO A FIRME']
const CLAUSULAS = ['CIF', 'CFR', 'FOB']
/** Units of an item line and of the tara; the weights take a unit of weight or volume. */
const UNIDADES = ['KN', 'U', 'LT', 'PAR']
const UNIDADES_PESO = ['KN', 'LT', 'TMN']
const BULTOS = ['PALLETS', 'ROLLOS', 'CAJA DE CARTON', 'SACO', 'FARDO', 'TAMBOR']

/** `LABEL:` and its value in the customs block, the value in the SII's column (tab stops of 8). */
function aduana(label: string, value: string | number): string {
  const tabs = Math.max(1, Math.ceil((48 - label.length) / 8))
  return `${label}${'\t'.repeat(tabs)}${value}`
}

function customsBlock(b: Block, rng: Rng, o: { referencias: readonly string[]; total: number; bultos: boolean; flete: boolean }): void {
  const destino = rng.pick(DESTINOS)
  const unidad = rng.pick(UNIDADES_PESO)
  const clausula = rng.pick(CLAUSULAS)
  b.lines.push('')
  for (const r of o.referencias) b.lines.push(aduana('REFERENCIA:', r))
  b.lines.push(
    aduana('MONEDA DE LA OPERACION:', rng.pick(MONEDAS_EXPORTACION)),
    aduana('FORMA DE PAGO EXPORTACION:', rng.pick(FORMAS_PAGO)),
    aduana('MODALIDAD DE VENTA:', rng.pick(MODALIDADES)),
    aduana('CLAUSULA DE VENTA DE EXPORTACION:', clausula),
    aduana('TOTAL CLAUSULA DE VENTA:', o.total.toFixed(2)),
    aduana('VIA DE TRANSPORTE:', destino.via),
    aduana('PUERTO DE EMBARQUE:', rng.pick(destino.embarque)),
    aduana('PUERTO DE DESEMBARQUE:', destino.puerto),
  )
  if (o.bultos) {
    b.lines.push(
      aduana('UNIDAD DE MEDIDA DE TARA:', rng.pick(UNIDADES)),
      aduana('UNIDAD PESO BRUTO:', unidad),
      aduana('UNIDAD PESO NETO:', unidad),
      aduana('TIPO DE BULTO:', rng.pick(BULTOS)),
      aduana('TOTAL BULTOS:', num(rng.int(5, 900))),
    )
  }
  // FLETE and SEGURO (**) only where the clause makes the buyer pay them apart (the SII asks them with CIF and CFR).
  if (o.flete && (clausula === 'CIF' || clausula === 'CFR')) b.lines.push(aduana('FLETE (**):', rng.decimal(50, 4_000)), aduana('SEGURO (**):', rng.decimal(20, 3_000)))
  b.lines.push(aduana('PAIS RECEPTOR Y PAIS DESTINO:', destino.pais), '')
}

/** 009-set_exportacion_1.txt: an export invoice with its customs block, a devolución over it, a débito note annulling that. */
function writeExportacion1(b: Block, rng: Rng): SetExtra {
  const item = { nombre: rng.pick(EXPORTABLES), cantidad: rng.int(50, 900), unidad: rng.pick(UNIDADES), precio: rng.int(20, 300) }
  b.caso(110)
  b.items(['cantidad', 'unidad', 'precio'], [item], (i) => [`\t${i.cantidad!}\t`, `${i.unidad!}\t`, num(i.precio!)])
  customsBlock(b, rng, { referencias: [rng.pick(['MIC (MANIFIESTO INTERNACIONAL)', 'DUS', 'AWB'])], total: item.cantidad * item.precio, bultos: true, flete: true })
  b.caso(112, { k: 1, razon: 'DEVOLUCION DE MERCADERIA' })
  b.items(['cantidad'], [{ nombre: item.nombre, cantidad: rng.int(1, item.cantidad - 1) }], (i) => [`\t${i.cantidad!}`])
  b.lines.push('EL PRECIO UNITARIO DEL ITEM DEBE SER EL MISMO DE LA FACTURA', '')
  b.caso(111, { k: 2, razon: 'ANULA NOTA DE CREDITO ELECTRONICA' })
  b.end()
  return NONE
}

/** 010-set_exportacion_2.txt: a service priced per line with a line surcharge, goods with commissions and a line discount, lodging. */
function writeExportacion2(b: Block, rng: Rng): SetExtra {
  const servicio = { nombre: rng.pick(SERVICIOS_EXPORTACION), precio: rng.int(40, 900) }
  b.caso(110)
  b.items(['valor_linea'], [servicio], (i) => [String(i.precio!)])
  customsBlock(b, rng, { referencias: ['RESOLUCION SNA'], total: servicio.precio, bultos: false, flete: false })
  const recargo = rng.int(5, 15)
  b.lines.push(`%${recargo} RECARGO EN LA LINEA DE ITEM POR COMISIONES EN EL EXTERIOR`, '')
  // VALOR LINEA is one unit at that value (the parser's reading), so the surcharge applies to it.
  b.setLast({ items: [{ nombre: servicio.nombre, cantidad: 1, precio: servicio.precio, recargo_pct: recargo }] })
  const bienes = rng.sample(EXPORTABLES, 2).map((nombre) => ({ nombre, cantidad: rng.int(50, 900), unidad: rng.pick(UNIDADES), precio: rng.int(20, 300) }))
  b.caso(110)
  b.items(['cantidad', 'unidad', 'precio'], bienes, (i) => [`\t${i.cantidad!}\t`, `${i.unidad!}\t`, num(i.precio!)])
  customsBlock(b, rng, { referencias: ['DUS', 'AWB'], total: bienes.reduce((s, i) => s + i.cantidad * i.precio, 0), bultos: true, flete: true })
  const descuento = rng.int(2, 10)
  b.lines.push(`COMISIONES EN EL EXTRANJERO (RECARGOS GLOBALES):  ${rng.int(5, 15)}% DEL TOTAL DE LA CLAUSULA`, `DESCUENTO LINEA # 1:   ${descuento}%`, '')
  b.setLast({ items: bienes.map((i, n) => (n === 0 ? { ...i, descuento_pct: descuento } : i)) })
  const alojamiento = { nombre: rng.pick(ALOJAMIENTOS), precio: rng.int(100, 900) }
  b.caso(110)
  b.items(['valor_linea'], [alojamiento], (i) => [String(i.precio!)])
  b.setLast({ items: [{ nombre: alojamiento.nombre, cantidad: 1, precio: alojamiento.precio }] })
  b.lines.push('', aduana('MONEDA DE LA OPERACION:', rng.pick(MONEDAS_EXPORTACION)), aduana('NACIONALIDAD:', rng.pick(DESTINOS).pais), '')
  return NONE
}

// ------------------------------------------------------------------------------------------------ libros

function writeLibroVentas(b: Block): SetExtra {
  // 002-ventas.txt's words: the libro is built from the documents of BASICO (or EXENTA).
  b.lines.push(
    'CONSTRUYA EL LIBRO DE VENTAS CON LOS DOCUMENTOS CON QUE GENERO',
    'EL SET BASICO O EL SET DE FACTURA EXENTA, SEGUN CORRESPONDA.',
    'SI OBTUVO AMBOS SET, UTILICE LOS DOCUMENTOS DEL SET BASICO PARA',
    'CONSTRUIR EL LIBRO DE VENTAS.',
    '',
  )
  return NONE
}

/** 003-compras.txt: seven purchases, each booked as its observation says, and the factor of proportionality. */
function writeLibroCompras(b: Block, rng: Rng): Pick<SetGenerado, 'compras' | 'factorProporcionalidad'> {
  const folios = rng.sample(Array.from({ length: 900 }, (_, i) => i + 10), 7)
  const [papel, electronica, usoComun, ncPapel, gratuita, compra, ncElectronica] = folios as [number, number, number, number, number, number, number]
  const afecto = () => rng.int(2_000, 60_000)
  const compras: CompraGenerada[] = [
    { tipoDocumento: 'FACTURA', folio: papel, observacion: 'FACTURA DEL GIRO CON DERECHO A CREDITO', montoExento: 0, montoAfecto: afecto() },
    { tipoDocumento: 'FACTURA ELECTRONICA', folio: electronica, observacion: 'FACTURA DEL GIRO CON DERECHO A CREDITO', montoExento: rng.int(1_000, 20_000), montoAfecto: afecto() },
    { tipoDocumento: 'FACTURA', folio: usoComun, observacion: 'FACTURA CON IVA USO COMUN', montoExento: 0, montoAfecto: afecto() },
    { tipoDocumento: 'NOTA DE CREDITO', folio: ncPapel, observacion: `NOTA DE CREDITO POR DESCUENTO A FACTURA ${papel}`, montoExento: 0, montoAfecto: rng.int(500, 5_000) },
    { tipoDocumento: 'FACTURA ELECTRONICA', folio: gratuita, observacion: 'ENTREGA GRATUITA DEL PROVEEDOR', montoExento: 0, montoAfecto: afecto() },
    { tipoDocumento: 'FACTURA DE COMPRA ELECTRONICA', folio: compra, observacion: 'COMPRA CON RETENCION TOTAL DEL IVA', montoExento: 0, montoAfecto: afecto() },
    { tipoDocumento: 'NOTA DE CREDITO', folio: ncElectronica, observacion: `NOTA DE CREDITO POR DESCUENTO FACTURA ELECTRONICA ${electronica}`, montoExento: 0, montoAfecto: rng.int(500, 9_000) },
  ]
  const factor = rng.int(30, 90) / 100
  b.lines.push(RULE_COMPRAS, 'TIPO DOCUMENTO\t\t\t\tFOLIO', 'OBSERVACIONES', 'MONTO EXENTO\tMONTO AFECTO', RULE_COMPRAS)
  compras.forEach((c, i) => {
    // The folio sits in the SII's FOLIO column (40) whatever the glosa's length; a lone afecto amount under MONTO AFECTO.
    const tabs = Math.max(1, Math.ceil((40 - c.tipoDocumento.length) / 8))
    const montos = c.montoExento === 0 ? `\t\t${num(c.montoAfecto)}` : `${num(c.montoExento)}\t\t${num(c.montoAfecto)}`
    b.lines.push(`${c.tipoDocumento}${'\t'.repeat(tabs)}${c.folio}`, c.observacion, montos)
    if (i < compras.length - 1) b.lines.push('')
  })
  b.lines.push(
    RULE_COMPRAS, '', 'OBSERVACIONES GENERALES', '-'.repeat(23),
    'EN FACTURA CON IVA USO COMUN CONSIDERE QUE EL FACTOR DE PROPORCIONALIDAD ', `DEL IVA ES DE ${factor.toFixed(2)}`, '',
  )
  return { compras, factorProporcionalidad: factor }
}

function writeLibroGuias(b: Block): SetExtra {
  // 006-libro_guias.txt's words; cases 2 and 3 of GUIA DE DESPACHO are both sales, as there.
  b.lines.push(
    'CONSTRUYA EL LIBRO CON LAS GUIAS CON QUE GENERO EL SET GUIA DE DESPACHO,',
    'TENIENDO EN CUENTA LAS SIGUIENTES CONSIDERACIONES',
    '',
    '- EL CASO 2 CORRESPONDE A UNA GUIA QUE SE FACTURO EN EL PERIODO',
    '- EL CASO 3 CORRESPONDE A UNA GUIA ANULADA',
    '',
  )
  return { guiaFacturada: 2, guiaAnulada: 3 }
}

const WRITERS: Readonly<Record<NombreSet, Writer>> = {
  BASICO: writeBasico,
  'FACTURA EXENTA': writeExenta,
  'GUIA DE DESPACHO': writeGuia,
  'FACTURA DE COMPRA': writeCompra,
  'EXPORTACION 1': writeExportacion1,
  'EXPORTACION 2': writeExportacion2,
  'LIBRO DE VENTAS': writeLibroVentas,
  'LIBRO DE COMPRAS': writeLibroCompras,
  'LIBRO DE GUIAS': writeLibroGuias,
}

/** The SII writes ISO-8859-1; every character here is in it (the pools above), so a code point is its byte. */
function latin1(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c > 0xff) throw new RangeError(`set text has a character outside ISO-8859-1 at ${i}`)
    bytes[i] = c
  }
  return bytes
}
