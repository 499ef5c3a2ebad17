// `POST /certificacion/intercambio` (DESIGN §15): the SII's test EnvioDTE in, the three signed answers the SII asks for
// on its site out, zipped: 1_RecepcionDTE.xml (RespuestaDTE with RecepcionEnvio), 2_EnvioRecibos.xml (the Ley 19.983
// receipts of the DTEs accepted), 3_ResultadoDTE.xml (RespuestaDTE with ResultadoDTE). The envelope goes through the
// same checks as any received one (DESIGN §13, xml/received-envio.ts, with the authority keys and duplicate look-up
// of services/recibidos.ts), and `informe` reports them; which checks decide the codes is domain/certificacion-intercambio.ts.
// Nothing is stored: the SII's test DTEs are no purchases of the company (docs/decisions/certificacion.md «Intercambio»).
import { findEmpresaById } from '../db/empresa-store'
import { hasRecibido } from '../db/recibido-store'
import {
  ARCHIVOS_INTERCAMBIO,
  problemaIntercambio,
  recintoDe,
  respuestaDocumento,
  RUT_EMISOR_INTERCAMBIO,
  type RespuestaDocumento,
} from '../domain/certificacion-intercambio'
import { ESTADO_RECEP_ENV, type CheckName, type CheckResult } from '../domain/intercambio'
import { validationError } from '../errors'
import { authorityKeys } from '../xml/authority-keys'
import { exchangeKindOf } from '../xml/exchange-kind'
import type { ReceivedDocument } from '../xml/received-envio'
import { openActiveCertificado } from './certificados'
import type { Deps } from './deps'
import { acceptsSimulatedCafs } from './recibidos'

export type IntercambioDeps = Pick<Deps, 'store' | 'vault' | 'config' | 'log'>

export interface IntercambioInput {
  readonly empresaId: string
  /** The envelope's exact bytes, as downloaded from the SII's site. */
  readonly bytes: Uint8Array
  /** When the answers are signed (TmstFirmaResp, FchRecep, TmstFirmaRecibo) and the certificate must be valid. */
  readonly now: Date
  /** The request's field that carried the file (`archivo_base64` or `archivo`): where a 400 points. */
  readonly field: string
  /** The uploaded file's name, for RecepcionEnvio/NmbEnvio; without it, one made from the envelope's SetDTE ID. */
  readonly fileName?: string | null
}

/** One DTE of the envelope, its checks and what the answers say of it (spec names, DESIGN §13 `checks`). */
export interface InformeDocumento {
  readonly tipo_dte: number
  readonly folio: number
  readonly fecha_emision: string
  readonly rut_emisor: string
  readonly rut_receptor: string
  readonly monto_total: number
  readonly checks: CheckResult[]
  /** The check that refused it (null: accepted); `ted`, `caf` and `duplicado` are reported, never decide. */
  readonly decide: CheckName | null
  readonly estado_recep_dte: number
  readonly glosa_recepcion: string
  readonly estado_dte: number
  readonly glosa_resultado: string
  /** It got a Recibo in 2_EnvioRecibos.xml. */
  readonly recibo: boolean
  /** False when its type, folio, date, RUTs or amount cannot be written as the answers' XSD types them: it is left out of them. */
  readonly en_respuestas: boolean
}

export interface InformeIntercambio {
  readonly estado_recep_env: number
  readonly glosa: string
  /** The envelope's own checks: schema, firma_envio, receptor_envio. */
  readonly checks: CheckResult[]
  readonly documentos: InformeDocumento[]
  /** The files in the zip, in order; 2_EnvioRecibos.xml is missing when no DTE was accepted (EnvioRecibos needs one Recibo). */
  readonly archivos: string[]
}

/** RespuestaDTE's IdRespuesta: one sequence for both kinds, as services/recibidos.ts numbers a company's answers. */
const ID_RECEPCION = 1
const ID_RESULTADO = 2
/** RecepcionEnvio/CodEnvio: the company's number for this envelope; the only one it answers here. */
const COD_ENVIO = 1

/**
 * The three answers to the SII's test envelope, zipped, and the report of the checks. 400 VALIDATION_ERROR at
 * `input.field` for a file that is not a readable EnvioDTE, not the SII's test envelope or not this company's
 * (domain problemaIntercambio), or whose answers the SII's schemas would refuse; 422 CERTIFICATE_REQUIRED without an
 * active certificate. A failing check (a tampered signature, say) is no error: it is answered with its code and reported.
 */
