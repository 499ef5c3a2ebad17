// The set-of-tests parser against the SII's own texts (test/fixtures/sii/sets, README there says where each came from)
// and against hostile files. Readings: docs/decisions/certificacion.md "El set de pruebas: cómo se lee".
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeSetText, parseSetPruebas, type ArchivoSet, type CasoSet, type SetPruebas } from '../../../src/domain/set-pruebas'

const DIR = join(import.meta.dir, '../../fixtures/sii/sets')

function bytesOf(file: string): Uint8Array {
  return new Uint8Array(readFileSync(join(DIR, file)))
}

function read(file: string): ArchivoSet {
  const decoded = decodeSetText(bytesOf(file))
  if (!decoded.ok) throw new Error(`${file}: ${decoded.error.message}`)
  const parsed = parseSetPruebas(decoded.text)
  if (!parsed.ok) throw new Error(`${file}: ${JSON.stringify(parsed.errors)}`)
  return parsed.value
}

function only(file: string): SetPruebas {
  const { sets } = read(file)
  expect(sets).toHaveLength(1)
  return sets[0]!
}

function caso(set: SetPruebas, id: string): CasoSet {
  const c = set.casos.find((x) => x.caso === id)
  if (!c) throw new Error(`no case ${id}`)
  return c
}

function errorsOf(text: string) {
  const parsed = parseSetPruebas(text)
  if (parsed.ok) throw new Error('expected errors')
  return parsed.errors
}

const latin1 = (text: string) => new Uint8Array([...text].map((c) => c.charCodeAt(0)))

describe('every real fixture reads whole', () => {
  test.each([
    ['001-basico.txt', 'BASICO', 414175, 8],
    ['002-ventas.txt', 'LIBRO DE VENTAS', 414176, 0],
    ['003-compras.txt', 'LIBRO DE COMPRAS', 414177, 0],
    ['004-factura_exenta.txt', 'FACTURA EXENTA', 414178, 8],
    ['005-guia_despacho.txt', 'GUIA DE DESPACHO', 428551, 3],
    ['006-libro_guias.txt', 'LIBRO DE GUIAS', 428552, 0],
    ['008-factura_compra.txt', 'FACTURA DE COMPRA', 481566, 3],
    ['009-set_exportacion_1.txt', 'EXPORTACION 1', 493307, 3],
    ['010-set_exportacion_2.txt', 'EXPORTACION 2', 493308, 3],
  ] as const)('%s → %s %d with %d cases', (file, nombre, numero, casos) => {
    const set = only(file)
    expect(set.nombre).toBe(nombre)
    expect(set.numeroAtencion).toBe(numero)
    expect(set.casos.map((c) => c.caso)).toEqual(Array.from({ length: casos }, (_, i) => `${numero}-${i + 1}`))
    for (const c of set.casos) expect(c.documento.detalle.length).toBeGreaterThan(0)
  })

  test('the 2026 layout (synthetic): header, six sets in order, every case', () => {
    const file = read('sintetico-2026.txt')
    expect(file.indicaciones[0]).toBe('INDICACIONES GENERALES:')
    expect(file.indicaciones).toContain('- NO UTILICE ABREVIATURAS EN LOS GIROS.')
    expect(file.sets.map((s) => [s.nombre, s.numeroAtencion, s.casos.length])).toEqual([
      ['BASICO', 5102201, 7],
      ['GUIA DE DESPACHO', 5102202, 3],
      ['EXPORTACION 1', 5102203, 2],
      ['LIBRO DE VENTAS', 5102204, 0],
      ['LIBRO DE COMPRAS', 5102205, 0],
      ['LIBRO DE GUIAS', 5102206, 0],
    ])
    const basico = file.sets[0]!
    expect(caso(basico, '5102201-2').documento.detalle[0]).toEqual({ nombre: 'Caña de pescar AFECTO', cantidad: 18, precio: 12990, descuento_pct: 7 })
    expect(caso(basico, '5102201-5').documento.detalle).toEqual([{ nombre: 'Caña de pescar AFECTO', cantidad: 5, precio: 12990, descuento_pct: 7 }])
    expect(caso(basico, '5102201-6').documento.descuentos_globales).toEqual([{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 9, glosa_dr: 'DESCUENTO GLOBAL ITEMES AFECTOS' }])
    const export1 = file.sets[2]!.casos[0]!.documento.export_data
    expect(export1).toMatchObject({ tpo_moneda: 'DOLAR USA', forma_pago_exp: 32, modalidad_venta: 1, clausula_venta: 'FOB', puerto_embarque: '905', puerto_desembarque: '411', tipo_bulto: '22', pais_recep: '336' })
    expect(file.sets[4]!.factorProporcionalidad).toBe(0.55)
    expect(file.sets[4]!.compras?.map((c) => [c.tipo, c.folio, c.montoExento, c.montoAfecto])).toEqual([
      [33, 118, 4200, 38950], [30, 520, 0, 27400], [46, 14, 0, 9800], [61, 77, 0, 3100],
    ])
    expect([file.sets[5]!.guiaFacturada, file.sets[5]!.guiaAnulada]).toEqual([2, 3])
  })
})

