// `timbre webhook deliveries|redeliver` (DESIGN §3): the operator's view of the delivery log.
import { resolveEmpresa } from '../services/empresas'
import { companyDeliveries, redeliverEvent } from '../services/webhooks'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, requireFlag, type Command } from './command'

export const webhookDeliveriesCommand: Command = {
  name: 'webhook deliveries',
  summary: 'Lista las últimas entregas de webhooks de una empresa (o solo las fallidas).',
  usage: 'timbre webhook deliveries --empresa RUT|ID [--failed]',
  flags: {
    '--empresa': { takesValue: true, help: 'RUT o id de la empresa' },
    '--failed': { takesValue: false, help: 'solo las que agotaron sus reintentos' },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const ref = requireFlag(args, '--empresa')
    return withAdminStore(args, (deps) => companyDeliveries(deps, { empresaId: resolveEmpresa(deps, { ref }).id, onlyFailed: args.flags['--failed'] === 'true' }))
  },
}

export const webhookRedeliverCommand: Command = {
  name: 'webhook redeliver',
  summary: 'Vuelve a encolar todas las entregas de un evento (las envía el servidor en su siguiente pasada).',
  usage: 'timbre webhook redeliver --event ID',
  flags: { '--event': { takesValue: true, help: 'id del evento (Timbre-Event-Id)' }, ...DATA_DIR_FLAG },
  async run(args) {
    const eventId = requireFlag(args, '--event')
    return withAdminStore(args, (deps) => redeliverEvent(deps, { eventId }))
  },
}
