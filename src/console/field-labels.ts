// The words a person sees for a field the API names by its dot path (issue 27: "Línea 1, Nombre", never
// `detalle.0.nombre`). The issue form labels its inputs from this same table, so a message and the input it points at
// always say the same name. Paths of other forms (clientes, productos, webhooks…) use the same names where they share
// them; anything unknown still reads as words: underscores become spaces, dots and brackets never show.

/** The label of each field name of the API's bodies (spec 2.3–2.11), as the forms print it. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  // EmitirDTERequest (spec 2.3)
  tipo_dte: 'Tipo de documento',
  fecha_emision: 'Fecha de emisión',
  receptor: 'Receptor',
  detalle: 'Detalle',
  comisiones: 'Comisiones',
  impuestos_retenciones: 'Impuestos adicionales y retenciones',
  referencias: 'Referencias',
  ind_traslado: 'Tipo de traslado',
  tipo_despacho: 'Tipo de despacho',
  ind_servicio: 'Indicador de servicio',
  descuentos_globales: 'Descuentos y recargos globales',
  auto_send: 'Enviar al SII al emitir',
  export_data: 'Datos de exportación',
  metadata: 'Datos del integrador',
  montos_brutos: 'Precios con IVA incluido',
  idempotency_key: 'Clave de envío del formulario',
  body: 'Formulario',
  // receptor
  rut: 'RUT',
  razon_social: 'Razón social',
  giro: 'Giro',
  direccion: 'Dirección',
  comuna: 'Comuna',
  ciudad: 'Ciudad',
  email: 'Correo de intercambio',
  // detalle (spec 2.4)
  nombre: 'Nombre',
  dsc_item: 'Descripción',
  cantidad: 'Cantidad',
  unidad: 'Unidad',
  precio: 'Precio unitario',
  monto_item: 'Monto de la línea',
  descuento_pct: 'Descuento %',
  recargo_pct: 'Recargo %',
  ind_exe: 'Exenta',
  cod_imp_adic: 'Impuesto adicional o retención',
  tipo_doc_liq: 'Tipo del documento liquidado',
  // referencias (spec 2.5)
  tipo_doc_ref: 'Tipo del documento referenciado',
  folio_ref: 'Folio referenciado',
  fecha_ref: 'Fecha del documento referenciado',
  codigo_ref: 'Código de referencia',
  razon_ref: 'Razón de la referencia',
  // comisiones (spec 2.8)
  tipo_movim: 'Tipo de movimiento',
  glosa: 'Glosa',
  tasa_comision: 'Tasa de comisión %',
  val_com_neto: 'Valor neto',
  val_com_exe: 'Valor exento',
  val_com_iva: 'IVA de la comisión',
  // impuestos_retenciones (spec 2.9)
  tipo_imp: 'Código',
  tasa_imp: 'Tasa %',
  monto_imp: 'Monto',
  // descuentos_globales (spec 2.10)
  nro_lin_dr: 'Número de línea',
  tpo_mov: 'Descuento o recargo',
  tpo_valor: 'Expresado en',
  valor_dr: 'Valor',
  glosa_dr: 'Glosa',
  ind_exe_dr: 'Afecta a',
  // export_data (spec 2.11)
  tpo_moneda: 'Moneda',
  tpo_cambio: 'Tipo de cambio',
  mnt_export: 'Monto en otra moneda',
  nacionalidad: 'Nacionalidad del receptor',
  num_id: 'Identificación del receptor extranjero',
  tipo_doc_id: 'Tipo de documento de identidad',
  forma_pago_exp: 'Forma de pago',
  modalidad_venta: 'Modalidad de venta',
  clausula_venta: 'Cláusula de venta',
  total_clausula: 'Total de la cláusula',
  via_transporte: 'Vía de transporte',
  puerto_embarque: 'Puerto de embarque',
  puerto_desembarque: 'Puerto de desembarque',
  tara: 'Tara',
  unidad_tara: 'Unidad de la tara',
  peso_bruto: 'Peso bruto',
  unidad_peso_bruto: 'Unidad del peso bruto',
  peso_neto: 'Peso neto',
  unidad_peso_neto: 'Unidad del peso neto',
  tipo_bulto: 'Tipo de bulto',
  total_bultos: 'Total de bultos',
  marcas: 'Marcas',
  mnt_flete: 'Flete',
  mnt_seguro: 'Seguro',
  pais_recep: 'País receptor',
  pais_dest: 'País de destino',
  // The other forms of the console: filters, companies, certificate, folios, received documents, webhooks, mailbox.
  estado: 'Estado',
  fecha_desde: 'Desde',
  fecha_hasta: 'Hasta',
  rut_receptor: 'RUT del receptor',
  rut_emisor: 'RUT del emisor',
  acteco: 'Actividades económicas (Acteco)',
  ambiente: 'Ambiente',
  fecha_resolucion: 'Fecha de resolución',
  numero_resolucion: 'Número de resolución',
  pfx: 'Archivo del certificado',
  password: 'Contraseña',
  // Accounts (issue 27): the invitation, Mi cuenta and Cuentas forms.
  password_repetida: 'Repita la contraseña',
  actual: 'Contraseña actual',
  codigo: 'Código de verificación',
  role: 'Rol',
  caf: 'Archivo CAF',
  archivo: 'Archivo',
  accion: 'Acción',
  motivo: 'Motivo',
  url: 'URL',
  events: 'Eventos',
  secret: 'Secreto',
  inbound_email: 'Casilla de recepción',
  host: 'Servidor',
  port: 'Puerto',
  tls: 'TLS',
  security: 'Seguridad',
  user: 'Usuario',
  folder: 'Carpeta',
  from: 'Remitente',
  test: 'Prueba de conexión',
}

/** Lists of the body: how one of their rows is named ("Línea 3"). */
const ROW_NAMES: Readonly<Record<string, string>> = {
  detalle: 'Línea',
  referencias: 'Referencia',
  comisiones: 'Comisión',
  impuestos_retenciones: 'Impuesto o retención',
  descuentos_globales: 'Descuento o recargo global',
}

