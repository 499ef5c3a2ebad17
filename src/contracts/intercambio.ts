// PUT/GET /empresa/intercambio: the company's exchange mailbox (DESIGN §13, an extension of the spec). Shape only; the
// rules a schema cannot state (e-mail and host formats, a first save's password, SMTP user and password as a pair)
// live in services/mailbox.ts, and parseBody runs both so a request learns every failing field at once (DESIGN §5).
import { Type } from '@sinclair/typebox'
import { checkMailboxInput, DEFAULT_IMAP_FOLDER, MAILBOX_MAX_LENGTH as MAX, type MailboxInput, type StoredPasswords } from '../services/mailbox'
import { parseBody } from './validation'

const Host = Type.String({ minLength: 1, maxLength: MAX.host, description: 'Nombre o dirección IP del servidor.', examples: ['mail.example.cl'] })
const Port = (description: string) => Type.Integer({ minimum: 1, maximum: 65535, description })
const Email = (description: string) => Type.String({ minLength: 1, maxLength: MAX.email, description, examples: ['dte@example.cl'] })
const Password = (description: string) => Type.String({ minLength: 1, maxLength: MAX.password, description, writeOnly: true })
/** An optional text that null clears; TypeBox ignores `nullable`, parseMailboxBody sets those nulls aside first. */
const NullableText = (maxLength: number, description: string, writeOnly = false) =>
  Type.Optional(Type.String({ minLength: 1, maxLength, nullable: true, description, ...(writeOnly ? { writeOnly } : {}) }))

const ImapBody = Type.Object(
  {
    host: Host,
    port: Port('Puerto IMAP: 993 con TLS, 143 sin él.'),
    tls: Type.Boolean({ description: 'TLS implícito (993); false = conexión simple, con STARTTLS si el servidor lo ofrece.' }),
    user: Type.String({ minLength: 1, maxLength: MAX.user, description: 'Usuario IMAP.' }),
    password: Type.Optional(Password('Contraseña IMAP: requerida la primera vez; si se omite se conserva la guardada. Nunca se devuelve.')),
    folder: Type.Optional(Type.String({ minLength: 1, maxLength: MAX.folder, description: `Carpeta que se lee (por defecto ${DEFAULT_IMAP_FOLDER}).`, default: DEFAULT_IMAP_FOLDER })),
  },
  { additionalProperties: false },
)

// Spelled out (the values of SMTP_SECURITIES): a union mapped from the array loses its literal types in Elysia's inference.
const SmtpSecurity = Type.Union(
  [Type.Literal('starttls'), Type.Literal('tls'), Type.Literal('none')],
  { description: 'starttls (587), tls = TLS implícito (465), none = sin cifrado (solo un relay en la red local).' },
)

const SmtpBody = Type.Object(
  {
    host: Host,
    port: Port('Puerto SMTP: 587 con starttls, 465 con tls.'),
    security: SmtpSecurity,
    user: NullableText(MAX.user, 'Usuario SMTP; null u omitido para un relay sin autenticación.'),
    password: NullableText(MAX.password, 'Contraseña SMTP; si se omite se conserva la guardada, null la borra. Nunca se devuelve.', true),
    from: Email('Remitente (From) de todo lo que envía la empresa.'),
  },
  { additionalProperties: false },
)

export const GuardarIntercambioBody = Type.Object(
  {
    inbound_email: Email('Casilla de intercambio de la empresa: la registrada en el SII, donde los proveedores envían sus DTE.'),
    imap: ImapBody,
    smtp: SmtpBody,
    test: Type.Optional(Type.Boolean({ description: 'Prueba ambas conexiones (10 s cada una, en paralelo) antes de responder; se guarda igual.' })),
  },
  { additionalProperties: false, title: 'GuardarIntercambio' },
)

/** `smtp.user` and `smtp.password` may be null (no authentication, clear): checked as absent, returned as sent. */
function withoutNestedNulls(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body
  const smtp = (body as Record<string, unknown>).smtp
  if (typeof smtp !== 'object' || smtp === null || Array.isArray(smtp)) return body
  const kept = Object.fromEntries(Object.entries(smtp).filter(([k, v]) => !(v === null && (k === 'user' || k === 'password'))))
  return { ...body, smtp: kept }
}

/** The body's shape and the mailbox rules at once; `stored` says which passwords may be left out (DESIGN §5). */
export function parseGuardarIntercambio(body: unknown, stored: StoredPasswords | null): { settings: MailboxInput; test: boolean } {
  parseBody(GuardarIntercambioBody, withoutNestedNulls(body), () => checkMailboxInput(body as Record<string, unknown>, stored))
  const { test, ...settings } = body as MailboxInput & { test?: boolean }
  return { settings, test: test ?? false }
}

export const IntercambioQuery = Type.Object(
  { test: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: también prueba las conexiones guardadas.' })) },
  { additionalProperties: false },
)

const ConnectionCheckSchema = Type.Object(
  {
    ok: Type.Boolean(),
    error: Type.Optional(Type.String({ description: 'Por qué falló (sin contraseñas).' })),
  },
  { title: 'PruebaConexion' },
)

const Nullable = <T extends ReturnType<typeof Type.Object>>(schema: T) => Type.Union([schema, Type.Null()])

export const IntercambioSchema = Type.Object(
  {
    inbound_email: Type.Union([Type.String(), Type.Null()], { description: 'Casilla de intercambio (también en el registro de la empresa).' }),
    inbound_status: Type.Union([Type.Literal('sin_configurar'), Type.Literal('activo'), Type.Literal('error')]),
    last_poll_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Última lectura del buzón.' }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'Error de la última lectura o prueba; null si funcionó.' }),
    imap: Nullable(
      Type.Object({
        host: Type.String(),
        port: Type.Integer(),
        tls: Type.Boolean(),
        user: Type.String(),
        folder: Type.String(),
        password_set: Type.Literal(true),
      }),
    ),
    smtp: Nullable(
      Type.Object({
        host: Type.String(),
        port: Type.Integer(),
        security: SmtpSecurity,
        user: Type.Union([Type.String(), Type.Null()]),
        from: Type.String(),
        password_set: Type.Boolean(),
      }),
    ),
    test: Type.Optional(
      Type.Union([Type.Object({ imap: ConnectionCheckSchema, smtp: ConnectionCheckSchema }), Type.Null()], {
        description: 'Solo si se pidió una prueba; null si no hay buzón que probar.',
      }),
    ),
  },
  { title: 'Intercambio' },
)