describe('BASICO (414175)', () => {
  const set = only('001-basico.txt')

  test('item names exactly as written, in order, with quantities and prices', () => {
    expect(caso(set, '414175-1').documento).toEqual({
      tipo_dte: 33,
      detalle: [{ nombre: 'Cajón AFECTO', cantidad: 123, precio: 923 }, { nombre: 'Relleno AFECTO', cantidad: 53, precio: 1473 }],
    })
    expect(caso(set, '414175-3').documento.detalle.map((l) => l.nombre)).toEqual(['Pintura B&W AFECTO', 'ITEM 2 AFECTO', 'ITEM 3 SERVICIO EXENTO'])
  })

  test('DESCUENTO ITEM per line; EXENTO in the name is an exempt line; the global discount of affected items', () => {
    expect(caso(set, '414175-2').documento.detalle.map((l) => l.descuento_pct)).toEqual([4, 5])
    expect(caso(set, '414175-3').documento.detalle.map((l) => l.ind_exe)).toEqual([undefined, undefined, 1])
    expect(caso(set, '414175-4').documento.descuentos_globales).toEqual([{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 6, glosa_dr: 'DESCUENTO GLOBAL ITEMES AFECTOS' }])
  })

  test('CORRIGE → 2 with the first item named and no amounts', () => {
    const c = caso(set, '414175-5')
    expect(c.tipoDte).toBe(61)
    expect(c.referenciaCaso).toEqual({ caso: '414175-1', codigoRef: 2, razon: 'CORRIGE GIRO DEL RECEPTOR' })
    expect(c.documento.detalle).toEqual([{ nombre: 'Cajón AFECTO' }])
  })

  test('DEVOLUCION → 3: quantities from the note, price and discount from the invoice line of the same name', () => {
    const c = caso(set, '414175-6')
    expect(c.referenciaCaso?.codigoRef).toBe(3)
    expect(c.documento.detalle).toEqual([
      { nombre: 'Pañuelo AFECTO', cantidad: 86, precio: 1926, descuento_pct: 4 },
      { nombre: 'ITEM 2 AFECTO', cantidad: 109, precio: 990, descuento_pct: 5 },
    ])
  })

  test('ANULA → 1 copying every line of the cited case', () => {
    const c = caso(set, '414175-7')
    expect(c.referenciaCaso).toEqual({ caso: '414175-3', codigoRef: 1, razon: 'ANULA FACTURA' })
    expect(c.documento.detalle).toEqual(caso(set, '414175-3').documento.detalle)
    expect(caso(set, '414175-8')).toMatchObject({ tipoDte: 56, referenciaCaso: { caso: '414175-5', codigoRef: 1 } })
  })
})

describe('FACTURA EXENTA (414178)', () => {
  const set = only('004-factura_exenta.txt')

  test('unit of measure and VALOR UNITARIO', () => {
    expect(caso(set, '414178-1').documento.detalle).toEqual([{ nombre: 'HORAS PROGRAMADOR', cantidad: 12, unidad: 'Hora', precio: 6991 }])
    expect(caso(set, '414178-6').documento.detalle.map((l) => l.nombre)).toEqual(['CAPACITACION USO CIGUEÑALES', "CAPACITACION USO PLC's CNC"])
  })

  test('MODIFICA MONTO with only a value keeps the cited line quantity', () => {
    expect(caso(set, '414178-2').documento.detalle).toEqual([{ nombre: 'HORAS PROGRAMADOR', cantidad: 12, unidad: 'Hora', precio: 874 }])
    expect(caso(set, '414178-8')).toMatchObject({ tipoDte: 56, referenciaCaso: { caso: '414178-6', codigoRef: 3, razon: 'MODIFICA MONTO' } })
    expect(caso(set, '414178-8').documento.detalle).toEqual([{ nombre: "CAPACITACION USO PLC's CNC", cantidad: 1, precio: 47916 }])
  })
})

