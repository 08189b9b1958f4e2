#!/usr/bin/env python3
"""A small Linux guest under QEMU with Soft-RoCE (rdma_rxe on lo) for the rdma test tier (DESIGN.md section 8).

The guest kernel is Debian's own linux-image package, resolved afresh every run, downloaded once into a cache
and only unpacked (never installed on this machine). The initramfs holds busybox, the rxe modules, the host's
perftest, iproute2 `rdma`/`ip` and rxe verbs provider with their shared libraries, plus whatever the caller
adds (programs come with their ldd closure). /init loads the modules, brings up lo and rxe0 (GID index 1 is
::ffff:127.0.0.1), runs the guest script under `timeout` and powers off. With `-nic none` the serial console
is the only channel: step outputs and fetched files come back base64-encoded between markers.

  results = rdma_vm.run_steps([rdma_vm.Step("hello", "ibv_devices; rdma link", 30)], fetch=["/tmp/x.json"])

Software emulation (TCG) by default: the recipe found /dev/kvm here unable to boot a stock kernel. Set
CCBENCH_RDMA_VM_ACCEL=kvm where it works. Cache: $CCBENCH_RDMA_VM_CACHE, else ~/.cache/ccbench/rdma-vm.

  rdma_vm.py check                      exit 77 with the reason when this machine cannot run the guest
  rdma_vm.py run [--extra P]... [--fetch GUEST_PATH --to DIR] -- 'shell command'   one step in a fresh guest
  rdma_vm.py check-clean [--tag TAG]    exit 1, listing them, when a qemu or temp dir of ours is left

The parts: rdma_vm_kernel.py (whether this machine can run the guest; the guest kernel) and rdma_vm_initramfs.py
(the guest's files and scripts, built into an image); this file boots it and reads back what the guest reported.
"""
import argparse
import base64
import ctypes
import dataclasses
import os
import pathlib
import re
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from rdma_vm_initramfs import GUEST_DIR, build_image, steps_script
from rdma_vm_kernel import Unavailable, cache_dir_default, kernel, log, unavailable_reason

SKIP = 77
PREFIX = "ccbrdma"
TAG_VARIABLE = "CCBENCH_RDMA_VM"  # in the environment of every qemu we start: check-clean finds them by it
PR_SET_PDEATHSIG = 1
BOOT_ALLOWANCE_S = 60  # qemu start to the guest script (9-15 s on a loaded 2-core host)
# A guest not ready this long after QEMU started is taken as a stalled boot, killed and booted once more: one CI
# run saw TCG stop after SeaBIOS' "Booting from ROM..." and print nothing more for 210 s (the kernel is quiet,
# so the guest script's ready line is its first). Said in the output, never hidden.
BOOT_STALL_S = 90
NAME_RE = re.compile(r"^[A-Za-z0-9_.+-]+$")
PATH_RE = re.compile(r"^/[A-Za-z0-9_.+/-]+$")
B64_RE = re.compile(r"^[A-Za-z0-9+/=]+$")
BOOT_ERROR_RE = re.compile(r"Initramfs unpacking failed|Kernel panic|@@\S+ init-failed|host: qemu killed")


@dataclasses.dataclass
class Step:
    name: str  # letters, digits, ._+-
    command: str  # shell text, run by busybox sh with the guest helpers (wait_listen) defined
    timeout_s: int = 60


@dataclasses.dataclass
class StepResult:
    name: str
    rc: int  # 137 when the guest's `timeout -s KILL` ended it
    output: str
    elapsed_s: float  # measured inside the guest


@dataclasses.dataclass
class RunResult:
    exit_code: int  # the guest script's, or None when the guest never reported one
    steps: dict  # name -> StepResult, in order
    files: dict  # guest path -> bytes, for every fetched file that existed
    console: str
    timings: dict  # image_s, image_MiB, boot_s (qemu start to ready; nan if never), run_s (qemu start to exit)
    tag: str  # names the temp dir and marks the qemu process: leftovers(tag) must be empty after the run
    kernel: str = ""
    errors: list = dataclasses.field(default_factory=list)  # console lines telling of a broken boot


# ---- booting ------------------------------------------------------------------------------------------------


def qemu_command(k, initrd, mem_mb):
    accel = os.environ.get("CCBENCH_RDMA_VM_ACCEL", "tcg")
    cpu = ["-accel", "kvm", "-cpu", "host"] if accel == "kvm" else ["-accel", "tcg,thread=multi"]
    return ["qemu-system-x86_64", *cpu, "-smp", "2", "-m", f"{mem_mb}M", "-nographic", "-monitor", "none",
            "-no-reboot", "-nic", "none", "-kernel", str(k.vmlinuz), "-initrd", str(initrd),
            "-append", "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off tsc=reliable"]


