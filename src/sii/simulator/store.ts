// The simulator's memory: its own SQLite file `<dataDir>/sii-simulator.db` (or ':memory:'), never Timbre's database
// (STYLE §1: sii/ never touches Timbre's db). A tiny schema created at start; an in-process simulator that shares a
// data dir with Timbre survives Timbre's restarts, so seeds, tokens, track ids and received folios persist.
import { Database } from 'bun:sqlite'
import { closeSync, mkdirSync, openSync } from 'node:fs'
import { join } from 'node:path'

export type Channel = 'soap' | 'rest'

export interface SeedRow {
  readonly seed: string
  readonly channel: Channel
  readonly created_at: number
  readonly used_at: number | null
}

export interface TokenRow {
  readonly token: string
  readonly channel: Channel
  /** The certificate holder who signed the seed, canonical `12345678-K`. */
  readonly rut: string
  readonly created_at: number
}

/** An envelope-level refusal decided at upload, shown once processing reaches its stage (docs/sii-protocol.md §6.5). */
export interface StoredRejection {
  readonly estado: 'RSC' | 'RCT' | 'RFR'
  readonly glosa: string
  readonly errors: readonly SiiError[]
}

/** One error line, the shape of the boleta API's `detalle_rep_rech[].error[]` (docs/sii-protocol.md §7.3). */
export interface SiiError {
  readonly seccion: string
  readonly linea: number
  readonly nivel: number
  readonly codigo: number
  readonly descripcion: string
  readonly detalle: string
}

export interface EnvioRow {
  readonly track_id: string
  readonly channel: Channel
  readonly sha256: string
  /** rutCompany-dvCompany of the upload. */
  readonly rut_emisor: string
  /** rutSender-dvSender of the upload. */
  readonly rut_envia: string
  readonly file_name: string
  readonly received_at: number
  /** Processing time fixed at upload: the envelope is final at received_at + delay_ms. */
  readonly delay_ms: number
  readonly rejection: StoredRejection | null
}

export type DocEstado = 'DOK' | 'RPR' | 'RLV' | 'RCH'

/** A certification libro's rejection (libro-reception.ts): the upload pipeline's RSC, RFR, or LRH for its content. */
export interface StoredLibroRejection {
  readonly estado: 'RSC' | 'RFR' | 'LRH'
  readonly glosa: string
  readonly errors: readonly SiiError[]
}

/** A LibroCompraVenta or LibroGuia received on DTEUpload; its track id comes from the same counter as the envelopes'. */
export interface LibroRow {
  readonly track_id: string
  readonly sha256: string
  /** rutCompany-dvCompany of the upload, the carátula's RutEmisorLibro. */
  readonly rut_emisor: string
  readonly rut_envia: string
  readonly file_name: string
  /** VENTA or COMPRA (LibroCompraVenta's TipoOperacion), GUIA for a LibroGuia. */
  readonly tipo: string
  /** PeriodoTributario as written. */
  readonly periodo: string
  readonly received_at: number
  readonly delay_ms: number
  readonly rejection: StoredLibroRejection | null
}

export interface DocumentoRow {
  readonly track_id: string
  readonly position: number
  readonly rut_emisor: string
  readonly tipo: number
  readonly folio: number
  readonly rut_receptor: string
  /** `YYYY-MM-DD`. */
  readonly fecha_emision: string
  /** MntTotal as written (decimal text in exports). */
  readonly monto: string
  readonly estado: DocEstado
  readonly errors: readonly SiiError[]
}

/** One event of RegistroReclamoDTE (docs/sii-protocol.md §6.7), as ingresarAceptacionReclamoDoc registered it. */
export interface EventoRow {
  readonly rut_emisor: string
  readonly tipo: number
  readonly folio: number
  /** ACD, ERM, RCD, RFP, RFT. */
  readonly accion: string
  /** The token's holder who registered it, canonical `12345678-K`. */
  readonly rut_responsable: string
  readonly registered_at: number
}

/** One case of a set of tests given to a company (DESIGN §15 "Simulator"): what the checks of a set envío look up. */
export interface SetCasoRow {
  /** The company the set was given to, canonical `12345678-K`. */
  readonly rut_emisor: string
  /** The set's name as the file writes it after `SET ` (BASICO, EXPORTACION 1, …). */
  readonly set_nombre: string
  readonly numero_atencion: number
  /** `<n>-<k>` with no leading zeros, as `RazonRef` `CASO <n>-<k>` names it. */
  readonly caso: string
  /** The case's TipoDTE. */
  readonly tipo: number
}