export async function answerIntercambio(deps: IntercambioDeps, input: IntercambioInput): Promise<{ zip: Uint8Array; informe: InformeIntercambio }> {
  const { field, bytes, now } = input
  refuseNonEnvio(bytes, field)
  const empresa = findEmpresaById(deps.store.db, input.empresaId)
  if (!empresa) throw new Error(`empresa ${input.empresaId} is missing`)
  const xml = await exchangeXml()
  const checked = await xml.checkReceivedEnvio(bytes, {
    rutEmpresa: empresa.rut,
    authorityKeys: authorityKeys({ allowSimulator: acceptsSimulatedCafs(deps, empresa) }),
    isDuplicate: (rutEmisor, tipoDte, folio) => hasRecibido(deps.store.db, empresa.id, rutEmisor, tipoDte, folio),
  })
  if (checked.estadoRecepEnv === ESTADO_RECEP_ENV.archivoIlegible)
    throw validationError([{ field, code: 'INVALID_FORMAT', message: `El archivo no es un EnvioDTE legible: ${checked.glosa}.` }])
  const documentos = checked.documentos.map((d) => ({ d, respuesta: respuestaDocumento(d.checks), nombrado: xml.isNameable(d) }))
  const nombrados = documentos.filter((x) => x.nombrado)
  const problema = problemaIntercambio({ rutEmisor: checked.rutEmisor, rutReceptor: checked.rutReceptor, receptores: nombrados.map((x) => x.d.rutReceptor) }, empresa.rut, field)
  if (problema) throw validationError([problema])
  const firma = openActiveCertificado(deps, { empresaId: empresa.id, now })
  const header = { rutResponde: empresa.rut, rutRecibe: RUT_EMISOR_INTERCAMBIO, tmst: now }
  const recepcion = xml.buildRecepcionEnvio({
    ...header,
    idRespuesta: ID_RECEPCION,
    envio: {
      nmbEnvio: input.fileName ?? `EnvioDTE_${checked.envioDteId ?? 'SetDoc'}.xml`,
      fchRecep: now,
      codEnvio: COD_ENVIO,
      envioDteId: checked.envioDteId ?? '',
      digest: checked.digest,
      rutEmisor: checked.rutEmisor,
      rutReceptor: checked.rutReceptor,
      estadoRecepEnv: checked.estadoRecepEnv,
      glosa: checked.glosa,
      documentos: nombrados.map(({ d, respuesta }) => ({ ...documentoRef(d), estadoRecepDte: respuesta.estadoRecepDte, glosa: respuesta.glosaRecepcion })),
    },
  }, firma.signer)
  const aceptados = nombrados.filter((x) => x.respuesta.recibo)
  const recibos = aceptados.length === 0 ? null : xml.buildEnvioRecibos({
    ...header,
    recibos: aceptados.map(({ d }) => ({
      ...documentoRef(d), tipoDoc: d.tipoDte, rutRecep: d.rutReceptor, recinto: recintoDe(empresa), rutFirma: firma.rutFirmante, tmst: now,
    })),
  }, firma.signer)
  const resultado = xml.buildResultadoDte({
    ...header,
    idRespuesta: ID_RESULTADO,
    resultados: nombrados.map(({ d, respuesta }) => ({ ...documentoRef(d), codEnvio: COD_ENVIO, estadoDte: respuesta.estadoDte, glosa: respuesta.glosaResultado })),
  }, firma.signer)
  const files: Array<readonly [string, Uint8Array, 'RespuestaDTE' | 'EnvioRecibos']> = [
    [ARCHIVOS_INTERCAMBIO.recepcion, recepcion, 'RespuestaDTE'],
    ...(recibos === null ? [] : [[ARCHIVOS_INTERCAMBIO.recibos, recibos, 'EnvioRecibos'] as const]),
    [ARCHIVOS_INTERCAMBIO.resultado, resultado, 'RespuestaDTE'],
  ]
  await refuseSchemaInvalid(xml.validateSchema, files, field)
  const zip = xml.zipSync(Object.fromEntries(files.map(([name, content]) => [name, content])), { mtime: now })
  deps.log.info('certificacion.intercambio', {
    empresa_id: empresa.id, estado_recep_env: checked.estadoRecepEnv, documentos: documentos.length, aceptados: aceptados.length,
  })
  return {
    zip,
    informe: {
      estado_recep_env: checked.estadoRecepEnv,
      glosa: checked.glosa,
      checks: [...checked.checks],
      documentos: documentos.map(({ d, respuesta, nombrado }) => informeDocumento(d, respuesta, nombrado)),
      archivos: files.map(([name]) => name),
    },
  }
}

