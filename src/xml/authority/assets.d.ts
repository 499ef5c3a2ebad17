// Data files embedded in the binary with `import x from './file' with { type: 'text' }` (Bun inlines them, also under
// `bun build --compile`): the SII's CAF-signing certificates and the simulator's authority key (DESIGN §9).
declare module '*.cer' {
  const text: string
  export default text
}
declare module '*.pem' {
  const text: string
  export default text
}
