// HTTP/1.1 over a bare node:net socket, so a test decides every byte: heads no client library would write (two
// Content-Types, a Content-Length that lies, no Host), bodies cut short, chunked oddities, a client that sends a byte a
// second. The answers are parsed just enough to judge them: status, headers, body by Content-Length or chunks.
import { connect, type Socket } from 'node:net'

export interface RawAnswer {
  readonly status: number
  readonly reason: string
  /** Header names lowercased; a header sent twice keeps both values. */
  readonly headers: Readonly<Record<string, readonly string[]>>
  readonly body: Buffer
}

export interface RawExchange {
  /** Every answer parsed from the connection, in order (more than one when the bytes held more than one request). */
  readonly answers: readonly RawAnswer[]
  /** The connection ended without an answer, or in the middle of one. */
  readonly closedEarly: boolean
  readonly timedOut: boolean
  /** Bytes left that do not parse as an answer. */
  readonly garbage: string
  readonly socketError: string | null
  /** The server closed the connection before every byte was written (EPIPE, ECONNRESET): an answer may have been lost. */
  readonly cutWhileSending: boolean
}

/** What to send: pieces written in order, each after `delayMs` (a slow client is many one-byte pieces). */
export interface Piece {
  readonly bytes: Buffer
  readonly delayMs?: number
}

export interface ExchangeOptions {
  /** Stop waiting after this long (the answer so far is returned with timedOut). */
  readonly timeoutMs: number
  /** How many answers to wait for before closing; 1 unless the bytes hold more than one request. */
  readonly answers?: number
  /** Half-close after the last piece (the server sees the end of the stream, as after a client cut its body short). */
  readonly endAfterSend?: boolean
  /** Whether the request was HEAD: its answer has no body, whatever Content-Length says. */
  readonly isHead?: boolean
  /** A slow client: every byte is written alone, `delayMs` after the previous one (read before each byte, so it can change). */
  readonly pace?: { delayMs: number }
  /** With `pace`: the bytes before this offset go at once (a head sent whole, then its body a byte at a time). */
  readonly slowFrom?: number
}

const HEAD_END = Buffer.from('\r\n\r\n')

/** One answer at the start of `buf`, and how many bytes it took; null while incomplete. */
export function parseAnswer(buf: Buffer, isHead = false): { answer: RawAnswer; used: number } | 'garbage' | null {
  const end = buf.indexOf(HEAD_END)
  if (end < 0) return buf.length >= 5 && buf.subarray(0, 5).toString('latin1') !== 'HTTP/' ? 'garbage' : null
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n')
  const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0]!)
  if (!m) return 'garbage'
  const headers: Record<string, string[]> = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    ;(headers[name] ??= []).push(line.slice(colon + 1).trim())
  }
  const status = Number(m[1])
  const start = end + 4
  const base = { status, reason: m[2]!, headers }
  if (isHead || status === 204 || status === 304 || (status >= 100 && status < 200)) return { answer: { ...base, body: Buffer.alloc(0) }, used: start }
  if ((headers['transfer-encoding']?.[0] ?? '').toLowerCase().includes('chunked')) return parseChunked(buf, start, base)
  const length = headers['content-length']?.[0]
  if (length === undefined) return null // read until the connection closes
  const n = Number(length)
  if (buf.length < start + n) return null
  return { answer: { ...base, body: buf.subarray(start, start + n) }, used: start + n }
}

function parseChunked(buf: Buffer, start: number, base: Omit<RawAnswer, 'body'>): { answer: RawAnswer; used: number } | null {
  const parts: Buffer[] = []
  let at = start
  for (;;) {
    const nl = buf.indexOf('\r\n', at)
    if (nl < 0) return null
    const size = parseInt(buf.subarray(at, nl).toString('latin1').split(';')[0]!, 16)
    if (Number.isNaN(size)) return null
    if (size === 0) {
      const trailerEnd = buf.indexOf(HEAD_END, nl)
      const used = buf.subarray(nl, nl + 4).equals(HEAD_END) ? nl + 4 : trailerEnd < 0 ? -1 : trailerEnd + 4
      if (used < 0) return null
      return { answer: { ...base, body: Buffer.concat(parts) }, used }
    }
    if (buf.length < nl + 2 + size + 2) return null
    parts.push(buf.subarray(nl + 2, nl + 2 + size))
    at = nl + 2 + size + 2
  }
}

