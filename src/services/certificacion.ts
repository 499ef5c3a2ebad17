// Certification before the SII (DESIGN §15, issue 28): the set file loaded, the state of every stage with the next
// step, and what the person records. Issuing and sending the set is services/certificacion-emitir.ts.
import { createHash } from 'node:crypto'
import { isoTimestamp, santiagoDate } from '../clock'
import {
  deleteSetsByNombre, findCasos, findCertificacionEnvios, findCertificacionSets, findDtesById, findEtapas, insertSet, upsertEtapa,
} from '../db/certificacion-store'
import { findEmpresaById } from '../db/empresa-store'
import type { Db } from '../db/open'
import type { CertificacionEnvioRow, CertificacionSetRow, DteRow, EmpresaRow } from '../db/schema'
import { RECEPTOR_SET_NACIONAL, solicitudDeCaso, type CasoEmitido } from '../domain/certificacion-casos'
import {
  etapasDeCertificacion, type Etapa, type EstadoEnvioCert, type EstadoEtapa, type EnvioHecho,
} from '../domain/certificacion-etapas'
import { libroCompras } from '../domain/libros'
import { decodeSetText, NOMBRES_SET, parseSetPruebas, type CasoSet, type NombreSet, type SetError, type SetPruebas } from '../domain/set-pruebas'
import { TimbreError, type FieldError } from '../errors'
import type { Deps } from './deps'
import type { CheckedEmision } from './issue-dte'

/** The door's check of an EmitirDTERequest (contracts/dte.ts validateEmision): services never import the contracts. */
export type CheckEmision = (body: unknown, today: string) => CheckedEmision

/** Details past this many are left out (DESIGN §5's bound on `details`). */
const MAX_DETALLES = 100

// One certification write at a time per company (loading, issuing, simulating, sending libros): cases cite each other's
// folios, and a set replaced while its cases are issued would issue documents of a deleted set. A second call waits
// for the first; an emitir then finds the cases done, a simulation makes a new batch.
const running = new Map<string, Promise<unknown>>()

export function serialized<T>(empresaId: string, work: () => Promise<T>): Promise<T> {
  const before = running.get(empresaId) ?? Promise.resolve()
  const next = before.catch(() => undefined).then(work)
  running.set(empresaId, next)
  void next.finally(() => { if (running.get(empresaId) === next) running.delete(empresaId) }).catch(() => undefined)
  return next
}

/** The sets that are documents (the libros' blocks carry no cases to issue). */
export const SETS_DE_LIBROS: readonly NombreSet[] = ['LIBRO DE VENTAS', 'LIBRO DE COMPRAS', 'LIBRO DE GUIAS']
const LIBRO_DE_SET: Readonly<Partial<Record<NombreSet, string>>> = { 'LIBRO DE VENTAS': 'ventas', 'LIBRO DE COMPRAS': 'compras', 'LIBRO DE GUIAS': 'guias' }

export function isSetDeDocumentos(nombre: string): boolean {
  return !(SETS_DE_LIBROS as readonly string[]).includes(nombre)
}

/** The company, if it is in certificación: every operation of DESIGN §15 answers 409 NOT_IN_CERTIFICATION otherwise. */
export function requireCertificacion(db: Db, empresaId: string): EmpresaRow {
  const empresa = findEmpresaById(db, empresaId)
  if (!empresa) throw new Error(`empresa ${empresaId} of a valid credential is missing`)
  if (empresa.ambiente !== 'certificacion') throw new TimbreError('NOT_IN_CERTIFICATION', { context: { ambiente: empresa.ambiente } })
  return empresa
}

/** A stored set as the parser gave it, in the order of DESIGN §15's list of sets. */
export interface SetGuardado {
  readonly row: CertificacionSetRow
  readonly set: SetPruebas
}

