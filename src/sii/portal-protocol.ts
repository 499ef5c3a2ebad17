// The SII portal as Timbre reads it (DESIGN §16, §17; research/next-capabilities.md §2.2, §4.2): the login by
// certificate over mutual TLS (herculesr's CAutInicio.cgi), the logout (autTermino.cgi), and the RCV's data service
// (www4's consdcvinternetui facadeService). Shared by the client (src/sii/portal/), which speaks it, and the simulator
// (src/sii/simulator/portal-*.ts), which answers it, so both read one table. The SII publishes none of this: every name
// comes from the open implementations the research cites, and what Timbre had to choose is marked here and in
// docs/decisions/rcv.md "How the data service is read".

/** The real SII's hosts for the portal. An origin target (the simulator) serves every path on one origin. */
export const PORTAL_HOSTS = {
  /** Login by certificate: the TLS server asks for the client's certificate (research §2.2, §4.2 step 1). */
  login: 'https://herculesr.sii.cl',
  /** Logout (research §4.5 "always call autTermino.cgi"). */
  logout: 'https://zeusr.sii.cl',
  /** The RCV's single-page app and its data service. */
  rcv: 'https://www4.sii.cl',
} as const

export const PORTAL_PATHS = {
  /** POST with form `referencia=<where to go after login>`; the same address is the query string. */
  login: '/cgi_AUT2000/CAutInicio.cgi',
  logout: '/cgi_AUT2000/autTermino.cgi',
  /** `<op>` is appended. */
  facade: '/consdcvinternetui/services/data/facadeService/',
  /** Where the login sends the browser back to: the RCV app (the `referencia`). */
  rcvHome: '/consdcvinternetui/',
} as const

/** The session cookies. The data service takes the session in `metaData.conversationId` too ("El token no es valido" otherwise). */
export const SESSION_COOKIES = ['TOKEN', 'CSESSIONID'] as const

/** `metaData.namespace` is this prefix and the operation's name. */
export const FACADE_NAMESPACE = 'cl.sii.sdi.lob.diii.consdcv.data.api.interfaces.FacadeService/'

/**
 * The data service's operations Timbre calls. getResumen, getDetalleCompra/Venta are the research's (M–H); the
 * deferred download's operation names are Timbre's reading of "caEstado CREADO → EN PROCESO → TERMINADO, then
 * obtenerArchivoBLOB as .csv.gz" (research §2.2), unconfirmed: `solicitarDescargaDiferida` answers `data.idSolicitud`,
 * `getEstadoDescargaDiferida` answers `data.caEstado`, and `obtenerArchivoBLOB/<idSolicitud>` (GET) the gzip CSV.
 */
export const FACADE_OPS = {
  resumen: 'getResumen',
  detalleCompra: 'getDetalleCompra',
  detalleVenta: 'getDetalleVenta',
  solicitarDiferida: 'solicitarDescargaDiferida',
  estadoDiferida: 'getEstadoDescargaDiferida',
  archivoDiferida: 'obtenerArchivoBLOB',
} as const

/** `data.caEstado` of a deferred download. */
export const ESTADOS_DIFERIDA = ['CREADO', 'EN PROCESO', 'TERMINADO'] as const
export type EstadoDiferida = (typeof ESTADOS_DIFERIDA)[number]

/**
 * An expired or unknown session: the data service answers `respEstado.codRespuesta` 99 with this text in
 * `msgeRespuesta` (X-rcv3 quotes the SII's words for a conversationId that is not a session). Matched without accents
 * or case.
 */
export const SESSION_INVALID_TEXT = 'El token no es valido'

/**
 * The SII caps concurrent sessions per RUT (research §2.2 "Limits", M). Its page's words are not recorded anywhere;
 * Timbre recognises a login answer carrying this phrase (case and accents ignored) as the cap, and the simulator
 * writes it. Unconfirmed.
 */
export const SESSION_CAP_TEXT = 'número máximo de sesiones'

/** Body of a data service request (research §2.2, "Request body"). */
export interface FacadeRequest {
  readonly metaData: { readonly namespace: string; readonly conversationId: string; readonly transactionId: string; readonly page: null }
  readonly data: {
    readonly rutEmisor: string
    readonly dvEmisor: string
    readonly ptributario: string
    /** REGISTRO | PENDIENTE | NO_INCLUIR | RECLAMADO for COMPRA; '' for VENTA (the PHP client the research's A-rcv agrees with). */
    readonly estadoContab: string
    readonly operacion: 'COMPRA' | 'VENTA'
    /** Detail and deferred requests: the document type; 0 in getResumen. */
    readonly codTipoDoc?: number
    /** getEstadoDescargaDiferida: the id solicitarDescargaDiferida gave. */
    readonly idSolicitud?: string
    readonly busquedaInicial?: boolean
  }
}
