// src/http/openapi.ts on hand-written fragments of what @elysiajs/swagger 1.3 generates: JSON Schema 2020-12 keywords
// become their OpenAPI 3.0.3 forms, every response gets a description, media types are the ones the route speaks.
import { describe, expect, test } from 'bun:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { describeStatus, schema303, toOpenApi303 } from '../../../src/http/openapi'

const ERROR_REF = { $ref: '#/components/schemas/ErrorResponse' }
const PLUGIN_MEDIA = (schema: object) => ({ 'application/json': { schema }, 'multipart/form-data': { schema }, 'text/plain': { schema } })

/** A document as the plugin writes it: one GET with a 3.1 response schema, a parameter with `examples`, an error envelope. */
function generated(): Record<string, unknown> {
  const envelope = { $id: '#/components/schemas/ErrorResponse', title: 'ErrorResponse', type: 'object', properties: { code: { type: 'string' } }, required: ['code'] }
  return {
    openapi: '3.0.3',
    info: { title: 'T', version: '0.2.0' },
    components: { schemas: { ErrorResponse: envelope } },
    paths: {
      '/cosas/{id}': {
        get: {
          operationId: 'obtenerCosa',
          parameters: [
            { schema: { type: 'string' }, in: 'path', name: 'id', required: true },
            { schema: { type: 'string', maxLength: 20 }, examples: ['76.086.428-5'], in: 'query', name: 'rut', required: false },
          ],
          responses: {
            200: {
              content: PLUGIN_MEDIA({
                type: 'object',
                properties: {
                  tipo: { anyOf: [{ const: 33, type: 'number' }, { const: 61, type: 'number' }], description: 'Tipo.' },
                  monto: { type: 'integer', exclusiveMinimum: 0, examples: [1190] },
                  nota: { anyOf: [{ type: 'string', maxLength: 10 }, { type: 'null' }] },
                  extra: { type: 'object', patternProperties: { '^(.*)$': {} } },
                },
                required: ['tipo'],
              }),
            },
            // The plugin spreads a response schema's own keys ($id, title) onto the Response Object.
            404: { $id: '#/components/schemas/ErrorResponse', title: 'ErrorResponse', content: PLUGIN_MEDIA({ type: 'object', properties: { code: { type: 'string' } } }) },
          },
        },
        delete: { operationId: 'eliminarCosa', responses: { 204: { description: 'Eliminada' }, 500: { content: { 'application/json': { schema: envelope } } } } },
      },
      '/archivos': {
        post: {
          operationId: 'subirArchivo',
          requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object' } }, 'application/json': { schema: { type: 'object' } } } },
          responses: { 201: { content: PLUGIN_MEDIA({ type: 'object', properties: { id: { type: 'string', format: 'uuid' } } }) } },
        },
      },
      '/xml': { get: { operationId: 'bajarXml', responses: { 200: { description: 'XML', content: { 'application/xml': { schema: { type: 'string' } } } } } } },
    },
  }
}

async function validationErrors(document: unknown): Promise<number> {
  try {
    await SwaggerParser.validate(structuredClone(document) as Parameters<typeof SwaggerParser.validate>[0])
    return 0
  } catch (e) {
    return (e as { details?: unknown[] }).details?.length ?? 1
  }
}

