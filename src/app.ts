// Composition root: turns a Config into the Deps every door (HTTP, CLI, jobs) hands to the services.
import { systemClock, type Clock } from './clock'
import { jwtPublicKeysFromEnv, masterKeyFromEnv, type Config, type JwtPublicKeySetting } from './config'
import type { KeyObject } from 'node:crypto'
import { loadOrCreateJwtPrivateKey, loadOrCreateJwtPrivateKeyInBackground, publicKeyOf, readPublicKeyFile } from './crypto/instance-keys'
import { SII_TIMING, SIMULATOR_TIMING, timingWithBackoff } from './domain/estados'
import { createSiiClient, type SiiClient, type SiiCompany } from './sii/client/client'
import { createFoliosPortalClient, type FoliosPortalClient } from './sii/portal/folios'
import { createRcvPortalClient } from './sii/portal/rcv-client'
import type { RcvPortalClient } from './sii/portal/types'
import { startSimulator, type RunningSimulator } from './sii/simulator/server'
import { startCheckpointer } from './db/checkpointer'
import { groupCommitterOf } from './db/group-commit'
import { ensureDataDir, openDatabase, type Store } from './db/open'
import { lockDataDir } from './db/serve-lock'
import { protectDataDirOnWindows } from './db/windows-acl'
import type { Logger } from './log'
import type { Deps } from './services/deps'
import { openVault } from './services/master-key'
import { buildKeyring, type JwtKeyring } from './services/tokens'
import { WorkerPool } from './workers/pool'

export async function loadKeyring(dataDir: string, publicKeys: readonly JwtPublicKeySetting[], privateKey?: Promise<KeyObject>): Promise<JwtKeyring> {
  const instanceKey = privateKey ? await privateKey : loadOrCreateJwtPrivateKey(dataDir)
  return buildKeyring(instanceKey, publicKeyOf(instanceKey), publicKeys.map((k) => ({ key: readPublicKeyFile(k.path), iss: k.iss, aud: k.aud })))
}

/** Remembers when the SII last gave a real answer (anything but a passing fault), for GET /ready. */
function withHealth(client: SiiClient, clock: Clock): { client: SiiClient; lastOkAt(): string | null } {
  let lastOk: string | null = null
  const seen = <T extends { kind: string }>(outcome: T): T => {
    if (outcome.kind !== 'retry') lastOk = clock.now().toISOString()
    return outcome
  }
  return {
    lastOkAt: () => lastOk,
    client: {
      upload: async (...args) => seen(await client.upload(...args)),
      queryEnvio: async (...args) => seen(await client.queryEnvio(...args)),
      queryDte: async (...args) => seen(await client.queryDte(...args)),
      registrarAccion: async (...args) => seen(await client.registrarAccion(...args)),
      listarEventos: async (...args) => seen(await client.listarEventos(...args)),
      fechaRecepcion: async (...args) => seen(await client.fechaRecepcion(...args)),
    },
  }
}

interface ConnectedSii {
  readonly client: SiiClient
  /** The SII portal's RCV (DESIGN §16), routed like `client`: the demo company's reads go to the simulator. */
  readonly portal: RcvPortalClient
  /** The SII's folio pages (DESIGN §17), routed the same way. */
  readonly folios: FoliosPortalClient
  /** When the configured target last answered: the demo's simulator does not count (GET /ready). */
  readonly health: { lastOkAt(): string | null }
  readonly simulatorUrl: string | null
  stop(): Promise<void>
}

/**
 * The SII client the config names; with `simulado`, the simulator runs in this process on a loopback port (DESIGN §9).
 * Whatever the target, the demo company's calls go to an in-process simulator, started at its first call (DESIGN §10:
 * the demo company never talks to the real SII). Each client is made once, so its token cache lives as long as it
 * (DESIGN §6: one token per certificate and channel); a simulator that failed to start is tried again next time.
 */
