// POST /dte body: the shape of EmitirDTERequest (spec 2.3–2.11, limits of spec §8). Pure data, also the OpenAPI docs.
// Shape only: types, required fields, lengths, ranges, enumerations. Rules across fields live in
// domain/emision-rules.ts; `validateEmision` runs both and returns every failure at once (DESIGN §5).
import { Type, type Static, type TLiteral, type TUnion } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { FieldError } from '../errors'
import { isValidEmail } from '../domain/catalogo'
import { MONEDAS, TIPOS_DTE, type EmitirDte } from '../domain/emision'
import { checkEmision, checkSalvagedEmision } from '../domain/emision-rules'
import { TIPOS, type ReceptorRequerido } from '../domain/tipos'
import { fieldErrorsFromTypeBox, MAX_DETAILS, mergeDetails, withoutFields } from './validation'
import { DATE_PATTERN } from './common'

// Enumerations are unions of literals, never t.UnionEnum, which injects a default (docs/stack-notes.md "Elysia and TypeBox").
function oneOf<T extends string | number>(values: readonly T[], description: string): TUnion<TLiteral<T>[]> {
  return Type.Union(
    values.map((v): TLiteral<T> => Type.Literal(v)),
    { description },
  )
}

const text = (maxLength: number, description: string, minLength = 0) =>
  Type.String({ ...(minLength > 0 ? { minLength } : {}), maxLength, description })

const fecha = (description: string) => Type.String({ pattern: DATE_PATTERN, description: `${description} (YYYY-MM-DD).` })

const TipoDteSchema = Type.Union(
  TIPOS_DTE.map((t) => Type.Literal(t)),
  {
    description:
      'Tipo de DTE: 33 factura, 34 factura exenta, 39 boleta, 41 boleta exenta, 43 liquidación-factura, 46 factura de compra, ' +
      '52 guía de despacho, 56 nota de débito, 61 nota de crédito, 110 factura de exportación, 111 y 112 notas de exportación.',
  },
)

/** " Obligatorio en los tipos 33, 34…": read from the per-type table, so the description cannot drift from the rule. */
function requiredIn(field: ReceptorRequerido): string {
  const tipos = TIPOS_DTE.filter((t) => TIPOS[t].requiredReceptor.includes(field))
  return tipos.length === 0 ? '' : ` Obligatorio en los tipos ${tipos.join(', ')} (Formato DTE del SII).`
}

const ReceptorSchema = Type.Object(
  {
    rut: Type.String({ minLength: 1, maxLength: 20, description: 'RUT con dígito verificador; con o sin puntos.', examples: ['76.555.835-2'] }),
    razon_social: text(200, 'Razón social del receptor (el XML usa los primeros 100 caracteres).', 1),
    giro: Type.Optional(text(200, `Giro del receptor (el XML usa los primeros 40).${requiredIn('giro')}`)),
    direccion: Type.Optional(text(300, `Dirección (el XML usa los primeros 70).${requiredIn('direccion')}`)),
    comuna: Type.Optional(text(100, `Comuna (el XML usa los primeros 20).${requiredIn('comuna')}`)),
    ciudad: Type.Optional(text(100, `Ciudad (el XML usa los primeros 20).${requiredIn('ciudad')}`)),
    email: Type.Optional(
      text(
        254,
        'Extensión: casilla de intercambio del receptor, a la que Timbre envía el DTE cuando el SII lo acepta (DESIGN §13). ' +
          'Sin ella se usa el correo del cliente con ese RUT, o el del listado de contribuyentes electrónicos del SII. ' +
          'El XML la lleva como CorreoRecep cuando cabe en sus 80 caracteres (no en boletas); una más larga queda solo para el envío.',
      ),
    ),
  },
  { additionalProperties: false, description: 'Receptor del documento.' },
)

