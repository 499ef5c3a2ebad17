// LEEME.txt of each release zip: the first page a person reads after unzipping, in the words of their own system.
// The long form is README.md ("Windows", "macOS", "Respaldos automáticos"); this says only how to start and where to look.
import type { ReleaseTarget } from './release'

const COMMON = (version: string) => [
  `Timbre ${version}: facturación electrónica chilena (DTE) autoalojada, en un solo ejecutable.`,
  '',
  'Compruebe la descarga con SHA256SUMS (publicado junto a este zip) antes de usarla.',
  '',
]

const WINDOWS = (version: string) => [
  ...COMMON(version),
  'Primer inicio (PowerShell o cmd, en esta carpeta):',
  '  .\\timbre-windows-x64.exe serve --sii simulado --demo',
  'Abre una empresa demo contra un simulador del SII, sin red; la consola queda en http://127.0.0.1:8080/console',
  'y la documentación de la API en http://127.0.0.1:8080/docs. Los comandos curl.exe que muestra se pegan tal cual',
  'en PowerShell o cmd. Ctrl+C, o cerrar la ventana, lo detiene sin perder nada; desde otra ventana:',
  '  .\\timbre-windows-x64.exe stop',
  '',
  'Los datos (base de datos, llaves) quedan en la carpeta "data" junto al ejecutable, desde donde sea que se inicie;',
  'instalado en "C:\\Program Files\\Timbre", en "C:\\ProgramData\\Timbre". Solo su usuario, los Administradores y',
  'SYSTEM pueden leerla. Si SmartScreen lo detiene: "Más información" y "Ejecutar de todas formas" (no está firmado).',
  '',
  'Para actualizar: detenga Timbre y descomprima la versión nueva sobre esta misma carpeta; los datos se conservan.',
  '',
  'Inicio con Windows (tarea programada) y respaldos automáticos: README.md, secciones "Windows" y',
  '"Respaldos automáticos" (timbre --help y timbre COMANDO --help listan todo).',
]

const MACOS = (version: string) => [
  ...COMMON(version),
  'Primer inicio (Terminal, en esta carpeta):',
  '  xattr -d com.apple.quarantine ./timbre-darwin-arm64 2>/dev/null || true   # macOS bloquea lo descargado',
  '  ./timbre-darwin-arm64 serve --sii simulado --demo',
  'Abre una empresa demo contra un simulador del SII, sin red; la consola queda en http://127.0.0.1:8080/console.',
  'Ctrl+C lo detiene sin perder nada. Los datos quedan en ./data (la carpeta desde donde lo inicia) o en',
  'TIMBRE_DATA_DIR.',
  '',
  'Inicio con el Mac (launchd) y respaldos automáticos: README.md, secciones "macOS" y "Respaldos automáticos".',
]

const LINUX = (name: string, version: string) => [
  ...COMMON(version),
  'Primer inicio:',
  `  chmod +x ./timbre-${name} && ./timbre-${name} serve --sii simulado --demo`,
  'Abre una empresa demo contra un simulador del SII, sin red; la consola queda en http://127.0.0.1:8080/console.',
  'Los datos quedan en ./data o en TIMBRE_DATA_DIR. Servicio systemd y respaldos automáticos: README.md.',
]

export function leemeFor(name: ReleaseTarget['name'], version: string): string {
  if (name === 'windows-x64') return `${WINDOWS(version).join('\r\n')}\r\n`
  if (name === 'darwin-arm64') return `${MACOS(version).join('\n')}\n`
  return `${LINUX(name, version).join('\n')}\n`
}