/** A recorded case and the número de atención of the latest set of its name given to the same company. */
export interface SetCasoFound extends SetCasoRow {
  readonly numero_atencion_vigente: number
}

/** `<n>-<k>` without leading zeros: the key a case is recorded and looked up by, however a file or a RazonRef writes it. */
export function casoKey(n: string, k: string): string {
  const digits = (d: string) => d.replace(/^0+(?=\d)/, '')
  return `${digits(n)}-${digits(k)}`
}

/** One set of a file, as it is recorded: its name, number and cases (`<n>-<k>`, tipo). */
export interface SetToRecord {
  readonly nombre: string
  readonly numeroAtencion: number
  readonly casos: ReadonlyArray<{ readonly caso: string; readonly tipo: number }>
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS counter (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS seed (seed TEXT PRIMARY KEY, channel TEXT NOT NULL, created_at INTEGER NOT NULL, used_at INTEGER);
CREATE TABLE IF NOT EXISTS token (token TEXT PRIMARY KEY, channel TEXT NOT NULL, rut TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS envio (
  track_id TEXT PRIMARY KEY, channel TEXT NOT NULL, sha256 TEXT NOT NULL, rut_emisor TEXT NOT NULL, rut_envia TEXT NOT NULL,
  file_name TEXT NOT NULL, received_at INTEGER NOT NULL, delay_ms INTEGER NOT NULL, rejection TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS envio_bytes ON envio (channel, sha256);
CREATE TABLE IF NOT EXISTS documento (
  track_id TEXT NOT NULL, position INTEGER NOT NULL, rut_emisor TEXT NOT NULL, tipo INTEGER NOT NULL, folio INTEGER NOT NULL,
  rut_receptor TEXT NOT NULL, fecha_emision TEXT NOT NULL, monto TEXT NOT NULL, estado TEXT NOT NULL, errors TEXT NOT NULL,
  PRIMARY KEY (track_id, position)
);
CREATE INDEX IF NOT EXISTS documento_folio ON documento (rut_emisor, tipo, folio);
CREATE TABLE IF NOT EXISTS evento (
  rut_emisor TEXT NOT NULL, tipo INTEGER NOT NULL, folio INTEGER NOT NULL, accion TEXT NOT NULL, rut_responsable TEXT NOT NULL,
  registered_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS evento_documento ON evento (rut_emisor, tipo, folio);
CREATE TABLE IF NOT EXISTS libro (
  track_id TEXT PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, rut_emisor TEXT NOT NULL, rut_envia TEXT NOT NULL, file_name TEXT NOT NULL,
  tipo TEXT NOT NULL, periodo TEXT NOT NULL, received_at INTEGER NOT NULL, delay_ms INTEGER NOT NULL, rejection TEXT
);
`

// The sets of tests given to each company (DESIGN §15 "Simulator"; docs/decisions/simulator.md "The set of tests"): a
// set per (company, número de atención), re-recording the same set replaces it; its cases by (company, `n-k`).
const SET_SCHEMA = `
CREATE TABLE IF NOT EXISTS set_pruebas (
  rut_emisor TEXT NOT NULL, numero_atencion INTEGER NOT NULL, set_nombre TEXT NOT NULL, recorded_at INTEGER NOT NULL,
  PRIMARY KEY (rut_emisor, numero_atencion)
);
CREATE TABLE IF NOT EXISTS set_caso (
  rut_emisor TEXT NOT NULL, caso TEXT NOT NULL, set_nombre TEXT NOT NULL, numero_atencion INTEGER NOT NULL, tipo INTEGER NOT NULL,
  PRIMARY KEY (rut_emisor, caso)
);
`

/**
 * Números de atención of generated sets start here: the SII's own were near 4.9 million in 2026 (research §1.3), so a
 * real set recorded with `--from` does not meet a generated one's number for years.
 */
const FIRST_SET_ATENCION = 6_000_001

/** First values of the counters: SOAP track ids are 10 digits with a leading zero, boleta ones 15 (docs/sii-protocol.md §6.4, §7.1). */
const COUNTER_START: Readonly<Record<string, number>> = {
  seed: 0,
  soap_track_id: 100_000_000,
  rest_track_id: 100_000_000_000_000,
  atencion: 0,
}

export class SimulatorStore {
  private readonly db: Database

  constructor(dataDir: string | null) {
    // Beside Timbre's files in its data dir, so 0700 and 0600 like them (issue 18); its -wal and -shm take the file's mode.
    if (dataDir !== null) {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 })
      closeSync(openSync(join(dataDir, 'sii-simulator.db'), 'a', 0o600))
    }
    this.db = new Database(dataDir === null ? ':memory:' : join(dataDir, 'sii-simulator.db'), { create: true, strict: true })
    // busy_timeout before WAL (docs/stack-notes.md): a CLI simulator and a test may open the same file.
    this.db.exec('PRAGMA busy_timeout = 5000')
    if (dataDir !== null) this.db.exec('PRAGMA journal_mode = WAL')
    // NORMAL, not FULL: in WAL mode a commit then survives the process being killed (only the OS or the power going
    // down can lose the last ones), which is what a simulator needs; FULL's fsync per commit (a seed, a token, a
    // counter, an envelope) blocked the event loop of `serve --sii simulado` for seconds a minute under load.
    this.db.exec('PRAGMA synchronous = NORMAL')
    this.db.exec(SCHEMA)
    this.db.exec(SET_SCHEMA)
  }

  close(): void {
    this.db.close()
  }

  /** The next value of a named counter, atomic (one UPDATE … RETURNING, docs/stack-notes.md). */
  next(name: keyof typeof COUNTER_START): number {
    this.db.query('INSERT OR IGNORE INTO counter (name, value) VALUES (?, ?)').run(name, COUNTER_START[name] ?? 0)
    const row = this.db.query<{ value: number }, [string]>('UPDATE counter SET value = value + 1 WHERE name = ? RETURNING value').get(name)
    if (row === null) throw new Error(`counter ${name} vanished`)
    return row.value
  }

  insertSeed(seed: string, channel: Channel, now: number): void {
    this.db.query('INSERT INTO seed (seed, channel, created_at) VALUES (?, ?, ?)').run(seed, channel, now)
  }

  findSeed(seed: string): SeedRow | null {
    return this.db.query<SeedRow, [string]>('SELECT seed, channel, created_at, used_at FROM seed WHERE seed = ?').get(seed)
  }

  /** Marks the seed used; false when another request used it first (each seed gives one token, docs/sii-protocol.md §6.3). */
  useSeed(seed: string, now: number): boolean {
    return this.db.query('UPDATE seed SET used_at = ? WHERE seed = ? AND used_at IS NULL').run(now, seed).changes === 1
  }

  insertToken(row: TokenRow): void {
    this.db.query('INSERT INTO token (token, channel, rut, created_at) VALUES (?, ?, ?, ?)').run(row.token, row.channel, row.rut, row.created_at)
  }

  findToken(token: string): TokenRow | null {
    return this.db.query<TokenRow, [string]>('SELECT token, channel, rut, created_at FROM token WHERE token = ?').get(token)
  }

  findEnvioByBytes(channel: Channel, sha256: string): EnvioRow | null {
    const row = this.db.query<RawEnvio, [string, string]>('SELECT * FROM envio WHERE channel = ? AND sha256 = ?').get(channel, sha256)
    return row === null ? null : envioOf(row)
  }

  findEnvio(channel: Channel, trackId: string): EnvioRow | null {
    const row = this.db.query<RawEnvio, [string, string]>('SELECT * FROM envio WHERE channel = ? AND track_id = ?').get(channel, trackId)
    return row === null ? null : envioOf(row)
  }

  /** The envelope and its documents in one transaction: a folio is "received" exactly when its envelope is. */
  insertEnvio(envio: EnvioRow, documentos: readonly DocumentoRow[]): void {
    this.db.transaction(() => {
      this.db
        .query('INSERT INTO envio (track_id, channel, sha256, rut_emisor, rut_envia, file_name, received_at, delay_ms, rejection) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(envio.track_id, envio.channel, envio.sha256, envio.rut_emisor, envio.rut_envia, envio.file_name, envio.received_at, envio.delay_ms,
          envio.rejection === null ? null : JSON.stringify(envio.rejection))
      const insert = this.db.query('INSERT INTO documento (track_id, position, rut_emisor, tipo, folio, rut_receptor, fecha_emision, monto, estado, errors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      for (const d of documentos) {
        insert.run(d.track_id, d.position, d.rut_emisor, d.tipo, d.folio, d.rut_receptor, d.fecha_emision, d.monto, d.estado, JSON.stringify(d.errors))
      }
    })()
  }

  documentsOf(trackId: string): DocumentoRow[] {
    return this.db.query<RawDocumento, [string]>('SELECT * FROM documento WHERE track_id = ? ORDER BY position').all(trackId).map(documentoOf)
  }

  /** The earliest copy of this folio the SII accepted (DOK, RPR, RLV), to tell a repeated document from another one. */
  acceptedCopy(rutEmisor: string, tipo: number, folio: number): { rutReceptor: string; fechaEmision: string; monto: string } | null {
    return this.db
      .query<{ rutReceptor: string; fechaEmision: string; monto: string }, [string, number, number]>(
        "SELECT rut_receptor AS rutReceptor, fecha_emision AS fechaEmision, monto FROM documento WHERE rut_emisor = ? AND tipo = ? AND folio = ? AND estado IN ('DOK', 'RPR', 'RLV') ORDER BY rowid LIMIT 1",
      )
      .get(rutEmisor, tipo, folio)
  }

  /** The events registered on a document, oldest first (listarEventosHistDoc, docs/sii-protocol.md §6.7). */
  eventosOf(rutEmisor: string, tipo: number, folio: number): EventoRow[] {
    return this.db
      .query<EventoRow, [string, number, number]>('SELECT rut_emisor, tipo, folio, accion, rut_responsable, registered_at FROM evento WHERE rut_emisor = ? AND tipo = ? AND folio = ? ORDER BY rowid')
      .all(rutEmisor, tipo, folio)
  }

  /**
   * Reads a document's events and, when `decide` says so, registers one more, in one IMMEDIATE transaction: two
   * simulators on one file (a CLI and a test) cannot both register the first claim of a document.
   */
  registerEvento<T>(rutEmisor: string, tipo: number, folio: number, decide: (previas: readonly EventoRow[]) => { readonly evento: EventoRow | null; readonly answer: T }): T {
    return this.db.transaction(() => {
      const { evento, answer } = decide(this.eventosOf(rutEmisor, tipo, folio))
      if (evento !== null) {
        this.db.query('INSERT INTO evento (rut_emisor, tipo, folio, accion, rut_responsable, registered_at) VALUES (?, ?, ?, ?, ?, ?)')
          .run(evento.rut_emisor, evento.tipo, evento.folio, evento.accion, evento.rut_responsable, evento.registered_at)
      }
      return answer
    }).immediate()
  }

  /** Every time this folio was received, oldest first, with its envelope (getEstDte reads the latest relevant one). */
  documentsByFolio(rutEmisor: string, tipo: number, folio: number): Array<{ documento: DocumentoRow; envio: EnvioRow }> {
    const rows = this.db
      .query<RawDocumento, [string, number, number]>('SELECT * FROM documento WHERE rut_emisor = ? AND tipo = ? AND folio = ? ORDER BY rowid')
      .all(rutEmisor, tipo, folio)
    return rows.flatMap((raw) => {
      const envio = this.db.query<RawEnvio, [string]>('SELECT * FROM envio WHERE track_id = ?').get(raw.track_id)
      return envio === null ? [] : [{ documento: documentoOf(raw), envio: envioOf(envio) }]
    })
  }

  /** Reserves `count` consecutive números de atención for new sets, atomically (two CLIs never share one); the first. */
  reserveNumerosAtencion(count: number): number {
    this.db.query("INSERT OR IGNORE INTO counter (name, value) VALUES ('set_atencion', ?)").run(FIRST_SET_ATENCION - 1)
    const row = this.db.query<{ value: number }, [number]>("UPDATE counter SET value = value + ? WHERE name = 'set_atencion' RETURNING value").get(count)
    if (row === null) throw new Error('counter set_atencion vanished')
    return row.value - count + 1
  }

  /**
   * Records the sets a company was given, in one IMMEDIATE transaction (a running simulator may read the file meanwhile).
   * A set already recorded for the company under the same número de atención is replaced with its cases, and becomes the
   * latest of its name again.
   */
  recordSets(rutEmisor: string, sets: readonly SetToRecord[], now: number): void {
    this.db.transaction(() => {
      for (const set of sets) {
        this.db.query('DELETE FROM set_caso WHERE rut_emisor = ? AND numero_atencion = ?').run(rutEmisor, set.numeroAtencion)
        this.db.query('DELETE FROM set_pruebas WHERE rut_emisor = ? AND numero_atencion = ?').run(rutEmisor, set.numeroAtencion)
        this.db.query('INSERT INTO set_pruebas (rut_emisor, numero_atencion, set_nombre, recorded_at) VALUES (?, ?, ?, ?)')
          .run(rutEmisor, set.numeroAtencion, set.nombre, now)
        const insert = this.db.query('INSERT OR REPLACE INTO set_caso (rut_emisor, caso, set_nombre, numero_atencion, tipo) VALUES (?, ?, ?, ?, ?)')
        for (const c of set.casos) {
          const [n = '', k = ''] = c.caso.split('-')
          insert.run(rutEmisor, casoKey(n, k), set.nombre, set.numeroAtencion, c.tipo)
        }
      }
    }).immediate()
  }

  /** A case (`casoKey`) given to the company, with the latest set of its name (the one the SII evaluates); null when never given. */
  findSetCaso(rutEmisor: string, caso: string): SetCasoFound | null {
    return this.db
      .query<SetCasoFound, [string, string]>(
        'SELECT c.rut_emisor, c.set_nombre, c.numero_atencion, c.caso, c.tipo, ' +
          '(SELECT s.numero_atencion FROM set_pruebas s WHERE s.rut_emisor = c.rut_emisor AND s.set_nombre = c.set_nombre ORDER BY s.rowid DESC LIMIT 1) AS numero_atencion_vigente ' +
          'FROM set_caso c WHERE c.rut_emisor = ? AND c.caso = ?',
      )
      .get(rutEmisor, caso)
  }

  /** Every case given to the company, by set in the order recorded, then case order. */
  setCasosOf(rutEmisor: string): SetCasoRow[] {
    return this.db
      .query<SetCasoRow, [string]>(
        'SELECT c.rut_emisor, c.set_nombre, c.numero_atencion, c.caso, c.tipo FROM set_caso c JOIN set_pruebas s ' +
          'ON s.rut_emisor = c.rut_emisor AND s.numero_atencion = c.numero_atencion WHERE c.rut_emisor = ? ORDER BY s.rowid, c.rowid',
      )
      .all(rutEmisor)
  }

  insertLibro(libro: LibroRow): void {
    this.db
      .query('INSERT INTO libro (track_id, sha256, rut_emisor, rut_envia, file_name, tipo, periodo, received_at, delay_ms, rejection) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(libro.track_id, libro.sha256, libro.rut_emisor, libro.rut_envia, libro.file_name, libro.tipo, libro.periodo, libro.received_at, libro.delay_ms,
        libro.rejection === null ? null : JSON.stringify(libro.rejection))
  }

  findLibro(trackId: string): LibroRow | null {
    const row = this.db.query<RawLibro, [string]>('SELECT * FROM libro WHERE track_id = ?').get(trackId)
    return row === null ? null : libroOf(row)
  }

  /** The libro first received with these bytes (STATUS 99, as for envelopes). */
  findLibroByBytes(sha256: string): LibroRow | null {
    const row = this.db.query<RawLibro, [string]>('SELECT * FROM libro WHERE sha256 = ?').get(sha256)
    return row === null ? null : libroOf(row)
  }
}

type RawLibro = Omit<LibroRow, 'rejection'> & { readonly rejection: string | null }

function libroOf(raw: RawLibro): LibroRow {
  return { ...raw, rejection: raw.rejection === null ? null : (JSON.parse(raw.rejection) as StoredLibroRejection) }
}

type RawEnvio = Omit<EnvioRow, 'rejection' | 'channel'> & { readonly rejection: string | null; readonly channel: string }
type RawDocumento = Omit<DocumentoRow, 'errors' | 'estado'> & { readonly errors: string; readonly estado: string }

function envioOf(raw: RawEnvio): EnvioRow {
  return { ...raw, channel: raw.channel as Channel, rejection: raw.rejection === null ? null : (JSON.parse(raw.rejection) as StoredRejection) }
}

function documentoOf(raw: RawDocumento): DocumentoRow {
  return { ...raw, estado: raw.estado as DocEstado, errors: JSON.parse(raw.errors) as SiiError[] }
}
