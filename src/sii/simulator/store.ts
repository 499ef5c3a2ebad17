// The simulator's memory: its own SQLite file `<dataDir>/sii-simulator.db` (or ':memory:'), never Timbre's database
// (STYLE §1: sii/ never touches Timbre's db). A tiny schema created at start; an in-process simulator that shares a
// data dir with Timbre survives Timbre's restarts, so seeds, tokens, track ids and received folios persist.
import { Database } from 'bun:sqlite'
import { closeSync, mkdirSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { FoliosStore } from './folios-store'

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

// The portal and the RCV (docs/decisions/simulator.md "Portal y RCV"): what the simulator keeps of each accepted
// document for its registers (the amounts the documento table does not hold), the portal's sessions, the deferred
// downloads, rows added by `sii-simulator rcv add`, and the settings and faults the CLI switches on a running simulator.
const RCV_SCHEMA = `
CREATE TABLE IF NOT EXISTS documento_rcv (
  track_id TEXT NOT NULL, position INTEGER NOT NULL, razon_social_emisor TEXT NOT NULL, razon_social_receptor TEXT NOT NULL,
  monto_exento INTEGER, monto_neto INTEGER, monto_iva INTEGER, monto_total INTEGER NOT NULL, iva_retenido_total INTEGER,
  tipo_ref INTEGER, folio_ref INTEGER, PRIMARY KEY (track_id, position)
);
CREATE TABLE IF NOT EXISTS portal_sesion (
  token TEXT PRIMARY KEY, rut TEXT NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL, ended_at INTEGER
);
CREATE INDEX IF NOT EXISTS portal_sesion_rut ON portal_sesion (rut);
CREATE TABLE IF NOT EXISTS rcv_solicitud (
  id TEXT PRIMARY KEY, rut_emisor TEXT NOT NULL, periodo TEXT NOT NULL, operacion TEXT NOT NULL, estado_contab TEXT NOT NULL,
  tipo_doc INTEGER NOT NULL, created_at INTEGER NOT NULL, is_eterna INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rcv_fila (
  rut_empresa TEXT NOT NULL, registro TEXT NOT NULL, tipo INTEGER NOT NULL, rut TEXT NOT NULL, razon_social TEXT NOT NULL,
  folio INTEGER NOT NULL, fecha_emision TEXT NOT NULL, fecha_recepcion TEXT NOT NULL, monto_exento INTEGER NOT NULL,
  monto_neto INTEGER NOT NULL, monto_iva INTEGER NOT NULL, monto_total INTEGER NOT NULL, seccion TEXT, added_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rcv_fila_empresa ON rcv_fila (rut_empresa, fecha_emision);
CREATE TABLE IF NOT EXISTS ajuste (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS falla (tipo TEXT PRIMARY KEY, veces INTEGER NOT NULL);
`

/** What the registers show of an accepted document beyond the documento row, read from its DTE at reception. */
export interface DocumentoRcvRow {
  readonly razon_social_emisor: string
  readonly razon_social_receptor: string
  readonly monto_exento: number | null
  readonly monto_neto: number | null
  readonly monto_iva: number | null
  readonly monto_total: number
  /** ImptoReten TipoImp 15 of a factura de compra (46). */
  readonly iva_retenido_total: number | null
  /** First Referencia of a note: TpoDocRef (numeric) and FolioRef. */
  readonly tipo_ref: number | null
  readonly folio_ref: number | null
}

/** An accepted document of a company (issuer or receptor) with its envelope and what the registers show of it. */
export interface DocumentoRegistrado {
  readonly documento: DocumentoRow
  readonly envio: EnvioRow
  /** Null for documents received before the simulator kept these (then only MntTotal is known). */
  readonly rcv: DocumentoRcvRow | null
}

/** A session of the portal (login by certificate). Open while not ended and used within its idle limit. */
export interface PortalSesionRow {
  readonly token: string
  readonly rut: string
  readonly created_at: number
  readonly last_used_at: number
  readonly ended_at: number | null
}

/** A deferred download requested through solicitarDescargaDiferida. */
export interface RcvSolicitudRow {
  readonly id: string
  readonly rut_emisor: string
  readonly periodo: string
  readonly operacion: string
  readonly estado_contab: string
  readonly tipo_doc: number
  readonly created_at: number
  /** The `diferida_eterna` fault was on when it was requested: it never finishes. */
  readonly is_eterna: boolean
}

/** A row added by `sii-simulator rcv add`: a document issued outside Timbre, in a company's register. */
export interface RcvFilaRow {
  readonly rut_empresa: string
  readonly registro: 'compras' | 'ventas'
  readonly tipo: number
  readonly rut: string
  readonly razon_social: string
  readonly folio: number
  readonly fecha_emision: string
  /** Santiago wall clock, `YYYY-MM-DDTHH:MM:SS`. */
  readonly fecha_recepcion: string
  readonly monto_exento: number
  readonly monto_neto: number
  readonly monto_iva: number
  readonly monto_total: number
  /** Compras only; null: the 8-day rule decides. */
  readonly seccion: 'registro' | 'pendiente' | 'no_incluir' | 'reclamado' | null
  readonly added_at: number
}

/**
 * The faults the CLI switches on (`sii-simulator rcv falla`), each for a number of uses (0: until removed). The last two
 * are the folio pages' (folios-service.ts): a grant whose answer is lost, and a form page with renamed inputs.
 */
export const FALLAS_PORTAL = ['sesion_expirada', 'tope_sesiones', 'diferida_eterna', 'respuesta_malformada', 'corte_tras_otorgar', 'pagina_cambiada'] as const
export type FallaPortal = (typeof FALLAS_PORTAL)[number]

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
  rcv_solicitud: 0,
}