describe('toOpenApi303', () => {
  test('the generated fragment is invalid; its transform is valid OpenAPI 3.0.3 (swagger-parser)', async () => {
    expect(await validationErrors(generated())).toBeGreaterThan(0)
    expect(await validationErrors(toOpenApi303(generated()))).toBe(0)
  })

  test('pure: the input document is not changed', () => {
    const input = generated()
    const before = JSON.stringify(input)
    toOpenApi303(input)
    expect(JSON.stringify(input)).toBe(before)
  })

  test('response schema keywords in their 3.0.3 forms', () => {
    const doc = toOpenApi303(generated()) as any
    const schema = doc.paths['/cosas/{id}'].get.responses['200'].content['application/json'].schema
    expect(schema.properties).toEqual({
      tipo: { description: 'Tipo.', type: 'number', enum: [33, 61] },
      monto: { type: 'integer', minimum: 0, exclusiveMinimum: true, example: 1190 },
      nota: { type: 'string', maxLength: 10, nullable: true },
      extra: { type: 'object', additionalProperties: {} },
    })
  })

  test('every response has a description: its own, else from the status (errors name their codes)', () => {
    const doc = toOpenApi303(generated()) as any
    expect(doc.paths['/cosas/{id}'].get.responses['200'].description).toBe('OK')
    expect(doc.paths['/cosas/{id}'].get.responses['404'].description).toBe(describeStatus('404'))
    expect(describeStatus('404')).toContain('NOT_FOUND')
    expect(describeStatus('201')).toBe('Creado')
    expect(doc.paths['/cosas/{id}'].delete.responses['204']).toEqual({ description: 'Eliminada' })
    expect(doc.paths['/archivos'].post.responses['201'].description).toBe('Creado')
  })

  test("media types: the plugin's JSON + multipart + text default is JSON; declared types (XML, multipart upload) stay", () => {
    const doc = toOpenApi303(generated()) as any
    expect(Object.keys(doc.paths['/cosas/{id}'].get.responses['200'].content)).toEqual(['application/json'])
    expect(Object.keys(doc.paths['/archivos'].post.responses['201'].content)).toEqual(['application/json'])
    expect(Object.keys(doc.paths['/archivos'].post.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data'])
    expect(Object.keys(doc.paths['/xml'].get.responses['200'].content)).toEqual(['application/xml'])
  })

  test('the error envelope is one component, referenced by every error response; $id and title leave the Response Object', () => {
    const doc = toOpenApi303(generated()) as any
    expect(doc.components.schemas.ErrorResponse).toEqual({ title: 'ErrorResponse', type: 'object', properties: { code: { type: 'string' } }, required: ['code'] })
    expect(doc.paths['/cosas/{id}'].get.responses['404']).toEqual({ description: describeStatus('404'), content: { 'application/json': { schema: ERROR_REF } } })
    expect(doc.paths['/cosas/{id}'].delete.responses['500'].content['application/json'].schema).toEqual(ERROR_REF)
  })

  test("a parameter's examples array becomes example", () => {
    const doc = toOpenApi303(generated()) as any
    expect(doc.paths['/cosas/{id}'].get.parameters[1]).toEqual({ schema: { type: 'string', maxLength: 20 }, example: '76.086.428-5', in: 'query', name: 'rut', required: false })
  })
})

describe('schema303', () => {
  test.each([
    ['const → enum', { const: 'ok', type: 'string' }, { type: 'string', enum: ['ok'] }],
    ['const without type gets one', { const: 7 }, { type: 'integer', enum: [7] }],
    ['numeric exclusiveMaximum', { type: 'number', exclusiveMaximum: 100 }, { type: 'number', maximum: 100, exclusiveMaximum: true }],
    ['boolean exclusiveMinimum stays', { type: 'number', minimum: 0, exclusiveMinimum: true }, { type: 'number', minimum: 0, exclusiveMinimum: true }],
    ['type list with null', { type: ['string', 'null'] }, { type: 'string', nullable: true }],
    ['type list of two', { type: ['string', 'integer'] }, { anyOf: [{ type: 'string' }, { type: 'integer' }] }],
    ['$schema, $id, error are dropped; x- stays', { $schema: 'x', $id: 'Foo', error: 'msg', 'x-a': 1, type: 'string' }, { 'x-a': 1, type: 'string' }],
    ['empty required dropped', { type: 'object', properties: {}, required: [] }, { type: 'object', properties: {} }],
    ['nullable enum lists null', { anyOf: [{ const: 'a', type: 'string' }, { const: 'b', type: 'string' }, { type: 'null' }] }, { type: 'string', enum: ['a', 'b', null], nullable: true }],
    ['nullable $ref', { anyOf: [{ $ref: '#/components/schemas/X' }, { type: 'null' }] }, { allOf: [{ $ref: '#/components/schemas/X' }], nullable: true }],
    ['mixed union stays anyOf', { anyOf: [{ type: 'string' }, { type: 'integer' }] }, { anyOf: [{ type: 'string' }, { type: 'integer' }] }],
    ['tuple items', { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] }, { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } }],
    ['Record outranks additionalProperties: false', { type: 'object', additionalProperties: false, patternProperties: { '^x': { type: 'string' } } }, { type: 'object', additionalProperties: { type: 'string' } }],
  ])('%s', (_name, input, expected) => expect(schema303(input)).toEqual(expected))
})
