// Customs (Aduana) code tables of an export's data (spec 2.11, docs/sii-protocol.md §2.6) that tipos.ts does not hold:
// DTE_v10.xsd types CodModVenta, CodViaTransp, FmaPagExp, CodPto* and CodUnid* as bare numbers "según tabla de
// Aduana". The codes are Aduana's (Compendio de Normas Aduaneras, Anexo 51), as LibreDTE's data files, which passed
// the SII's export certification, carry them (resources/data/repository/aduana_*.php); the console offers them as
// choices with their names. Ports are a selection: the Chilean ports and airports exports leave from, the main ports
// of Chile's trading partners, and each region's "otros puertos" code, so every destination has a code to choose.

export interface CodigoAduana {
  readonly codigo: number
  readonly nombre: string
}

/** CodModVenta, `modalidad_venta`. */
export const MODALIDADES_VENTA: readonly CodigoAduana[] = [
  { codigo: 1, nombre: 'A firme' },
  { codigo: 2, nombre: 'Bajo condición' },
  { codigo: 3, nombre: 'En consignación libre' },
  { codigo: 4, nombre: 'En consignación con un mínimo a firme' },
  { codigo: 9, nombre: 'Sin pago' },
]

/** CodViaTransp, `via_transporte`. */
export const VIAS_TRANSPORTE: readonly CodigoAduana[] = [
  { codigo: 1, nombre: 'Marítima, fluvial y lacustre' },
  { codigo: 4, nombre: 'Aérea' },
  { codigo: 5, nombre: 'Postal' },
  { codigo: 6, nombre: 'Ferroviaria' },
  { codigo: 7, nombre: 'Carretera o terrestre' },
  { codigo: 8, nombre: 'Oleoductos y gasoductos' },
  { codigo: 9, nombre: 'Tendido eléctrico' },
  { codigo: 10, nombre: 'Otra' },
]

/** FmaPagExp, `forma_pago_exp`: Aduana's abbreviation, and what it stands for where it is plain. 21 is "sin pago" (domain/emision.ts). */
export const FORMAS_PAGO_EXPORTACION: readonly CodigoAduana[] = [
  { codigo: 1, nombre: 'COB1 (cobranza hasta 1 año)' },
  { codigo: 2, nombre: 'COBRANZA (cobranza a más de 1 año)' },
  { codigo: 11, nombre: 'ACRED (acreditivo)' },
  { codigo: 12, nombre: 'CBOF (crédito de bancos y organismos financieros)' },
  { codigo: 21, nombre: 'S/PAGO (sin pago)' },
  { codigo: 32, nombre: 'ANTICIPO (pago anticipado)' },
  { codigo: 50, nombre: 'ANT/COB' },
  { codigo: 60, nombre: 'ANT/CRED' },
  { codigo: 80, nombre: 'S/PAGO/COB' },
]

/** CodUnidMedTara, CodUnidPesoBruto, CodUnidPesoNeto: Aduana's units of measure, its abbreviation first. */
export const UNIDADES_ADUANA: readonly CodigoAduana[] = [
  { codigo: 1, nombre: 'TMB (tonelada métrica bruta)' },
  { codigo: 2, nombre: 'QMB (quintal métrico bruto)' },
  { codigo: 3, nombre: 'MKWH (miles de kilowatts hora)' },
  { codigo: 4, nombre: 'TMN (tonelada métrica neta)' },
  { codigo: 5, nombre: 'KLT (kilolitro)' },
  { codigo: 6, nombre: 'KN (kilogramo neto)' },
  { codigo: 7, nombre: 'GN (gramo neto)' },
  { codigo: 8, nombre: 'HL (hectolitro)' },
  { codigo: 9, nombre: 'LT (litro)' },
  { codigo: 10, nombre: 'U (unidad)' },
  { codigo: 11, nombre: 'DOC (docena)' },
  { codigo: 12, nombre: 'U(JGO) (unidad o juego)' },
  { codigo: 13, nombre: 'MU (miles de unidades)' },
  { codigo: 14, nombre: 'MT (metro)' },
  { codigo: 15, nombre: 'MT2 (metro cuadrado)' },
  { codigo: 16, nombre: 'MCUB (metro cúbico)' },
  { codigo: 17, nombre: 'PAR (par)' },
  { codigo: 18, nombre: 'KNFC (kilogramo neto de fino contenido)' },
  { codigo: 19, nombre: 'CARTON (cartón)' },
  { codigo: 20, nombre: 'KWH (kilowatt hora)' },
  { codigo: 23, nombre: 'BAR (barril)' },
  { codigo: 24, nombre: 'M2/1MM (metro cuadrado de 1 mm de espesor)' },
  { codigo: 99, nombre: 'S.U.M (sin unidad de medida)' },
]

