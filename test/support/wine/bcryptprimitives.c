/*
 * TEST ONLY, never shipped (issue 26, docs/decisions/platforms.md): Bun's Windows runtime imports ProcessPrng from
 * bcryptprimitives.dll (Windows 10+), which Wine 8.0 lacks, so the .exe does not start under it. Built by
 * test/cli/windows-wine.test.ts and put beside the .exe there only; it draws from RtlGenRandom, as Wine's own does.
 */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (!RtlGenRandom(data, chunk)) return FALSE;
    data += chunk;
    len -= chunk;
  }
  return TRUE;
}
