// Certificación ante el SII (DESIGN §15, extensions): request bodies and the documented answers. Pure data and checks.
import { Type, type Static } from '@sinclair/typebox'
import { ESTADOS_ETAPA, ETAPAS } from '../domain/certificacion-etapas'
import { EmitirDteBody } from './dte'
import { parseBody } from './validation'

export const ArchivoBody = Type.Object(
  { archivo_base64: Type.String({ description: 'Los bytes exactos del archivo, en base64 (o multipart/form-data con el campo archivo).' }) },
  { additionalProperties: false },
)

export const EmitirSetBody = Type.Object(
  {
    enviar: Type.Optional(Type.Boolean({ description: 'Envía al SII un EnvioDTE por set (por defecto true).' })),
    tpo_cambio: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 999999, description: 'Tipo de cambio de la moneda de los sets de exportación (el set no lo trae).' })),
    reemitir: Type.Optional(Type.Boolean({ description: 'Reemite, con folios nuevos y un envío nuevo, los casos que el SII rechazó o reparó (y los que los citan).' })),
  },
  { additionalProperties: false },
)
export type EmitirSetBodyT = Static<typeof EmitirSetBody>

export function parseEmitirSet(body: unknown): { enviar: boolean; tpoCambio?: number; reemitir: boolean } {
  // `{}` is the default run (issue and send); as on every write, a missing body is REQUIRED at body.
  const parsed = parseBody<EmitirSetBodyT>(EmitirSetBody, body, () => [])
  return { enviar: parsed.enviar ?? true, ...(parsed.tpo_cambio !== undefined ? { tpoCambio: parsed.tpo_cambio } : {}), reemitir: parsed.reemitir ?? false }
}

export const SimulacionBody = Type.Object(
  { cantidad: Type.Integer({ minimum: 20, maximum: 100, description: 'Cuántos documentos (el SII pide entre 20 y 100).' }) },
  { additionalProperties: false },
)

export function parseSimulacion(body: unknown): { cantidad: number } {
  return parseBody<Static<typeof SimulacionBody>>(SimulacionBody, body, () => [])
}

/** A boleta of the boleta set: POST /dte's request without referencias (Timbre adds the SET one); receptor optional. */
const DocumentoBoleta = Type.Object(
  { ...Type.Omit(EmitirDteBody, ['referencias', 'receptor']).properties, receptor: Type.Optional(EmitirDteBody.properties.receptor) },
  { additionalProperties: false, description: 'La boleta como la toma POST /dte (39 o 41), sin referencias; el receptor es opcional (66666666-6).' },
)

export const BoletasBody = Type.Object(
  {
    casos: Type.Array(
      Type.Object(
        {
          caso: Type.String({ minLength: 1, maxLength: 20, description: 'El caso del set de boletas (1, o CASO-1).' }),
          documento: DocumentoBoleta,
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50 },
    ),
  },
  { additionalProperties: false },
)

export function parseBoletas(body: unknown): Static<typeof BoletasBody> {
  return parseBody<Static<typeof BoletasBody>>(BoletasBody, body, () => [])
}

export const EtapaBody = Type.Object(
  {
    estado: Type.Union([Type.Literal('aprobado'), Type.Literal('pendiente')], { description: 'Lo que el SII dijo en su sitio.' }),
    nota: Type.Optional(Type.String({ maxLength: 500, description: 'Nota libre (fecha de aprobación, observaciones del SII).' })),
  },
  { additionalProperties: false },
)
export type EtapaBodyT = Static<typeof EtapaBody>

export function parseEtapa(body: unknown): EtapaBodyT {
  return parseBody<EtapaBodyT>(EtapaBody, body, () => [])
}

const nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()])

/** The answer of GET /certificacion and of every operation that changes it (documentation). */
export const EstadoCertificacionSchema = Type.Object({
  empresa: Type.Object({ rut: Type.String(), razon_social: Type.String(), ambiente: Type.String(), fecha_resolucion: Type.String() }),
  etapas: Type.Array(Type.Object({
    etapa: Type.Union(ETAPAS.map((e) => Type.Literal(e))),
    estado: Type.Union(ESTADOS_ETAPA.map((e) => Type.Literal(e))),
    siguiente_paso: Type.String({ description: 'Qué hacer ahora, en palabras, con los track ids y fechas a declarar.' }),
    nota: nullable(Type.String({ description: 'La nota registrada con la etapa.' })),
    actualizado_at: nullable(Type.String()),
  })),
  indicaciones: Type.Array(Type.String()),
  sets: Type.Array(Type.Object({
    nombre: Type.String(),
    numero_atencion: Type.Integer(),
    cargado_at: Type.String(),
    instrucciones: Type.Array(Type.String()),
    casos: Type.Array(Type.Object({
      caso: Type.String(),
      tipo_dte: Type.Integer(),
      dte_id: nullable(Type.String()),
      folio: Type.Union([Type.Integer(), Type.Null()]),
      estado: Type.String({ description: 'sin_emitir, o el estado del DTE.' }),
      glosa_sii: nullable(Type.String()),
      documento: Type.Object({}, { additionalProperties: true, description: 'La solicitud que emite el caso (EmitirDTERequest sin receptor ni referencias).' }),
      referencia: Type.Union([Type.Object({ caso: Type.String(), codigo_ref: Type.Integer(), razon: Type.String() }), Type.Null()]),
      instrucciones: Type.Array(Type.String()),
    })),
  })),
  envios: Type.Array(Type.Object({
    id: Type.String(), clase: Type.String(), sets: Type.Array(Type.String()), track_id: nullable(Type.String()), estado: Type.String(),
    glosa_sii: nullable(Type.String()), enviado_at: nullable(Type.String()), documentos: Type.Integer(),
    vigente: Type.Boolean({ description: 'El SII evalúa este envío (false: sus documentos se reemitieron, o hubo uno posterior).' }),
  })),
  libros: Type.Array(Type.Object({
    id: Type.String({ description: 'Su XML enviado: GET /certificacion/envios/{id}/xml.' }),
    tipo: Type.String(), track_id: nullable(Type.String()), estado: Type.String(), glosa_sii: nullable(Type.String()), enviado_at: nullable(Type.String()),
    vigente: Type.Boolean(),
  })),
})

/** GET /certificacion/envios: every envío of the certification, libros included, oldest first. */
export const EnviosListSchema = Type.Object({
  items: Type.Array(Type.Object({
    id: Type.String(), clase: Type.String({ description: 'set, simulacion, boletas o libro.' }), nombres: Type.Array(Type.String()),
    track_id: nullable(Type.String()), estado: Type.String(), glosa_sii: nullable(Type.String()), enviado_at: nullable(Type.String()),
    documentos: Type.Integer(), vigente: Type.Boolean(),
  })),
})
