import { test, expect } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer } from '../support/server'
import { runScheduledBackup } from '../../src/services/scheduled-backup'
import { backupConfigFrom } from '../../src/config'
test('smoke', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bk-'))
  const s = await startTestServer()
  await s.tenant('76086428-5')
  const cfg = backupConfigFrom({}, { TIMBRE_BACKUP_DIR: dir })
  const r = await runScheduledBackup(s.server.deps, cfg)
  console.log(JSON.stringify(r, null, 1))
  console.log(require('node:fs').readdirSync(dir))
  await s.stop()
}, 30000)
