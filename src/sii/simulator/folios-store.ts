// The simulator's memory of timbraje (docs/decisions/simulator.md "Folios (timbraje)"): the ranges it granted each
// company (with the CAF file made at the grant, so a re-download gives the same bytes), the confirmed initial folio of a
// type's first timbraje, the annulled ranges, and the per-company settings the CLI changes (`sii-simulator folios`).
// Tables of the simulator's own SQLite file (store.ts opens it and hands this module its connection).
import type { Database } from 'bun:sqlite'

const FOLIOS_SCHEMA = `
CREATE TABLE IF NOT EXISTS folio_otorgado (
  id INTEGER PRIMARY KEY, rut_empresa TEXT NOT NULL, tipo INTEGER NOT NULL, folio_desde INTEGER NOT NULL,
  folio_hasta INTEGER NOT NULL, fecha TEXT NOT NULL, granted_at INTEGER NOT NULL, caf TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS folio_otorgado_empresa ON folio_otorgado (rut_empresa, tipo);
CREATE TABLE IF NOT EXISTS folio_inicial (rut_empresa TEXT NOT NULL, tipo INTEGER NOT NULL, folio INTEGER NOT NULL, PRIMARY KEY (rut_empresa, tipo));
CREATE TABLE IF NOT EXISTS folio_anulado (
  rut_empresa TEXT NOT NULL, tipo INTEGER NOT NULL, folio_desde INTEGER NOT NULL, folio_hasta INTEGER NOT NULL,
  motivo TEXT NOT NULL, annulled_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS folio_empresa (
  rut_empresa TEXT PRIMARY KEY, max_autor TEXT NOT NULL DEFAULT '{}', no_autorizado INTEGER NOT NULL DEFAULT 0,
  f29_pendiente INTEGER NOT NULL DEFAULT 0, razon_social TEXT
);
`

/** The types the simulator grants folios for, and their MAX_AUTOR unless the CLI set another (boletas get more: they are issued by the thousand). */
export const MAX_AUTOR_DEFAULT: ReadonlyMap<number, number> = new Map([
  [33, 500], [34, 500], [39, 10_000], [41, 10_000], [43, 500], [46, 500], [52, 500], [56, 500], [61, 500], [110, 500], [111, 500], [112, 500],
])

export const RAZON_SOCIAL_DEFAULT = 'EMPRESA DE PRUEBA'

export interface FoliosAjustes {
  /** Only the types the CLI changed; the rest follow MAX_AUTOR_DEFAULT. */
  readonly maxAutor: Readonly<Record<string, number>>
  readonly noAutorizado: boolean
  readonly f29Pendiente: boolean
  readonly razonSocial: string
}

export interface FolioOtorgadoRow {
  readonly id: number
  readonly rut_empresa: string
  readonly tipo: number
  readonly folio_desde: number
  readonly folio_hasta: number
  /** The grant's date, YYYY-MM-DD Santiago: the CAF's FA. */
  readonly fecha: string
  readonly granted_at: number
  /** The CAF file as text (ISO-8859-1 characters), made once at the grant. */
  readonly caf: string
}

export type Anulacion = 'anulados' | 'fuera_de_lo_otorgado' | 'con_folios_usados'

export class FoliosStore {
  constructor(private readonly db: Database) {
    db.exec(FOLIOS_SCHEMA)
  }

  ajustes(rut: string): FoliosAjustes {
    const row = this.db
      .query<{ max_autor: string; no_autorizado: number; f29_pendiente: number; razon_social: string | null }, [string]>('SELECT * FROM folio_empresa WHERE rut_empresa = ?')
      .get(rut)
    if (row === null) return { maxAutor: {}, noAutorizado: false, f29Pendiente: false, razonSocial: RAZON_SOCIAL_DEFAULT }
    return { maxAutor: JSON.parse(row.max_autor) as Record<string, number>, noAutorizado: row.no_autorizado === 1, f29Pendiente: row.f29_pendiente === 1, razonSocial: row.razon_social ?? RAZON_SOCIAL_DEFAULT }
  }

  setAjustes(rut: string, ajustes: FoliosAjustes): void {
    this.db
      .query(
        `INSERT INTO folio_empresa (rut_empresa, max_autor, no_autorizado, f29_pendiente, razon_social) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (rut_empresa) DO UPDATE SET max_autor = excluded.max_autor, no_autorizado = excluded.no_autorizado,
         f29_pendiente = excluded.f29_pendiente, razon_social = excluded.razon_social`,
      )
      .run(rut, JSON.stringify(ajustes.maxAutor), ajustes.noAutorizado ? 1 : 0, ajustes.f29Pendiente ? 1 : 0, ajustes.razonSocial)
  }

  /** MAX_AUTOR of a type for the company; null for a type the simulator does not grant. */
  maxAutor(rut: string, tipo: number): number | null {
    const fallback = MAX_AUTOR_DEFAULT.get(tipo)
    if (fallback === undefined) return null
    return this.ajustes(rut).maxAutor[String(tipo)] ?? fallback
  }

  otorgados(rut: string): FolioOtorgadoRow[] {
    return this.db.query<FolioOtorgadoRow, [string]>('SELECT * FROM folio_otorgado WHERE rut_empresa = ? ORDER BY id').all(rut)
  }

  /** How many grants the company got: the counter a test or an operator reads to see nothing was granted twice. */
  cuentaOtorgamientos(rut: string): number {
    return this.db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM folio_otorgado WHERE rut_empresa = ?').get(rut)?.n ?? 0
  }