describe('GUIA DE DESPACHO (428551) and its libro (428552)', () => {
  const set = only('005-guia_despacho.txt')
  test('MOTIVO → ind_traslado, TRASLADO POR → tipo_despacho', () => {
    expect(set.casos.map((c) => [c.documento.ind_traslado, c.documento.tipo_despacho])).toEqual([[5, undefined], [1, 2], [1, 1]])
    expect(caso(set, '428551-1').documento.detalle).toEqual([{ nombre: 'ITEM 1', cantidad: 66 }, { nombre: 'ITEM 2', cantidad: 87 }, { nombre: 'ITEM 3', cantidad: 52 }])
    expect(caso(set, '428551-2').documento.detalle[1]).toEqual({ nombre: 'ITEM 2', cantidad: 383, precio: 1263 })
  })
  test('the libro says which guía was invoiced and which annulled', () => {
    const libro = only('006-libro_guias.txt')
    expect([libro.guiaFacturada, libro.guiaAnulada]).toEqual([2, 3])
    expect(libro.instrucciones[0]).toStartWith('CONSTRUYA EL LIBRO')
  })
})

describe('FACTURA DE COMPRA (481566)', () => {
  const set = only('008-factura_compra.txt')
  test('retención total (15) on the 46 and on its notes, prices of the note from the invoice', () => {
    expect(caso(set, '481566-1').documento.detalle[0]).toEqual({ nombre: 'Producto 1', cantidad: 1179, precio: 8887, cod_imp_adic: 15 })
    expect(caso(set, '481566-2').documento.detalle).toEqual([
      { nombre: 'Producto 1', cantidad: 393, precio: 8887, cod_imp_adic: 15 },
      { nombre: 'Producto 2', cantidad: 14, precio: 4964, cod_imp_adic: 15 },
    ])
    expect(caso(set, '481566-2').instrucciones).toEqual(['LOS PRECIOS UNITARIOS DE LOS ITEMS DEBEN SER LOS MISMOS DE LA FACTURA'])
    expect(caso(set, '481566-3').documento.detalle).toEqual(caso(set, '481566-2').documento.detalle)
  })
})

describe('libros de ventas and compras', () => {
  test('ventas is instructions only', () => {
    const set = only('002-ventas.txt')
    expect(set.instrucciones).toHaveLength(4)
    expect(set.casos).toEqual([])
  })
  test('compras: every grid line with its tipo, folio, observation, amounts, and the factor', () => {
    const set = only('003-compras.txt')
    expect(set.compras?.map((c) => [c.tipo, c.folio, c.montoExento, c.montoAfecto])).toEqual([
      [30, 234, 0, 53253], [33, 32, 10633, 11473], [30, 781, 0, 30171], [60, 451, 0, 2928],
      [33, 67, 0, 12135], [46, 9, 0, 10632], [60, 211, 0, 9053],
    ])
    expect(set.compras?.[2]?.observacion).toBe('FACTURA CON IVA USO COMUN')
    expect(set.compras?.[6]?.observacion).toBe('NOTA DE CREDITO POR DESCUENTO FACTURA ELECTRONICA 32')
    expect(set.factorProporcionalidad).toBe(0.6)
  })
})

