// `timbre empresa create|list|update` (DESIGN §3): the operator's door to the company record.
import { withAdminStore } from './admin-store'
import { createEmpresa, listEmpresas, updateEmpresaAdmin } from '../services/empresas'
import type { Ambiente } from '../domain/empresa'
import { DATA_DIR_FLAG, intFlag, requireFlag, type Command, type FlagSpec, type ParsedArgs } from './command'

const FIELD_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--razon-social': { takesValue: true, help: 'razón social (máx. 100)' },
  '--giro': { takesValue: true, help: 'giro (máx. 80)' },
  '--acteco': { takesValue: true, help: 'códigos de actividad económica, separados por coma (1 a 4)' },
  '--direccion': { takesValue: true, help: 'dirección (máx. 70)' },
  '--comuna': { takesValue: true, help: 'comuna (máx. 20)' },
  '--ciudad': { takesValue: true, help: 'ciudad (máx. 20)' },
  '--ambiente': { takesValue: true, help: 'certificacion | produccion' },
  '--fecha-resolucion': { takesValue: true, help: 'fecha de la resolución del SII (YYYY-MM-DD)' },
  '--numero-resolucion': { takesValue: true, help: 'número de la resolución del SII (0 en certificación)' },
}

function actecoFlag(raw: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined
  return raw.split(',').map((c) => (/^\s*\d+\s*$/.test(c) ? Number(c) : Number.NaN))
}

function fieldsFrom(args: ParsedArgs) {
  const f = args.flags
  return {
    razon_social: f['--razon-social'],
    giro: f['--giro'],
    acteco: actecoFlag(f['--acteco']),
    direccion: f['--direccion'],
    comuna: f['--comuna'],
    ciudad: f['--ciudad'],
    ambiente: f['--ambiente'] as Ambiente | undefined,
    fecha_resolucion: f['--fecha-resolucion'],
    numero_resolucion: intFlag(args, '--numero-resolucion'),
  }
}

export const empresaCreate: Command = {
  name: 'empresa create',
  summary: 'Crea una empresa emisora e imprime su registro.',
  usage:
    'timbre empresa create --rut R --razon-social S --giro G --acteco C[,C..] --direccion D --comuna C --ciudad C [--ambiente certificacion|produccion] [--fecha-resolucion YYYY-MM-DD] [--numero-resolucion N]',
  flags: { '--rut': { takesValue: true, help: 'RUT de la empresa (con o sin puntos)' }, ...FIELD_FLAGS, ...DATA_DIR_FLAG },
  async run(args) {
    const rut = requireFlag(args, '--rut')
    return withAdminStore(args, (deps) => createEmpresa(deps, { rut, ...fieldsFrom(args) }), { create: true })
  },
}

export const empresaList: Command = {
  name: 'empresa list',
  summary: 'Lista las empresas del directorio de datos.',
  usage: 'timbre empresa list [--data-dir D]',
  flags: DATA_DIR_FLAG,
  async run(args) {
    return withAdminStore(args, (deps) => listEmpresas(deps))
  },
}

export const empresaUpdate: Command = {
  name: 'empresa update',
  summary: 'Cambia datos de una empresa (todo menos el RUT), incluidos ambiente y resolución.',
  usage: 'timbre empresa update --empresa RUT|ID [--razon-social S] [--giro G] [--acteco C,..] [--direccion D] [--comuna C] [--ciudad C] [--ambiente A] [--fecha-resolucion F] [--numero-resolucion N]',
  flags: { '--empresa': { takesValue: true, help: 'RUT o id de la empresa' }, ...FIELD_FLAGS, ...DATA_DIR_FLAG },
  async run(args) {
    const ref = requireFlag(args, '--empresa')
    return withAdminStore(args, (deps) => updateEmpresaAdmin(deps, { ref, cambios: fieldsFrom(args) }))
  },
}