/** CodPtoEmbarque: where an export leaves Chile (ports, border crossings, airports). */
export const PUERTOS_CHILE: readonly CodigoAduana[] = [
  { codigo: 901, nombre: 'Arica' },
  { codigo: 902, nombre: 'Iquique' },
  { codigo: 903, nombre: 'Antofagasta' },
  { codigo: 915, nombre: 'Mejillones' },
  { codigo: 918, nombre: 'Caldera' },
  { codigo: 904, nombre: 'Coquimbo' },
  { codigo: 921, nombre: 'Quintero' },
  { codigo: 948, nombre: 'Ventanas' },
  { codigo: 905, nombre: 'Valparaíso' },
  { codigo: 906, nombre: 'San Antonio' },
  { codigo: 907, nombre: 'Talcahuano' },
  { codigo: 908, nombre: 'San Vicente' },
  { codigo: 909, nombre: 'Lirquén' },
  { codigo: 926, nombre: 'Coronel' },
  { codigo: 910, nombre: 'Puerto Montt' },
  { codigo: 911, nombre: 'Chacabuco / Puerto Aysén' },
  { codigo: 912, nombre: 'Punta Arenas' },
  { codigo: 965, nombre: 'Los Libertadores (paso fronterizo)' },
  { codigo: 967, nombre: 'Cardenal Samoré (paso fronterizo)' },
  { codigo: 998, nombre: 'Paso Jama (paso fronterizo)' },
  { codigo: 992, nombre: 'Aeropuerto Arturo Merino Benítez' },
  { codigo: 987, nombre: 'Aeropuerto Chacalluta' },
  { codigo: 988, nombre: 'Aeropuerto Diego Aracena' },
  { codigo: 989, nombre: 'Aeropuerto Cerro Moreno' },
  { codigo: 990, nombre: 'Aeropuerto El Tepual' },
  { codigo: 991, nombre: 'Aeropuerto Carlos Ibáñez del Campo' },
  { codigo: 997, nombre: 'Otros puertos chilenos' },
]

/** CodPtoDesemb: where an export arrives; each region ends with its "otros puertos" code. */
export const PUERTOS_EXTRANJEROS: readonly CodigoAduana[] = [
  { codigo: 134, nombre: 'Nueva York (Estados Unidos)' },
  { codigo: 141, nombre: 'Miami (Estados Unidos)' },
  { codigo: 142, nombre: 'Port Everglades (Estados Unidos)' },
  { codigo: 159, nombre: 'Houston (Estados Unidos)' },
  { codigo: 174, nombre: 'Los Ángeles (Estados Unidos)' },
  { codigo: 175, nombre: 'Long Beach (Estados Unidos)' },
  { codigo: 180, nombre: 'Otros puertos de Estados Unidos' },
  { codigo: 114, nombre: 'Vancouver (Canadá)' },
  { codigo: 117, nombre: 'Otros puertos de Canadá' },
  { codigo: 217, nombre: 'Manzanillo (México)' },
  { codigo: 210, nombre: 'Otros puertos de México' },
  { codigo: 222, nombre: 'Balboa (Panamá)' },
  { codigo: 223, nombre: 'Colón (Panamá)' },
  { codigo: 232, nombre: 'Buenaventura (Colombia)' },
  { codigo: 231, nombre: 'Otros puertos de Colombia' },
  { codigo: 242, nombre: 'Guayaquil (Ecuador)' },
  { codigo: 241, nombre: 'Otros puertos de Ecuador' },
  { codigo: 252, nombre: 'Callao (Perú)' },
  { codigo: 251, nombre: 'Otros puertos de Perú' },
  { codigo: 262, nombre: 'Buenos Aires (Argentina)' },
  { codigo: 264, nombre: 'Mendoza (Argentina)' },
  { codigo: 261, nombre: 'Otros puertos de Argentina' },
  { codigo: 272, nombre: 'Montevideo (Uruguay)' },
  { codigo: 271, nombre: 'Otros puertos de Uruguay' },
  { codigo: 292, nombre: 'Santos (Brasil)' },
  { codigo: 291, nombre: 'Otros puertos de Brasil' },
  { codigo: 399, nombre: 'Otros puertos de América' },
  { codigo: 411, nombre: 'Shanghái (China)' },
  { codigo: 413, nombre: 'Otros puertos de China' },
  { codigo: 492, nombre: 'Hong Kong' },
  { codigo: 422, nombre: 'Busan (Corea del Sur)' },
  { codigo: 423, nombre: 'Otros puertos de Corea' },
  { codigo: 444, nombre: 'Yokohama (Japón)' },
  { codigo: 441, nombre: 'Otros puertos de Japón' },
  { codigo: 451, nombre: 'Kaohsiung (Taiwán)' },
  { codigo: 472, nombre: 'Otros puertos de India' },
  { codigo: 499, nombre: 'Otros puertos de Asia' },
  { codigo: 622, nombre: 'Rotterdam (Países Bajos)' },
  { codigo: 621, nombre: 'Ámsterdam (Países Bajos)' },
  { codigo: 601, nombre: 'Amberes (Bélgica)' },
  { codigo: 592, nombre: 'Hamburgo (Alemania)' },
  { codigo: 596, nombre: 'Otros puertos de Alemania' },
  { codigo: 563, nombre: 'Barcelona (España)' },
  { codigo: 561, nombre: 'Otros puertos de España' },
  { codigo: 553, nombre: 'Le Havre (Francia)' },
  { codigo: 551, nombre: 'Otros puertos de Francia' },
  { codigo: 542, nombre: 'Génova (Italia)' },
  { codigo: 541, nombre: 'Otros puertos de Italia' },
  { codigo: 572, nombre: 'Londres (Reino Unido)' },
  { codigo: 576, nombre: 'Otros puertos de Inglaterra' },
  { codigo: 699, nombre: 'Otros puertos de Europa' },
  { codigo: 712, nombre: 'Ciudad del Cabo (Sudáfrica)' },
  { codigo: 799, nombre: 'Otros puertos de África' },
  { codigo: 811, nombre: 'Sídney (Australia)' },
  { codigo: 813, nombre: 'Otros puertos de Australia' },
  { codigo: 899, nombre: 'Otros puertos de Oceanía' },
]