/** Objects whose fields are told with the object's name first ("Exportación, Moneda"). */
const OBJECT_NAMES: Readonly<Record<string, string>> = {
  receptor: 'Receptor',
  export_data: 'Exportación',
  imap: 'Recepción (IMAP)',
  smtp: 'Envío (SMTP)',
}

/** Wrappers the API puts around a field that say nothing to a person: `context.motivo` is the motivo. */
const TRANSPARENT: ReadonlySet<string> = new Set(['context', 'body'])

/** `forma_pago_exp` → `Forma pago exp`: a field no table names still reads as words. */
function asWords(segment: string): string {
  const words = segment.replace(/[^\p{L}\p{N}]+/gu, ' ').trim()
  return words === '' ? 'Campo' : words.charAt(0).toLocaleUpperCase('es-CL') + words.slice(1)
}

/** The field's name in the form's words: `detalle.0.nombre` → `Línea 1, Nombre`; `export_data.tpo_cambio` → `Exportación, Tipo de cambio`. */
export function fieldLabel(path: string): string {
  const all = path.split('.').filter((s) => s !== '')
  const segments = all.length > 1 ? all.filter((s, i) => !(i < all.length - 1 && TRANSPARENT.has(s))) : all
  const parts: string[] = []
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    const next = segments[i + 1]
    if (next !== undefined && /^\d+$/.test(next)) {
      // A row of a list: "Línea 3" (a list of its own name alone reads as its label, "Detalle").
      parts.push(`${ROW_NAMES[segment] ?? `${asWords(FIELD_LABELS[segment] ?? segment)}, fila`} ${Number(next) + 1}`)
      i++
    } else if (next !== undefined && OBJECT_NAMES[segment] !== undefined) {
      parts.push(OBJECT_NAMES[segment])
    } else {
      parts.push(/^\d+$/.test(segment) ? `fila ${Number(segment) + 1}` : (FIELD_LABELS[segment] ?? asWords(segment)))
    }
  }
  return parts.length === 0 ? 'Formulario' : parts.join(', ')
}

/** A dot path inside a message (`Requerida cuando se indica smtp.user`), starting at an object or list the API names. */
const DOT_PATH = new RegExp(`\\b(?:${[...Object.keys(OBJECT_NAMES), ...Object.keys(ROW_NAMES), ...TRANSPARENT].join('|')})(?:\\.[a-z0-9_]+)+\\b`, 'g')

/**
 * An API message told in the form's words: a field name written in snake_case (`codigo_ref`, `monto_imp`) becomes its
 * label in guillemets, and a pointer into Timbre's documents or the SII's schemas (`(docs/sii-protocol.md §2.2)`,
 * `(RUTRecep, EnvioBOLETA_v11.xsd)`) is dropped: it helps an integrator reading the code, not a person at the form.
 */
export function messageInWords(message: string): string {
  return message
    .replace(/\s*\((?:[^()]*(?:\bdocs\/|\.xsd\b)[^()]*)\)/g, '')
    // `(MntBruto)`, `(MntTotal, TasaIVA)`: the XML's element names, which say nothing to a person.
    .replace(/\s*\([A-Z][a-z]+[A-Z][A-Za-z]*(?:,\s*[A-Z][a-z]+[A-Z][A-Za-z]*)*\)/g, '')
    .replace(/\b(En pesos|En moneda extranjera), precio\b/g, '$1, «Precio unitario»')
    .replace(DOT_PATH, (path) => `«${fieldLabel(path)}»`)
    .replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (name) => (FIELD_LABELS[name] === undefined ? asWords(name).toLocaleLowerCase('es-CL') : `«${FIELD_LABELS[name]}»`))
    .replace(/(?<![\p{L}\p{N}.,/+§-])(\d+)(?:\.(\d+))?(?![\p{L}\p{N}-]|\.\d)/gu, (whole, int: string, frac: string | undefined) =>
      (frac === undefined && int.length < 7) || (frac?.length === 3 && int.length <= 3) ? whole : numberAsShown(int, frac),
    )
}

/**
 * A limit the API writes as JavaScript does (`999999999999.9999`), as the form shows numbers (`999.999.999.999,9999`):
 * digits regrouped as text, never through a float, so a 23-digit product keeps every digit. Integers are
 * left alone up to six digits (a year, a port, a size in bytes), and so is what already reads as Chilean thousands (`12.500`, the form's own examples):
 * no limit of the contract has three decimals.
 */
function numberAsShown(int: string, frac: string | undefined): string {
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, '.')
  return frac === undefined ? grouped : `${grouped},${frac}`
}
