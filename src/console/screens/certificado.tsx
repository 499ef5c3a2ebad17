// The company's signing certificate (DESIGN §8 and §14): how long it still serves, and the upload of a new PFX/P12.
// The same services as GET /empresa/certificado and POST /empresa/certificado/pfx (multipart `archivo` + `password`),
// with the same inputs. The password goes to the service and nowhere else: never back into a page, never to a log.
import { Elysia } from 'elysia'
import { TimbreError, validationError, type FieldError } from '../../errors'
import { STATUS } from '../../contracts/statuses'
import { getCertificadoStatus, uploadCertificado, type CertificadoStatus } from '../../services/certificados'
import type { Deps } from '../../services/deps'
import { getEmpresa } from '../../services/empresas'
import { empresaIdOf, formOf, requireWrite, sessionOf } from '../context'
import { ErrorSummary, Field, failureOf, formatDateTime, formatFecha, formatRut, NO_ERRORS, type Failure } from '../forms'
import { CsrfInput, redirect, renderPage } from '../page'
import { CONSOLE_PREFIX } from '../paths'

const BASE = `${CONSOLE_PREFIX}/certificado`
/** Under this many days left the certificate is flagged: renewing one at a CA takes days (certificado.expiring warns too). */
const VENCE_PRONTO_DIAS = 30

const NOTICES: Readonly<Record<string, string>> = {
  cargado: 'Certificado cargado: desde ahora firma los documentos de la empresa.',
}

/** The latest certificate's status, or null when none was ever loaded (CERTIFICATE_NOT_FOUND: an empty state here). */
function statusOf(deps: Deps, empresaId: string): CertificadoStatus | null {
  try {
    return getCertificadoStatus(deps, { empresaId })
  } catch (err) {
    if (err instanceof TimbreError && err.code === 'CERTIFICATE_NOT_FOUND') return null
    throw err
  }
}

function DiasBadge(props: { status: CertificadoStatus }) {
  const days = props.status.dias_para_vencimiento ?? 0
  if (days <= 0 || !props.status.is_active) return <span class="badge badge-bad">Vencido</span>
  const text = days === 1 ? '1 día' : `${days} días`
  return <span class={`badge ${days < VENCE_PRONTO_DIAS ? 'badge-warn' : 'badge-ok'}`}>{text}</span>
}

function StatusCard(props: { deps: Deps; request: Request; status: CertificadoStatus | null }) {
  const { status } = props
  const empresa = getEmpresa(props.deps, { empresaId: empresaIdOf(props.request) })
  if (status === null)
    return (
      <section class="card" aria-labelledby="estado-certificado">
        <h2 id="estado-certificado">Sin certificado</h2>
        <p>
          {empresa.razon_social} aún no tiene un certificado digital cargado. Sin él no se puede firmar ni enviar documentos al SII, ni aceptar o reclamar los
          recibidos.
        </p>
        <p class="muted">Use el certificado (.pfx o .p12) de una persona autorizada ante el SII para firmar por la empresa.</p>
      </section>
    )
  return (
    <section class="card" aria-labelledby="estado-certificado">
      <h2 id="estado-certificado">Certificado activo</h2>
      <dl class="facts">
        <dt>Titular</dt>
        <dd>{status.titular ?? '—'}</dd>
        <dt>RUT del titular</dt>
        <dd>{status.rut_firmante ? formatRut(status.rut_firmante) : '—'}</dd>
        <dt>Emitido por</dt>
        <dd>{status.emisor_certificado ?? '—'}</dd>
        <dt>Empresa</dt>
        <dd>
          {empresa.razon_social} ({formatRut(empresa.rut)})
        </dd>
        <dt>Vigente desde</dt>
        <dd>{formatFecha(status.fecha_inicio_vigencia)}</dd>
        <dt>Vence</dt>
        <dd>{formatFecha(status.fecha_vencimiento)}</dd>
        <dt>Días para vencer</dt>
        <dd>
          <DiasBadge status={status} />
        </dd>
        <dt>Cargado</dt>
        <dd>{formatDateTime(status.uploaded_at)}</dd>
      </dl>
      {!status.is_active && <p>El certificado venció: cargue uno vigente para seguir emitiendo.</p>}
    </section>
  )
}