/** The name of `codigo` in `table`, or null. */
export function nombreAduana(table: readonly CodigoAduana[], codigo: number): string | null {
  return table.find((c) => c.codigo === codigo)?.nombre ?? null
}

/** Names of the sale clauses tipos.ts codes (CLAUSULAS_VENTA): the Incoterms, as Aduana's table names them in Spanish. */
export const NOMBRES_CLAUSULAS: Readonly<Record<string, string>> = {
  CIF: 'Costo, seguro y flete',
  CFR: 'Costo y flete',
  EXW: 'En fábrica',
  FAS: 'Franco al costado del buque',
  FOB: 'Franco a bordo',
  'S/CL': 'Sin cláusula de compraventa',
  OTROS: 'Otras',
  DDP: 'Entregada derechos pagados',
  FCA: 'Franco transportista',
  CPT: 'Transporte pagado hasta',
  CIP: 'Transporte y seguro pagados hasta',
  DAT: 'Entregada en terminal',
  DAP: 'Entregada en lugar',
}

/** Names of the package types tipos.ts codes (TIPOS_BULTO). */
export const NOMBRES_BULTOS: Readonly<Record<string, string>> = {
  'CAJA DE CARTON': 'Caja de cartón',
  FARDO: 'Fardo',
  BIDON: 'Bidón',
  BARRIL: 'Barril',
  TAMBOR: 'Tambor',
  PAQUETE: 'Paquete',
  SACO: 'Saco',
  BOLSA: 'Bolsa',
  CONT20: 'Contenedor de 20 pies',
  CONT40: 'Contenedor de 40 pies',
  ROLLOS: 'Rollos',
  PALLETS: 'Pallets',
  BULTONOESP: 'Bulto no especificado',
  'SIN BULTO': 'Sin bulto',
}

/** Names of the countries tipos.ts codes (PAISES), one per code (PAISES also keys aliases such as USA). */
export const NOMBRES_PAISES: Readonly<Record<number, string>> = {
  563: 'Alemania',
  224: 'Argentina',
  406: 'Australia',
  221: 'Bolivia',
  220: 'Brasil',
  226: 'Canadá',
  997: 'Chile',
  336: 'China',
  202: 'Colombia',
  333: 'Corea del Sur',
  218: 'Ecuador',
  517: 'España',
  225: 'Estados Unidos',
  505: 'Francia',
  515: 'Países Bajos',
  317: 'India',
  504: 'Italia',
  331: 'Japón',
  216: 'México',
  222: 'Paraguay',
  219: 'Perú',
  510: 'Reino Unido',
  223: 'Uruguay',
}
