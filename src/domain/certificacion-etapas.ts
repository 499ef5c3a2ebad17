// The five stages of the SII's certification and, for each, the next thing the person must do (DESIGN §15 "Stages";
// research §1.2, §1.6). Pure: the facts Timbre holds in, each stage's estado and `siguiente_paso` (Spanish, with the
// track ids and dates to declare) out. What only the SII's site shows (its approval) comes from what the person recorded.

export const ETAPAS = ['set_pruebas', 'simulacion', 'intercambio', 'muestras', 'declaracion'] as const
export type Etapa = (typeof ETAPAS)[number]
export const ESTADOS_ETAPA = ['pendiente', 'en_curso', 'enviado', 'con_errores', 'aprobado'] as const
export type EstadoEtapa = (typeof ESTADOS_ETAPA)[number]

export function isEtapa(value: string): value is Etapa {
  return (ETAPAS as readonly string[]).includes(value)
}

/** An envío's state as the stages read it: the SII has not taken it, is processing it, or gave its final answer. */
export type EstadoEnvioCert = 'por_enviar' | 'procesando' | 'aceptado' | 'con_reparos' | 'rechazado'

export interface EnvioHecho {
  readonly clase: 'set' | 'simulacion' | 'libro' | 'boletas'
  readonly nombres: readonly string[]
  readonly estado: EstadoEnvioCert
  readonly trackId: string | null
  readonly glosa: string | null
  /** `YYYY-MM-DD` in Santiago, the date the SII's "Declarar avance" asks for. */
  readonly fechaEnvio: string | null
}

export interface HechosCertificacion {
  /** Documents sets loaded (not the libros' blocks) and how many of their cases have a current document. */
  readonly setsDocumentos: ReadonlyArray<{ readonly nombre: string; readonly casos: number; readonly emitidos: number }>
  /** Libros the loaded sets ask for: ventas, compras, guias. */
  readonly librosPedidos: readonly string[]
  readonly envios: readonly EnvioHecho[]
  /** What the person (aprobado, pendiente) or Timbre (en_curso, on generating a stage's files) recorded. */
  readonly registradas: ReadonlyMap<Etapa, { readonly estado: EstadoEtapa; readonly nota: string | null }>
}

export interface EstadoDeEtapa {
  readonly etapa: Etapa
  readonly estado: EstadoEtapa
  readonly siguiente_paso: string
}

const SITIO = 'maullin.sii.cl (ambiente de certificación)'

function describeEnvio(e: EnvioHecho): string {
  const que = e.clase === 'libro' ? `libro de ${e.nombres.join(', ')}` : e.clase === 'simulacion' ? 'simulación' : `set ${e.nombres.join(', ')}`
  // Not taken yet: what the SII (or the network) last said is what tells the person why ("Usuario sin permiso de envío").
  if (e.estado === 'por_enviar') return `${que}: aún sin track id${e.glosa ? ` (último intento: ${e.glosa})` : ''}`
  return `${que}: track id ${e.trackId ?? '(sin track id)'} del ${e.fechaEnvio ?? '(sin fecha)'}`
}

function conErrores(envios: readonly EnvioHecho[]): EnvioHecho[] {
  return envios.filter((e) => e.estado === 'rechazado' || e.estado === 'con_reparos')
}

function etapaSet(h: HechosCertificacion): Omit<EstadoDeEtapa, 'etapa'> {
  const sets = h.setsDocumentos
  if (sets.length === 0)
    return {
      estado: 'pendiente',
      siguiente_paso:
        `Postule a la certificación en ${SITIO} con el certificado del representante legal, descargue el set de pruebas ` +
        '("Generación de set de pruebas", un archivo SIISetDePruebas….txt) y súbalo tal como lo entregó el SII.',
    }
  const envios = h.envios.filter((e) => e.clase === 'set' || e.clase === 'libro')
  const malos = conErrores(envios)
  if (malos.length > 0) {
    const que = [
      ...(malos.some((e) => e.clase === 'set')
        ? ['reemita los casos objetados, con folios nuevos como exige el SII (botón «Reemitir rechazados»; en la API, emitir con reemitir: true; en la línea de comandos, emitir --reemitir)']
        : []),
      ...(malos.some((e) => e.clase === 'libro') ? ['envíe de nuevo los libros rechazados'] : []),
    ]
    return {
      estado: 'con_errores',
      siguiente_paso: `El SII rechazó o puso reparos: ${malos.map((e) => `${describeEnvio(e)} (${e.glosa ?? 'sin glosa'})`).join('; ')}. Corrija la causa y ${que.join('; y ')}.`,
    }
  }
  const faltan = sets.filter((s) => s.emitidos < s.casos)
  if (faltan.length > 0 || envios.filter((e) => e.clase === 'set').length === 0)
    return { estado: 'en_curso', siguiente_paso: `Emita y envíe los casos del set (${sets.map((s) => s.nombre).join(', ')}).` }
  const librosEnviados = new Set(envios.filter((e) => e.clase === 'libro').flatMap((e) => e.nombres))
  const librosFaltan = h.librosPedidos.filter((l) => !librosEnviados.has(l))
  if (librosFaltan.length > 0) return { estado: 'en_curso', siguiente_paso: `Envíe los libros que pide el set: ${librosFaltan.join(', ')}.` }
  const enProceso = envios.filter((e) => e.estado === 'por_enviar' || e.estado === 'procesando')
  if (enProceso.length > 0)
    return { estado: 'en_curso', siguiente_paso: `Espere la respuesta del SII a: ${enProceso.map(describeEnvio).join('; ')}.` }
  return {
    estado: 'enviado',
    siguiente_paso:
      `El SII aceptó todos los envíos. En ${SITIO}, "Declarar avance" del set de pruebas, declare cada envío con su track id ` +
      `y fecha: ${envios.map(describeEnvio).join('; ')}. Cuando el SII lo apruebe, regístrelo aquí como aprobado.`,
  }
}

