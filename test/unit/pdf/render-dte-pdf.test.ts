// renderDtePdf on hand-written DTEs (the renderer reads, it does not verify): page geometry, flow onto further pages,
// wrapping, Spanish text, as poppler reads them. The signed documents of every type are covered over HTTP.
import { describe, expect, test } from 'bun:test'
import { formatFechaLarga, formatNumber, formatRut } from '../../../src/pdf/format'
import { renderDtePdf, type RenderInput } from '../../../src/pdf/render-dte-pdf'
import { decodePdf417, pdfPageSizes, pdfText, pdfWords, rasterize, tedBytesOf } from './pdf-tools'

const LONG = 'Servicio de mantención preventiva y correctiva de equipos de climatización, incluye revisión de ductos, ' +
  'cambio de filtros, limpieza de serpentines y medición de presiones según pauta del fabricante (ñandú, pingüino, acción).'

function detalle(n: number, nombre: (i: number) => string): string {
  return Array.from({ length: n }, (_, i) =>
    `<Detalle><NroLinDet>${i + 1}</NroLinDet><NmbItem>${nombre(i + 1)}</NmbItem><QtyItem>2</QtyItem><UnmdItem>UN</UnmdItem><PrcItem>1500</PrcItem><MontoItem>3000</MontoItem></Detalle>`,
  ).join('')
}

function dte(opts: { lines?: number; nombre?: (i: number) => string; dscItem?: string } = {}): Uint8Array {
  const n = opts.lines ?? 2
  const neto = 3000 * n
  const iva = Math.round(neto * 0.19)
  const lines = detalle(n, opts.nombre ?? ((i) => `Artículo de prueba Nº ${i}`)).replace(
    '<QtyItem>',
    opts.dscItem ? `<DscItem>${opts.dscItem}</DscItem><QtyItem>` : '<QtyItem>',
  )
  const xml =
    '<?xml version="1.0" encoding="ISO-8859-1"?><DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="F77T33">' +
    '<Encabezado><IdDoc><TipoDTE>33</TipoDTE><Folio>77</Folio><FchEmis>2025-06-30</FchEmis></IdDoc>' +
    '<Emisor><RUTEmisor>76086428-5</RUTEmisor><RznSoc>Comercializadora Año Nuevo &amp; Compañía Limitada</RznSoc><GiroEmis>Venta al por mayor de artículos de ferretería, pinturas y materiales de construcción</GiroEmis><Acteco>466301</Acteco><Acteco>475201</Acteco>' +
    '<DirOrigen>Av. Libertador Bernardo O\'Higgins 1234, oficina 56</DirOrigen><CmnaOrigen>Ñuñoa</CmnaOrigen><CiudadOrigen>Santiago</CiudadOrigen></Emisor>' +
    '<Receptor><RUTRecep>96874030-K</RUTRecep><RznSocRecep>Distribuidora Peñalolén S.A.</RznSocRecep><GiroRecep>Distribución</GiroRecep><DirRecep>Los Aromos 550</DirRecep><CmnaRecep>Peñalolén</CmnaRecep></Receptor>' +
    `<Totales><MntNeto>${neto}</MntNeto><TasaIVA>19</TasaIVA><IVA>${iva}</IVA><MntTotal>${neto + iva}</MntTotal></Totales></Encabezado>` +
    lines +
    '<TED version="1.0"><DD><RE>76086428-5</RE><TD>33</TD><F>77</F><FE>2025-06-30</FE><RR>96874030-K</RR><RSR>Distribuidora Peñalolén S.A.</RSR>' +
    `<MNT>${neto + iva}</MNT><IT1>Artículo</IT1><TSTED>2025-06-30T10:00:00</TSTED></DD><FRMT algoritmo="SHA1withRSA">AAAA</FRMT></TED>` +
    '<TmstFirma>2025-06-30T10:00:00</TmstFirma></Documento></DTE>'
  return Uint8Array.from(Buffer.from(xml, 'latin1'))
}

const base = (xml: Uint8Array, over: Partial<RenderInput> = {}): RenderInput => ({
  xml,
  formato: 'carta',
  cedible: false,
  resolucion: { numero: 80, fecha: '2014-08-22' },
  isRechazado: false,
  ...over,
})

describe('format', () => {
  test.each([
    ['1234567', '1.234.567'],
    ['-98765', '-98.765'],
    ['487.5', '487,5'],
    ['0.0001', '0,0001'],
    ['183709.14', '183.709,14'],
  ])('formatNumber(%s) = %s', (input, out) => expect(formatNumber(input)).toBe(out))
  test('RUT with dots, date in words', () => {
    expect(formatRut('96874030-K')).toBe('96.874.030-K')
    expect(formatFechaLarga('2025-06-30')).toBe('30 de junio de 2025')
  })
})