def boot(k, initrd, tag, timeout_s, mem_mb=None, ready_within_s=None):
    """Boot the guest, wait for it to power off (at most timeout_s); return (console text, timings). QEMU runs
    under `timeout` in a session of its own, gets SIGTERM should this process die, and is ended by kill_group
    however this function is left. With ready_within_s, a guest not ready by then is ended at once and
    timings["stalled"] is True."""
    size_mb = initrd.stat().st_size >> 20
    mem_mb = mem_mb or max(1024, 512 + 3 * size_mb)  # the archive and what it unpacks to both sit in RAM
    cmd = ["timeout", "-k", "5", str(int(timeout_s))] + qemu_command(k, initrd, mem_mb)
    env = dict(os.environ, **{TAG_VARIABLE: tag})
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True, preexec_fn=term_with_parent)
    chunks, tail, ready_at, killed, stalled = [], b"", None, False, False
    ready = f"@@{tag} ready".encode()
    try:
        deadline = start + timeout_s + 10
        while (left := deadline - time.monotonic()) > 0:
            if ready_within_s and ready_at is None and time.monotonic() - start > ready_within_s:
                stalled = killed = True
                break
            readable, _, _ = select.select([proc.stdout], [], [], min(left, 1.0))
            data = os.read(proc.stdout.fileno(), 1 << 16) if readable else None
            if data == b"":
                break
            if data:
                chunks.append(data)
                tail = (tail + data)[-256:]  # the serial port comes a few bytes at a time
                if ready_at is None and ready in tail:
                    ready_at = time.monotonic()
        else:
            killed = True
        if not killed:
            proc.wait(timeout=10)
    finally:
        kill_group(proc)
    console = b"".join(chunks).decode(errors="replace").replace("\r", "")
    if stalled:
        console += f"\n[host: the guest was not ready {ready_within_s} s after qemu started: a stalled boot]\n"
    elif killed or proc.returncode in (124, 137):
        console += f"\n[host: qemu killed after {timeout_s} s]\n"
    boot_s = ready_at - start if ready_at else float("nan")  # nan: the guest never got ready
    return console, {"boot_s": boot_s, "run_s": time.monotonic() - start, "stalled": stalled}


def term_with_parent():
    """In the child before exec: SIGTERM when this process dies, even by SIGKILL (timeout passes it to qemu)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def kill_group(proc):
    """End QEMU and its `timeout`: SIGTERM to the group first (qemu exits, timeout reaps it: no zombie left),
    SIGKILL to whatever is left 5 s later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break  # nothing of the group is left
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            proc.poll()  # reaps `timeout`, the group leader, once it has ended
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
    proc.wait()
    if proc.stdout:
        proc.stdout.close()


def parse_console(console, tag):
    """Steps, fetched files and the guest script's exit code from the console log."""
    marker = f"@@{tag} "
    steps, files, exit_code, current, body = {}, {}, None, None, []
    for line in console.splitlines():
        at = line.find(marker)
        if at < 0:
            if current is not None and B64_RE.match(line.strip()):
                body.append(line.strip())
            continue
        words = line[at + len(marker):].split()
        if words[:1] == ["begin"] and len(words) >= 3:
            current, body = (words[1], words[2]), []
        elif words[:1] == ["end"] and len(words) >= 4 and current == (words[1], words[2]):
            data = base64.b64decode("".join(body)) if body else b""
            if words[1] == "step":
                elapsed = int(words[4]) / 100 if len(words) > 4 and words[4].isdigit() else float("nan")
                steps[words[2]] = StepResult(words[2], int(words[3]), data.decode(errors="replace"), elapsed)
            elif words[3] == "0":
                files[words[2]] = data
            current = None
        elif words[:1] == ["exit"] and len(words) == 2:
            exit_code = int(words[1])
    return exit_code, steps, files


# ---- one run: build, boot, parse, clean up --------------------------------------------------------------------


def check_available(cache_dir=None):
    """Raise Unavailable (one line why) unless this machine can run the guest; fetches the kernel when needed."""
    if reason := unavailable_reason():
        raise Unavailable(reason)
    return kernel(pathlib.Path(cache_dir or cache_dir_default()))


def new_tag():
    return PREFIX + secrets.token_hex(3)


