// The piece of a Signature the simulator looks at beyond verifying it (xml/block-signature.ts verifies the envelope's
// signature for the simulator and for reception alike): the X509Certificate, whose RUT names the sender.
import { DSIG_NS } from '../../xml/dsig-profile'
import { textOf } from '../../xml/latin1'
import { readCertificate, type CertificateInfo } from './certificate'

/** The X509Certificate of a Signature, read; null when absent or unreadable. */
export function certificateOf(signature: Element): CertificateInfo | null {
  const cert = signature.getElementsByTagNameNS(DSIG_NS, 'X509Certificate').item(0)
  return cert === null ? null : readCertificate(textOf(cert))
}