/** An empty file, a file that is not XML or not an exchange document, or another exchange document: 400 before any check runs. */
function refuseNonEnvio(bytes: Uint8Array, field: string): void {
  if (bytes.length === 0) throw validationError([{ field, code: 'REQUIRED', message: 'El archivo está vacío.' }])
  const kind = exchangeKindOf(bytes)
  if (kind === null)
    throw validationError([{ field, code: 'INVALID_FORMAT', message: 'El archivo no es el EnvioDTE del set de intercambio: no es XML legible o su elemento raíz es otro.' }])
  if (kind !== 'EnvioDTE') throw validationError([{ field, code: 'INVALID_VALUE', message: `El archivo es un ${kind}, no el EnvioDTE del set de intercambio.` }])
}

/**
 * Each file against its XSD before it is handed out. The builders write what their XSD allows but one thing: a DTE
 * type outside SiiTypes_v10.xsd's DTEType (33, 34, 46, 52, 56, 61), a 43 say, which the SII's set de intercambio
 * never holds; the SII would refuse those answers, so the request is refused instead, with libxml2's words.
 */
async function refuseSchemaInvalid(
  validate: ExchangeXml['validateSchema'],
  files: ReadonlyArray<readonly [string, Uint8Array, 'RespuestaDTE' | 'EnvioRecibos']>,
  field: string,
): Promise<void> {
  const results = await Promise.all(files.map(async ([name, content, root]) => ({ name, result: await validate(content, root) })))
  const invalid = results.find((r) => !r.result.isValid)
  if (invalid === undefined) return
  const why = invalid.result.errors.slice(0, 2).join('; ') || 'no cumple su esquema'
  throw validationError([{ field, code: 'INVALID_VALUE', message: `El SII no aceptaría ${invalid.name} para este envío: ${why}.` }])
}

/** TipoDTE … MntTotal as both RespuestaDTE kinds and the Recibo name a document. */
function documentoRef(d: ReceivedDocument) {
  return { tipoDte: d.tipoDte, folio: d.folio, fechaEmision: d.fechaEmision, rutEmisor: d.rutEmisor, rutReceptor: d.rutReceptor, montoTotal: d.montoTotal }
}

function informeDocumento(d: ReceivedDocument, r: RespuestaDocumento, nombrado: boolean): InformeDocumento {
  return {
    tipo_dte: d.tipoDte,
    folio: d.folio,
    fecha_emision: d.fechaEmision,
    rut_emisor: d.rutEmisor,
    rut_receptor: d.rutReceptor,
    monto_total: d.montoTotal,
    checks: [...d.checks],
    decide: r.decide,
    estado_recep_dte: r.estadoRecepDte,
    glosa_recepcion: r.glosaRecepcion,
    estado_dte: r.estadoDte,
    glosa_resultado: r.glosaResultado,
    recibo: nombrado && r.recibo,
    en_respuestas: nombrado,
  }
}

/**
 * The exchange's XML (and the zip writer) load with the first answer, not at start, as services/recibidos.ts loads it:
 * a server that never certifies keeps xml-crypto, xmlbuilder2 and libxml2's WebAssembly out of its main thread (issue 17).
 */
async function exchangeXml() {
  const [received, respuesta, recibos, values, xsd, fflate] = await Promise.all([
    import('../xml/received-envio'), import('../xml/respuesta-dte'), import('../xml/envio-recibos'), import('../xml/exchange-values'), import('../xml/xsd'),
    import('fflate'),
  ])
  return {
    zipSync: fflate.zipSync,
    checkReceivedEnvio: received.checkReceivedEnvio,
    buildRecepcionEnvio: respuesta.buildRecepcionEnvio,
    buildResultadoDte: respuesta.buildResultadoDte,
    buildEnvioRecibos: recibos.buildEnvioRecibos,
    validateSchema: xsd.validateSchema,
    /**
     * The document can be named in the answers: the six values they share have their XSD types (RespuestaEnvioDTE_v10.xsd,
     * Recibos_v10.xsd). buildRecepcionEnvio leaves out the others by itself; ResultadoDTE and Recibo would throw.
     */
    isNameable: (d: ReceivedDocument): boolean =>
      values.integerOrNull(d.tipoDte, 1, 999) !== null && values.integerOrNull(d.folio, 1, values.MAX_FOLIO) !== null &&
      values.dateOrNull(d.fechaEmision) !== null && values.rutOrNull(d.rutEmisor) !== null && values.rutOrNull(d.rutReceptor) !== null &&
      values.integerOrNull(d.montoTotal, 0, values.MAX_MONTO) !== null,
  }
}

type ExchangeXml = Awaited<ReturnType<typeof exchangeXml>>
