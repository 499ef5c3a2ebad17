// The simulation stage's documents (DESIGN §15 `POST /certificacion/simulacion`; research §1.2 stage 2): 20 to 100
// documents "representative of the real operation", of the types the set covered, in one envelope. Pure and seeded:
// the company's own clientes and productos when it has them, varied quantities, prices and discounts, and notes over
// its own invoices of the same batch, written as cases whose references stay symbolic until issue (as the set's do).
import type { Linea, Receptor, TipoDte } from './emision'
import type { CasoSet } from './set-pruebas'

export const MIN_SIMULACION = 20
export const MAX_SIMULACION = 100

/** The types a simulation issues: the market invoicing set's domestic documents (exports, boletas and 43 excluded). */
export const TIPOS_SIMULABLES: readonly TipoDte[] = [33, 34, 46, 52, 56, 61]

export interface ProductoSimulacion {
  readonly nombre: string
  /** Net price in pesos. */
  readonly precio: number
  readonly unidad?: string
  readonly exento: boolean
}

export interface DocumentoSimulado {
  readonly caso: CasoSet
  readonly receptor: Receptor
}

/** What a company with no productos of its own sells in the simulation: services and goods of a small firm. */
const PRODUCTOS_GENERICOS: readonly ProductoSimulacion[] = [
  { nombre: 'Servicio de mantención mensual', precio: 85_000, exento: false },
  { nombre: 'Hora de asesoría técnica', precio: 32_000, unidad: 'HR', exento: false },
  { nombre: 'Resma papel carta 500 hojas', precio: 4_290, unidad: 'UN', exento: false },
  { nombre: 'Cartucho de tinta negra', precio: 18_990, unidad: 'UN', exento: false },
  { nombre: 'Despacho a domicilio', precio: 6_500, exento: false },
  { nombre: 'Curso de capacitación (exento)', precio: 120_000, exento: true },
  { nombre: 'Cable UTP categoría 6 (metro)', precio: 690, unidad: 'MT', exento: false },
  { nombre: 'Licencia de software anual', precio: 240_000, exento: false },
]

/** mulberry32: the same documents for the same seed, so a run can be reproduced from its number. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface PlanSimulacion {
  readonly cantidad: number
  /** Types the set covered; those outside TIPOS_SIMULABLES are left out. */
  readonly tipos: readonly TipoDte[]
  readonly receptores: readonly Receptor[]
  readonly productos: readonly ProductoSimulacion[]
  readonly seed: number
}

/**
 * The documents, in issue order. Mostly invoices (33, or 34 when the set covered only exempt invoices); a credit note
 * over an earlier invoice about every sixth document, a debit note over an earlier credit note now and then, guías and
 * facturas de compra when the set covered them. A note always cites an earlier document, so it can take its folio.
 */