/** Sends `pieces` on a fresh connection to 127.0.0.1:`port` and collects the answers. Never rejects. */
export function exchange(port: number, pieces: readonly Piece[], opts: ExchangeOptions): Promise<RawExchange> {
  const wanted = opts.answers ?? 1
  return new Promise((resolve) => {
    const answers: RawAnswer[] = []
    let buf = Buffer.alloc(0)
    let garbage = ''
    let socketError: string | null = null
    let done = false
    let allSent = false
    let timer: ReturnType<typeof setTimeout> | null = null
    const socket: Socket = connect(port, '127.0.0.1')
    const finish = (timedOut: boolean, closed: boolean) => {
      if (done) return
      done = true
      if (timer) clearTimeout(timer)
      socket.destroy()
      // An answer without Content-Length ends with the connection: what is left is its body.
      if (closed && buf.length > 0) {
        const parsed = parseAnswer(buf, opts.isHead)
        const ended = buf.indexOf(HEAD_END)
        if (parsed === null && ended >= 0) {
          const head = parseAnswer(Buffer.concat([buf.subarray(0, ended + 4)]), true)
          if (head && head !== 'garbage') answers.push({ ...head.answer, body: buf.subarray(ended + 4) })
          buf = Buffer.alloc(0)
        }
      }
      if (buf.length > 0) garbage += buf.toString('latin1')
      resolve({ answers, closedEarly: closed && answers.length < wanted, timedOut, garbage, socketError, cutWhileSending: socketError !== null && !allSent })
    }
    timer = setTimeout(() => finish(true, false), opts.timeoutMs)
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d])
      for (;;) {
        const parsed = parseAnswer(buf, opts.isHead)
        if (parsed === null) break
        if (parsed === 'garbage') {
          garbage += buf.toString('latin1')
          buf = Buffer.alloc(0)
          break
        }
        // 100 Continue (to Expect) is not the answer.
        if (parsed.answer.status >= 200) answers.push(parsed.answer)
        buf = buf.subarray(parsed.used)
      }
      if (answers.length >= wanted) finish(false, false)
    })
    socket.on('error', (e: Error) => {
      socketError = (e as NodeJS.ErrnoException).code ?? e.message
    })
    socket.on('close', () => finish(false, true))
    socket.on('connect', () => void send())
    async function send() {
      if (opts.pace) return sendSlowly(opts.pace)
      for (const piece of pieces) {
        if (done) return
        if (piece.delayMs) await Bun.sleep(piece.delayMs)
        if (done || socket.destroyed) return
        socket.write(piece.bytes)
      }
      allSent = true
      if (opts.endAfterSend && !done && !socket.destroyed) socket.end()
    }
    async function sendSlowly(pace: { delayMs: number }) {
      const bytes = Buffer.concat(pieces.map((p) => p.bytes))
      const from = Math.min(opts.slowFrom ?? 0, bytes.length)
      if (from > 0) socket.write(bytes.subarray(0, from))
      for (let i = from; i < bytes.length; i++) {
        if (pace.delayMs > 0) await Bun.sleep(pace.delayMs)
        if (done || socket.destroyed) return
        socket.write(bytes.subarray(i, i + 1))
      }
      allSent = true
      if (opts.endAfterSend && !done && !socket.destroyed) socket.end()
    }
  })
}

/** A request head: the request line, then each header line as given (duplicates, odd spellings and all). */
export function head(method: string, target: string, headers: ReadonlyArray<readonly [string, string]>, version = 'HTTP/1.1'): string {
  return `${method} ${target} ${version}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`
}
