// `POST /certificacion/simulacion` (DESIGN §15; research §1.2 stage 2): 20 to 100 documents representative of the
// company, of the types its set covered, issued through the same path as `POST /dte` and sent in one EnvioDTE. The
// documents come from domain/certificacion-simulacion.ts with the company's own clientes and productos.
import { createHash } from 'node:crypto'
import { isoTimestamp, santiagoDate } from '../clock'
import { findDteByCertificacionClave, findSimulacionSinEnvio } from '../db/certificacion-store'
import { listClientes } from '../db/cliente-store'
import { listProductos } from '../db/producto-store'
import type { DteRow } from '../db/schema'
import { RECEPTOR_SET_NACIONAL, solicitudDeCaso, type CasoEmitido } from '../domain/certificacion-casos'
import { planSimulacion, TIPOS_SIMULABLES, type ProductoSimulacion } from '../domain/certificacion-simulacion'
import type { EmitirDte, Receptor, TipoDte } from '../domain/emision'
import { TIPOS } from '../domain/tipos'
import { type CheckEmision, estadoCertificacion, type EstadoCertificacion, requireCertificacion, serialized, setsGuardados } from './certificacion'
import { checkFolios, crearEnvio, emitirCaso, subirEnvio, type CertificacionDeps } from './certificacion-emitir'

const claveSimulacion = (simulacionId: string, caso: string) => `certificacion:simulacion:${simulacionId}:${caso}`

/** A cliente is a receiver of the simulation only with every field its invoices need (giro, dirección, comuna). */
function receptoresDe(deps: CertificacionDeps, empresaId: string): Receptor[] {
  const required = TIPOS[33].requiredReceptor
  const rows = listClientes(deps.store.db, empresaId, { afterId: null, limit: 50 })
  const receptores = rows
    .map((c): Receptor => ({
      rut: c.rut, razon_social: c.razon_social,
      ...(c.giro ? { giro: c.giro } : {}), ...(c.direccion ? { direccion: c.direccion } : {}), ...(c.comuna ? { comuna: c.comuna } : {}), ...(c.ciudad ? { ciudad: c.ciudad } : {}),
    }))
    .filter((r) => required.every((field) => typeof (r as unknown as Record<string, unknown>)[field] === 'string'))
  return receptores.length > 0 ? receptores : [RECEPTOR_SET_NACIONAL]
}

function productosDe(deps: CertificacionDeps, empresaId: string): ProductoSimulacion[] {
  return listProductos(deps.store.db, empresaId, { afterId: null, limit: 50 })
    .filter((p) => p.precio_unitario !== null && p.precio_unitario > 0)
    .map((p) => ({ nombre: p.nombre, precio: p.precio_unitario!, unidad: p.unidad, exento: p.es_exento }))
}

export function simular(deps: CertificacionDeps, input: { empresaId: string; cantidad: number; check: CheckEmision; seed?: number }): Promise<EstadoCertificacion> {
  requireCertificacion(deps.store.db, input.empresaId)
  return serialized(input.empresaId, () => simularNow(deps, input))
}

async function simularNow(deps: CertificacionDeps, input: { empresaId: string; cantidad: number; check: CheckEmision; seed?: number }): Promise<EstadoCertificacion> {
  const empresa = requireCertificacion(deps.store.db, input.empresaId)
  const cubiertos = new Set<TipoDte>(setsGuardados(deps.store.db, input.empresaId).flatMap((s) => s.set.casos.map((c) => c.tipoDte)))
  // The minimum scope of every certification (research §1.1): invoices and their notes, even before a set is loaded.
  const tipos = cubiertos.size > 0 ? TIPOS_SIMULABLES.filter((t) => cubiertos.has(t)) : ([33, 56, 61] as TipoDte[])
  // A simulation that stopped half way (its documents issued, no envelope yet) is finished first, under its own id and
  // size, so its documents are found again by their keys and sent, never left unsent beside a new batch.
  const pendiente = findSimulacionSinEnvio(deps.store.db, empresa.id)
  const previa = (pendiente?.metadata as { certificacion?: { simulacion?: string; cantidad?: number } } | undefined)?.certificacion
  const simulacionId = previa?.simulacion ?? Bun.randomUUIDv7()
  const cantidad = previa?.cantidad ?? input.cantidad
  const seed = input.seed ?? createHash('sha256').update(simulacionId).digest().readUInt32BE(0)
  const plan = planSimulacion({ cantidad, tipos, receptores: receptoresDe(deps, empresa.id), productos: productosDe(deps, empresa.id), seed })
  checkFolios(deps, empresa.id, plan.filter((d) => !findDteByCertificacionClave(deps.store.db, empresa.id, claveSimulacion(simulacionId, d.caso.caso))).map((d) => d.caso.tipoDte))
  const emitidos = new Map<string, CasoEmitido>()
  const dtes: DteRow[] = []
  const today = santiagoDate(deps.clock.now())
  const casos = { casos: plan.map((d) => d.caso) }
  for (const doc of plan) {
    const solicitud = solicitudDeCaso(casos, doc.caso, emitidos, { fecha: today, receptor: doc.receptor, referenciaSet: false })
    if (!solicitud.ok) throw new Error(`simulation document ${doc.caso.caso}: ${solicitud.message}`)
    const clave = claveSimulacion(simulacionId, doc.caso.caso)
    const request: EmitirDte = { ...solicitud.request, metadata: { certificacion: { simulacion: simulacionId, cantidad, clave } } }
    const dte = findDteByCertificacionClave(deps.store.db, empresa.id, clave) ?? (await emitirCaso(deps, { empresaId: empresa.id, clave, request, caso: doc.caso.caso, today, check: input.check }))
    emitidos.set(doc.caso.caso, { tipoDte: dte.tipo_dte as TipoDte, folio: dte.folio, fechaEmision: dte.fecha_emision })
    dtes.push(dte)
  }
  const envio = await crearEnvio(deps, empresa, { clase: 'simulacion', nombres: ['SIMULACION'], dtes })
  await subirEnvio(deps, envio)
  deps.log.info('certificacion.simulacion', { empresa_id: empresa.id, simulacion: simulacionId, documentos: dtes.length, at: isoTimestamp(deps.clock.now()) })
  return estadoCertificacion(deps, { empresaId: empresa.id })
}

