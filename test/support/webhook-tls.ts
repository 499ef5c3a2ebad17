// HTTPS webhook receivers for tests: a server certificate for a name, issued by the test CA (which the system does not
// trust: deliveries are given it as an extra root), on a node:https server that reports the SNI each request came with.
import { createServer, type Server } from 'node:https'
import { createPublicKey } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import forge from 'node-forge'
import { rsaKey, testCa } from './pki'

export interface TlsIdentity {
  readonly keyPem: string
  readonly certPem: string
  /** The root to trust: the test CA, or the certificate itself when self-signed. */
  readonly caPem: string
}

/** A TLS server certificate for `names` (subjectAltName dNSName), CA-signed unless `selfSigned`. */
export function serverIdentity(names: readonly string[], opts: { selfSigned?: boolean } = {}): TlsIdentity {
  const key = rsaKey(2048, 41)
  const keyPem = key.export({ type: 'pkcs1', format: 'pem' }).toString()
  const ca = testCa()
  const cert = forge.pki.createCertificate()
  cert.publicKey = forge.pki.publicKeyFromPem(createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString())
  cert.serialNumber = opts.selfSigned ? '5e1f' : '7a11'
  cert.validity.notBefore = new Date(Date.now() - 86_400_000)
  cert.validity.notAfter = new Date(Date.now() + 30 * 86_400_000)
  const subject = [{ shortName: 'CN', value: names[0]! }]
  cert.setSubject(subject)
  cert.setIssuer(opts.selfSigned ? subject : ca.forgeCertificate.subject.attributes)
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2, value })) },
  ])
  cert.sign(forge.pki.privateKeyFromPem(opts.selfSigned ? keyPem : ca.privateKeyPem), forge.md.sha256.create())
  const certPem = forge.pki.certificateToPem(cert)
  return { keyPem, certPem, caPem: opts.selfSigned ? certPem : ca.certificatePem }
}

export interface TlsReceiver {
  readonly port: number
  readonly received: Array<{ readonly sni: string | null; readonly host: string | undefined; readonly body: string }>
  stop(): Promise<void>
}

export async function startTlsReceiver(identity: TlsIdentity): Promise<TlsReceiver> {
  const received: TlsReceiver['received'] = []
  const server: Server = createServer({ key: identity.keyPem, cert: identity.certPem }, (req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString('utf8')))
    req.on('end', () => {
      const sni = (req.socket as { servername?: string | false }).servername
      received.push({ sni: typeof sni === 'string' ? sni : null, host: req.headers.host, body })
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
