// A real S3-compatible server for the backup tests (issue 26): s3rver on 127.0.0.1, port 0, a fresh folder, one
// bucket; and a TCP proxy in front of it that the test can cut mid-request, as a server stopped mid-upload would.
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import S3rver from 's3rver'
import { tempDir } from './server'

export interface TestS3 {
  readonly url: string
  readonly bucket: string
  readonly accessKey: string
  readonly secretKey: string
  /** TIMBRE_BACKUP_S3_* for this server. */
  readonly env: Record<string, string>
  stop(): Promise<void>
}

export async function startS3(bucket = 'respaldos'): Promise<TestS3> {
  const server = new S3rver({ port: 0, address: '127.0.0.1', directory: tempDir('timbre-s3rver-'), silent: true, configureBuckets: [{ name: bucket, configs: [] }] })
  const address = (await server.run()) as unknown as { port: number }
  const url = `http://127.0.0.1:${address.port}`
  // s3rver accepts any signature made with its default pair.
  const accessKey = 'S3RVER'
  const secretKey = 'S3RVER'
  return {
    url,
    bucket,
    accessKey,
    secretKey,
    env: { TIMBRE_BACKUP_S3_URL: url, TIMBRE_BACKUP_S3_BUCKET: bucket, TIMBRE_BACKUP_S3_ACCESS_KEY: accessKey, TIMBRE_BACKUP_S3_SECRET_KEY: secretKey },
    stop: () => server.close(),
  }
}

export interface CuttingProxy {
  readonly url: string
  /** Bytes the clients sent upstream so far. */
  readonly forwarded: () => number
  /** True once the proxy cut the connections and stopped listening. */
  readonly isCut: () => boolean
}

/**
 * Forwards to `upstreamUrl` until clients have sent `cutAfterBytes`, then drops every connection and stops
 * listening: for the client, the server went away in the middle of a request body.
 */
export function cuttingProxy(upstreamUrl: string, cutAfterBytes: number): Promise<CuttingProxy> {
  const upstream = new URL(upstreamUrl)
  const sockets = new Set<Socket>()
  let forwarded = 0
  let cut = false
  let server: Server
  const cutAll = () => {
    cut = true
    for (const s of sockets) s.destroy()
    server.close()
  }
  server = createServer((client) => {
    const up = createConnection(Number(upstream.port), upstream.hostname)
    sockets.add(client)
    sockets.add(up)
    client.on('data', (chunk: Buffer) => {
      if (cut) return
      forwarded += chunk.length
      if (forwarded > cutAfterBytes) return cutAll()
      up.write(chunk)
    })
    up.on('data', (chunk: Buffer) => client.write(chunk))
    const end = () => {
      client.destroy()
      up.destroy()
    }
    client.on('close', end)
    up.on('close', end)
    client.on('error', end)
    up.on('error', end)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      resolve({ url: `http://127.0.0.1:${port}`, forwarded: () => forwarded, isCut: () => cut })
    }),
  )
}

/** A server that accepts connections and never answers: an S3 endpoint that hangs. */
export function silentServer(): Promise<{ url: string; stop(): void }> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => undefined)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
        stop: () => {
          for (const s of sockets) s.destroy()
          server.close()
        },
      }),
    ),
  )
}