  /** The folio the next grant starts at: after the highest granted; the confirmed initial one before any; null before the confirmation. */
  siguienteFolio(rut: string, tipo: number): number | null {
    const max = this.db.query<{ m: number | null }, [string, number]>('SELECT max(folio_hasta) AS m FROM folio_otorgado WHERE rut_empresa = ? AND tipo = ?').get(rut, tipo)?.m ?? null
    if (max !== null) return max + 1
    return this.db.query<{ folio: number }, [string, number]>('SELECT folio FROM folio_inicial WHERE rut_empresa = ? AND tipo = ?').get(rut, tipo)?.folio ?? null
  }

  /** Records the type's initial folio; false once the type has grants (it is confirmed only before the first). */
  confirmarInicial(rut: string, tipo: number, folio: number): boolean {
    return this.db.transaction(() => {
      const has = this.db.query<{ n: number }, [string, number]>('SELECT count(*) AS n FROM folio_otorgado WHERE rut_empresa = ? AND tipo = ?').get(rut, tipo)?.n ?? 0
      if (has > 0) return false
      this.db.query('INSERT INTO folio_inicial (rut_empresa, tipo, folio) VALUES (?, ?, ?) ON CONFLICT (rut_empresa, tipo) DO UPDATE SET folio = excluded.folio').run(rut, tipo, folio)
      return true
    }).immediate()
  }

  /** Grants desde..hasta when desde is still the next folio (one IMMEDIATE transaction: two requests never get one range); null otherwise. */
  otorgar(row: Omit<FolioOtorgadoRow, 'id'>): FolioOtorgadoRow | null {
    return this.db.transaction(() => {
      if (this.siguienteFolio(row.rut_empresa, row.tipo) !== row.folio_desde) return null
      return this.db
        .query<FolioOtorgadoRow, [string, number, number, number, string, number, string]>(
          'INSERT INTO folio_otorgado (rut_empresa, tipo, folio_desde, folio_hasta, fecha, granted_at, caf) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *',
        )
        .get(row.rut_empresa, row.tipo, row.folio_desde, row.folio_hasta, row.fecha, row.granted_at, row.caf)
    }).immediate()
  }

  findOtorgado(rut: string, tipo: number, desde: number, hasta: number): FolioOtorgadoRow | null {
    return this.db
      .query<FolioOtorgadoRow, [string, number, number, number]>('SELECT * FROM folio_otorgado WHERE rut_empresa = ? AND tipo = ? AND folio_desde = ? AND folio_hasta = ?')
      .get(rut, tipo, desde, hasta)
  }

  /** FOLIOS_DISP: folios granted, less those the simulator received in a DTE (any state) and those annulled. */
  disponibles(rut: string, tipo: number): number {
    const otorgados = this.db.query<{ n: number | null }, [string, number]>('SELECT sum(folio_hasta - folio_desde + 1) AS n FROM folio_otorgado WHERE rut_empresa = ? AND tipo = ?').get(rut, tipo)?.n ?? 0
    const usados = this.db
      .query<{ n: number }, [string, number]>(
        `SELECT count(DISTINCT d.folio) AS n FROM documento d WHERE d.rut_emisor = ?1 AND d.tipo = ?2
         AND EXISTS (SELECT 1 FROM folio_otorgado g WHERE g.rut_empresa = ?1 AND g.tipo = ?2 AND d.folio BETWEEN g.folio_desde AND g.folio_hasta)
         AND NOT EXISTS (SELECT 1 FROM folio_anulado a WHERE a.rut_empresa = ?1 AND a.tipo = ?2 AND d.folio BETWEEN a.folio_desde AND a.folio_hasta)`,
      )
      .get(rut, tipo)?.n ?? 0
    const anulados = this.db.query<{ n: number | null }, [string, number]>('SELECT sum(folio_hasta - folio_desde + 1) AS n FROM folio_anulado WHERE rut_empresa = ? AND tipo = ?').get(rut, tipo)?.n ?? 0
    return otorgados - usados - anulados
  }

  /** Annuls desde..hasta when one grant holds it and none of it was received in a DTE or annulled before. */
  anular(rut: string, tipo: number, desde: number, hasta: number, motivo: string, now: number): Anulacion {
    return this.db.transaction((): Anulacion => {
      const dentro = this.db
        .query<{ n: number }, [string, number, number, number]>('SELECT count(*) AS n FROM folio_otorgado WHERE rut_empresa = ? AND tipo = ? AND folio_desde <= ? AND folio_hasta >= ?')
        .get(rut, tipo, desde, hasta)?.n ?? 0
      if (dentro === 0) return 'fuera_de_lo_otorgado'
      const usados = this.db.query<{ n: number }, [string, number, number, number]>('SELECT count(*) AS n FROM documento WHERE rut_emisor = ? AND tipo = ? AND folio BETWEEN ? AND ?').get(rut, tipo, desde, hasta)?.n ?? 0
      const yaAnulados = this.db
        .query<{ n: number }, [string, number, number, number]>('SELECT count(*) AS n FROM folio_anulado WHERE rut_empresa = ?1 AND tipo = ?2 AND folio_desde <= ?4 AND folio_hasta >= ?3')
        .get(rut, tipo, desde, hasta)?.n ?? 0
      if (usados > 0 || yaAnulados > 0) return 'con_folios_usados'
      this.db.query('INSERT INTO folio_anulado (rut_empresa, tipo, folio_desde, folio_hasta, motivo, annulled_at) VALUES (?, ?, ?, ?, ?, ?)').run(rut, tipo, desde, hasta, motivo, now)
      return 'anulados'
    }).immediate()
  }
}
