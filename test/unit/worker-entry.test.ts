// Worker entries inside the compiled executable on every platform (issue 26): Linux and macOS name the bundle
// `/$bunfs/root/…`, Windows `B:\~BUN\root\…`, which import.meta.url spells with %7E (seen inside the .exe under Wine).
import { expect, test } from 'bun:test'
import { isInsideCompiledBinary, workerEntry } from '../../src/worker-entry'

test.each([
  ['linux and macOS', 'file:///$bunfs/root/timbre'],
  ['Windows, as import.meta.url spells it', 'file:///B:/%7EBUN/root/timbre-windows-x64.exe'],
  ['Windows, unescaped', 'file:///B:/~BUN/root/timbre.exe'],
  ['Windows, a path', 'B:\\~BUN\\root\\timbre.exe'],
])('compiled (%s): the entry is a path relative to the bundle root', (_platform, url) => {
  expect(isInsideCompiledBinary(url)).toBe(true)
  expect(workerEntry('workers/task-worker', url)).toBe('./workers/task-worker.ts')
})

test.each([
  ['a checkout on Linux', 'file:///home/ana/timbre/src/worker-entry.ts'],
  ['a checkout on Windows', 'file:///C:/Users/ana/timbre/src/worker-entry.ts'],
  ['a folder merely named BUN', 'file:///C:/BUN/src/worker-entry.ts'],
])('from source (%s): the file under src/', (_where, url) => {
  expect(isInsideCompiledBinary(url)).toBe(false)
  expect(String(workerEntry('xml/xsd-worker', url))).toBe(new URL('./xml/xsd-worker.ts', url).href)
})

test('this test runs from source', () => {
  expect(isInsideCompiledBinary()).toBe(false)
  expect(workerEntry('db/checkpoint-worker')).toBeInstanceOf(URL)
})