export function setsGuardados(db: Db, empresaId: string): SetGuardado[] {
  return findCertificacionSets(db, empresaId)
    .map((row) => ({ row, set: row.set as unknown as SetPruebas }))
    .sort((a, b) => NOMBRES_SET.indexOf(a.set.nombre) - NOMBRES_SET.indexOf(b.set.nombre))
}

/** The current document of each case of a stored set, by case. */
export function documentosPorCaso(db: Db, empresaId: string, { row }: SetGuardado): Map<string, DteRow> {
  const casos = findCasos(db, empresaId).filter((c) => c.set_id === row.id)
  const dtes = findDtesById(db, empresaId, casos.flatMap((c) => (c.dte_id ? [c.dte_id] : [])))
  return new Map(casos.flatMap((c) => (c.dte_id && dtes.has(c.dte_id) ? [[c.caso, dtes.get(c.dte_id)!] as const] : [])))
}

/** The current documents of the named set's cases, in the set's order. */
function documentosDelSet(db: Db, empresaId: string, sets: readonly SetGuardado[], nombre: NombreSet): DteRow[] {
  const guardado = sets.find((s) => s.set.nombre === nombre)
  if (!guardado) return []
  const porCaso = documentosPorCaso(db, empresaId, guardado)
  return guardado.set.casos.flatMap((c) => (porCaso.has(c.caso) ? [porCaso.get(c.caso)!] : []))
}

/**
 * What each libro is made of (research §1.4): ventas the BASICO's documents (FACTURA EXENTA's without a BASICO), guías
 * the GUIA DE DESPACHO's, compras the LIBRO DE COMPRAS grid; and each libro's `huella`, the ids of those sources, by
 * which a sent libro is current only while its documents are the cases' current ones.
 */
export function fuentesDeLibros(db: Db, empresaId: string, sets: readonly SetGuardado[]): { ventas: DteRow[]; guias: DteRow[]; huella: Record<'ventas' | 'compras' | 'guias', string> } {
  const basico = documentosDelSet(db, empresaId, sets, 'BASICO')
  const ventas = basico.length > 0 ? basico : documentosDelSet(db, empresaId, sets, 'FACTURA EXENTA')
  const guias = documentosDelSet(db, empresaId, sets, 'GUIA DE DESPACHO')
  const setId = (nombre: NombreSet) => sets.find((s) => s.set.nombre === nombre)?.row.id ?? ''
  return {
    ventas,
    guias,
    huella: {
      ventas: ventas.map((d) => d.id).join(','),
      compras: setId('LIBRO DE COMPRAS'),
      guias: [setId('LIBRO DE GUIAS'), ...guias.map((d) => d.id), ventas.find((d) => d.tipo_dte === 33)?.id ?? ''].join(','),
    },
  }
}

// ------------------------------------------------------------------------------------------------ the set file

function lineError(field: string, e: SetError): FieldError {
  return { field, code: 'INVALID_FORMAT', message: `Línea ${e.line}: ${e.message}${e.text === '' ? '' : ` «${e.text}»`}` }
}

/**
 * Every case issued as a dry run against the same rules `POST /dte` applies, with stand-in folios for the cases it
 * cites: a case Timbre could not issue is refused at upload, naming its line, instead of stopping the set half issued.
 */
function casosQueNoSePuedenEmitir(set: SetPruebas, field: string, today: string, check: CheckEmision): FieldError[] {
  const emitidos = new Map<string, CasoEmitido>()
  const errors: FieldError[] = []
  for (const caso of set.casos) {
    const solicitud = solicitudDeCaso(set, caso, emitidos, { fecha: today, tpoCambio: 1 })
    emitidos.set(caso.caso, { tipoDte: caso.tipoDte, folio: 1, fechaEmision: today })
    if (!solicitud.ok) {
      errors.push({ field, code: 'INVALID_VALUE', message: `Línea ${caso.lineNumber}: caso ${caso.caso}: ${solicitud.message}` })
      continue
    }
    const checked = check(solicitud.request, today)
    if (!checked.ok)
      for (const e of checked.errors)
        errors.push({ field, code: 'INVALID_VALUE', message: `Línea ${caso.lineNumber}: el caso ${caso.caso} no se puede emitir: ${e.field}: ${e.message}` })
  }
  return errors
}