describe('exports', () => {
  test('EXPORTACION 1 (493307): the customs block as Aduana codes', () => {
    const set = only('009-set_exportacion_1.txt')
    const c = caso(set, '493307-1')
    expect(c.documento.detalle).toEqual([{ nombre: 'CHATARRA DE ALUMINIO', cantidad: 377, unidad: 'KN', precio: 128 }])
    expect(c.referenciasAduana).toEqual([{ tipoDocRef: '810', glosa: 'MIC (MANIFIESTO INTERNACIONAL)' }])
    expect(c.documento.export_data).toEqual({
      tpo_moneda: 'EURO', forma_pago_exp: 2, modalidad_venta: 2, clausula_venta: 'CIF', total_clausula: 1662.39,
      via_transporte: 7, puerto_embarque: '918', puerto_desembarque: '811', unidad_tara: 10, unidad_peso_bruto: 6,
      unidad_peso_neto: 6, tipo_bulto: '80', total_bultos: 38, mnt_flete: 460.59, mnt_seguro: 127.61, pais_recep: '406', pais_dest: '406',
    })
    const nc = caso(set, '493307-2')
    expect(nc).toMatchObject({ tipoDte: 112, referenciaCaso: { caso: '493307-1', codigoRef: 3 } })
    expect(nc.documento.detalle).toEqual([{ nombre: 'CHATARRA DE ALUMINIO', cantidad: 126, unidad: 'KN', precio: 128 }])
    expect(nc.documento.export_data?.tpo_moneda).toBe('EURO')
    expect(caso(set, '493307-3')).toMatchObject({ tipoDte: 111, referenciaCaso: { caso: '493307-2', codigoRef: 1 } })
  })

  test('EXPORTACION 2 (493308): line surcharge and discount, global surcharge, services', () => {
    const set = only('010-set_exportacion_2.txt')
    const c1 = caso(set, '493308-1')
    expect(c1.documento.detalle).toEqual([{ nombre: 'ASESORIAS Y PROYECTOS PROFESIONALES', cantidad: 1, precio: 78, recargo_pct: 10 }])
    expect(c1.documento).toMatchObject({ ind_servicio: 3, export_data: { tpo_moneda: 'LIBRA EST', forma_pago_exp: 21, clausula_venta: 'CFR', via_transporte: 1, puerto_embarque: '906', puerto_desembarque: '563', pais_recep: '517' } })
    expect(c1.referenciasAduana).toEqual([{ tipoDocRef: '812', glosa: 'RESOLUCION SNA' }])
    const c2 = caso(set, '493308-2')
    expect(c2.documento.detalle.map((l) => [l.nombre, l.cantidad, l.precio, l.descuento_pct])).toEqual([
      ['CAJAS CIRUELAS TIERNIZADAS SIN CAROZO CALIBRE 60/70', 884, 178, 5],
      ['CAJAS DE PASAS DE UVA FLAME MORENA SIN SEMILLA MEDIANAS', 228, 119, undefined],
    ])
    expect(c2.documento.descuentos_globales).toEqual([{ tpo_mov: 'R', tpo_valor: '%', valor_dr: 11, glosa_dr: 'COMISIONES EN EL EXTRANJERO' }])
    expect(c2.documento.export_data).toMatchObject({ modalidad_venta: 4, unidad_tara: 17, unidad_peso_bruto: 9, tipo_bulto: '13', total_bultos: 88, mnt_flete: 3686.34, mnt_seguro: 2889.47 })
    expect(c2.referenciasAduana?.map((r) => r.tipoDocRef)).toEqual(['807', '809'])
    expect(caso(set, '493308-3').documento).toMatchObject({ ind_servicio: 4, export_data: { tpo_moneda: 'DOLAR USA', nacionalidad: '517' } })
  })
})

