// `timbre contribuyentes import FILE` (DESIGN §13) run as an operator runs it (`bun src/main.ts`), on a generated copy
// of the SII's ce_empresas_dwnld CSV: ISO-8859-1, tens of thousands of lines, a few malformed ones; then a UTF-8 copy
// re-saved by a spreadsheet with one change and one new issuer.
import { beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { computeDv } from '../../src/domain/rut'
import { tempDir } from '../support/server'

const MAIN = join(import.meta.dir, '../../src/main.ts')
const LINES = 25_000

function run(args: readonly string[]) {
  const p = Bun.spawnSync([process.execPath, MAIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, stdin: 'ignore' })
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
}

const rutOf = (i: number) => {
  const body = String(10_000_000 + i)
  return `${body}-${computeDv(body)}`
}

/** The SII's layout: title line, `;`, DD-MM-YYYY with a trailing space, a trailing `;`; a Ñ every tenth name. */
function siiCsv(): { text: string; valid: number; malformed: Map<number, string> } {
  const lines = ['RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL']
  const malformed = new Map<number, string>()
  let valid = 0
  for (let i = 1; lines.length < LINES; i++) {
    const n = lines.length + 1
    if (n === 101 || n === 5001) {
      lines.push(`${10_000_000 + i}-X;RUT MALO LTDA;80;22-08-2014 ;malo@empresa.cl;;`)
      malformed.set(n, 'RUT inválido')
    } else if (n === 202) {
      lines.push(`${rutOf(i)};FECHA MALA SPA;80;32-13-2014 ;fecha@empresa.cl;;`)
      malformed.set(n, 'fecha de resolución inválida')
    } else if (n === 303) {
      lines.push('texto que no es una línea del listado')
      malformed.set(n, 'faltan columnas')
    } else {
      const name = i % 10 === 0 ? `FERRETERÍA EL ÑANDÚ ${i} LIMITADA` : `COMERCIAL NÚMERO ${i} SPA`
      lines.push(`${rutOf(i)};${name};${i % 1000};14-11-2008 ;dte${i}@Empresa${i}.cl;;`)
      valid++
    }
  }
  return { text: `${lines.join('\r\n')}\r\n`, valid, malformed }
}

let dataDir: string
let work: string
let csv: ReturnType<typeof siiCsv>

beforeAll(() => {
  dataDir = tempDir('timbre-contrib-')
  work = tempDir('timbre-contrib-files-')
  const r = run(['empresa', 'create', '--rut', '76086428-5', '--razon-social', 'Emisor Ltda.', '--giro', 'Comercio', '--acteco', '475200', '--direccion', 'Calle 1', '--comuna', 'Santiago', '--ciudad', 'Santiago', '--data-dir', dataDir])
  if (r.code !== 0) throw new Error(r.stderr)
  csv = siiCsv()
  writeFileSync(join(work, 'ce_empresas_dwnld_20260301.csv'), Buffer.from(csv.text, 'latin1'))
})

function rowOf(rut: string): Record<string, unknown> | null {
  const db = new Database(join(dataDir, 'timbre.db'), { readonly: true })
  try {
    return db.query('SELECT * FROM contribuyentes WHERE rut = ?').get(rut) as Record<string, unknown> | null
  } finally {
    db.close()
  }
}

describe('timbre contribuyentes import', () => {
  test('--help names the file and the options', () => {
    const r = run(['contribuyentes', 'import', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Uso: timbre contribuyentes import ARCHIVO.csv')
    expect(r.stdout).toContain('--progress-every')
    expect(r.stdout).toContain('--data-dir')
  })

  test('the SII\'s ISO-8859-1 file: every valid line upserted, malformed ones counted with their reasons and line numbers, progress on stderr', () => {
    const r = run(['contribuyentes', 'import', join(work, 'ce_empresas_dwnld_20260301.csv'), '--data-dir', dataDir])
    expect(r.code).toBe(0)
    const summary = JSON.parse(r.stdout)
    expect(summary).toMatchObject({ encoding: 'ISO-8859-1', lines: LINES, imported: csv.valid, updated: 0, unchanged: 0, skipped: csv.malformed.size })
    expect(summary.skipped_reasons).toEqual(
      expect.arrayContaining([
        { reason: 'RUT inválido', count: 2, first_lines: [101, 5001] },
        { reason: 'fecha de resolución inválida', count: 1, first_lines: [202] },
        { reason: expect.stringMatching(/^faltan columnas/), count: 1, first_lines: [303] },
      ]),
    )
    // Progress every 10 000 lines, as JSON lines on stderr (stdout stays the summary alone).
    const progress = r.stderr.trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.event === 'contribuyentes.import.progress')
    expect(progress.map((p) => p.lines)).toEqual([10_000, 20_000])
    expect(progress[1].imported).toBeGreaterThan(progress[0].imported)
    // Latin-1 names read right; dates in ISO; mail lower case.
    expect(rowOf(rutOf(10))).toMatchObject({ razon_social: 'FERRETERÍA EL ÑANDÚ 10 LIMITADA', numero_resolucion: 10, fecha_resolucion: '2008-11-14', email_intercambio: 'dte10@empresa10.cl' })
  }, 60_000)

  test('a UTF-8 copy re-imported: detected, unchanged rows not rewritten, a changed address updated, a new issuer imported', () => {
    const changedRut = rutOf(20)
    const utf8 = `${csv.text.replace(`dte20@Empresa20.cl`, 'nuevo@empresa20.cl')}${rutOf(900_000)};PANADERÍA SEÑORA MARÍA SPA;5;01-02-2020 ;pan@maria.cl;;\r\n`
    writeFileSync(join(work, 'resaved.csv'), `\uFEFF${utf8}`)
    const r = run(['contribuyentes', 'import', join(work, 'resaved.csv'), '--progress-every', '100000', '--data-dir', dataDir])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ encoding: 'UTF-8', imported: 1, updated: 1, unchanged: csv.valid - 1, skipped: csv.malformed.size })
    expect(r.stderr).not.toContain('contribuyentes.import.progress')
    expect(rowOf(changedRut)).toMatchObject({ email_intercambio: 'nuevo@empresa20.cl' })
    expect(rowOf(rutOf(900_000))).toMatchObject({ razon_social: 'PANADERÍA SEÑORA MARÍA SPA', email_intercambio: 'pan@maria.cl' })
    expect(rowOf(rutOf(10))).toMatchObject({ razon_social: 'FERRETERÍA EL ÑANDÚ 10 LIMITADA' })
  }, 60_000)

  test('operator errors: no file argument (usage, exit 2), a missing file, a data dir with no database', () => {
    const none = run(['contribuyentes', 'import', '--data-dir', dataDir])
    expect(none.code).toBe(2)
    expect(JSON.parse(none.stderr.trim()).code).toBe('USAGE')
    const missing = run(['contribuyentes', 'import', join(work, 'no-such.csv'), '--data-dir', dataDir])
    expect(missing.code).toBe(1)
    expect(JSON.parse(missing.stderr.trim().split('\n').at(-1)!).message).toContain('no-such.csv')
    const empty = tempDir('timbre-contrib-empty-')
    const nodb = run(['contribuyentes', 'import', join(work, 'resaved.csv'), '--data-dir', empty])
    expect(nodb.code).toBe(1)
    expect(JSON.parse(nodb.stderr.trim().split('\n').at(-1)!).message).toContain(join(empty, 'timbre.db'))
    expect(nodb.stdout).toBe('')
  }, 30_000)
})
