// A webhook receiver on 127.0.0.1 that records every request and answers as a test scripts it.
export interface Received {
  readonly headers: Record<string, string>
  readonly body: string
  readonly at: number
}

export interface Receiver {
  readonly url: string
  readonly received: Received[]
  /** Statuses to answer in order (then 200); a number ≥ 1000 is a delay in ms before answering 200. */
  script(...answers: number[]): void
  stop(): Promise<void>
}

export function startReceiver(path = '/hooks/timbre'): Receiver {
  const received: Received[] = []
  let answers: number[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const body = await req.text()
      received.push({ headers: Object.fromEntries(req.headers.entries()), body, at: Date.now() })
      const next = answers.shift() ?? 200
      if (next >= 1000) {
        await Bun.sleep(next)
        return new Response('ok')
      }
      if (next >= 300 && next < 400) return new Response(null, { status: next, headers: { location: 'http://127.0.0.1:1/otro' } })
      return new Response(next === 200 ? 'ok' : 'no', { status: next })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}${path}`,
    received,
    script: (...a) => {
      answers = a
    },
    stop: async () => {
      await server.stop(true)
    },
  }
}
