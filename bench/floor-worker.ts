// One thread of the in-process signing floor (bench/floor.ts): signs with node:crypto (Bun's BoringSSL) for the time it
// is given and posts its rates back. A Bun Worker, so two of them use both cores inside one process, as a worker pool does.
import { signingRates } from './floor'

declare const self: Worker

self.onmessage = (event: MessageEvent<{ seconds: number }>) => {
  self.postMessage(signingRates(event.data.seconds))
}
