// Messages in words on every screen (issue 27): whatever the refusal, the failure a page shows (failureOf) names no
// API path, header, `context.x` key or snake_case field, and the summary labels fields as the forms do.
import { describe, expect, test } from 'bun:test'
import { renderToString } from 'preact-render-to-string'
import { ErrorSummary, failureOf } from '../../../src/console/forms'
import { CATALOG, TimbreError, type ErrorCode } from '../../../src/errors'

const MACHINE_WORDS = /\b[a-z]+_[a-z_]+\b|context\.|\b(?:POST|GET|PUT|DELETE|PATCH) \/|\/api\/v1|X-Api-Key|Idempotency-Key|\bdetails\b/

describe('failures as a person reads them', () => {
  test.each(Object.keys(CATALOG) as ErrorCode[])('%s: message and action in the console\'s words', (code) => {
    const f = failureOf(new TimbreError(code))
    expect(`${f.message} ${f.action ?? ''}`).not.toMatch(MACHINE_WORDS)
  })

  test('the summary labels each field as the form does, with no dot path', () => {
    const err = new TimbreError('VALIDATION_ERROR', {
      details: [
        { field: 'detalle.0.nombre', code: 'REQUIRED', message: 'Campo requerido.' },
        { field: 'context.motivo', code: 'REQUIRED', message: 'Indique codigo_ref (docs/sii-protocol.md §2.2).' },
        { field: 'imap.host', code: 'REQUIRED', message: 'Campo requerido.' },
      ],
    })
    const html = renderToString(<ErrorSummary failure={failureOf(err)} fields={['detalle.0.nombre']} />)
    expect(html).toContain('<a href="#f-detalle-0-nombre">Línea 1, Nombre: Campo requerido.</a>')
    expect(html).toContain('<li>Motivo: Indique «Código de referencia».</li>')
    expect(html).toContain('<li>Recepción (IMAP), Servidor: Campo requerido.</li>')
    expect(html.replace(/<[^>]+>/g, ' ')).not.toMatch(/\b[a-z_]+\.[a-z_0-9]+/)
  })
})