const LineaSchema = Type.Object(
  {
    nombre: text(200, 'Nombre del ítem (el XML usa los primeros 80).', 1),
    dsc_item: Type.Optional(text(1000, 'Descripción del ítem.')),
    cantidad: Type.Optional(
      // QtyItem is at most 999999999999.999999 (DTE_v10.xsd); as a JSON number that maximum is 1e12 itself, so the bound is exclusive.
      Type.Number({ minimum: 0.000001, exclusiveMaximum: 1_000_000_000_000, description: 'Cantidad, menor que 10^12; hasta 6 decimales. Solo se omite en correcciones de texto (codigo_ref 2) o con monto_item.' }),
    ),
    unidad: Type.Optional(text(4, 'Unidad de medida (UN, KG, LT…).')),
    // A number, not an integer: in a foreign currency prices take up to 4 decimals (DESIGN §12 "Exports"); the rules
    // (domain/emision-rules.ts checkLineaDecimales) refuse decimals in pesos at this same field.
    precio: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 999999999999.9999,
        description:
          'Precio unitario: neto, salvo en boletas 39 y con montos_brutos (IVA incluido). En pesos, un entero; en exportaciones en ' +
          'moneda extranjera, en la moneda de export_data con hasta 4 decimales.',
      }),
    ),
    monto_item: Type.Optional(
      Type.Number({
        minimum: -999999999999999,
        maximum: 999999999999999,
        description:
          'Total de la línea cuando no es cantidad × precio (p. ej. liquidaciones); negativo solo en 43. En pesos, un entero; en ' +
          'moneda extranjera, hasta 4 decimales.',
      }),
    ),
    descuento_pct: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Descuento de la línea en %, hasta 2 decimales.' })),
    recargo_pct: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Recargo de la línea en %, hasta 2 decimales.' })),
    ind_exe: Type.Optional(Type.Literal(1, { description: '1 marca la línea como exenta.' })),
    cod_imp_adic: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 999, description: 'Código de impuesto adicional o retención de la línea (15: retención total de IVA en factura de compra).' }),
    ),
    tipo_doc_liq: Type.Optional(text(3, 'Tipo del documento liquidado; obligatorio en la liquidación-factura (43).', 1)),
  },
  { additionalProperties: false },
)

const ReferenciaSchema = Type.Object(
  {
    tipo_doc_ref: Type.Union([TipoDteSchema, Type.String({ minLength: 1, maxLength: 3 })], {
      description: 'Tipo del documento referenciado: un TipoDTE, o un código de hasta 3 caracteres (801 orden de compra, DUS, AWB, SET para el set de pruebas del SII).',
    }),
    folio_ref: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Folio del documento referenciado (0 en referencias SET).' }),
    fecha_ref: fecha('Fecha del documento referenciado'),
    codigo_ref: Type.Optional(oneOf([1, 2, 3] as const, '1 anula, 2 corrige texto, 3 corrige montos.')),
    razon_ref: text(200, 'Razón de la referencia (el XML usa los primeros 90); «CASO <n>» en referencias SET.', 1),
  },
  { additionalProperties: false },
)

const ComisionSchema = Type.Object(
  {
    tipo_movim: oneOf(['C', 'O'] as const, 'C comisión, O otros cargos.'),
    glosa: text(200, 'Glosa de la comisión (el XML usa los primeros 60).', 1),
    tasa_comision: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 999.99, description: 'Tasa de la comisión en %.' })),
    val_com_neto: Type.Integer({ description: 'Valor neto de la comisión.' }),
    val_com_exe: Type.Integer({ description: 'Valor exento de la comisión.' }),
    val_com_iva: Type.Optional(Type.Integer({ description: 'IVA de la comisión; si se omite, 19 % del neto.' })),
  },
  { additionalProperties: false },
)

const ImpuestoRetencionSchema = Type.Object(
  {
    tipo_imp: Type.Integer({ minimum: 1, maximum: 999, description: 'Código SII del impuesto o retención (15 retención total de IVA).' }),
    tasa_imp: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Tasa en %, para calcular el monto sobre el neto cuando monto_imp se omite.' })),
    monto_imp: Type.Optional(Type.Integer({ description: 'Monto explícito del impuesto o retención.' })),
  },
  { additionalProperties: false },
)

