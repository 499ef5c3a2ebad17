// `timbre sii-simulator folios` (docs/decisions/simulator.md "Folios (timbraje)"): a company's timbraje settings in the
// simulated SII (MAX_AUTOR per type, the blocks "no autorizado" and "F29 pendiente", the razón social its CAFs carry),
// and what it was granted, through the simulator's store of the data dir, so a running simulator follows them at its
// next request. Its faults (corte_tras_otorgar, pagina_cambiada) are switched with `sii-simulator rcv falla`.
import { normalizeRut } from '../domain/rut'
import { MAX_AUTOR_DEFAULT, type FoliosAjustes } from '../sii/simulator/folios-store'
import { type Command, requireFlag, UsageError } from './command'
import { DATA_DIR_SIMULADOR, withStore } from './sii-simulator-rcv'

export const siiSimulatorFolios: Command = {
  name: 'sii-simulator folios',
  summary: 'Muestra o cambia el timbraje de una empresa en el SII simulado (máximo autorizado, bloqueos) y los folios otorgados.',
  usage: 'timbre sii-simulator folios --rut R [--max-autor TIPO=N|defecto,...] [--no-autorizado] [--f29-pendiente] [--quitar-bloqueos] [--razon-social S] [--otorgados] [--data-dir D]',
  flags: {
    '--rut': { takesValue: true, help: 'RUT de la empresa' },
    '--max-autor': { takesValue: true, help: `máximo autorizado por solicitud, por tipo: 33=100,39=5000 (por defecto 500; 10000 para 39 y 41); TIPO=0: el SII no autoriza ninguno; TIPO=defecto vuelve al de defecto. Tipos: ${[...MAX_AUTOR_DEFAULT.keys()].join(', ')}` },
    '--no-autorizado': { takesValue: false, help: 'el usuario no está autorizado a pedir folios de la empresa: toda solicitud se rechaza' },
    '--f29-pendiente': { takesValue: false, help: 'la empresa tiene un F29 pendiente: no puede solicitar timbraje' },
    '--quitar-bloqueos': { takesValue: false, help: 'quita ambos bloqueos' },
    '--razon-social': { takesValue: true, help: 'razón social de los CAF que otorga (ISO-8859-1); por defecto EMPRESA DE PRUEBA' },
    '--otorgados': { takesValue: false, help: 'lista además los rangos otorgados (tipo, desde, hasta, fecha)' },
    ...DATA_DIR_SIMULADOR,
  },
  async run(args) {
    if (args.positionals.length > 0) throw new UsageError(`argumento inesperado "${args.positionals[0]}"`)
    const rut = normalizeRut(requireFlag(args, '--rut'))
    if (rut === null) throw new UsageError(`--rut no es un RUT válido: "${args.flags['--rut']}"`)
    const has = (flag: string) => args.flags[flag] !== undefined
    if (has('--quitar-bloqueos') && (has('--no-autorizado') || has('--f29-pendiente'))) throw new UsageError('--quitar-bloqueos no se combina con --no-autorizado ni --f29-pendiente')
    const maxAutor = args.flags['--max-autor'] === undefined ? {} : readMaxAutor(args.flags['--max-autor'])
    const razonSocial = args.flags['--razon-social']
    if (razonSocial !== undefined && (!/^[\u0000-\u00ff]*$/.test(razonSocial) || razonSocial.trim() === '')) throw new UsageError('--razon-social debe tener texto ISO-8859-1')
    return withStore(args, (store, dataDir) => {
      const actual = store.folios.ajustes(rut)
      const merged: Record<string, number> = { ...actual.maxAutor }
      for (const [tipo, n] of Object.entries(maxAutor)) {
        if (n === null) delete merged[tipo]
        else merged[tipo] = n
      }
      const nuevos: FoliosAjustes = {
        maxAutor: merged,
        noAutorizado: has('--quitar-bloqueos') ? false : actual.noAutorizado || has('--no-autorizado'),
        f29Pendiente: has('--quitar-bloqueos') ? false : actual.f29Pendiente || has('--f29-pendiente'),
        razonSocial: razonSocial?.trim() ?? actual.razonSocial,
      }
      const isChange = JSON.stringify(nuevos) !== JSON.stringify(actual)
      if (isChange) store.folios.setAjustes(rut, nuevos)
      return {
        rut,
        max_autor: Object.fromEntries([...MAX_AUTOR_DEFAULT].map(([tipo, n]) => [String(tipo), nuevos.maxAutor[String(tipo)] ?? n])),
        no_autorizado: nuevos.noAutorizado,
        f29_pendiente: nuevos.f29Pendiente,
        razon_social: nuevos.razonSocial,
        otorgamientos: store.folios.cuentaOtorgamientos(rut),
        // FOLIOS_DISP of each type granted: what its folio pages show; an annulment or a DTE received lowers it.
        folios_disponibles: Object.fromEntries([...new Set(store.folios.otorgados(rut).map((g) => g.tipo))].map((tipo) => [String(tipo), store.folios.disponibles(rut, tipo)])),
        ...(has('--otorgados') ? { otorgados: store.folios.otorgados(rut).map((g) => ({ tipo: g.tipo, desde: g.folio_desde, hasta: g.folio_hasta, fecha: g.fecha })) } : {}),
        cambiado: isChange,
        data_dir: dataDir,
      }
    })
  },
}

/**
 * `33=100,39=5000,34=0,52=defecto`: types the simulator grants, amounts 0 to 1,000,000; 0 is the SII authorising none
 * (the client's excede_maximo), `defecto` (null here) puts the type back to MAX_AUTOR_DEFAULT.
 */
export function readMaxAutor(text: string): Record<string, number | null> {
  const out: Record<string, number | null> = {}
  for (const part of text.split(',')) {
    const m = /^\s*(\d{1,3})\s*=\s*(\d{1,7}|defecto)\s*$/.exec(part)
    if (m === null) throw new UsageError(`--max-autor: «${part}» debe ser TIPO=N o TIPO=defecto (por ejemplo 33=100)`)
    const tipo = Number(m[1])
    const n = m[2] === 'defecto' ? null : Number(m[2])
    if (!MAX_AUTOR_DEFAULT.has(tipo)) throw new UsageError(`--max-autor: el tipo ${tipo} no es uno de ${[...MAX_AUTOR_DEFAULT.keys()].join(', ')}`)
    if (n !== null && n > 1_000_000) throw new UsageError(`--max-autor: ${n} supera 1000000`)
    out[String(tipo)] = n
  }
  return out
}
