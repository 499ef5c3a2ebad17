// install.sh stages the binary, the data dir and a systemd unit (DESIGN §1), here into a folder (DESTDIR).
import { expect, test } from 'bun:test'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ensureBinary, ROOT } from '../support/binary'
import { tempDir } from '../support/server'

test('install.sh with DESTDIR installs the binary, a 0700 data dir, the settings file and a systemd unit', async () => {
  await ensureBinary()
  const dest = tempDir('timbre-install-')
  const p = Bun.spawnSync(['bash', join(ROOT, 'install.sh')], { env: { ...process.env, DESTDIR: dest, SKIP_BUILD: '1' } })
  expect(p.exitCode).toBe(0)
  expect(p.stdout.toString()).toContain('systemctl enable --now timbre')
  const bin = join(dest, 'usr/local/bin/timbre')
  expect(statSync(bin).mode & 0o111).not.toBe(0)
  expect(JSON.parse(Bun.spawnSync([bin, 'version']).stdout.toString()).api_version).toBe('0.2.0')
  expect(statSync(join(dest, 'var/lib/timbre')).mode & 0o777).toBe(0o700)
  const unit = readFileSync(join(dest, 'etc/systemd/system/timbre.service'), 'utf8')
  expect(unit).toContain('ExecStart=/usr/local/bin/timbre serve')
  expect(unit).toContain('User=timbre')
  expect(unit).toContain('ReadWritePaths=/var/lib/timbre')
  // serve exits within 10 s of SIGTERM (test/cli/shutdown.test.ts): systemd must wait that long before its SIGKILL, and
  // no much longer, so a restart is not held for minutes.
  const stopTimeout = Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1])
  expect(stopTimeout).toBeGreaterThan(10)
  expect(stopTimeout).toBeLessThanOrEqual(30)
  expect(readFileSync(join(dest, 'etc/timbre/timbre.env'), 'utf8')).toContain('TIMBRE_DATA_DIR=/var/lib/timbre')
})