/** The LIBRO DE COMPRAS grid booked as a dry run: a line whose observation Timbre cannot book is refused at upload. */
function comprasQueNoSePuedenAsentar(set: SetPruebas, field: string, today: string): FieldError[] {
  if (!set.compras) return []
  const libro = libroCompras({ periodo: today.slice(0, 7), compras: set.compras, factorProporcionalidad: set.factorProporcionalidad ?? null, proveedor: { rut: RECEPTOR_SET_NACIONAL.rut, razonSocial: RECEPTOR_SET_NACIONAL.razon_social } })
  if (libro.ok) return []
  return libro.errors.map((e) => {
    const i = /^compras\.(\d+)/.exec(e.campo)
    const linea = i ? set.compras![Number(i[1])]?.lineNumber : undefined
    return { field, code: 'INVALID_VALUE' as const, message: `${linea !== undefined ? `Línea ${linea}: ` : ''}libro de compras: ${e.mensaje}` }
  })
}

export interface CargarSetInput {
  readonly empresaId: string
  readonly bytes: Uint8Array
  /** `archivo_base64` (JSON) or `archivo` (multipart): where a 400 points. */
  readonly field: string
  readonly reemplazar: boolean
  readonly check: CheckEmision
}

/**
 * `POST /certificacion/set`: the file read whole; any unreadable line, or a case Timbre could not issue, is a 400 and
 * nothing is stored. Sets are kept by name; one whose cases were issued is replaced only with `reemplazar`.
 */
export function cargarSet(deps: Pick<Deps, 'store' | 'clock'>, input: CargarSetInput): Promise<EstadoCertificacion> {
  requireCertificacion(deps.store.db, input.empresaId)
  return serialized(input.empresaId, async () => cargarSetNow(deps, input))
}

function cargarSetNow(deps: Pick<Deps, 'store' | 'clock'>, input: CargarSetInput): EstadoCertificacion {
  const { db } = deps.store
  requireCertificacion(db, input.empresaId)
  const now = deps.clock.now()
  const today = santiagoDate(now)
  const decoded = decodeSetText(input.bytes)
  if (!decoded.ok) throw new TimbreError('VALIDATION_ERROR', { details: [lineError(input.field, decoded.error)] })
  const parsed = parseSetPruebas(decoded.text)
  if (!parsed.ok) throw new TimbreError('VALIDATION_ERROR', { details: parsed.errors.slice(0, MAX_DETALLES).map((e) => lineError(input.field, e)) })
  const { sets, indicaciones } = parsed.value
  if (sets.length === 0) throw new TimbreError('VALIDATION_ERROR', { details: [{ field: input.field, code: 'INVALID_VALUE', message: 'El archivo no trae ningún set.' }] })
  const errors = sets.flatMap((s) => [...casosQueNoSePuedenEmitir(s, input.field, today, input.check), ...comprasQueNoSePuedenAsentar(s, input.field, today)])
  if (errors.length > 0) throw new TimbreError('VALIDATION_ERROR', { details: errors.slice(0, MAX_DETALLES) })
  const sha256 = createHash('sha256').update(input.bytes).digest('hex')
  const at = isoTimestamp(now)
  db.transaction(
    (tx) => {
      const nombres = sets.map((s) => s.nombre)
      const emitidos = findCertificacionSets(tx, input.empresaId).filter((r) => nombres.includes(r.nombre as NombreSet))
      const casos = findCasos(tx, input.empresaId)
      const conEmitidos = emitidos.filter((r) => casos.some((c) => c.set_id === r.id && (c.dte_id !== null || c.intento > 0)))
      if (conEmitidos.length > 0 && !input.reemplazar)
        throw new TimbreError('SET_YA_EMITIDO', { context: { sets: conEmitidos.map((r) => r.nombre) } })
      deleteSetsByNombre(tx, input.empresaId, nombres)
      for (const set of sets) {
        const id = Bun.randomUUIDv7()
        insertSet(
          tx,
          { id, empresa_id: input.empresaId, nombre: set.nombre, numero_atencion: set.numeroAtencion, set: set as unknown as Record<string, unknown>, indicaciones, archivo_sha256: sha256, created_at: at },
          set.casos.map((c, posicion) => ({ set_id: id, caso: c.caso, empresa_id: input.empresaId, posicion, tipo_dte: c.tipoDte, intento: 0, dte_id: null, updated_at: at })),
        )
      }
    },
    { behavior: 'immediate' },
  )
  return estadoCertificacion(deps, { empresaId: input.empresaId })
}

