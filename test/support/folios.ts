// The set-up of the folio tests (issue 30): the SII simulator on its own data dir and a server that talks to it, one
// test clock for both (so 180 days pass for both), the SII jobs hourly so each test drives the folios job's passes
// itself, and a company with a certificate uploaded.
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { SimulatorStore } from '../../src/sii/simulator/store'
import { testClock, type TestClock } from './clock'
import { uploadCertificate } from './issuance'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from './server'

export interface FoliosWorld {
  readonly clock: TestClock
  readonly sim: RunningSimulator
  /** The simulator's store, to set a company's timbraje, switch faults and count grants. */
  readonly simStore: SimulatorStore
  readonly s: TestServer
  readonly t: Tenant
  stop(): Promise<void>
}

export async function startFoliosWorld(razonSocial: string): Promise<FoliosWorld> {
  const clock = testClock()
  const simDir = tempDir('timbre-folios-sim-')
  const sim = await startSimulator({ clock: clock.now, processingDelayMs: 0, dataDir: simDir })
  const simStore = new SimulatorStore(simDir)
  const s = await startTestServer({ clock, flags: { '--sii': sim.url, '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h', '--folios-every': '1h' } })
  const t = await s.tenant(testRut(), razonSocial)
  await uploadCertificate(s, t)
  return {
    clock, sim, simStore, s, t,
    async stop() {
      await s.stop()
      simStore.close()
      await sim.stop()
    },
  }
}
