#!/usr/bin/env python3
"""Runs README.md's examples as written, as a newcomer on a fresh machine would (issue 33,
CONTRACT.md 18).

`corkboard serve` starts on a fresh store (SQLite under ./data of an empty directory, port
8080: the README's commands name it) with no CORKBOARD_ setting of the caller's; the key its
first start prints is exported as CORKBOARD_KEY. Then every ```sh block of README.md runs, in
order, in one bash session (`set -euo pipefail`, so variables carry from block to block and
the first failing command stops the run), from that directory, with `corkboard` on the PATH.
`curl` in the blocks is a function that adds `-sS --fail-with-body`, so an HTTP error fails
its command, and records each status. The README marks what is not this:
- a `# expect NNN` comment, at the end of a line or on a line of its own, says the next
  `curl` (on that line, else on the lines after it) answers NNN: it must, and its error is
  not a failure;
- `<!-- not run: reason -->` on the line before a fence skips that block (deploys, other
  servers, commands that run for minutes).
```python blocks run too (with the same CORKBOARD_KEY) when the `mcp` package imports;
otherwise one line says they were left out.

Prints one line per check and closes with `N passed, M failed`; exits non-zero on any
failure, keeping the directory with the server's log and the session's transcript.

Usage: .ci/readme_check.py [--binary target/debug/corkboard] [--readme README.md]
"""

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from ci_support import FAILED, check, finish

PORT = 8080
FENCE = re.compile(r"^```(\w*)")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.+?)\s*-->$")
EXPECT = re.compile(r"#\s*expect\s+(\d{3})\b")
CURL = re.compile(r"(?<![\w./-])curl(?=\s)")
KEY = re.compile(r"^\s+(cbk_[A-Za-z0-9_-]+)\s*$", re.MULTILINE)
SESSION_SECONDS = 120

# Defined before the blocks. `-w '%{stderr}...'` puts the status on curl's stderr, which the
# function reads back, so the body still goes where the block sends it (a pipe, a variable).
PRELUDE = r"""set -euo pipefail
curl() {
  local expect=${CURL_EXPECT:-} err rc=0 status
  err=$(mktemp)
  if [ -n "$expect" ]; then
    command curl -sS -w '%{stderr}@@status %{http_code}\n' "$@" 2>"$err" || rc=$?
  else
    command curl -sS --fail-with-body -w '%{stderr}@@status %{http_code}\n' "$@" 2>"$err" || rc=$?
  fi
  status=$(sed -n 's/^@@status //p' "$err" | tail -n 1)
  grep -v '^@@status ' "$err" >&2 || true
  rm -f "$err"
  echo "${BASH_LINENO[0]} ${expect:--} ${status:-000}" >>"$CURL_LOG"
  if [ -n "$expect" ] && [ "$status" != "$expect" ]; then
    echo "README.md:${BASH_LINENO[0]}: expected HTTP $expect, got ${status:-no answer}" >&2
    return 1
  fi
  return $rc
}
trap 'echo "README.md:$LINENO: this command failed (exit status $?)" >&2' ERR
"""


class Block:
    def __init__(self, lang, first, lines, skip):
        self.lang, self.first, self.lines, self.skip = lang, first, lines, skip

    @property
    def where(self):
        return f"README.md:{self.first}-{self.first + len(self.lines) - 1}"


def blocks(path):
    """The fenced blocks of `path`: language, line of their first line of code, lines, and
    the reason of a `<!-- not run: ... -->` right before the fence."""
    found, current, previous = [], None, ""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f.read().split("\n"), start=1):
            if current is None:
                opening = FENCE.match(line)
                if opening:
                    skip = NOT_RUN.match(previous.strip())
                    current = Block(opening.group(1), number + 1, [], skip.group(1) if skip else None)
                elif line.strip():
                    previous = line
            elif line.startswith("```"):
                found.append(current)
                current, previous = None, ""
            else:
                current.lines.append(line)
    if current is not None:
        raise SystemExit(f"README.md: the block at line {current.first - 1} has no closing fence")
    return found


def with_expectations(block):
    """The block's lines with each `# expect NNN` turned into `CURL_EXPECT=NNN` before the
    `curl` it names (same lines, so line numbers still match), and the markers found as
    (line, status)."""
    lines, markers, pending = list(block.lines), [], None
    for i, line in enumerate(lines):
        marker = EXPECT.search(line)
        if marker:
            if pending is not None:
                raise SystemExit(f"README.md:{pending[0]}: `# expect` with no curl after it")
            pending = (block.first + i, marker.group(1))
        if pending is None:
            continue
        code = line[: marker.start()] if marker else line
        call = CURL.search(code)
        if call:
            lines[i] = line[: call.start()] + f"CURL_EXPECT={pending[1]} " + line[call.start():]
            markers.append(pending)
            pending = None
    if pending is not None:
        raise SystemExit(f"README.md:{pending[0]}: `# expect` with no curl after it")
    return lines, markers


def port_taken():
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", PORT)) == 0


