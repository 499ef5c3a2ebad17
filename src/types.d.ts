// Text and file imports embedded by `bun build --compile` (migrations, XSDs, docs UI assets).
declare module '*.sql' {
  const text: string
  export default text
}
declare module '*.xsd' {
  const text: string
  export default text
}
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}
declare module 'htmx.org/dist/htmx.min.js' {
  const text: string
  export default text
}
declare module '*.css' {
  const text: string
  export default text
}
declare module '*.js' {
  const text: string
  export default text
}
declare module 'xmllint-wasm/xmllint.wasm' {
  const path: string
  export default path
}
/** xmllint-wasm's Emscripten module factory (its worker script also exports it; xml/xsd-worker.ts types the options). */
declare module 'xmllint-wasm/xmllint-node.js' {
  const factory: (options: object) => Promise<unknown>
  export default factory
}