function etapaSimulacion(h: HechosCertificacion): Omit<EstadoDeEtapa, 'etapa'> {
  const envios = h.envios.filter((e) => e.clase === 'simulacion')
  const ultimo = envios[envios.length - 1]
  if (!ultimo)
    return {
      estado: 'pendiente',
      siguiente_paso: 'Cuando el SII apruebe el set de pruebas, genere la simulación: entre 20 y 100 documentos representativos de la empresa en un solo envío.',
    }
  if (ultimo.estado === 'rechazado' || ultimo.estado === 'con_reparos')
    return { estado: 'con_errores', siguiente_paso: `El SII objetó la simulación (${describeEnvio(ultimo)}: ${ultimo.glosa ?? 'sin glosa'}). Genere una nueva simulación.` }
  if (ultimo.estado !== 'aceptado') return { estado: 'en_curso', siguiente_paso: `Espere la respuesta del SII a la ${describeEnvio(ultimo)}.` }
  return {
    estado: 'enviado',
    siguiente_paso: `En ${SITIO}, "Declarar avance" de la simulación, declare el envío: ${describeEnvio(ultimo)}. Cuando el SII lo apruebe, regístrelo aquí como aprobado.`,
  }
}

function etapaIntercambio(h: HechosCertificacion): Omit<EstadoDeEtapa, 'etapa'> {
  if (h.registradas.get('intercambio')?.estado === 'en_curso')
    return {
      estado: 'en_curso',
      siguiente_paso: `Suba en ${SITIO}, "Intercambio", los tres archivos del zip (1_RecepcionDTE.xml, 2_EnvioRecibos.xml, 3_ResultadoDTE.xml). Cuando el SII lo apruebe, regístrelo aquí como aprobado.`,
    }
  return {
    estado: 'pendiente',
    siguiente_paso: `Descargue de ${SITIO} el set de intercambio (un EnvioDTE del emisor 88888888-8) y súbalo aquí: Timbre genera las tres respuestas firmadas.`,
  }
}

/**
 * The muestras are the set's and the simulation's documents (research §1.2 stage 4): once the SII took the simulation,
 * Timbre has every PDF to give, and the step is the person's upload. Downloading them records nothing (a GET).
 */
function etapaMuestras(h: HechosCertificacion): Omit<EstadoDeEtapa, 'etapa'> {
  const simulacion = h.envios.filter((e) => e.clase === 'simulacion').at(-1)
  if (h.registradas.get('muestras')?.estado === 'en_curso' || simulacion?.estado === 'aceptado')
    return {
      estado: 'en_curso',
      siguiente_paso: `Descargue las muestras de impresión (un PDF por documento del set y de la simulación, con la copia cedible de 33, 34, 46 y 52) y súbalas al "Sistema de Validación Archivos PDF de DTE" de ${SITIO}. Cuando el SII las apruebe, regístrelo aquí como aprobado.`,
    }
  return {
    estado: 'pendiente',
    siguiente_paso: 'Cuando el SII apruebe el set de pruebas y la simulación, descargue las muestras de impresión (un PDF por documento, con copia cedible de 33, 34, 46 y 52).',
  }
}

function etapaDeclaracion(): Omit<EstadoDeEtapa, 'etapa'> {
  return {
    estado: 'pendiente',
    siguiente_paso:
      `Con las muestras aprobadas, el representante legal firma la declaración de cumplimiento en ${SITIO}. El SII autoriza entonces a la empresa en ` +
      'producción (palena) con su número y fecha de resolución: cámbiela a ambiente produccion con esos datos y suba los CAF de producción.',
  }
}

const COMPUTE: Readonly<Record<Etapa, (h: HechosCertificacion) => Omit<EstadoDeEtapa, 'etapa'>>> = {
  set_pruebas: etapaSet,
  simulacion: etapaSimulacion,
  intercambio: etapaIntercambio,
  muestras: etapaMuestras,
  declaracion: etapaDeclaracion,
}

const SIGUIENTE: Readonly<Record<Etapa, string>> = {
  set_pruebas: 'El SII aprobó el set de pruebas. Siga con la simulación.',
  simulacion: 'El SII aprobó la simulación. Siga con el intercambio.',
  intercambio: 'El SII aprobó el intercambio. Siga con las muestras de impresión.',
  muestras: 'El SII aprobó las muestras de impresión. Siga con la declaración de cumplimiento.',
  declaracion: 'Certificación terminada: la empresa está autorizada a emitir en producción.',
}

/** Each stage, in the SII's order. A stage the person recorded as aprobado stays so, whatever Timbre sees. */
export function etapasDeCertificacion(h: HechosCertificacion): EstadoDeEtapa[] {
  return ETAPAS.map((etapa) => {
    const registrada = h.registradas.get(etapa)
    if (registrada?.estado === 'aprobado') return { etapa, estado: 'aprobado', siguiente_paso: SIGUIENTE[etapa] }
    return { etapa, ...COMPUTE[etapa](h) }
  })
}
