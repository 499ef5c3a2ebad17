// The line parser and the decoder of `timbre contribuyentes import` (DESIGN §13): the SII's ce_empresas_dwnld CSV as
// it comes (ISO-8859-1, `;`, DD-MM-YYYY with a trailing space, a trailing `;`), and what a re-saved copy looks like.
import { describe, expect, test } from 'bun:test'
import { lineDecoder, parseContribuyenteLine } from '../../../src/services/contribuyentes'

describe('parseContribuyenteLine', () => {
  test('a line as the SII writes it: RUT canonical, date ISO, mail lower case, URL ignored', () => {
    expect(parseContribuyenteLine('79944690-1;WILMAN SERVICIOS EMPRESARIALES LIMITADA;148;14-11-2008 ;DTE_Wilman@Wilman.cl;web@web.com;')).toEqual({
      kind: 'row',
      contribuyente: {
        rut: '79944690-1',
        razon_social: 'WILMAN SERVICIOS EMPRESARIALES LIMITADA',
        numero_resolucion: 148,
        fecha_resolucion: '2008-11-14',
        email_intercambio: 'dte_wilman@wilman.cl',
      },
    })
  })

  test.each([
    ['no URL column and no trailing ;', '76086428-5;FERRETERÍA ÑUBLE LTDA;80;22-08-2014;recepcion@ferreteria.cl'],
    ['empty URL, CRLF ending', '76086428-5;FERRETERÍA ÑUBLE LTDA;80;22-08-2014 ;recepcion@ferreteria.cl;\r'],
    ['RUT with dots, an ISO date, empty trailing fields', '76.086.428-5;FERRETERÍA ÑUBLE LTDA;80;2014-08-22;recepcion@ferreteria.cl;;'],
    ['quoted fields', '"76086428-5";"FERRETERÍA ÑUBLE LTDA";"80";"22-08-2014";"recepcion@ferreteria.cl";""'],
  ])('%s', (_name, line) => {
    expect(parseContribuyenteLine(line)).toEqual({
      kind: 'row',
      contribuyente: { rut: '76086428-5', razon_social: 'FERRETERÍA ÑUBLE LTDA', numero_resolucion: 80, fecha_resolucion: '2014-08-22', email_intercambio: 'recepcion@ferreteria.cl' },
    })
  })

  test('a razón social holding a ";" keeps it: the resolution number and date mark where it ends', () => {
    const parsed = parseContribuyenteLine('76086428-5;COMERCIAL A;B Y C LIMITADA;0;01-02-2020 ;dte@abc.cl;;')
    expect(parsed).toMatchObject({ kind: 'row', contribuyente: { razon_social: 'COMERCIAL A;B Y C LIMITADA', numero_resolucion: 0, fecha_resolucion: '2020-02-01' } })
  })

  test('no mail registered → email_intercambio null, still imported (the RUT is an electronic issuer)', () => {
    expect(parseContribuyenteLine('11111111-1;SIN CASILLA LTDA;42;01-01-2020 ;;')).toMatchObject({ kind: 'row', contribuyente: { email_intercambio: null } })
  })

  test('the title line and blank lines are neither rows nor errors', () => {
    expect(parseContribuyenteLine('RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL')).toEqual({ kind: 'header' })
    expect(parseContribuyenteLine('')).toEqual({ kind: 'blank' })
    expect(parseContribuyenteLine('  \r')).toEqual({ kind: 'blank' })
  })

  test.each([
    ['11111111-2;MALO;1;01-01-2020;a@b.cl;', 'RUT inválido'],
    ['basura sin separadores', 'faltan columnas'],
    ['76086428-5;EMPRESA;80', 'faltan columnas'],
    ['76086428-5;;80;22-08-2014;a@b.cl;', 'razón social vacía'],
    ['76086428-5;EMPRESA;8O;22-08-2014;a@b.cl;', 'número de resolución inválido'],
    ['76086428-5;EMPRESA;80;31-02-2014;a@b.cl;', 'fecha de resolución inválida'],
    ['76086428-5;EMPRESA;80;ayer;a@b.cl;', 'fecha de resolución inválida'],
    ['76086428-5;EMPRESA;80;22-08-2014;sin correo;', 'correo de intercambio inválido'],
    ['76086428-5;EMP;RE;SA;x;22-08-2014;a@b.cl;', 'no se encuentran el número y la fecha de resolución'],
  ])('%s → malformed: %s', (line, reason) => {
    const parsed = parseContribuyenteLine(line)
    expect(parsed.kind).toBe('malformed')
    expect(parsed.kind === 'malformed' && parsed.reason).toStartWith(reason)
  })
})

describe('lineDecoder', () => {
  const latin1 = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'))
  const utf8 = (s: string) => new TextEncoder().encode(s)

  test('ISO-8859-1 (the SII\'s encoding): told by the first non-ASCII line', () => {
    const d = lineDecoder()
    expect(d.decode(latin1('76086428-5;PLAIN;1;01-01-2020;a@b.cl;'))).toBe('76086428-5;PLAIN;1;01-01-2020;a@b.cl;')
    expect(d.decode(latin1('1-9;FERRETERÍA ÑUBLE;1;01-01-2020;;'))).toBe('1-9;FERRETERÍA ÑUBLE;1;01-01-2020;;')
    expect(d.encoding).toBe('ISO-8859-1')
  })

  test('UTF-8 (a re-saved copy) is detected and decoded; a stray Latin-1 line later is not lost', () => {
    const d = lineDecoder()
    expect(d.decode(utf8('1-9;PANADERÍA SEÑORA MARÍA;1;01-01-2020;;'))).toBe('1-9;PANADERÍA SEÑORA MARÍA;1;01-01-2020;;')
    expect(d.encoding).toBe('UTF-8')
    expect(d.decode(latin1('1-9;ÑANDÚ;1;01-01-2020;;'))).toBe('1-9;ÑANDÚ;1;01-01-2020;;')
  })

  test('an ASCII-only file reports ISO-8859-1, the SII\'s', () => {
    const d = lineDecoder()
    d.decode(utf8('plain'))
    expect(d.encoding).toBe('ISO-8859-1')
  })
})
