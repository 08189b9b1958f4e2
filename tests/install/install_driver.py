"""The shared driver of the install tier (tests/install/install_test.py and its case modules): commands run and
shown, the source and build trees hidden, an install moved to a new place, minimal Debian root filesystems and
commands chrooted into them. Skips exit 77, saying what is missing.
"""
import os
import shutil
import subprocess
import sys
import time

SKIP = 77


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def sh(cmd, check=True, timeout=600, **kw):
    """Runs a command (a list, or a string for bash -c), printing it and its output."""
    shown = cmd if isinstance(cmd, str) else " ".join(str(c) for c in cmd)
    print("$", shown, flush=True)
    start = time.monotonic()
    p = subprocess.run(cmd if not isinstance(cmd, str) else ["bash", "-c", cmd], capture_output=True, text=True,
                       timeout=timeout, **kw)
    out = p.stdout + p.stderr
    print(out.rstrip(), f"\n[exit {p.returncode}, {time.monotonic() - start:.1f} s]", flush=True)
    if check:
        assert p.returncode == 0, f"{shown}: exit {p.returncode}"
    return p


def need_root():
    if os.geteuid() != 0:
        skip("needs root (mount namespaces, chroot)")


def hidden(script, hide):
    """bash -c SCRIPT in a private mount namespace where each folder of `hide` is an empty tmpfs."""
    hide = [h for h in hide if not any(h != o and h.startswith(o.rstrip("/") + "/") for o in hide)]
    mounts = "".join(f"mount -t tmpfs ccbench-hidden '{h}' && " for h in hide)
    return ["unshare", "--mount", "--fork", "bash", "-c", f"set -e; {mounts}true; {script}"]


def moved_install(args, tmp):
    """cmake --install into TMP/staged, then the tree moved to TMP/moved/opt-ccbench: its new place."""
    sh(["cmake", "--install", args.build, "--prefix", tmp / "staged", "--strip", "--component", "ccbench"])
    moved = tmp / "moved" / "opt-ccbench"
    moved.parent.mkdir()
    shutil.move(tmp / "staged", moved)
    return moved


def rootfs(path, log, variant="apt", suite="bookworm"):
    """A minimal Debian root filesystem at `path`: `apt` (essential packages and apt), or `essential`."""
    if shutil.which("mmdebstrap") is None:
        skip("mmdebstrap is not installed (scripts/install-deps.sh installs it)")
    start = time.monotonic()
    sh(["mmdebstrap", "--mode=root", f"--variant={variant}", "--quiet", suite, str(path),
        "http://deb.debian.org/debian"], timeout=900)
    log.append(f"rootfs {suite}/{variant}: {time.monotonic() - start:.1f} s")
    shutil.copy("/etc/resolv.conf", path / "etc" / "resolv.conf")


def chroot(root, script, timeout=900, check=True):
    """bash -c SCRIPT chrooted in `root`, with /proc, /dev and /sys mounted (private namespace)."""
    inner = script.replace("'", "'\\''")
    # A /dev of its own (a tmpfs with the usual nodes and /dev/shm), not the host's rbind-mounted: what
    # runs inside must not make device nodes on the host (Debian 13's libcuda made /dev/nvidiactl so).
    dev = (f"mount -t tmpfs -o mode=755 ccbench-dev '{root}/dev'; for n in null zero full random urandom tty; do "
           f"touch '{root}/dev/'$n; mount --bind /dev/$n '{root}/dev/'$n; done; mkdir '{root}/dev/shm' '{root}/dev/pts'; "
           f"mount -t tmpfs ccbench-shm '{root}/dev/shm'; ")
    return sh(["unshare", "--mount", "--fork", "bash", "-c",
               f"set -e; mount -t proc proc '{root}/proc'; {dev}"
               f"mount --rbind /sys '{root}/sys'; chroot '{root}' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "
               f"HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive bash -c '{inner}'"], timeout=timeout,
              check=check)