async function connectSii(config: Config, log: Logger, clock: Clock): Promise<ConnectedSii> {
  const logSii = (event: string, fields: object) => log.debug(event, fields as Record<string, unknown>)
  const simulate = () => startSimulator({ hostname: '127.0.0.1', port: 0, dataDir: config.dataDir, clock: () => clock.now(), log: logSii })
  const clientOf = (simulator: RunningSimulator) => createSiiClient({ target: { kind: 'origin', origin: simulator.url }, timeoutMs: config.siiTimeoutMs, log: logSii })
  const rcvOptions = { timeoutMs: config.siiTimeoutMs, diferidaDesde: config.rcvDiferidaDesde, diferidaTimeoutMs: config.rcvDiferidaEsperaMs, log: logSii }
  const portalOf = (origin: string) => createRcvPortalClient({ target: { kind: 'origin', origin }, ...rcvOptions })
  const foliosOptions = { timeoutMs: config.siiTimeoutMs, log: logSii, now: () => clock.now() }
  const foliosOf = (origin: string) => createFoliosPortalClient({ target: { kind: 'origin', origin }, ...foliosOptions })
  if (config.sii.kind === 'simulado') {
    const simulator = await simulate()
    const target = withHealth(clientOf(simulator), clock)
    return { client: target.client, portal: portalOf(simulator.url), folios: foliosOf(simulator.url), health: target, simulatorUrl: simulator.url, stop: () => simulator.stop() }
  }
  let demo: Promise<{ simulator: RunningSimulator; client: SiiClient }> | null = null
  const demoClient = async (): Promise<SiiClient> => {
    demo ??= simulate().then((simulator) => ({ simulator, client: clientOf(simulator) }))
    try {
      return (await demo).client
    } catch (err) {
      demo = null
      throw err
    }
  }
  const target = withHealth(createSiiClient({ target: config.sii, timeoutMs: config.siiTimeoutMs, log: logSii }), clock)
  const clientFor = async (company: SiiCompany) => (company.isDemo ? demoClient() : target.client)
  const portal = createRcvPortalClient({ target: config.sii, ...rcvOptions })
  let demoPortal: RcvPortalClient | null = null
  const folios = createFoliosPortalClient({ target: config.sii, ...foliosOptions })
  let demoFolios: FoliosPortalClient | null = null
  const foliosFor = async (company: SiiCompany): Promise<FoliosPortalClient> => {
    if (!company.isDemo) return folios
    await demoClient()
    demoFolios ??= foliosOf((await demo!).simulator.url)
    return demoFolios
  }
  return {
    client: {
      upload: async (company, ...rest) => (await clientFor(company)).upload(company, ...rest),
      queryEnvio: async (company, ...rest) => (await clientFor(company)).queryEnvio(company, ...rest),
      queryDte: async (company, ...rest) => (await clientFor(company)).queryDte(company, ...rest),
      registrarAccion: async (company, ...rest) => (await clientFor(company)).registrarAccion(company, ...rest),
      listarEventos: async (company, ...rest) => (await clientFor(company)).listarEventos(company, ...rest),
      fechaRecepcion: async (company, ...rest) => (await clientFor(company)).fechaRecepcion(company, ...rest),
    },
    portal: {
      leerRcv: async (company, ...rest) => {
        if (!company.isDemo) return portal.leerRcv(company, ...rest)
        await demoClient()
        const simulated = demoPortal ?? portalOf((await demo!).simulator.url)
        demoPortal = simulated
        return simulated.leerRcv(company, ...rest)
      },
    },
    folios: {
      solicitarCaf: async (company, ...rest) => (await foliosFor(company)).solicitarCaf(company, ...rest),
      redescargarCaf: async (company, ...rest) => (await foliosFor(company)).redescargarCaf(company, ...rest),
      anularFolios: async (company, ...rest) => (await foliosFor(company)).anularFolios(company, ...rest),
    },
    health: target,
    simulatorUrl: null,
    stop: async () => {
      const started = demo === null ? null : await demo.catch(() => null)
      await started?.simulator.stop()
    },
  }
}

export interface Runtime {
  readonly deps: Deps
  readonly simulatorUrl: string | null
  close(): Promise<void>
}

/** The runtime of `serve`: holds the data dir's exclusive lock until `close` (DESIGN §3: one server per data dir). */
export async function buildDeps(config: Config, log: Logger, clock: Clock = systemClock): Promise<Runtime> {
  ensureDataDir(config.dataDir)
  // Once per start: the rules are inherited by what this run writes (issue 26; nothing off Windows).
  protectDataDirOnWindows(config.dataDir, log)
  const lock = lockDataDir(config.dataDir)
  // Made (first start) or read while the database opens and migrates; awaited below. A failure surfaces there.
  const jwtKey = loadOrCreateJwtPrivateKeyInBackground(config.dataDir)
  jwtKey.catch(() => undefined)
  let store: Store
  try {
    store = openDatabase(config.dataDir, { log })
  } catch (err) {
    lock.release()
    throw err
  }
  try {
    // Made at first start (DESIGN §2), so a backup taken right after start already holds it; never made over sealed
    // data it would not open (DESIGN §3).
    const vault = openVault({ store }, { masterKeyFromEnv: config.masterKey })
    const keyring = await loadKeyring(config.dataDir, config.jwtPublicKeys, jwtKey)
    // Accepted as before issue 18, but any token that key signs passes whatever issuer it names.
    for (const k of config.jwtPublicKeys) if (k.iss === null) log.warn('auth.issuer_unchecked', { path: k.path, hint: 'TIMBRE_JWT_PUBLIC_KEYS: ruta#iss=EMISOR&aud=AUDIENCIA' })
    const sii = await connectSii(config, log, clock)
    const siiTiming = config.siiBackoff !== null ? timingWithBackoff(config.siiBackoff) : config.sii.kind === 'simulado' ? SIMULATOR_TIMING : SII_TIMING
    // Signing, envelopes, PDFs, certificates and CAFs run on the other cores (issue 17); the event loop keeps HTTP.
    const checkpointer = startCheckpointer(store)
    const tasks = new WorkerPool({ size: config.workers ?? undefined, onWorkerLost: (event) => log.warn('worker.lost', event) })
    const deps: Deps = { store, clock, log, config, keyring, vault, sii: sii.client, rcvPortal: sii.portal, foliosPortal: sii.folios, siiTiming, siiHealth: sii.health, tasks }
    if (config.faultGroupCommit) {
      const { phase, minGroup } = config.faultGroupCommit
      log.warn('fault.armed', { fault: 'group_commit', phase, min_group: minGroup })
      groupCommitterOf(store).fault = { phase, minGroup, act: () => process.kill(process.pid, 'SIGKILL') }
    }
    return {
      deps,
      simulatorUrl: sii.simulatorUrl,
      async close() {
        await tasks.close()
        await checkpointer.stop()
        await sii.stop()
        store.close()
        lock.release()
      },
    }
  } catch (err) {
    store.close()
    lock.release()
    throw err
  }
}

/**
 * What an admin command needs: the store of its data dir, opened and migrated. It must already exist unless the
 * command is one that creates it (`empresa create`; DESIGN §3).
 */
export function openAdminStore(dataDir: string, log: Logger, opts: { create?: boolean } = {}): Store {
  return openDatabase(dataDir, { log, create: opts.create ?? false })
}

export { masterKeyFromEnv, jwtPublicKeysFromEnv }