def start_server(binary, work, env):
    """`serve` from `work` on port 8080; returns the process and the key its first start
    printed, once /readyz answers 200."""
    printed = os.path.join(work, "server.out")
    # The server keeps its own copies of these descriptors.
    with open(printed, "w") as out, open(os.path.join(work, "server.log"), "w") as log:
        proc = subprocess.Popen([binary, "serve"], cwd=work, env=env, stdout=out, stderr=log)
    deadline, key = time.monotonic() + 30, None
    while time.monotonic() < deadline and proc.poll() is None:
        if key is None:
            with open(printed, encoding="utf-8") as f:
                found = KEY.search(f.read())
            key = found.group(1) if found else None
        if key is not None and ready():
            return proc, key
        time.sleep(0.05)
    stop(proc)
    raise SystemExit(f"the server did not start and print a key (see {work}/server.log)")


def ready():
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=1) as s:
            s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def run_shell(work, env, runnable):
    """Every runnable sh block in one bash session; returns (exit status, the README lines
    of the blocks that ran to their end, the curl log's rows)."""
    session = [PRELUDE]
    for n, (block, lines) in enumerate(runnable):
        # Named README.md and padded with empty lines, so that bash's messages name the
        # README's lines.
        os.mkdir(os.path.join(work, f"block{n}"))
        path = os.path.join(work, f"block{n}", "README.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n" * (block.first - 1) + "\n".join(lines) + "\n")
        session.append(f'printf "\\n## {block.where}\\n" >&2\nsource {path}\necho {block.first} >>"$DONE_LOG"\n')
    script = os.path.join(work, "session.sh")
    with open(script, "w", encoding="utf-8") as f:
        f.write("".join(session))
    env = dict(env, CURL_LOG=os.path.join(work, "curl.log"), DONE_LOG=os.path.join(work, "done.log"))
    for name in ("curl.log", "done.log"):
        open(os.path.join(work, name), "w").close()
    with open(os.path.join(work, "transcript.txt"), "w") as transcript:
        try:
            status = subprocess.run(["bash", script], check=False, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                    stdout=transcript, stderr=subprocess.STDOUT,
                                    timeout=SESSION_SECONDS).returncode
        except subprocess.TimeoutExpired:
            status = "timeout"
    with open(env["DONE_LOG"]) as f:
        done = {int(line) for line in f if line.strip()}
    with open(env["CURL_LOG"]) as f:
        calls = [line.split() for line in f if line.strip()]
    return status, done, calls


def run_python(work, env, block):
    path = os.path.join(work, f"block{block.first}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n" * (block.first - 1) + "\n".join(block.lines) + "\n")
    result = subprocess.run([sys.executable, path], check=False, cwd=work, env=env, capture_output=True, text=True,
                            timeout=60)
    check(f"{block.where} (python) ran", result.returncode == 0, result.stdout + result.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default="target/debug/corkboard")
    parser.add_argument("--readme", default="README.md")
    args = parser.parse_args()

    if port_taken():
        print(f"Port {PORT} is taken: the README's commands name it, so this check needs it. "
              f"Stop what listens there (`ss -ltnp 'sport = :{PORT}'` shows it) and run again.")
        sys.exit(1)

    all_blocks = blocks(args.readme)
    work = tempfile.mkdtemp(prefix="corkboard-readme-")
    bin_dir = os.path.join(work, "bin")
    os.mkdir(bin_dir)
    shutil.copy2(args.binary, os.path.join(bin_dir, "corkboard"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORKBOARD_") and k != "DATABASE_URL"}
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    started = time.monotonic()
    proc, key = start_server(os.path.join(bin_dir, "corkboard"), work, env)
    env["CORKBOARD_KEY"] = key
    try:
        shell = [b for b in all_blocks if b.lang == "sh"]
        for block in shell:
            if block.skip:
                print(f"skip {block.where}: {block.skip}")
        runnable = [(b, *with_expectations(b)) for b in shell if not b.skip]
        status, done, calls = run_shell(work, env, [(b, lines) for b, lines, _ in runnable])
        failing = next((b.first for b, _, _ in runnable if b.first not in done), None)
        for block, _, markers in runnable:
            ran = [c for c in calls if block.first <= int(c[0]) < block.first + len(block.lines)]
            if block.first not in done:
                check(f"{block.where} ran", False,
                      "failed: see the session's last lines below" if block.first == failing else "not reached")
                if block.first != failing:
                    continue
            else:
                answers = f"{len(ran)} curl calls, HTTP {', '.join(sorted({c[2] for c in ran}))}" if ran else "no curl"
                check(f"{block.where} ran ({answers})", True)
            for line, expected in markers:
                marked = [c for c in ran if c[1] == expected and int(c[0]) >= line]
                check(f"README.md:{line} answered {expected} as it says",
                      bool(marked) and marked[0][2] == expected, marked[0] if marked else "no such call ran")
        check("the README's shell session ended well", status == 0, f"exit status {status}")
        if status != 0:
            with open(os.path.join(work, "transcript.txt")) as f:
                print("# the session's last lines:\n" + "".join(f.readlines()[-60:]))

        python = [b for b in all_blocks if b.lang == "python" and not b.skip]
        if python and subprocess.run([sys.executable, "-c", "import mcp"], check=False, capture_output=True).returncode:
            print(f"skip {', '.join(b.where for b in python)} (python): the `mcp` package is not installed")
        else:
            for block in python:
                run_python(work, env, block)
    finally:
        stop(proc)
        if FAILED:
            print(f"# server log, transcript and store kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"# {time.monotonic() - started:.1f} s in all")
    finish()


if __name__ == "__main__":
    main()
