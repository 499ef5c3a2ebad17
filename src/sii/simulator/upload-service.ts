// DTEUpload (docs/sii-protocol.md §6.4), the SOAP channel's envelope upload as src/sii/client/upload.ts sends it: a
// multipart POST answered by RECEPCIONDTE, HTTP 200 always. It refuses at once, by STATUS, only what it must read to
// accept the file (token, form, size, XML, envelope signature, sender, company); the XSD and every later check run
// before the answer too, but are reported through the envelope's states (docs/decisions/simulator.md). A certification
// libro (LibroCompraVenta, LibroGuia) is received by libro-reception.ts.
import { santiagoTimestamp } from '../../clock'
import { checkToken, tokenFromCookie } from './auth'
import { MAX_ENVELOPE_BYTES, pathIs, type Route, type SimulatorContext } from './channel'
import { checkEnvelope, checkSender, isRefusal, readEnvelope } from './checks'
import {
  earlierTrackId, readUploadForm, recordEnvelope, sha256Hex, uploadRuts,
} from './envelope-reception'
import { textResponse } from './http-responses'
import { receiveLibro } from './libro-reception'
import { recepcionDte } from './soap'

export const UPLOAD_ROUTES: readonly Route[] = [
  { method: 'POST', matches: pathIs('/cgi_dte/UPL/DTEUpload'), answer: receiveDteUpload },
]

async function receiveDteUpload(ctx: SimulatorContext, req: Request): Promise<Response> {
  const now = ctx.clock()
  const form = await readUploadForm(req)
  const token = checkToken(ctx.store, 'soap', tokenFromCookie(req.headers.get('cookie')), now)
  const ruts = uploadRuts(form)
  const answer = (status: number, trackId: string | null = null, errors: readonly string[] = []): Response =>
    textResponse(recepcionDte({
      rutSender: ruts.echoedSender,
      rutCompany: ruts.echoedCompany,
      file: form.kind === 'form' ? form.fileName : '',
      timestamp: santiagoTimestamp(now).replace('T', ' '),
      status,
      trackId,
      errors,
    }), 'text/xml')
  if (!token.isValid) return answer(5)
  if (form.kind === 'cut') return answer(3, null, [form.reason])
  if (form.bytes.length === 0 || form.bytes.length > MAX_ENVELOPE_BYTES) return answer(2, null, [`tamaño ${form.bytes.length} bytes`])
  const sha256 = sha256Hex(form.bytes)
  const earlier = earlierTrackId(ctx, 'soap', sha256)
  // STATUS 99 with the first TRACKID: a simulator choice (docs/sii-protocol.md §6.4 shows TRACKID only with 0; DESIGN §6 keeps the first).
  if (earlier !== null) return answer(99, earlier)
  // The certification libros come to this same door (docs/decisions/simulator.md "Libros").
  const libro = await receiveLibro(ctx, {
    bytes: form.bytes, sha256, fileName: form.fileName, rutSender: ruts.rutSender, rutCompany: ruts.rutCompany, tokenRut: token.rut, now,
  })
  if (libro !== null) return answer(libro.status, libro.trackId, libro.errors)
  const read = readEnvelope(form.bytes, 'EnvioDTE')
  if (isRefusal(read)) return answer(read.status, null, read.errors)
  const refusal = checkSender(read, { rutSender: ruts.rutSender, rutCompany: ruts.rutCompany, tokenRut: token.rut })
  if (refusal !== null) return answer(refusal.status, null, refusal.errors)
  const rejection = await checkEnvelope(read, form.bytes)
  // A concurrent twin may have landed during the XSD: then its track id, with STATUS 99.
  const recorded = recordEnvelope(ctx, 'soap', {
    sha256, rutEmisor: ruts.rutCompany ?? '', rutEnvia: ruts.rutSender ?? '', fileName: form.fileName, now, read, rejection,
  })
  return answer(recorded.isRepeat ? 99 : 0, recorded.trackId)
}
