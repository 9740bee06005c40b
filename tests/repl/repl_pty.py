#!/usr/bin/env python3
"""`dscc repl` on a pseudo-terminal, as a person types into it.

Piped input takes the REPL's plain-line path; on a terminal it uses libedit (prompt, line
editing, history). This drives the terminal path through a pty: the banner and prompt, a
declaration written `let x: T`, `:type` of a loaded function (its signature and where
clauses), errors shown at the line as typed (`<repl>:LINE:COL`) and at a loaded file's own
lines, `:quit`, and the history file.

    repl_pty.py --dscc build/tools/dscc/dscc --source-dir .

Exits 0 when every check passed, 1 otherwise (each failure is printed with the screen).
"""
import argparse
import os
import re
import select
import subprocess
import sys
import tempfile
import time

PROMPT = "dsc> "
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]")


class Terminal:
    def __init__(self, argv, cwd, env):
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave,
                                     stderr=slave, start_new_session=True, close_fds=True)
        os.close(slave)
        self.screen = ""

    def read_until(self, text, timeout=60.0):
        """Reads output until `text` appears after what was read before; returns that part."""
        start = len(self.screen)
        deadline = time.monotonic() + timeout
        while text not in self.screen[start:]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {text!r} within {timeout} s")
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise EOFError(f"the REPL ended before {text!r}")
            self.screen += ANSI.sub("", chunk.decode("utf-8", "replace")).replace("\r", "")
        return self.screen[start:]

    def type_line(self, line):
        """Types `line` and Enter; returns the output up to the next prompt."""
        os.write(self.master, line.encode() + b"\r")
        return self.read_until(PROMPT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()

    failures = []

    def expect(what, output, pattern):
        if re.search(pattern, output, re.M):
            print(f"PASS {what}")
        else:
            failures.append(what)
            print(f"FAIL {what}: no match for {pattern!r} in:\n{output}")

    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, TERM="dumb")
        term = Terminal([os.path.abspath(args.dscc), "repl"], args.source_dir, env)
        try:
            banner = term.read_until(PROMPT)
            expect("banner on a terminal", banner, r"shapes are inferred as you type")
            out = term.type_line("let x: f32[B, S, 768]")
            expect("`let x: T` declares x", out + term.type_line("x"),
                   r"^x: f32\[B, S, 768\]$")
            expect("`let x: T` gives no error", out, r"^(?![\s\S]*error)")
            out = term.type_line(":load examples/bert_layer.dsc")
            expect(":load", out, r"^loaded examples/bert_layer\.dsc$")
            out = term.type_line(":type layer")
            expect(":type of a function: its signature", out,
                   r"^fn layer\(x: f32\[B, S, 768\], mask: f32\[B, S\], .*\) -> f32\[B, S, 768\]$")
            expect(":type of a function: its where clauses", out,
                   r"^  where 1 <= B, 1 <= S && S <= 512$")
            # Line 5 of the session (the banner is not typed; `x` above was line 2).
            out = term.type_line("let y = x + foo")
            expect("an error at the typed line and column", out,
                   r"^<repl>:5:13: error: unknown name 'foo'\n  let y = x \+ foo\n {14}\^$")
            out = term.type_line(":load tests/lit/repl/Inputs/bad_module.dsc")
            expect("an error in a loaded file at its own line", out,
                   r"^tests/lit/repl/Inputs/bad_module\.dsc:5:14: error: unknown name "
                   r"'undefined_weight'$")
            expect("a failed :load says so", out, r"^\(not loaded\)$")
            out = term.type_line("let h = x")
            expect("the session goes on", out, r"^h: f32\[B, S, 768\]$")
            os.write(term.master, b":quit\r")
            status = term.proc.wait(timeout=60)
            expect(":quit ends with status 0", f"status {status}", r"^status 0$")
        except (TimeoutError, EOFError) as e:
            failures.append(str(e))
            print(f"FAIL {e}; the screen so far:\n{term.screen}")
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
                term.proc.wait()
            os.close(term.master)
        history = os.path.join(home, ".dsc_history")
        text = open(history).read() if os.path.exists(history) else ""
        text = text.replace("\\040", " ")  # libedit's history file escapes spaces
        expect("history is written", text, r"let y = x \+ foo")

    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
