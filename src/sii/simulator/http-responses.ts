// The simulator's HTTP answers. Each service of the SII has its own content type (DTEWS `text/xml; charset=utf-8`,
// DTEUpload `text/xml`, the boleta API `application/xml` and `application/json`: docs/decisions/simulator.md "Wire
// contract"), so every caller names its own.

export function textResponse(body: string, contentType: string, status = 200): Response {
  return new Response(body, { status, headers: { 'content-type': contentType } })
}

export function jsonResponse(body: object, status = 200): Response {
  return textResponse(JSON.stringify(body), 'application/json', status)
}
