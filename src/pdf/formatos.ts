// The PDF formats a DTE prints in (DESIGN §12), apart from the renderer: the main thread checks a request's `formato`
// with this list, while pdf-lib and bwip-js are loaded only where PDFs are drawn (the worker pool, issue 17).
export type Formato = 'carta' | 'termico'
export const FORMATOS: readonly Formato[] = ['carta', 'termico']