// ------------------------------------------------------------------------------------------------ the state

export interface CasoEstado {
  readonly caso: string
  readonly tipo_dte: number
  readonly dte_id: string | null
  readonly folio: number | null
  /** `sin_emitir`, or the DTE's estado. */
  readonly estado: string
  readonly glosa_sii: string | null
  readonly documento: CasoSet['documento']
  readonly referencia: { caso: string; codigo_ref: number; razon: string } | null
  readonly instrucciones: readonly string[]
}

export interface EstadoCertificacion {
  readonly empresa: { readonly rut: string; readonly razon_social: string; readonly ambiente: string; readonly fecha_resolucion: string }
  readonly etapas: ReadonlyArray<{ etapa: Etapa; estado: EstadoEtapa; siguiente_paso: string; nota: string | null; actualizado_at: string | null }>
  readonly indicaciones: readonly string[]
  readonly sets: ReadonlyArray<{ nombre: string; numero_atencion: number; cargado_at: string; casos: CasoEstado[]; instrucciones: readonly string[] }>
  readonly envios: ReadonlyArray<{ id: string; clase: string; sets: readonly string[]; track_id: string | null; estado: EstadoEnvioCert; glosa_sii: string | null; enviado_at: string | null; documentos: number; vigente: boolean }>
  readonly libros: ReadonlyArray<{ id: string; tipo: string; track_id: string | null; estado: EstadoEnvioCert; glosa_sii: string | null; enviado_at: string | null; vigente: boolean }>
}

const EN_CAMINO = new Set(['firmado', 'enviando', 'procesando'])

/**
 * An envío's state: the SII's answer to the file, then its documents' (a set is accepted only when every DTE is). A set
 * envelope is judged by the documents that are still their cases' current ones (`actuales`): after a partial re-issue
 * the replaced document's reparo is history, the new envelope carries its case.
 */
export function estadoDeEnvio(envio: CertificacionEnvioRow, dtes: ReadonlyMap<string, DteRow>, actuales?: ReadonlySet<string>): { estado: EstadoEnvioCert; glosa: string | null } {
  if (envio.estado === 'por_enviar' || envio.estado === 'subiendo') return { estado: 'por_enviar', glosa: envio.glosa_sii }
  if (envio.estado === 'rechazado') return { estado: 'rechazado', glosa: envio.glosa_sii }
  if (envio.clase === 'libro') return { estado: envio.estado as EstadoEnvioCert, glosa: envio.glosa_sii }
  const ids = envio.clase === 'set' && actuales && envio.dte_ids.some((id) => actuales.has(id)) ? envio.dte_ids.filter((id) => actuales.has(id)) : envio.dte_ids
  const docs = ids.map((id) => dtes.get(id)).filter((d): d is DteRow => d !== undefined)
  const malos = docs.filter((d) => d.estado === 'rechazado' || d.estado === 'con_reparos')
  const glosa = malos.length > 0 ? malos.map((d) => `${d.tipo_dte} folio ${d.folio}: ${d.glosa_sii ?? d.estado}`).join('; ') : envio.glosa_sii
  if (docs.some((d) => EN_CAMINO.has(d.estado))) return { estado: 'procesando', glosa }
  if (docs.some((d) => d.estado === 'rechazado')) return { estado: 'rechazado', glosa }
  if (malos.length > 0) return { estado: 'con_reparos', glosa }
  return { estado: 'aceptado', glosa }
}