def run_steps(steps, extra_files=(), fetch=(), extra_data=None, cache_dir=None, budget_s=None, tag=None):
    """Build an image running `steps` (each under its own timeout) then fetching `fetch` (guest paths), boot it,
    and return a RunResult. The guest script as a whole gets budget_s (default: the steps' timeouts + 30 s);
    QEMU is SIGKILLed BOOT_ALLOWANCE_S after that. Raises Unavailable where this machine cannot run the guest.
    The temp dir and QEMU are gone when this returns or raises: leftovers(tag) checks it."""
    if reason := unavailable_reason():
        raise Unavailable(reason)
    for step in steps:
        assert NAME_RE.match(step.name), f"step name {step.name!r}: letters, digits and ._+- only"
    for path in fetch:
        assert PATH_RE.match(path), f"fetch path {path!r}: absolute, letters, digits and ._+-/ only"
    assert len({s.name for s in steps}) == len(steps), "step names must be unique"
    tag = tag or new_tag()
    budget = budget_s or sum(int(s.timeout_s) + 5 for s in steps) + 30
    data = dict(extra_data or {})
    data.update({f"{GUEST_DIR}/steps/{s.name}.sh": s.command + "\n" for s in steps})
    workdir = pathlib.Path(tempfile.mkdtemp(prefix=tag + "-"))
    result = RunResult(None, {}, {}, "", {}, tag)
    try:
        start = time.monotonic()
        k, initrd = build_image(cache_dir or cache_dir_default(), workdir, tag, steps_script(steps, fetch),
                                extra_files, data, budget)
        result.timings["image_s"] = time.monotonic() - start
        result.timings["image_MiB"] = initrd.stat().st_size / (1 << 20)
        result.kernel = k.version
        result.console, timings = boot(k, initrd, tag, BOOT_ALLOWANCE_S + budget, ready_within_s=BOOT_STALL_S)
        if timings["stalled"]:  # once more, from the same image; the first console is kept in front
            log(f"boot stalled (not ready in {BOOT_STALL_S} s): booting once more")
            first = result.console
            result.console, timings = boot(k, initrd, tag, BOOT_ALLOWANCE_S + budget, ready_within_s=BOOT_STALL_S)
            result.console = first + "\n[host: booted once more]\n" + result.console
            if timings["stalled"]:
                result.console += "[host: qemu killed: the boot stalled twice]\n"
            timings["boot_retries"] = 1
        result.timings.update(timings)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result.exit_code, result.steps, result.files = parse_console(result.console, tag)
    result.errors = [line for line in result.console.splitlines() if BOOT_ERROR_RE.search(line)]
    return result


def qemu_processes(prefix=PREFIX):
    """Live processes started by us (marked with TAG_VARIABLE=prefix...), as 'pid cmdline' strings."""
    found, marker = [], f"{TAG_VARIABLE}={prefix}".encode()
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X") and any(e.startswith(marker) for e in environ):
            found.append(f"pid {entry.name} {cmdline[:120]}")
    return found


def leftovers(prefix=PREFIX):
    """Everything of ours still there: processes and temporary directories."""
    dirs = sorted(str(p) for p in pathlib.Path(tempfile.gettempdir()).glob(prefix + "*"))
    return [f"process {p}" for p in qemu_processes(prefix)] + [f"directory {d}" for d in dirs]


def exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)  # unwinds through the finally blocks, which kill QEMU and remove the temp dir


def install_guards():
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)


# ---- CLI ----------------------------------------------------------------------------------------------------


def cli_run(args):
    steps = [Step("command", " ".join(args.command), args.step_timeout)]
    result = run_steps(steps, extra_files=args.extra, fetch=args.fetch, cache_dir=args.cache_dir)
    if args.console:
        print(result.console)
    step = result.steps.get("command")
    print(step.output if step else result.console[-4000:], end="")
    for path, content in result.files.items():
        out = pathlib.Path(args.to) / os.path.basename(path)
        out.write_bytes(content)
        log(f"fetched {path} -> {out} ({len(content)} B)")
    log(f"kernel {result.kernel}; image {result.timings['image_s']:.1f} s "
        f"({result.timings['image_MiB']:.1f} MiB), boot {result.timings['boot_s']:.1f} s, "
        f"boot+run {result.timings['run_s']:.1f} s")
    left = leftovers(result.tag)
    if left:
        log("left behind: " + "; ".join(left))
        return 1
    return step.rc if step else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("check")
    run = sub.add_parser("run")
    run.add_argument("--extra", action="append", default=[], help="host file or directory to copy in")
    run.add_argument("--fetch", action="append", default=[], help="guest file to copy out (into --to)")
    run.add_argument("--to", default=".")
    run.add_argument("--step-timeout", type=int, default=120)
    run.add_argument("--cache-dir", type=pathlib.Path, default=None)
    run.add_argument("--console", action="store_true", help="print the whole console log")
    run.add_argument("command", nargs="+")
    clean = sub.add_parser("check-clean")
    clean.add_argument("--tag", default=PREFIX)
    args = parser.parse_args()
    if args.what == "check-clean":
        left = leftovers(args.tag)
        print("\n".join(f"left behind: {item}" for item in left) or f"clean: nothing named {args.tag}* is left")
        return 1 if left else 0
    install_guards()
    try:
        if args.what == "check":
            k = check_available()
            print(f"ok: kernel {k.version}, {len(k.modules)} modules, cache {k.vmlinuz.parent}")
            return 0
        return cli_run(args)
    except Unavailable as e:
        print(f"SKIPPED: {e}")
        return SKIP


if __name__ == "__main__":
    sys.exit(main())
