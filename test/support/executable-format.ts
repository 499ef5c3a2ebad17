// What kind of executable a file is, read from its own headers (ELF, PE, Mach-O), and whether a Mach-O's ad-hoc code
// signature matches its bytes: Apple Silicon kills an arm64 executable whose signature does not (issue 26). Test-only.
import { createHash } from 'node:crypto'

export type ExecutableFormat =
  | { readonly kind: 'elf'; readonly machine: 'x86-64' | 'aarch64' | number }
  | { readonly kind: 'pe'; readonly machine: 'x86-64' | number; readonly isConsole: boolean }
  | { readonly kind: 'macho'; readonly cpu: 'arm64' | 'x86-64' | number; readonly hasCodeSignature: boolean }
  | { readonly kind: 'unknown' }

const ELF_MACHINES: Record<number, 'x86-64' | 'aarch64'> = { 0x3e: 'x86-64', 0xb7: 'aarch64' }
const MACHO_CPUS: Record<number, 'arm64' | 'x86-64'> = { 0x0100000c: 'arm64', 0x01000007: 'x86-64' }
const LC_CODE_SIGNATURE = 0x1d

export function executableFormat(bytes: Buffer): ExecutableFormat {
  if (bytes.readUInt32BE(0) === 0x7f454c46) {
    const machine = bytes.readUInt16LE(18)
    return { kind: 'elf', machine: ELF_MACHINES[machine] ?? machine }
  }
  if (bytes.toString('latin1', 0, 2) === 'MZ') {
    const pe = bytes.readUInt32LE(0x3c)
    if (bytes.toString('latin1', pe, pe + 4) !== 'PE\0\0') return { kind: 'unknown' }
    const machine = bytes.readUInt16LE(pe + 4)
    const optional = pe + 24
    const subsystem = bytes.readUInt16LE(optional + 68) // PE32+ optional header: Subsystem at offset 68
    return { kind: 'pe', machine: machine === 0x8664 ? 'x86-64' : machine, isConsole: subsystem === 3 }
  }
  if (bytes.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = bytes.readUInt32LE(4)
    return { kind: 'macho', cpu: MACHO_CPUS[cpu] ?? cpu, hasCodeSignature: codeSignatureRange(bytes) !== null }
  }
  return { kind: 'unknown' }
}

function codeSignatureRange(bytes: Buffer): { offset: number; size: number } | null {
  const ncmds = bytes.readUInt32LE(16)
  let at = 32
  for (let i = 0; i < ncmds; i++) {
    const cmd = bytes.readUInt32LE(at)
    if (cmd === LC_CODE_SIGNATURE) return { offset: bytes.readUInt32LE(at + 8), size: bytes.readUInt32LE(at + 12) }
    at += bytes.readUInt32LE(at + 4)
  }
  return null
}

const HASHES: Record<number, string> = { 1: 'sha1', 2: 'sha256' }

/**
 * Checks every code page hash of the Mach-O's CodeDirectory against the file, as the kernel does when it maps the
 * pages. Returns the number of pages checked; throws naming the first page that differs. Layouts: Apple's
 * cs_blobs.h (SuperBlob 0xfade0cc0, CodeDirectory 0xfade0c02, big-endian).
 */
export function verifyMachOPageHashes(bytes: Buffer): number {
  const range = codeSignatureRange(bytes)
  if (!range) throw new Error('no LC_CODE_SIGNATURE')
  const superBlob = range.offset
  if (bytes.readUInt32BE(superBlob) !== 0xfade0cc0) throw new Error('the signature is not a SuperBlob')
  const count = bytes.readUInt32BE(superBlob + 8)
  for (let i = 0; i < count; i++) {
    const type = bytes.readUInt32BE(superBlob + 12 + i * 8)
    if (type !== 0) continue // slot 0: the CodeDirectory
    const cd = superBlob + bytes.readUInt32BE(superBlob + 16 + i * 8)
    if (bytes.readUInt32BE(cd) !== 0xfade0c02) throw new Error('slot 0 is not a CodeDirectory')
    const hashOffset = bytes.readUInt32BE(cd + 16)
    const nCodeSlots = bytes.readUInt32BE(cd + 28)
    const codeLimit = bytes.readUInt32BE(cd + 32)
    const hashSize = bytes.readUInt8(cd + 36)
    const algorithm = HASHES[bytes.readUInt8(cd + 37)]
    const pageSize = 2 ** bytes.readUInt8(cd + 39)
    if (!algorithm) throw new Error(`unknown hash type ${bytes.readUInt8(cd + 37)}`)
    if (codeLimit !== range.offset) throw new Error(`codeLimit ${codeLimit} is not the signature's offset ${range.offset}`)
    for (let page = 0; page < nCodeSlots; page++) {
      const start = page * pageSize
      const actual = createHash(algorithm).update(bytes.subarray(start, Math.min(start + pageSize, codeLimit))).digest()
      const expected = bytes.subarray(cd + hashOffset + page * hashSize, cd + hashOffset + (page + 1) * hashSize)
      if (!actual.equals(expected)) throw new Error(`page ${page} (offset ${start}) does not match its hash`)
    }
    return nCodeSlots
  }
  throw new Error('no CodeDirectory in the signature')
}
