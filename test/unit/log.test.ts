// src/log.ts: JSON lines on stdout, written in batches (one system call for the lines of one run of the event loop's
// tasks, issue 17) without losing or reordering any, also when the process exits right after logging.
import { expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createLogger } from '../../src/log'
import { tempDir } from '../support/server'

test('the lines of one synchronous run go out in one write, in order, before code after an await goes on', async () => {
  const writes: string[] = []
  const original = process.stdout.write
  process.stdout.write = ((chunk: string) => writes.push(chunk) > 0) as typeof process.stdout.write
  try {
    const log = createLogger('info')
    log.info('a', { n: 1 })
    log.debug('below.level')
    log.warn('b')
    log.error('c', { n: 3 })
    expect(writes).toEqual([])
    await Promise.resolve()
    expect(writes).toHaveLength(1)
    const lines = writes[0]!.split('\n')
    expect(lines.pop()).toBe('')
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 'info', event: 'a', n: 1 }),
      expect.objectContaining({ level: 'warn', event: 'b' }),
      expect.objectContaining({ level: 'error', event: 'c', n: 3 }),
    ])
    log.info('d')
    await Promise.resolve()
    expect(writes).toHaveLength(2)
  } finally {
    process.stdout.write = original
  }
})

test.each([
  ['exit after .then', `void (async () => { log.info('stopping'); await Bun.sleep(5); log.info('stopped') })().then(() => process.exit(0))`],
  ['uncaught throw', `setTimeout(() => { log.info('stopping'); log.info('stopped'); throw new Error('boom') }, 5)`],
])('%s: every line logged before it reaches stdout', (_name, body) => {
  const script = join(tempDir('timbre-log-'), 'script.ts')
  writeFileSync(script, `import { createLogger } from ${JSON.stringify(join(import.meta.dir, '../../src/log'))}\nconst log = createLogger('info')\n${body}\n`)
  const run = Bun.spawnSync([process.execPath, script], { stdout: 'pipe', stderr: 'pipe' })
  const events = run.stdout.toString().trim().split('\n').map((l) => (JSON.parse(l) as { event: string }).event)
  expect(events).toEqual(['stopping', 'stopped'])
})
