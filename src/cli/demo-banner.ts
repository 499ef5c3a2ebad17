// The commands the demo banner offers (DESIGN §10), as the person's own terminal pastes them (issue 26). sh quoting
// (`-H 'X-Api-Key: …' -d '{"…"}'`) breaks in PowerShell and cmd, so Windows gets `curl.exe` (built into Windows 10
// and later; in Windows PowerShell 5.1 a bare `curl` is Invoke-WebRequest) with double-quoted arguments only, and the
// JSON body from a file (`--data-binary "@C:\…"`): no quote inside another to escape, whichever shell it lands in.

/** The invoice the demo's curl issues: ASCII only, so it survives any terminal and shell. */
export const DEMO_INVOICE = {
  tipo_dte: 33,
  receptor: { rut: '76086428-5', razon_social: 'Cliente de Prueba SpA', giro: 'Comercio', direccion: 'Av. Apoquindo 4500', comuna: 'Las Condes', ciudad: 'Santiago' },
  detalle: [{ nombre: 'Taladro percutor 750W', cantidad: 1, precio: 45990 }, { nombre: 'Brocas para concreto (set 5)', cantidad: 2, precio: 6990 }],
}

/** Where the Windows form's body is written: in the data dir, beside the demo's API key. */
export const DEMO_INVOICE_FILE = 'demo-factura.json'

export interface DemoCommandsInput {
  readonly platform: NodeJS.Platform
  readonly baseUrl: string
  readonly apiKey: string
  readonly idempotencyKey: string
  /** Absolute path of DEMO_INVOICE as JSON; read by the Windows form only. */
  readonly invoicePath: string
}

export interface DemoCommands {
  readonly empresa: string
  readonly issue: string
  readonly list: string
}

export function demoCommands(input: DemoCommandsInput): DemoCommands {
  const { baseUrl, apiKey, idempotencyKey } = input
  if (input.platform === 'win32')
    return {
      empresa: `curl.exe -s -H "X-Api-Key: ${apiKey}" ${baseUrl}/api/v1/billing/empresa`,
      issue: `curl.exe -s -X POST ${baseUrl}/api/v1/billing/dte -H "X-Api-Key: ${apiKey}" -H "Content-Type: application/json" -H "Idempotency-Key: ${idempotencyKey}" --data-binary "@${input.invoicePath}"`,
      list: `curl.exe -s -H "X-Api-Key: ${apiKey}" ${baseUrl}/api/v1/billing/dte`,
    }
  return {
    empresa: `curl -s -H 'X-Api-Key: ${apiKey}' ${baseUrl}/api/v1/billing/empresa`,
    issue: `curl -s -X POST ${baseUrl}/api/v1/billing/dte -H 'X-Api-Key: ${apiKey}' -H 'Content-Type: application/json' -H 'Idempotency-Key: ${idempotencyKey}' -d '${JSON.stringify(DEMO_INVOICE)}'`,
    list: `curl -s -H 'X-Api-Key: ${apiKey}' ${baseUrl}/api/v1/billing/dte`,
  }
}
