"""What the .ci Python scripts that drive the real binary share: their checks and summary, a
store of their own (a fresh SQLite directory or PostgreSQL database), the CLI, and `serve`
on a free port. Standard library only.
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

_passed = 0
FAILED = []


def check(name, condition, detail=""):
    """Records one check."""
    global _passed
    if condition:
        _passed += 1
        print(f"ok   {name}")
    else:
        FAILED.append(name)
        print(f"FAIL {name}{': ' + str(detail)[:3000] if detail != '' else ''}")


def finish():
    """Prints `N passed, M failed` and exits non-zero on any failure (or no check at all)."""
    if FAILED:
        print("failed: " + "; ".join(FAILED))
    print(f"{_passed} passed, {len(FAILED)} failed")
    sys.exit(1 if FAILED or not _passed else 0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def store_env(store, work, pg_admin, name):
    """The environment of a fresh store of kind `store` (`sqlite` under `work`, or a
    PostgreSQL database `corkboard_<name>_<pid>` at `pg_admin`, dropped afterwards), with no
    CORKBOARD_ setting of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORKBOARD_") and k != "DATABASE_URL"}
    env["RUST_LOG"] = env.get("RUST_LOG", "warn")
    database = None
    if store == "postgres":
        database = f"corkboard_{name}_{os.getpid()}"
        subprocess.run(["psql", "-q", f"{pg_admin}/postgres", "-c", f"CREATE DATABASE {database}"], check=True)
        env["DATABASE_URL"] = f"{pg_admin}/{database}"
    else:
        env["CORKBOARD_DATA_DIR"] = os.path.join(work, store)
        env["DATABASE_URL"] = ""
    try:
        yield env
    finally:
        if database:
            subprocess.run(["psql", "-q", f"{pg_admin}/postgres", "-c",
                            f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"], check=False)


def cli(binary, env, *args):
    return subprocess.run([binary, *args], env=env, check=True, capture_output=True, text=True).stdout.strip()


class Server:
    """`binary serve` with `env` on a free port, its output appended to `log`; ready when
    /readyz answers 200."""

    def __init__(self, binary, env, log):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = dict(env, CORKBOARD_LISTEN=f"127.0.0.1:{self.port}")
        self.log = open(log, "a")
        self.proc = subprocess.Popen([binary, "serve"], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if s.recv(64).startswith(b"HTTP/1.1 200"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the server did not become ready (see {log})")

    def kill9(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self.log.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if not self.log.closed:
            self.log.close()


def over_stores(prefix, binary, stores, run):
    """Runs `run(store, binary, work, pg_admin)` for each store named in `stores` (comma
    list), in a work directory of its own (kept, with the server logs, when a check failed),
    with a copy of `binary` (a build elsewhere can't swap it mid-run). A run that raises
    fails its check. Prints the time and the summary, and exits."""
    pg_admin = os.environ.get("PG_ADMIN", "postgres://postgres@127.0.0.1:5432")
    work = tempfile.mkdtemp(prefix=prefix)
    copy = os.path.join(work, "corkboard")
    shutil.copy2(binary, copy)
    started = time.monotonic()
    try:
        for store in stores.split(","):
            try:
                run(store, copy, work, pg_admin)
            except Exception as err:  # noqa: BLE001 - a store that can't be set up fails its check
                check(f"{store}: the run", False, f"{type(err).__name__}: {err}")
    finally:
        os.remove(copy)
        if FAILED:
            print(f"# server logs and stores kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"# {time.monotonic() - started:.1f} s in all")
    finish()