describe('hostile input', () => {
  const basico = new TextDecoder('latin1').decode(bytesOf('001-basico.txt'))

  test('an empty file', () => {
    expect(errorsOf('')).toEqual([{ line: 1, text: '', message: 'El archivo está vacío.' }])
    expect(errorsOf('\r\n  \r\n')[0]?.message).toBe('El archivo está vacío.')
  })

  test('a binary file is refused before parsing, naming its line', () => {
    const decoded = decodeSetText(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0xff, 0x10]))
    expect(decoded.ok).toBe(false)
    if (!decoded.ok) expect(decoded.error).toMatchObject({ line: 1, message: expect.stringContaining('no es un texto') })
  })

  test('the wrong encoding: the file re-saved as UTF-8 is refused at the first mangled line', () => {
    const utf8 = new TextEncoder().encode(basico)
    const decoded = decodeSetText(utf8)
    expect(decoded.ok).toBe(false)
    if (!decoded.ok) expect(decoded.error).toMatchObject({ line: 7, text: 'CajÃ³n AFECTO\t\t    123\t\t    923', message: expect.stringContaining('UTF-8') })
    expect(decodeSetText(new Uint8Array([0xef, 0xbb, 0xbf, ...latin1('CASO 1-1')])).ok).toBe(false)
    expect(decodeSetText(bytesOf('001-basico.txt')).ok).toBe(true)
  })

  test('a broken case: an unreadable line is reported with its number and text, and nothing is returned', () => {
    const broken = basico.replace('Relleno AFECTO\t\t     53\t\t   1473', 'Relleno AFECTO\t\t     cincuenta\t\t   1473')
    expect(errorsOf(broken)).toEqual([{ line: 8, text: 'Relleno AFECTO\t\t     cincuenta\t\t   1473', message: expect.stringContaining('no válido') }])
    const stray = basico.replace('RAZON REFERENCIA\tANULA FACTURA', 'RAZON REFERENCIA\tANULA FACTURA\r\nENVIE ESTE CASO DOS VECES')
    expect(errorsOf(stray)).toEqual([{ line: 65, text: 'ENVIE ESTE CASO DOS VECES', message: 'Línea no reconocida en el caso.' }])
  })

  test('a case citing a missing case, or a later one', () => {
    const missing = basico.replace('CORRESPONDIENTE A CASO  414175-3', 'CORRESPONDIENTE A CASO  414175-13')
    expect(errorsOf(missing)).toEqual([
      { line: 63, text: 'REFERENCIA\t\tFACTURA ELECTRONICA CORRESPONDIENTE A CASO  414175-13', message: 'El caso 414175-13 que se cita no está antes en el archivo.' },
    ])
    const later = basico.replace('CORRESPONDIENTE A CASO  414175-3', 'CORRESPONDIENTE A CASO  414175-8')
    expect(errorsOf(later)[0]?.line).toBe(63)
  })

  test('an unknown reference reason, document type, set, or customs name', () => {
    expect(errorsOf(basico.replace('ANULA FACTURA', 'REEMPLAZA FACTURA'))[0]?.message).toContain('REEMPLAZA FACTURA')
    expect(errorsOf(basico.replace('DOCUMENTO\tFACTURA ELECTRONICA', 'DOCUMENTO\tBOLETA ELECTRONICA'))[0]).toMatchObject({ line: 4 })
    expect(errorsOf('SET BOLETAS - NUMERO DE ATENCION: 1\r\n')[0]).toMatchObject({ line: 1, message: expect.stringContaining('Set desconocido') })
    const exportacion = new TextDecoder('latin1').decode(bytesOf('009-set_exportacion_1.txt'))
    expect(errorsOf(exportacion.replace('SIDNEY', 'ATLANTIDA'))).toEqual([
      { line: 17, text: 'PUERTO DE DESEMBARQUE:                       ATLANTIDA', message: '«ATLANTIDA» no está en la tabla de Aduana para PUERTO DE DESEMBARQUE.' },
    ])
  })

  test('text that is not a set', () => {
    expect(errorsOf('hola\r\nmundo')[0]).toMatchObject({ line: 1, text: 'hola' })
  })

  test('a case under another set number, and a case before any SET line in the 2026 layout', () => {
    const text = 'SET BASICO - NUMERO DE ATENCION: 10\r\n\r\nCASO 11-1\r\n==============\r\nDOCUMENTO\tFACTURA ELECTRONICA\r\n\r\nITEM\tCANTIDAD\tPRECIO UNITARIO\r\nA\t1\t2\r\n'
    expect(errorsOf(text)[0]).toMatchObject({ line: 3, message: expect.stringContaining('no pertenece al set BASICO') })
    expect(errorsOf(`CASO 10-1\r\n${text}`)[0]).toMatchObject({ line: 1, message: expect.stringContaining('fuera de un set') })
  })

  test('any bytes, and any real set with lines dropped or swapped: an answer, never a throw', () => {
    const real = ['001-basico.txt', '003-compras.txt', '009-set_exportacion_1.txt', 'sintetico-2026.txt'].map((f) => new TextDecoder('latin1').decode(bytesOf(f)).split('\r\n'))
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        const decoded = decodeSetText(bytes)
        if (decoded.ok) expect(typeof parseSetPruebas(decoded.text).ok).toBe('boolean')
      }),
      { seed: 28, numRuns: 300 },
    )
    fc.assert(
      fc.property(fc.nat(3), fc.array(fc.nat(400), { maxLength: 6 }), (which, cuts) => {
        const lines = [...real[which]!]
        for (const c of cuts) lines.splice(c % lines.length, 1)
        const parsed = parseSetPruebas(lines.join('\r\n'))
        if (!parsed.ok) for (const e of parsed.errors) expect(e.line).toBeGreaterThan(0)
      }),
      { seed: 28, numRuns: 300 },
    )
  })
})
