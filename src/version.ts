// The binary's version, from package.json at build time (embedded by bun build --compile).
import pkg from '../package.json'

export const VERSION: string = pkg.version
/** The interface description's version (spec §9, DESIGN §12 /docs/json). */
export const API_VERSION = '0.2.0'
