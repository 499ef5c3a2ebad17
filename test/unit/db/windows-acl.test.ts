// The data dir's access rules on Windows (issue 26): the argument list and what is logged, with icacls and whoami
// played by a fake runner; the real icacls runs in test/cli/windows-wine.test.ts (Wine's is a stub that answers 0).
import { expect, test } from 'bun:test'
import { icaclsArgs, icaclsFileArgs, principalOf, protectDataDirOnWindows, protectFileOnWindows, systemTool, type CommandRun, type Runner } from '../../../src/db/windows-acl'
import type { Logger } from '../../../src/log'

const DIR = 'C:\\ProgramData\\Timbre'

function recorder(): { log: Logger; lines: Array<{ level: string; event: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; event: string; fields: Record<string, unknown> }> = []
  const at = (level: string) => (event: string, fields: Record<string, unknown> = {}) => void lines.push({ level, event, fields })
  return { log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines }
}

function fakeRunner(answers: Record<string, CommandRun>): { run: Runner; calls: Array<readonly string[]> } {
  const calls: Array<readonly string[]> = []
  return { calls, run: (file, args) => (calls.push([file, ...args]), answers[file] ?? { status: 1, stdout: '', stderr: 'not found' }) }
}

const WHOAMI_OK: CommandRun = { status: 0, stdout: '"oficina\\ana","S-1-5-21-1004336348-1177238915-682003330-1001"\r\n', stderr: '' }
const ICACLS_OK: CommandRun = { status: 0, stdout: 'processed file: C:\\ProgramData\\Timbre\r\nSuccessfully processed 1 files; Failed processing 0 files\r\n', stderr: '' }

test('icacls: inheritance removed, full control for the running account, Administrators and SYSTEM by SID, inherited', () => {
  expect(icaclsArgs(DIR, '*S-1-5-21-1-2-3-1001')).toEqual([
    DIR, '/inheritance:r', '/grant:r', '*S-1-5-21-1-2-3-1001:(OI)(CI)F', '*S-1-5-32-544:(OI)(CI)F', '*S-1-5-18:(OI)(CI)F',
  ])
})

test.each([
  ['whoami gives the SID', WHOAMI_OK.stdout, 'ana', '*S-1-5-21-1004336348-1177238915-682003330-1001'],
  ['SYSTEM (a scheduled task)', '"nt authority\\system","S-1-5-18"\r\n', 'PC$', '*S-1-5-18'],
  ['no SID (Wine prints a name only): the account name', 'VM\\root\n', 'root', 'root'],
  ['whoami failed: the account name', null, 'ana', 'ana'],
  ['nothing known', null, null, null],
])('the running account: %s', (_case, whoami, userName, expected) => {
  expect(principalOf(whoami, userName)).toBe(expected)
})

test('on Windows: whoami, then icacls with its SID, logged once as data_dir.acl_applied', () => {
  const { run, calls } = fakeRunner({ [systemTool('whoami')]: WHOAMI_OK, [systemTool('icacls')]: ICACLS_OK })
  const { log, lines } = recorder()
  expect(protectDataDirOnWindows(DIR, log, { platform: 'win32', run, userName: 'ana' })).toBe(true)
  expect(calls).toEqual([[systemTool('whoami'), '/user', '/fo', 'csv', '/nh'], [systemTool('icacls'), ...icaclsArgs(DIR, '*S-1-5-21-1004336348-1177238915-682003330-1001')]])
  expect(lines).toEqual([{ level: 'info', event: 'data_dir.acl_applied', fields: { data_dir: DIR, icacls: icaclsArgs(DIR, '*S-1-5-21-1004336348-1177238915-682003330-1001') } }])
})

test('an icacls that fails is a warning with its reason and what to do, never an exception', () => {
  const denied: CommandRun = { status: 5, stdout: '', stderr: 'C:\\ProgramData\\Timbre: Access is denied.' }
  const { run } = fakeRunner({ [systemTool('whoami')]: WHOAMI_OK, [systemTool('icacls')]: denied })
  const { log, lines } = recorder()
  expect(protectDataDirOnWindows(DIR, log, { platform: 'win32', run, userName: 'ana' })).toBe(false)
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatchObject({ level: 'warn', event: 'data_dir.acl_failed', fields: { data_dir: DIR, exit_code: 5, reason: 'C:\\ProgramData\\Timbre: Access is denied.' } })
  expect(String(lines[0]!.fields.action)).toContain('Administradores')
})

test('icacls missing from PATH: a warning naming the spawn error', () => {
  const { log, lines } = recorder()
  const run: Runner = (file) => (file === systemTool('whoami') ? WHOAMI_OK : { status: null, stdout: '', stderr: '', error: 'spawnSync icacls ENOENT' })
  expect(protectDataDirOnWindows(DIR, log, { platform: 'win32', run })).toBe(false)
  expect(lines[0]).toMatchObject({ event: 'data_dir.acl_failed', fields: { reason: 'spawnSync icacls ENOENT' } })
})

test.each(['linux', 'darwin'] as const)('on %s nothing runs: the modes do this job', (platform) => {
  const { run, calls } = fakeRunner({ [systemTool('whoami')]: WHOAMI_OK, [systemTool('icacls')]: ICACLS_OK })
  const { log, lines } = recorder()
  expect(protectDataDirOnWindows('/var/lib/timbre', log, { platform, run })).toBe(false)
  expect(calls).toEqual([])
  expect(lines).toEqual([])
})

test("Windows' own tools are run by absolute path, never looked up in the folder Timbre starts in", () => {
  expect(systemTool('icacls')).toBe('C:\\Windows\\System32\\icacls.exe')
  expect(systemTool('whoami')).toBe('C:\\Windows\\System32\\whoami.exe')
})

test('a backup archive gets the data dir rules on the file itself, nothing inherited from the folder it lands in', () => {
  const calls: string[][] = []
  const run: Runner = (file, args) => {
    calls.push([file, ...args])
    return file === systemTool('whoami') ? WHOAMI_OK : { status: 0, stdout: '', stderr: '' }
  }
  expect(protectFileOnWindows('D:\\Respaldos\\timbre.tar.gz', recorder().log, { platform: 'win32', run })).toBe(true)
  expect(calls[1]).toEqual([systemTool('icacls'), ...icaclsFileArgs('D:\\Respaldos\\timbre.tar.gz', '*S-1-5-21-1004336348-1177238915-682003330-1001')])
  expect(calls[1]).toEqual(expect.arrayContaining(['/inheritance:r', '*S-1-5-32-544:F', '*S-1-5-18:F']))
  expect(protectFileOnWindows('/tmp/x.tar.gz', recorder().log, { platform: 'linux', run })).toBe(false)
})
