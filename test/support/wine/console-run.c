/*
 * TEST ONLY (issue 26, test/cli/windows-wine.test.ts): runs a program in a console of its own, as a console window
 * would, and sends that console Ctrl-C (CTRL_C_EVENT) for each line read on stdin: the way Windows asks a console
 * program to stop. A process started from a pipe under Wine has no console, so AttachConsole from outside fails with
 * ERROR_INVALID_HANDLE; hence a host that owns the console. Exits with the program's exit code.
 *   console-run.exe PROGRAM [ARGS...]
 */
#include <windows.h>
#include <stdio.h>

/* The host ignores the event it sends; a handler rather than SetConsoleCtrlHandler(NULL, TRUE), whose "ignore Ctrl-C"
   the program would inherit. */
static BOOL WINAPI ignore(DWORD event) { (void)event; return TRUE; }

/* On its own thread, so the host ends with the program whether or not stdin is ever closed. */
static DWORD WINAPI relay(LPVOID in) {
  char c;
  DWORD n = 0;
  while (ReadFile((HANDLE)in, &c, 1, &n, NULL) && n == 1) {
    if (c != '\n') continue;
    if (GenerateConsoleCtrlEvent(CTRL_C_EVENT, 0)) fprintf(stderr, "console-run: sent CTRL_C_EVENT\n");
    else fprintf(stderr, "console-run: GenerateConsoleCtrlEvent failed: %lu\n", GetLastError());
  }
  return 0;
}

int main(void) {
  HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE), err = GetStdHandle(STD_ERROR_HANDLE), in = GetStdHandle(STD_INPUT_HANDLE);
  LPWSTR cmd = GetCommandLineW();
  /* Skip our own name, quoted or not: the rest is the program's command line. */
  if (*cmd == L'"') { cmd++; while (*cmd && *cmd != L'"') cmd++; if (*cmd) cmd++; } else { while (*cmd && *cmd != L' ') cmd++; }
  while (*cmd == L' ') cmd++;
  FreeConsole();
  if (!AllocConsole()) { fprintf(stderr, "console-run: AllocConsole failed: %lu\n", GetLastError()); return 90; }
  SetConsoleCtrlHandler(ignore, TRUE);
  SetHandleInformation(out, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
  SetHandleInformation(err, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
  STARTUPINFOW si;
  PROCESS_INFORMATION pi;
  ZeroMemory(&si, sizeof si);
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = out;
  si.hStdError = err;
  if (!CreateProcessW(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) { fprintf(stderr, "console-run: CreateProcess failed: %lu\n", GetLastError()); return 91; }
  CreateThread(NULL, 0, relay, in, 0, NULL);
  WaitForSingleObject(pi.hProcess, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(pi.hProcess, &code);
  return (int)code;
}