export class SimulatorStore {
  private readonly db: Database
  /** Timbraje's tables (folios-store.ts), on this same file. */
  readonly folios: FoliosStore

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
    this.db.exec(RCV_SCHEMA)
    this.folios = new FoliosStore(this.db)
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
  insertEnvio(envio: EnvioRow, documentos: readonly DocumentoRow[], rcv: ReadonlyMap<number, DocumentoRcvRow> = new Map()): void {
    this.db.transaction(() => {
      this.db
        .query('INSERT INTO envio (track_id, channel, sha256, rut_emisor, rut_envia, file_name, received_at, delay_ms, rejection) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(envio.track_id, envio.channel, envio.sha256, envio.rut_emisor, envio.rut_envia, envio.file_name, envio.received_at, envio.delay_ms,
          envio.rejection === null ? null : JSON.stringify(envio.rejection))
      const insert = this.db.query('INSERT INTO documento (track_id, position, rut_emisor, tipo, folio, rut_receptor, fecha_emision, monto, estado, errors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      for (const d of documentos) {
        insert.run(d.track_id, d.position, d.rut_emisor, d.tipo, d.folio, d.rut_receptor, d.fecha_emision, d.monto, d.estado, JSON.stringify(d.errors))
      }
      const insertRcv = this.db.query('INSERT INTO documento_rcv (track_id, position, razon_social_emisor, razon_social_receptor, monto_exento, monto_neto, monto_iva, monto_total, iva_retenido_total, tipo_ref, folio_ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      for (const [position, m] of rcv) {
        insertRcv.run(envio.track_id, position, m.razon_social_emisor, m.razon_social_receptor, m.monto_exento, m.monto_neto, m.monto_iva, m.monto_total, m.iva_retenido_total, m.tipo_ref, m.folio_ref)
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

  // ---------------------------------------------------------------------------------------------- portal and RCV

  /**
   * Documents the SII accepted (DOK, RPR, RLV) that `rut` issued or received, emitted in `mes` (`YYYY-MM`), in order of
   * reception, with their envelope and amounts. Whether each envelope is final is the caller's (states.ts).
   */
  documentosRegistrados(rut: string, mes: string): DocumentoRegistrado[] {
    const rows = this.db
      .query<RawDocumento & { readonly _rowid: number }, [string, string, string]>(
        "SELECT d.*, d.rowid AS _rowid FROM documento d WHERE d.estado IN ('DOK', 'RPR', 'RLV') AND (d.rut_emisor = ? OR d.rut_receptor = ?) AND substr(d.fecha_emision, 1, 7) = ? ORDER BY d.rowid",
      )
      .all(rut, rut, mes)
    return rows.flatMap(({ _rowid: _, ...raw }) => {
      const envio = this.db.query<RawEnvio, [string]>('SELECT * FROM envio WHERE track_id = ?').get(raw.track_id)
      const rcv = this.db.query<DocumentoRcvRow, [string, number]>(
        'SELECT razon_social_emisor, razon_social_receptor, monto_exento, monto_neto, monto_iva, monto_total, iva_retenido_total, tipo_ref, folio_ref FROM documento_rcv WHERE track_id = ? AND position = ?',
      ).get(raw.track_id, raw.position)
      return envio === null ? [] : [{ documento: documentoOf(raw), envio: envioOf(envio), rcv }]
    })
  }

  /** Opens a portal session for `rut` unless `cap` sessions of it are open at `now` (idle at most `idleMs`); in one IMMEDIATE transaction. */
  openPortalSesion(token: string, rut: string, now: number, idleMs: number, cap: number): boolean {
    return this.db.transaction(() => {
      const open = this.db
        .query<{ n: number }, [string, number]>('SELECT count(*) AS n FROM portal_sesion WHERE rut = ? AND ended_at IS NULL AND last_used_at >= ?')
        .get(rut, now - idleMs)
      if ((open?.n ?? 0) >= cap) return false
      this.db.query('INSERT INTO portal_sesion (token, rut, created_at, last_used_at) VALUES (?, ?, ?, ?)').run(token, rut, now, now)
      return true
    }).immediate()
  }

  /** The session if open at `now`, its idle time restarted; null when unknown, ended or idle longer than `idleMs`. */
  usePortalSesion(token: string, now: number, idleMs: number): PortalSesionRow | null {
    return this.db
      .query<PortalSesionRow, [number, string, number]>(
        'UPDATE portal_sesion SET last_used_at = ?1 WHERE token = ?2 AND ended_at IS NULL AND last_used_at >= ?3 RETURNING token, rut, created_at, last_used_at, ended_at',
      )
      .get(now, token, now - idleMs)
  }

  endPortalSesion(token: string, now: number): void {
    this.db.query('UPDATE portal_sesion SET ended_at = ? WHERE token = ? AND ended_at IS NULL').run(now, token)
  }

  insertRcvSolicitud(row: Omit<RcvSolicitudRow, 'id'>): string {
    const id = String(this.next('rcv_solicitud'))
    this.db
      .query('INSERT INTO rcv_solicitud (id, rut_emisor, periodo, operacion, estado_contab, tipo_doc, created_at, is_eterna) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(id, row.rut_emisor, row.periodo, row.operacion, row.estado_contab, row.tipo_doc, row.created_at, row.is_eterna ? 1 : 0)
    return id
  }

  findRcvSolicitud(id: string): RcvSolicitudRow | null {
    const row = this.db.query<Omit<RcvSolicitudRow, 'is_eterna'> & { is_eterna: number }, [string]>('SELECT * FROM rcv_solicitud WHERE id = ?').get(id)
    return row === null ? null : { ...row, is_eterna: row.is_eterna === 1 }
  }

  /** Adds rows to companies' registers, all or none. */
  insertRcvFilas(rows: readonly RcvFilaRow[]): void {
    this.db.transaction(() => {
      const insert = this.db.query(
        'INSERT INTO rcv_fila (rut_empresa, registro, tipo, rut, razon_social, folio, fecha_emision, fecha_recepcion, monto_exento, monto_neto, monto_iva, monto_total, seccion, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      for (const r of rows) {
        insert.run(r.rut_empresa, r.registro, r.tipo, r.rut, r.razon_social, r.folio, r.fecha_emision, r.fecha_recepcion, r.monto_exento, r.monto_neto, r.monto_iva, r.monto_total, r.seccion, r.added_at)
      }
    }).immediate()
  }

  /** Rows added for a company, emitted in `mes` (`YYYY-MM`), in the order added. */
  rcvFilasOf(rut: string, mes: string): RcvFilaRow[] {
    return this.db
      .query<RcvFilaRow, [string, string]>('SELECT * FROM rcv_fila WHERE rut_empresa = ? AND substr(fecha_emision, 1, 7) = ? ORDER BY rowid')
      .all(rut, mes)
  }

  /** The simulator clock's offset from its base clock, ms (`sii-simulator reloj`). */
  clockOffsetMs(): number {
    const row = this.db.query<{ value: string }, []>("SELECT value FROM ajuste WHERE name = 'clock_offset_ms'").get()
    return row === null ? 0 : Number(row.value)
  }

  setClockOffsetMs(ms: number): void {
    this.db.query("INSERT INTO ajuste (name, value) VALUES ('clock_offset_ms', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value").run(String(ms))
  }

  /** Switches a fault on for `veces` uses (0: until removed), replacing what was left of it. */
  setFalla(tipo: FallaPortal, veces: number): void {
    this.db.query('INSERT INTO falla (tipo, veces) VALUES (?, ?) ON CONFLICT (tipo) DO UPDATE SET veces = excluded.veces').run(tipo, veces)
  }

  /** True when the fault was on; false when it was not. */
  removeFalla(tipo: FallaPortal): boolean {
    return this.db.query('DELETE FROM falla WHERE tipo = ?').run(tipo).changes === 1
  }

  fallas(): Array<{ tipo: FallaPortal; veces: number }> {
    return this.db.query<{ tipo: FallaPortal; veces: number }, []>('SELECT tipo, veces FROM falla ORDER BY tipo').all()
  }

  /** Uses the fault once when it is on: true when this request meets it. Atomic, so two requests never share the last use. */
  takeFalla(tipo: FallaPortal): boolean {
    return this.db.transaction(() => {
      const row = this.db.query<{ veces: number }, [string]>('SELECT veces FROM falla WHERE tipo = ?').get(tipo)
      if (row === null) return false
      if (row.veces === 1) this.db.query('DELETE FROM falla WHERE tipo = ?').run(tipo)
      else if (row.veces > 1) this.db.query('UPDATE falla SET veces = veces - 1 WHERE tipo = ?').run(tipo)
      return true
    }).immediate()
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
