// The issue form's fields → the body POST /dte receives (console/screens/emitir-body.ts): only the blocks the chosen
// type uses are sent, untouched rows send nothing, and numbers are read as people in Chile type them, with pesos whole
// and a foreign currency's prices decimal.
import { describe, expect, test } from 'bun:test'
import { bodyFrom } from '../../../src/console/screens/emitir-body'
import { MENSAJE_PESOS_ENTEROS } from '../../../src/domain/numero-cl'

function form(fields: Record<string, string>): FormData {
  const f = new FormData()
  for (const [k, v] of Object.entries(fields)) f.set(k, v)
  return f
}

const LINEA = { 'detalle.0.nombre': 'Malla', 'detalle.0.cantidad': '1,5', 'detalle.0.precio': '12.500' }

describe('the body of the form', () => {
  test('12.500 and 1,5 as numbers; the blocks of other types are not sent', () => {
    const { body, numberErrors } = bodyFrom(
      form({
        tipo_dte: '34',
        ...LINEA,
        'detalle.0.cod_imp_adic': '15',
        'comisiones.0.glosa': 'Comisión',
        'export_data.tpo_moneda': 'DOLAR USA',
        montos_brutos: '1',
        ind_traslado: '1',
      }),
    )
    expect(numberErrors).toEqual([])
    expect(body).toEqual({ tipo_dte: 34, receptor: {}, detalle: [{ nombre: 'Malla', cantidad: 1.5, precio: 12500 }] })
  })

  test('a note over a boleta sends montos_brutos; a 43 its commissions, tipo_doc_liq and signed amounts', () => {
    expect(bodyFrom(form({ tipo_dte: '61', ...LINEA, montos_brutos: '1' })).body.montos_brutos).toBe(true)
    const { body } = bodyFrom(
      form({
        tipo_dte: '43',
        ...LINEA,
        'detalle.0.tipo_doc_liq': '33',
        'detalle.1.nombre': 'Anticipo',
        'detalle.1.monto_item': '-10.000',
        'comisiones.0.tipo_movim': 'C',
        'comisiones.0.glosa': 'Comisión 8 %',
        'comisiones.0.val_com_neto': '8.000',
        'comisiones.0.val_com_exe': '0',
        'comisiones.1.tipo_movim': 'C',
      }),
    )
    expect(body.detalle).toEqual([
      { nombre: 'Malla', tipo_doc_liq: '33', cantidad: 1.5, precio: 12500 },
      { nombre: 'Anticipo', monto_item: -10000 },
    ])
    // The second commission holds only its select's starting value: untouched, not sent.
    expect(body.comisiones).toEqual([{ tipo_movim: 'C', glosa: 'Comisión 8 %', val_com_neto: 8000, val_com_exe: 0 }])
  })

  test('12,5 is a price in a foreign currency, and refused in words as a price in pesos', () => {
    const dolares = bodyFrom(form({ tipo_dte: '110', 'detalle.0.nombre': 'Aceite', 'detalle.0.cantidad': '100', 'detalle.0.precio': '12,5', 'export_data.tpo_moneda': 'DOLAR USA', 'export_data.tpo_cambio': '950,37', 'export_data.puerto_embarque': '906' }))
    expect(dolares.numberErrors).toEqual([])
    expect(dolares.body.detalle).toEqual([{ nombre: 'Aceite', cantidad: 100, precio: 12.5 }])
    expect(dolares.body.export_data).toEqual({ tpo_moneda: 'DOLAR USA', tpo_cambio: 950.37, puerto_embarque: '906' })
    for (const fields of [{ tipo_dte: '33' }, { tipo_dte: '110', 'export_data.tpo_moneda': 'PESO CL' }] as Array<Record<string, string>>) {
      const pesos = bodyFrom(form({ ...fields, 'detalle.0.nombre': 'Aceite', 'detalle.0.cantidad': '1', 'detalle.0.precio': '12,5' }))
      expect(pesos.numberErrors).toEqual([{ field: 'detalle.0.precio', code: 'INVALID_FORMAT', message: MENSAJE_PESOS_ENTEROS }])
      // Sent as typed, so the API's validation refuses the same field and nothing is issued.
      expect((pesos.body.detalle as Array<Record<string, unknown>>)[0]!.precio).toBe('12,5')
    }
  })
})