const DescuentoGlobalSchema = Type.Object(
  {
    nro_lin_dr: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'Número de línea del descuento o recargo.' })),
    tpo_mov: oneOf(['D', 'R'] as const, 'D descuento, R recargo.'),
    tpo_valor: oneOf(['%', '$'] as const, '% porcentaje, $ monto.'),
    valor_dr: Type.Number({ exclusiveMinimum: 0, maximum: 9999999999999999.99, description: 'Valor; hasta 2 decimales (montos en pesos: enteros).' }),
    glosa_dr: Type.Optional(text(45, 'Glosa.')),
    ind_exe_dr: Type.Optional(oneOf([1, 2] as const, '1 afecta a lo exento, 2 a lo no facturable; en documentos exentos y de exportación se infiere 1.')),
  },
  { additionalProperties: false },
)

const ExportDataSchema = Type.Object(
  {
    tpo_moneda: oneOf(MONEDAS, 'Moneda de la operación según la tabla de Aduana (DOLAR USA, EURO, PESO CL…).'),
    tpo_cambio: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 999999.9999, description: 'Tipo de cambio del Banco Central; obligatorio si la moneda no es PESO CL.' })),
    mnt_export: Type.Optional(Type.Number({ minimum: 0, description: 'Monto auxiliar de compatibilidad; no altera los totales.' })),
    nacionalidad: Type.Optional(text(50, 'País del receptor extranjero: código de Aduana o nombre.', 1)),
    num_id: Type.Optional(text(20, 'Número de identificación del receptor extranjero.', 1)),
    tipo_doc_id: Type.Optional(Type.Integer({ description: 'No se usa en los tipos 110, 111 y 112.' })),
    forma_pago_exp: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'Forma de pago de Aduana (21: sin pago).' })),
    modalidad_venta: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'Modalidad de venta de Aduana.' })),
    clausula_venta: Type.Optional(text(20, 'Cláusula de venta: código de Aduana o FOB, CIF, CFR, EXW…', 1)),
    total_clausula: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 9999999999999999.99, description: 'Total de la cláusula de venta.' })),
    via_transporte: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'Vía de transporte de Aduana.' })),
    puerto_embarque: Type.Optional(text(50, 'Puerto de embarque: código de Aduana o nombre (el nombre va como identificación adicional, 20 caracteres).', 1)),
    puerto_desembarque: Type.Optional(text(50, 'Puerto de desembarque: código de Aduana o nombre.', 1)),
    tara: Type.Optional(Type.Integer({ minimum: 1, maximum: 9999999, description: 'Tara.' })),
    unidad_tara: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'Unidad de la tara (Aduana).' })),
    peso_bruto: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 99999999.99, description: 'Peso bruto.' })),
    unidad_peso_bruto: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'Unidad del peso bruto (Aduana).' })),
    peso_neto: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 99999999.99, description: 'Peso neto.' })),
    unidad_peso_neto: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'Unidad del peso neto (Aduana).' })),
    tipo_bulto: Type.Optional(text(30, 'Tipo de bulto: código de Aduana o nombre (PALLETS, CONT20…).', 1)),
    total_bultos: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Total de bultos.' })),
    marcas: Type.Optional(text(255, 'Marcas de los bultos.')),
    mnt_flete: Type.Optional(Type.Number({ minimum: 0, maximum: 99999999999999.9999, description: 'Flete, en la moneda de la operación.' })),
    mnt_seguro: Type.Optional(Type.Number({ minimum: 0, maximum: 99999999999999.9999, description: 'Seguro, en la moneda de la operación.' })),
    pais_recep: Type.Optional(text(50, 'País receptor: código de Aduana o nombre.', 1)),
    pais_dest: Type.Optional(text(50, 'País de destino: código de Aduana o nombre.', 1)),
  },
  { additionalProperties: false, description: 'Datos de exportación; obligatorio en 110, 111 y 112.' },
)