describe('carta', () => {
  test('one letter page; Spanish text, RUTs with dots, totals and the timbre legends as poppler reads them', async () => {
    const pdf = await renderDtePdf(base(dte()))
    expect(pdfPageSizes(pdf)).toEqual([{ width: 612, height: 792 }])
    const text = pdfText(pdf)
    for (const s of ['Comercializadora Año Nuevo & Compañía Limitada', 'R.U.T.: 76.086.428-5', 'FACTURA ELECTRÓNICA', 'Nº 77', 'S.I.I. - ÑUÑOA',
      'Distribuidora Peñalolén S.A.', '96.874.030-K', '30 de junio de 2025', 'Actividad económica: 466301, 475201', '$ 7.140',
      'Timbre Electrónico SII', 'Res. 80 de 2014', 'Verifique documento: www.sii.cl'])
      expect(text).toContain(s)
    expect(text).not.toContain('RECHAZADO')
    expect(text).not.toContain('CEDIBLE')
  })

  test('60 lines flow onto a second page: column titles repeated, totals and timbre only on the last page', async () => {
    const pdf = await renderDtePdf(base(dte({ lines: 60 })))
    expect(pdfPageSizes(pdf)).toHaveLength(2)
    const [first, last] = [pdfText(pdf, 1), pdfText(pdf, 2)]
    expect(first).toContain('Artículo de prueba Nº 1 ')
    expect(last).toContain('Artículo de prueba Nº 60')
    for (const page of [first, last]) {
      expect(page).toContain('Descripción')
      expect(page).toContain('Nº 77')
    }
    expect(first).not.toContain('TOTAL')
    expect(first).not.toContain('Timbre Electrónico SII')
    expect(first).toContain('Página 1 de 2')
    expect(last).toMatch(/TOTAL\s+\$ 214\.200/)
    expect(last).toContain('Timbre Electrónico SII')
    // Every line printed once, none lost at the break.
    const all = first + last
    for (let i = 1; i <= 60; i++) expect(all.match(new RegExp(`Artículo de prueba Nº ${i}\\b`, 'g'))).toHaveLength(1)
  })

  test('long names and descriptions wrap inside the page: no word of any page crosses the margins', async () => {
    const pdf = await renderDtePdf(base(dte({ lines: 3, nombre: () => LONG.slice(0, 80), dscItem: LONG + ' ' + LONG }), { cedible: true }))
    for (const page of [1, 2]) {
      const words = pdfWords(pdf, page)
      expect(words.length).toBeGreaterThan(50)
      for (const w of words) {
        expect(w.xMin).toBeGreaterThanOrEqual(30)
        expect(w.xMax).toBeLessThanOrEqual(612 - 30)
      }
    }
    expect(pdfText(pdf)).toContain('pingüino')
  })

  test('the barcode on the rasterized page (pdftoppm 300 dpi) decodes to exactly the TED bytes', async () => {
    const xml = dte()
    const pdf = await renderDtePdf(base(xml))
    expect(decodePdf417(rasterize(pdf, 1))).toEqual(tedBytesOf(xml))
  }, 20_000)

  test('rechazado: "RECHAZADO POR EL SII" on every page', async () => {
    const pdf = await renderDtePdf(base(dte({ lines: 60 }), { isRechazado: true }))
    expect(pdfText(pdf, 1)).toContain('RECHAZADO POR EL SII')
    expect(pdfText(pdf, 2)).toContain('RECHAZADO POR EL SII')
  })

  test('the same DTE prints to the same bytes', async () => {
    const xml = dte()
    expect(await renderDtePdf(base(xml))).toEqual(await renderDtePdf(base(xml)))
  })
})

describe('termico', () => {
  test('80 mm wide (226.77 pt), as tall as its content: more lines, a taller page; words inside the width', async () => {
    const short = pdfPageSizes(await renderDtePdf(base(dte({ lines: 2 }), { formato: 'termico' })))
    const long = pdfPageSizes(await renderDtePdf(base(dte({ lines: 30 }), { formato: 'termico' })))
    expect(short).toHaveLength(1)
    expect(long).toHaveLength(1)
    expect(short[0]!.width).toBeCloseTo(226.77, 1)
    expect(long[0]!.height).toBeGreaterThan(short[0]!.height + 29 * 10)
    const pdf = await renderDtePdf(base(dte({ lines: 2, dscItem: LONG }), { formato: 'termico' }))
    const words = pdfWords(pdf)
    const bottom = Math.max(...words.map((w) => w.yMax))
    expect(bottom).toBeLessThanOrEqual(pdfPageSizes(pdf)[0]!.height)
    // Fitted: the last text (the receipt's legend or the timbre's) sits within 2 cm of the page's end.
    expect(pdfPageSizes(pdf)[0]!.height - bottom).toBeLessThan(57)
    for (const w of words) {
      expect(w.xMin).toBeGreaterThanOrEqual(5)
      expect(w.xMax).toBeLessThanOrEqual(226.77 - 5)
    }
  })

  test('the barcode on the rasterized roll (pdftoppm 300 dpi) decodes to exactly the TED bytes', async () => {
    const xml = dte()
    const pdf = await renderDtePdf(base(xml, { formato: 'termico' }))
    expect(decodePdf417(rasterize(pdf, 1))).toEqual(tedBytesOf(xml))
  }, 20_000)
})