function UploadForm(props: { request: Request; failure: Failure | null; replaces: boolean }) {
  const errors = props.failure?.errors ?? NO_ERRORS
  return (
    <form method="post" action={BASE} enctype="multipart/form-data" class="stack card" id="subir-certificado">
      <h2>{props.replaces ? 'Reemplazar el certificado' : 'Cargar el certificado'}</h2>
      {props.replaces && <p class="muted">El nuevo certificado reemplaza al activo.</p>}
      <CsrfInput session={sessionOf(props.request)} />
      <ErrorSummary failure={props.failure} fields={['pfx', 'password']} />
      <div class="grid">
        <Field name="pfx" label="Archivo del certificado (.pfx o .p12)" type="file" accept=".p12,.pfx,application/x-pkcs12" required errors={errors} />
        {/* Never given a value: a failed upload asks for the password again rather than echo it into the page. */}
        <Field name="password" label="Contraseña del certificado" type="password" autocomplete="off" errors={errors} />
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Cargar certificado
        </button>
      </div>
    </form>
  )
}

function CertificadoPage(props: { deps: Deps; request: Request; failure: Failure | null }) {
  const status = statusOf(props.deps, empresaIdOf(props.request))
  return (
    <>
      <StatusCard deps={props.deps} request={props.request} status={status} />
      {sessionOf(props.request).canWrite ? (
        <UploadForm request={props.request} failure={props.failure} replaces={status !== null} />
      ) : (
        <p class="muted">Solo lectura: para cargar un certificado entre con una API key con escritura.</p>
      )}
    </>
  )
}

/** What POST /empresa/certificado/pfx's readUpload checks of a multipart upload, with the console's file field `pfx`. */
async function uploadOf(form: FormData): Promise<{ pfx: Uint8Array; password: string }> {
  const errors: FieldError[] = []
  // Not trimmed: a password is exactly what was typed; an empty one is allowed, as the API allows it.
  const password = form.get('password')
  if (typeof password !== 'string') errors.push({ field: 'password', code: 'REQUIRED', message: 'Contraseña del PFX requerida.' })
  const file = form.get('pfx')
  let pfx: Uint8Array | null = null
  if (file === null || typeof file === 'string') errors.push({ field: 'pfx', code: 'REQUIRED', message: 'Adjunte el archivo PFX/P12.' })
  else if (file.size === 0) errors.push({ field: 'pfx', code: 'REQUIRED', message: 'El archivo está vacío.' })
  else pfx = new Uint8Array(await file.arrayBuffer())
  if (errors.length > 0 || pfx === null) throw validationError(errors)
  return { pfx, password: password as string }
}

/**
 * INVALID_CERTIFICATE beside the field it is about. The service says which in its message only (crypto/pfx.ts): a
 * wrong password names the password; every other cause (not PKCS#12, no RSA key, expired, no RUT) is the file's.
 */
function uploadFailure(err: TimbreError): Failure {
  const base = failureOf(err)
  if (err.code !== 'INVALID_CERTIFICATE') return base
  return { ...base, errors: new Map([[/contraseña/i.test(err.message) ? 'password' : 'pfx', [err.message]]]) }
}

export const certificadoScreens = (deps: Deps) =>
  new Elysia({ normalize: false })
    .get('/certificado', ({ request }) =>
      renderPage(deps, request, {
        title: 'Certificado',
        section: 'certificado',
        notice: NOTICES[new URL(request.url).searchParams.get('aviso') ?? ''] ?? null,
        children: <CertificadoPage deps={deps} request={request} failure={null} />,
      }),
    )
    .post('/certificado', async ({ request }) => {
      requireWrite(request)
      try {
        await uploadCertificado(deps, { empresaId: empresaIdOf(request), ...(await uploadOf(formOf(request))) })
        return redirect(`${BASE}?aviso=cargado`)
      } catch (err) {
        if (!(err instanceof TimbreError) || (err.code !== 'VALIDATION_ERROR' && err.code !== 'INVALID_CERTIFICATE')) throw err
        return renderPage(deps, request, {
          title: 'Certificado',
          section: 'certificado',
          status: STATUS[err.code],
          children: <CertificadoPage deps={deps} request={request} failure={uploadFailure(err)} />,
        })
      }
    })