export const EmitirDteBody = Type.Object(
  {
    tipo_dte: TipoDteSchema,
    fecha_emision: Type.Optional(fecha('Fecha de emisión; por omisión, hoy en Chile. No puede ser posterior a hoy')),
    receptor: ReceptorSchema,
    detalle: Type.Array(LineaSchema, { minItems: 1, maxItems: 60, description: 'Líneas de detalle, de 1 a 60.' }),
    comisiones: Type.Optional(Type.Array(ComisionSchema, { maxItems: 20, description: 'Comisiones; obligatorias en la liquidación-factura (43).' })),
    impuestos_retenciones: Type.Optional(
      Type.Array(ImpuestoRetencionSchema, { maxItems: 20, description: 'Impuestos adicionales y retenciones (factura de compra 46 y sus notas).' }),
    ),
    referencias: Type.Optional(
      Type.Array(ReferenciaSchema, { maxItems: 40, description: 'Hasta 40; obligatorias en notas de crédito y débito (56, 61, 111, 112).' }),
    ),
    ind_traslado: Type.Optional(Type.Integer({ minimum: 1, maximum: 9, description: 'Tipo de traslado; obligatorio en la guía de despacho (52).' })),
    tipo_despacho: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, description: 'Tipo de despacho (guías, facturas, exportación).' })),
    ind_servicio: Type.Optional(Type.Integer({ minimum: 1, maximum: 6, description: 'Indicador de servicio; en boletas por omisión 3.' })),
    descuentos_globales: Type.Optional(Type.Array(DescuentoGlobalSchema, { maxItems: 20, description: 'Descuentos y recargos globales, hasta 20.' })),
    auto_send: Type.Optional(Type.Boolean({ description: 'true (por omisión): se envía al SII al emitir; false: queda firmado.' })),
    export_data: Type.Optional(ExportDataSchema),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Datos libres del integrador; hasta 16 KB serializado.' })),
    montos_brutos: Type.Optional(
      Type.Boolean({ description: 'Extensión: precios y descuentos en $ incluyen IVA (MntBruto). Solo en 33, 56 y 61 sin impuestos adicionales.' }),
    ),
  },
  { additionalProperties: false, title: 'EmitirDTERequest', description: 'Solicitud de emisión de un DTE.' },
)

// The schema's static type must fit the domain's request type: a drift between them fails the typecheck here.
const _shapeMatchesDomain = (body: Static<typeof EmitirDteBody>): EmitirDte => body
void _shapeMatchesDomain

// Compiled at the first issuance, not at start-up: ~10 ms the server would otherwise spend before `/health` answers.
let compiledBody: ReturnType<typeof TypeCompiler.Compile<typeof EmitirDteBody>> | undefined
const compiledEmision = () => (compiledBody ??= TypeCompiler.Compile(EmitirDteBody))

/**
 * Shape and rules (DESIGN §5): every failing field at once, or the request typed. When the shape fails, the rules
 * still run over what the shape allowed, and both lists are merged. `today` is Santiago's date.
 */
export function validateEmision(input: unknown, today: string): { ok: true; value: EmitirDte } | { ok: false; errors: FieldError[] } {
  const compiled = compiledEmision()
  if (compiled.Check(input)) {
    const errors = [...checkEmision(input, today), ...receptorEmailErrors(input)]
    return errors.length > 0 ? { ok: false, errors } : { ok: true, value: input }
  }
  const shape = fieldErrorsFromTypeBox(compiled.Errors(input))
  // A list past its bound (TOO_MANY), or a body with MAX_DETAILS failing fields, is far from valid and may be huge:
  // the rules would walk all of it on the event loop for nothing the integrator needs yet.
  if (shape.length >= MAX_DETAILS || shape.some((e) => e.code === 'TOO_MANY')) return { ok: false, errors: shape }
  const salvaged = withoutFields(input, shape.map((e) => e.field))
  // Typed only in part (checkSalvagedEmision says how it copes); the cast is the honest name of that.
  const rules = salvaged === null ? [] : [...checkSalvagedEmision(salvaged as EmitirDte, today), ...receptorEmailErrors(salvaged)]
  return { ok: false, errors: mergeDetails(shape, rules) }
}

/** `receptor.email` is a mailbox on the Internet (the rule clientes' email follows, domain/catalogo.ts). */
function receptorEmailErrors(body: unknown): FieldError[] {
  const email = (body as { receptor?: { email?: unknown } } | null)?.receptor?.email
  return typeof email === 'string' && !isValidEmail(email)
    ? [{ field: 'receptor.email', code: 'INVALID_FORMAT', message: 'Correo electrónico inválido.' }]
    : []
}