export function planSimulacion(plan: PlanSimulacion): DocumentoSimulado[] {
  const rand = prng(plan.seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  const tipos = new Set(plan.tipos.filter((t) => TIPOS_SIMULABLES.includes(t)))
  const factura: TipoDte = tipos.has(33) || !tipos.has(34) ? 33 : 34
  // Invoices, guías and facturas de compra need an affected line: a catalogue without one falls back to the generic one.
  const productos = plan.productos.some((p) => !p.exento) ? plan.productos : PRODUCTOS_GENERICOS
  const afectos = productos.filter((p) => !p.exento)
  const out: DocumentoSimulado[] = []
  const facturas: DocumentoSimulado[] = []
  const notasCredito: DocumentoSimulado[] = []
  for (let i = 1; i <= plan.cantidad; i++) {
    const caso = `SIM-${i}`
    const r = rand()
    let doc: DocumentoSimulado
    if (facturas.length > 0 && tipos.has(61) && r < 0.16) {
      const citada = pick(facturas)
      const devolucion = rand() < 0.6
      const detalle = devolucion ? [{ ...citada.caso.documento.detalle[0]!, cantidad: Math.max(1, Math.floor((citada.caso.documento.detalle[0]!.cantidad ?? 1) / 2)) }] : citada.caso.documento.detalle
      doc = nota(caso, 61, citada, detalle, devolucion ? 3 : 1, devolucion ? 'DEVOLUCION DE MERCADERIAS' : 'ANULA FACTURA')
      notasCredito.push(doc)
    } else if (notasCredito.length > 0 && tipos.has(56) && r < 0.22) {
      const citada = pick(notasCredito)
      doc = nota(caso, 56, citada, citada.caso.documento.detalle, 1, 'ANULA NOTA DE CREDITO')
    } else if (tipos.has(52) && r < 0.3) {
      doc = documento(caso, 52, pick(plan.receptores), lineas(rand, afectos, false), { ind_traslado: 1, tipo_despacho: 2 })
    } else if (tipos.has(46) && r < 0.35) {
      // A factura de compra is issued by the buyer for a seller without invoices: retención total del IVA (code 15).
      doc = documento(caso, 46, pick(plan.receptores), lineas(rand, afectos, false).map((l) => ({ ...l, cod_imp_adic: 15 })))
    } else {
      const conDescuento = rand() < 0.25
      doc = documento(caso, factura, pick(plan.receptores), lineas(rand, productos, factura === 34), conDescuento ? { descuentos_globales: [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: pick([3, 5, 10]), glosa_dr: 'DESCUENTO POR VOLUMEN' }] } : {})
      facturas.push(doc)
    }
    out.push(doc)
  }
  return out
}

/** 1 to 4 distinct lines; the first always affected (a 33 of exempt lines alone is refused: it is a 34). */
function lineas(rand: () => number, productos: readonly ProductoSimulacion[], soloExentos: boolean): Linea[] {
  const afectos = productos.filter((p) => !p.exento)
  const candidatos = soloExentos ? productos.map((p) => ({ ...p, exento: true })) : productos
  const n = 1 + Math.floor(rand() * 4)
  const usados = new Set<number>()
  const out: Linea[] = []
  for (let k = 0; k < n; k++) {
    const idx = k === 0 && !soloExentos ? candidatos.indexOf(afectos[Math.floor(rand() * afectos.length)]!) : Math.floor(rand() * candidatos.length)
    if (usados.has(idx)) continue
    usados.add(idx)
    const p = candidatos[idx]!
    const linea: Linea = { nombre: p.nombre, cantidad: 1 + Math.floor(rand() * 20), precio: p.precio }
    if (p.unidad) linea.unidad = p.unidad.slice(0, 4)
    if (p.exento && !soloExentos) linea.ind_exe = 1
    if (rand() < 0.2) linea.descuento_pct = 5 + Math.floor(rand() * 11)
    out.push(linea)
  }
  return out
}

function documento(caso: string, tipoDte: TipoDte, receptor: Receptor, detalle: Linea[], extra: Partial<CasoSet['documento']> = {}): DocumentoSimulado {
  return { caso: { caso, tipoDte, documento: { tipo_dte: tipoDte, detalle, ...extra }, instrucciones: [], lineNumber: 0 }, receptor }
}

function nota(caso: string, tipoDte: TipoDte, citada: DocumentoSimulado, detalle: readonly Linea[], codigoRef: 1 | 3, razon: string): DocumentoSimulado {
  const { descuentos_globales } = citada.caso.documento
  // Over an exempt invoice (34) the note's lines are exempt too: it reverses no IVA the invoice never charged.
  const lineas = citada.caso.tipoDte === 34 ? detalle.map((l) => ({ ...l, ind_exe: 1 as const })) : [...detalle]
  return {
    caso: {
      caso,
      tipoDte,
      documento: { tipo_dte: tipoDte, detalle: lineas, ...(codigoRef === 1 && descuentos_globales ? { descuentos_globales } : {}) },
      referenciaCaso: { caso: citada.caso.caso, codigoRef, razon },
      instrucciones: [],
      lineNumber: 0,
    },
    receptor: citada.receptor,
  }
}
