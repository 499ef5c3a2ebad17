// The SII's folio pages (timbraje) as Timbre drives them (DESIGN §17; research/next-capabilities.md §4.2, reverse-
// engineered live against maullin on 2026-06-12 by X-rural, with the PHP library X-fol agreeing; M–H): the request of a
// CAF, its grant, its download and re-download, and the annulment of unused folios. Shared by the client
// (src/sii/portal/folios*.ts), which fills the forms, and the simulator (src/sii/simulator/folios-*.ts), which serves
// them, so both read one table. The SII publishes none of this; what Timbre had to choose is marked "Timbre's reading".

/** The pages live on the company's ambiente host (maullin for certificación, palena for producción). */
export const FOLIOS_HOSTS = { certificacion: 'https://maullin.sii.cl', produccion: 'https://palena.sii.cl' } as const

export const FOLIOS_PATHS = {
  /** GET: the first form (the company's RUT). Also the login's `referencia`. */
  solicita: '/cvc_cgi/dte/of_solicita_folios',
  /** POST RUT_EMP, DV_EMP, ACEPTAR=Continuar; then again with COD_DOCTO (no ACEPTAR) for the type's figures; then the request. */
  solicitaDcto: '/cvc_cgi/dte/of_solicita_folios_dcto',
  /** The request's answer: FOLIO_INI, FOLIO_FIN, NOMUSU (and, on a type's first timbraje, "Confirmar Folio Inicial"). */
  confirma: '/cvc_cgi/dte/of_confirma_folio',
  /** POST ACEPTAR=Obtener Folios: the grant. After it, never ask again: re-download (research §4.2 step 7). */
  genera: '/cvc_cgi/dte/of_genera_folio',
  /** POST with the range and FECHA (today, Santiago) and ACEPTAR=AQUI: the CAF XML (ISO-8859-1). Repeatable, no quota. */
  archivo: '/cvc_cgi/dte/of_genera_archivo',
  /**
   * Annulment of unused folios (research §4.2 "Anulación", M: stages conectar, listar, disponibles, confirmar, motivo,
   * finalizar). The page names are Timbre's reading, unconfirmed: one form POSTed with RUT_EMP, DV_EMP, COD_DOCTO,
   * FOLIO_INI, FOLIO_FIN, MOTIVO and ACEPTAR=Anular answers a page with the annulled range.
   */
  anula: '/cvc_cgi/dte/af_anular_folios',
} as const

/** Form fields, as the pages name them (research §4.2). */
export const FOLIOS_FIELDS = {
  rut: 'RUT_EMP',
  dv: 'DV_EMP',
  tipo: 'COD_DOCTO',
  cantidad: 'CANT_DOCTOS',
  /** S or N, for boletas 39/41 only. */
  afectoIva: 'AFECTO_IVA',
  /** What the SII authorises now for this company and type. */
  maxAutor: 'MAX_AUTOR',
  /** Folios issued but unused. */
  foliosDisp: 'FOLIOS_DISP',
  factor: 'FACTOR',
  conCredito: 'CON_CREDITO',
  conAjuste: 'CON_AJUSTE',
  folioIni: 'FOLIO_INI',
  folioFin: 'FOLIO_FIN',
  nomUsu: 'NOMUSU',
  fecha: 'FECHA',
  aceptar: 'ACEPTAR',
  /** Timbre's reading for the annulment form. */
  motivo: 'MOTIVO',
} as const

/** ACEPTAR's values, each page's button. */
export const FOLIOS_ACEPTAR = {
  continuar: 'Continuar',
  solicitar: 'Solicitar Numeración',
  confirmarInicial: 'Confirmar Folio Inicial',
  obtener: 'Obtener Folios',
  descargar: 'AQUI',
  anular: 'Anular',
} as const

/** The texts that tell the pages apart (compared without accents or case; research §4.2 step 8). */
export const FOLIOS_TEXTS = {
  /** The generic refusal page; its code says why. */
  noPosible: 'No ha sido posible completar su solicitud',
  /** Over MAX_AUTOR: nothing granted. */
  codigoExcede: 'LIBRUD-OFSF-DTE-3-1-02',
  noAutorizado: 'no se encuentra autorizado',
  excede: 'excede',
  /** A pending F29 (FAQ 6413), among others: "no puede solicitar". */
  noPuede: 'no puede solicitar',
  /** A login page where a form was expected: the session is gone. */
  login: ['autInicioDTE', 'IngresoCertificado', 'CAutValida'],
  /** The first timbraje of a type asks to confirm the initial folio. */
  confirmarInicial: 'Confirmar Folio Inicial',
} as const

/** Error code of a skipped type step (research §4.2 step 3: without it the first timbraje fails). */
export const CODIGO_SIN_TIPO = 'ST-SEG-DTE-21-2'