/**
 * Which envíos the SII evaluates now: a set's envelope while one of its documents is still a case's current one; the
 * last simulation, the last boletas envío and the last libro of each kind. The others stay listed, as history.
 */
export function vigenciaDeEnvios(envios: readonly CertificacionEnvioRow[], actuales: ReadonlySet<string>, huellas: Readonly<Record<string, string>>): boolean[] {
  const ultimo = new Map<string, number>()
  envios.forEach((e, i) => ultimo.set(e.clase === 'libro' ? `libro:${e.nombres[0]}` : e.clase, i))
  return envios.map((e, i) => {
    if (e.clase === 'set') return e.dte_ids.some((id) => actuales.has(id))
    if (e.clase === 'libro') return ultimo.get(`libro:${e.nombres[0]}`) === i && e.fuente === huellas[e.nombres[0] ?? '']
    return ultimo.get(e.clase) === i
  })
}

export function estadoCertificacion(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string }): EstadoCertificacion {
  const { db } = deps.store
  const empresa = requireCertificacion(db, input.empresaId)
  const sets = setsGuardados(db, input.empresaId)
  const casos = findCasos(db, input.empresaId)
  const envios = findCertificacionEnvios(db, input.empresaId)
  const dtes = findDtesById(db, input.empresaId, [...casos.flatMap((c) => (c.dte_id ? [c.dte_id] : [])), ...envios.flatMap((e) => e.dte_ids)])
  const setsOut = sets.map(({ row, set }) => ({
    nombre: set.nombre,
    numero_atencion: set.numeroAtencion,
    cargado_at: row.created_at,
    instrucciones: set.instrucciones,
    casos: set.casos.map((c): CasoEstado => {
      const stored = casos.find((r) => r.set_id === row.id && r.caso === c.caso)
      const dte = stored?.dte_id ? dtes.get(stored.dte_id) : undefined
      return {
        caso: c.caso,
        tipo_dte: c.tipoDte,
        dte_id: dte?.id ?? null,
        folio: dte?.folio ?? null,
        estado: dte?.estado ?? 'sin_emitir',
        glosa_sii: dte?.glosa_sii ?? null,
        documento: c.documento,
        referencia: c.referenciaCaso ? { caso: c.referenciaCaso.caso, codigo_ref: c.referenciaCaso.codigoRef, razon: c.referenciaCaso.razon } : null,
        instrucciones: c.instrucciones,
      }
    }),
  }))
  const actuales = new Set(casos.flatMap((c) => (c.dte_id ? [c.dte_id] : [])))
  const hechos: EnvioHecho[] = envios.map((e) => {
    const { estado, glosa } = estadoDeEnvio(e, dtes, actuales)
    return { clase: e.clase, nombres: e.nombres, estado, trackId: e.track_id, glosa, fechaEnvio: e.enviado_at ? santiagoDate(new Date(e.enviado_at)) : null }
  })
  const vigentes = vigenciaDeEnvios(envios, actuales, fuentesDeLibros(db, input.empresaId, sets).huella)
  const registradas = new Map(findEtapas(db, input.empresaId).map((r) => [r.etapa as Etapa, { estado: r.estado as EstadoEtapa, nota: r.nota, updated_at: r.updated_at }]))
  const etapas = etapasDeCertificacion({
    setsDocumentos: setsOut.filter((s) => isSetDeDocumentos(s.nombre)).map((s) => ({ nombre: s.nombre, casos: s.casos.length, emitidos: s.casos.filter((c) => c.dte_id !== null).length })),
    librosPedidos: sets.flatMap(({ set }) => (LIBRO_DE_SET[set.nombre] ? [LIBRO_DE_SET[set.nombre]!] : [])),
    // Only what the SII evaluates now: an envelope whose documents were all re-issued is history, not an error.
    envios: hechos.filter((_, i) => vigentes[i]),
    registradas,
  })
  return {
    empresa: { rut: empresa.rut, razon_social: empresa.razon_social, ambiente: empresa.ambiente, fecha_resolucion: empresa.fecha_resolucion },
    etapas: etapas.map((e) => ({ ...e, nota: registradas.get(e.etapa)?.nota ?? null, actualizado_at: registradas.get(e.etapa)?.updated_at ?? null })),
    indicaciones: sets[0]?.row.indicaciones ?? [],
    sets: setsOut,
    envios: envios.flatMap((e, i) => {
      if (e.clase === 'libro') return []
      const h = hechos[i]!
      return [{ id: e.id, clase: e.clase, sets: e.nombres, track_id: e.track_id, estado: h.estado, glosa_sii: h.glosa, enviado_at: e.enviado_at, documentos: e.dte_ids.length, vigente: vigentes[i]! }]
    }),
    libros: envios.flatMap((e, i) => {
      if (e.clase !== 'libro') return []
      const h = hechos[i]!
      return [{ id: e.id, tipo: e.nombres[0] ?? '', track_id: e.track_id, estado: h.estado, glosa_sii: h.glosa, enviado_at: e.enviado_at, vigente: vigentes[i]! }]
    }),
  }
}

/** `GET /certificacion/envios`: every envío, libros included, with its state as the stages read it. */
export function listarEnvios(deps: Pick<Deps, 'store'>, input: { empresaId: string }) {
  const { db } = deps.store
  requireCertificacion(db, input.empresaId)
  const envios = findCertificacionEnvios(db, input.empresaId)
  const casos = findCasos(db, input.empresaId)
  const dtes = findDtesById(db, input.empresaId, envios.flatMap((e) => e.dte_ids))
  const actuales = new Set(casos.flatMap((c) => (c.dte_id ? [c.dte_id] : [])))
  const vigentes = vigenciaDeEnvios(envios, actuales, fuentesDeLibros(db, input.empresaId, setsGuardados(db, input.empresaId)).huella)
  return envios.map((e, i) => {
    const { estado, glosa } = estadoDeEnvio(e, dtes, actuales)
    return { id: e.id, clase: e.clase, nombres: e.nombres, track_id: e.track_id, estado, glosa_sii: glosa, enviado_at: e.enviado_at, documentos: e.dte_ids.length, vigente: vigentes[i]! }
  })
}

// ------------------------------------------------------------------------------------------------ what the person records

/** `POST /certificacion/etapas/{etapa}`: what the SII said on its site (its approval is shown only there). */
export function registrarEtapa(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { empresaId: string; etapa: Etapa; estado: 'aprobado' | 'pendiente'; nota?: string },
): EstadoCertificacion {
  requireCertificacion(deps.store.db, input.empresaId)
  upsertEtapa(deps.store.db, { empresa_id: input.empresaId, etapa: input.etapa, estado: input.estado, nota: input.nota ?? null, updated_at: isoTimestamp(deps.clock.now()) })
  return estadoCertificacion(deps, { empresaId: input.empresaId })
}

/** Timbre's own mark that it produced a stage's files (intercambio answers, muestras): the person uploads them next. */
export function marcarEtapaEnCurso(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; etapa: Etapa }): void {
  const current = findEtapas(deps.store.db, input.empresaId).find((r) => r.etapa === input.etapa)
  if (current?.estado === 'aprobado') return
  upsertEtapa(deps.store.db, { empresa_id: input.empresaId, etapa: input.etapa, estado: 'en_curso', nota: current?.nota ?? null, updated_at: isoTimestamp(deps.clock.now()) })
}
