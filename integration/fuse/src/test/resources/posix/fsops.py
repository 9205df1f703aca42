#!/usr/bin/env python3
"""Strata's differential POSIX conformance driver.

    python3 fsops.py SCENARIO_FILE DIR      run one scenario inside the empty folder DIR
    python3 fsops.py --selftest [-v]        run every scenario twice on local folders and
                                            check that both runs print the same text

A scenario is a list of system calls, one a line. The driver prints one line per step,
"<line-number> <step> -> <result>", where the result is 0, an errno name or the values the
step asked for. Nothing printed depends on the folder the scenario runs in, so the output of
a run on a local ext4 folder can be compared line by line with a run on a Strata mount.
README.md beside this file describes the syntax and every operation.

Standard library only (Python 3.11). Must run as root: steps prefixed with "as UID:GID"
run in a forked child that drops to that user first.
"""

import codecs
import ctypes
import errno
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import traceback


class ScenarioError(Exception):
    """A mistake in a scenario or in this driver: never printed as a result."""


# ---------------------------------------------------------------------------------------------
# Errno names

ERRNO_NAMES = dict(errno.errorcode)
# Linux gives one number two names; use the ones the man pages of these calls use.
ERRNO_NAMES[errno.EOPNOTSUPP] = "EOPNOTSUPP"
ERRNO_NAMES[errno.EAGAIN] = "EAGAIN"
ERRNO_NAMES[errno.EDEADLK] = "EDEADLK"


def errno_name(e):
    return ERRNO_NAMES.get(e.errno, "E%d" % e.errno) if e.errno else "E?"


def raise_errno(n):
    raise OSError(n, os.strerror(n))


# ---------------------------------------------------------------------------------------------
# libc calls that the os module does not offer with every option

LIBC = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2
RENAME_FLAGS = {"noreplace": 1, "exchange": 2}


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


LIBC.utimensat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(Timespec), ctypes.c_int]
LIBC.futimens.argtypes = [ctypes.c_int, ctypes.POINTER(Timespec)]
LIBC.getxattr.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
LIBC.getxattr.restype = ctypes.c_ssize_t
LIBC.access.argtypes = [ctypes.c_char_p, ctypes.c_int]
LIBC.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                           ctypes.c_uint]


def check_libc(rc):
    if rc < 0:
        raise_errno(ctypes.get_errno())
    return rc


def fsencode(path):
    return os.fsencode(path)


# ---------------------------------------------------------------------------------------------
# Argument parsers (used when the scenario is read, so that mistakes stop it before it runs)

def parse_int(tok, what="integer"):
    if not re.fullmatch(r"-?[0-9]+", tok):
        raise ScenarioError("expected %s, got %r" % (what, tok))
    return int(tok)


def parse_mode(tok):
    if not re.fullmatch(r"[0-7]{1,5}", tok):
        raise ScenarioError("expected an octal mode, got %r" % tok)
    return int(tok, 8)


OPEN_FLAGS = {name: getattr(os, name) for name in (
    "O_RDONLY", "O_WRONLY", "O_RDWR", "O_CREAT", "O_EXCL", "O_TRUNC", "O_APPEND",
    "O_DIRECTORY", "O_NOFOLLOW", "O_NONBLOCK", "O_SYNC", "O_DSYNC", "O_NOATIME", "O_CLOEXEC",
    "O_PATH", "O_NOCTTY")}


def parse_flags(tok):
    value = 0
    for part in tok.split("|"):
        if part not in OPEN_FLAGS:
            raise ScenarioError("unknown open flag %r" % part)
        value |= OPEN_FLAGS[part]
    return value


ACCESS_MODES = {"F_OK": os.F_OK, "R_OK": os.R_OK, "W_OK": os.W_OK, "X_OK": os.X_OK}


def parse_access(tok):
    value = 0
    for part in tok.split("|"):
        if part not in ACCESS_MODES:
            raise ScenarioError("unknown access mode %r" % part)
        value |= ACCESS_MODES[part]
    return value


WHENCE = {"SEEK_SET": os.SEEK_SET, "SEEK_CUR": os.SEEK_CUR, "SEEK_END": os.SEEK_END,
          "SEEK_DATA": os.SEEK_DATA, "SEEK_HOLE": os.SEEK_HOLE}


def parse_whence(tok):
    if tok not in WHENCE:
        raise ScenarioError("unknown whence %r" % tok)
    return WHENCE[tok]


def parse_time(tok):
    """SEC[.NSEC], NOW or OMIT -> (sec, nsec) for a struct timespec."""
    if tok == "NOW":
        return (0, UTIME_NOW)
    if tok == "OMIT":
        return (0, UTIME_OMIT)
    m = re.fullmatch(r"(-?[0-9]+)(?:\.([0-9]{1,9}))?", tok)
    if not m:
        raise ScenarioError("expected SEC[.NSEC], NOW or OMIT, got %r" % tok)
    return (int(m.group(1)), int((m.group(2) or "").ljust(9, "0")))


def parse_text(tok):
    """TEXT: "@N" is N bytes of a fixed pattern, "@N:C" N copies of C, else the token with
    Python's backslash escapes (\\x00, \\n, \\\\) decoded, as UTF-8."""
    m = re.fullmatch(r"@([0-9]+)(?::(.))?", tok, re.S)
    if m:
        n = int(m.group(1))
        if m.group(2) is not None:
            return m.group(2).encode("utf-8") * n
        pattern = b"abcdefghijklmnopqrstuvwxyz0123456789"
        return (pattern * (n // len(pattern) + 1))[:n]
    try:
        return codecs.escape_decode(tok.encode("utf-8"))[0]
    except ValueError as e:
        raise ScenarioError("bad escape in text %r: %s" % (tok, e))


def long_path(n):
    """A relative path of exactly n bytes: components of 200 'x' joined by '/'. Each
    PATH(201k-1) is the folder part of every longer one, so scenarios can create it."""
    parts = []
    left = n
    while left > 0:
        take = min(200, left)
        parts.append("x" * take)
        left -= take
        if left > 0:
            left -= 1  # the slash
            if left == 0:
                raise ScenarioError("PATH%d would end with a slash" % n)
    return "/".join(parts)


def expand_path(tok, absolute_ok=False):
    """Expands {STR*N}, NAMEn (n 'x' characters), PATHn (a path of n bytes), then Python's
    backslash escapes (\\t, \\n, \\x01, \\\\)."""
    s = re.sub(r"\{([^{}*]+)\*([0-9]+)\}", lambda m: m.group(1) * int(m.group(2)), tok)
    s = re.sub(r"NAME([0-9]+)", lambda m: "x" * int(m.group(1)), s)
    s = re.sub(r"PATH([0-9]+)", lambda m: long_path(int(m.group(1))), s)
    if "\\" in s:
        try:
            s = os.fsdecode(codecs.escape_decode(s.encode("utf-8"))[0])
        except ValueError as e:
            raise ScenarioError("bad escape in path %r: %s" % (tok, e))
    if "\0" in s:
        raise ScenarioError("a path cannot hold NUL: %r" % tok)
    if s.startswith("/") and not absolute_ok:
        raise ScenarioError("paths in scenarios must be relative: %r" % tok)
    return s


def abbreviate(s):
    """Runs of 32 or more equal characters print as {C*N}, the form scenarios may use."""
    return re.sub(r"(.)\1{31,}", lambda m: "{%s*%d}" % (m.group(1), len(m.group(0))), s,
                  flags=re.S)


def show_token(t):
    """A word as written, or Python's quoted form when it is empty or holds a space, a quote,
    a backslash, a '#' or a character that does not print."""
    if t == "" or any(c.isspace() or c in "'\"#\\" for c in t) or not t.isprintable():
        return repr(t)
    return t


def show_name(name):
    return show_token(abbreviate(name))


def show_bytes(data):
    if len(data) <= 200:
        return repr(data)
    return "%r...<%d bytes, sha256 %s>" % (data[:200], len(data),
                                           hashlib.sha256(data).hexdigest()[:16])


# ---------------------------------------------------------------------------------------------
# stat fields

TYPES = [(stat.S_ISREG, "regular"), (stat.S_ISDIR, "dir"), (stat.S_ISLNK, "symlink"),
         (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "char"),
         (stat.S_ISBLK, "block")]
PRINT_FIELDS = ("type", "mode", "nlink", "uid", "gid", "size", "rdev", "blocks_ge_size",
                "atime", "mtime", "ctime", "atime_now", "mtime_now", "ctime_now")
# Fields that save/cmp may compare but that are never printed (they differ between runs).
SAVE_FIELDS = ("type", "mode", "nlink", "uid", "gid", "size", "rdev", "atime", "mtime",
               "ctime", "ino", "blocks")
RECENT_SECONDS = 10


def type_name(st):
    for test, name in TYPES:
        if test(st.st_mode):
            return name
    return "unknown"


def show_ns(ns):
    sec, nsec = divmod(ns, 10 ** 9)
    return "%d.%09d" % (sec, nsec)


def field_value(st, field):
    """The printable value of one field."""
    if field == "type":
        return type_name(st)
    if field == "mode":
        return "%04o" % stat.S_IMODE(st.st_mode)
    if field in ("nlink", "uid", "gid", "size"):
        return str(getattr(st, "st_" + field))
    if field == "rdev":
        return "%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    if field == "blocks_ge_size":
        return "blocks_ge_size" if st.st_blocks * 512 >= st.st_size else "blocks_lt_size"
    if field in ("atime", "mtime", "ctime"):
        return show_ns(getattr(st, "st_%s_ns" % field))
    if field in ("atime_now", "mtime_now", "ctime_now"):
        ns = getattr(st, "st_%s_ns" % field[:5])
        if abs(time.time() - ns / 1e9) <= RECENT_SECONDS:
            return "recent"
        return show_ns(ns)
    raise ScenarioError("unknown field %r" % field)


def raw_value(st, field):
    """The value save/cmp compare."""
    if field == "type":
        return type_name(st)
    if field == "mode":
        return stat.S_IMODE(st.st_mode)
    if field in ("atime", "mtime", "ctime"):
        return getattr(st, "st_%s_ns" % field)
    return getattr(st, "st_" + field)


def parse_fields(tok, allowed=PRINT_FIELDS):
    fields = tok.split(",")
    for f in fields:
        if f not in allowed:
            raise ScenarioError("unknown field %r (one of %s)" % (f, ", ".join(allowed)))
    return fields


# ---------------------------------------------------------------------------------------------
# Steps

class Step:
    def __init__(self, lineno, line, cred, op, args, fd_name):
        self.lineno = lineno
        self.line = line  # as written, so that the output reads like the scenario
        self.cred = cred  # None for root in the driver itself, else (uid, gid, [groups])
        self.op = op
        self.args = args  # parsed arguments
        self.fd_name = fd_name  # "=> NAME" of open

    def text(self):
        return self.line


class Effects:
    """What a step changes in the driver's own state (descriptors, saved values)."""

    def __init__(self):
        self.new_fd = None
        self.closed = None
        self.saved = {}


class Context:
    def __init__(self):
        self.fds = {}  # name -> descriptor, or None when its open failed or it was closed
        self.saved = {}  # name -> value, or None when the save failed
        self.effects = None

    def fd(self, name):
        fd = self.fds.get(name)
        if fd is None:
            raise_errno(errno.EBADF)
        return fd


def stat_of(ctx, kind, target):
    if kind == "stat":
        return os.stat(target)
    if kind == "lstat":
        return os.lstat(target)
    return os.fstat(ctx.fd(target))


# Each op function takes the context and its parsed arguments and returns the result text;
# OPS below says which parser reads each argument (the KINDS letters).

def op_open(ctx, path, flags, mode=None):
    if flags & os.O_CREAT and mode is None:
        raise ScenarioError("open with O_CREAT needs a MODE")
    fd = os.open(path, flags, 0 if mode is None else mode)
    ctx.effects.new_fd = fd
    return "0"


def op_write(ctx, name, data):
    return str(os.write(ctx.fd(name), data))


def op_pwrite(ctx, name, offset, data):
    return str(os.pwrite(ctx.fd(name), data, offset))


def op_read(ctx, name, length):
    return show_bytes(os.read(ctx.fd(name), length))


def op_pread(ctx, name, offset, length):
    return show_bytes(os.pread(ctx.fd(name), length, offset))


def op_ftruncate(ctx, name, size):
    os.ftruncate(ctx.fd(name), size)
    return "0"


def op_fsync(ctx, name):
    os.fsync(ctx.fd(name))
    return "0"


def op_fstat(ctx, name, fields):
    st = os.fstat(ctx.fd(name))
    return ",".join(field_value(st, f) for f in fields)


def op_close(ctx, name):
    fd = ctx.fd(name)
    ctx.effects.closed = name
    os.close(fd)
    return "0"


def op_fchmod(ctx, name, mode):
    os.fchmod(ctx.fd(name), mode)
    return "0"


def op_fchown(ctx, name, uid, gid):
    os.fchown(ctx.fd(name), uid, gid)
    return "0"


def op_lseek(ctx, name, offset, whence):
    return str(os.lseek(ctx.fd(name), offset, whence))


def timespecs(atime, mtime):
    return (Timespec * 2)(Timespec(*atime), Timespec(*mtime))


def op_futimens(ctx, name, atime, mtime):
    check_libc(LIBC.futimens(ctx.fd(name), timespecs(atime, mtime)))
    return "0"


def op_mkdir(ctx, path, mode):
    os.mkdir(path, mode)
    return "0"


def op_rmdir(ctx, path):
    os.rmdir(path)
    return "0"


def op_unlink(ctx, path):
    os.unlink(path)
    return "0"


def op_rename(ctx, a, b, flag=None):
    if flag is None:
        os.rename(a, b)
    else:
        check_libc(LIBC.renameat2(AT_FDCWD, fsencode(a), AT_FDCWD, fsencode(b),
                                  RENAME_FLAGS[flag]))
    return "0"


def op_link(ctx, a, b):
    os.link(a, b)  # link(2): a symbolic link a is linked itself, not followed
    return "0"


def op_symlink(ctx, target, path):
    os.symlink(target, path)
    return "0"


def op_readlink(ctx, path):
    return show_name(os.readlink(path))


def op_mkfifo(ctx, path, mode):
    os.mkfifo(path, mode)
    return "0"


MKNOD_TYPES = {"fifo": stat.S_IFIFO, "sock": stat.S_IFSOCK, "char": stat.S_IFCHR,
               "block": stat.S_IFBLK, "reg": stat.S_IFREG}


def op_mknod(ctx, path, kind, mode, major, minor):
    os.mknod(path, MKNOD_TYPES[kind] | mode, os.makedev(major, minor))
    return "0"


def op_chmod(ctx, path, mode):
    os.chmod(path, mode)
    return "0"


def op_chown(ctx, path, uid, gid):
    os.chown(path, uid, gid)
    return "0"


def op_lchown(ctx, path, uid, gid):
    os.lchown(path, uid, gid)
    return "0"


def op_truncate(ctx, path, size):
    os.truncate(path, size)
    return "0"


def op_utimensat(ctx, path, atime, mtime, nofollow=None):
    flags = AT_SYMLINK_NOFOLLOW if nofollow else 0
    check_libc(LIBC.utimensat(AT_FDCWD, fsencode(path), timespecs(atime, mtime), flags))
    return "0"


def op_umask(ctx, mask):
    os.umask(mask)
    return "0"


XATTR_FLAGS = {"create": os.XATTR_CREATE, "replace": os.XATTR_REPLACE}


def op_setxattr(ctx, path, name, value, flag=None):
    os.setxattr(path, name, value, XATTR_FLAGS[flag] if flag else 0)
    return "0"


def op_getxattr(ctx, path, name, bufsize=None):
    if bufsize is None:
        return show_bytes(os.getxattr(path, name))
    if bufsize == 0:
        return str(check_libc(LIBC.getxattr(fsencode(path), fsencode(name), None, 0)))
    buf = ctypes.create_string_buffer(bufsize)
    n = check_libc(LIBC.getxattr(fsencode(path), fsencode(name), buf, bufsize))
    return show_bytes(buf.raw[:n])


def op_listxattr(ctx, path):
    names = sorted(n for n in os.listxattr(path) if n.startswith("user."))
    return " ".join(show_name(n) for n in names) if names else "(none)"


def op_removexattr(ctx, path, name):
    os.removexattr(path, name)
    return "0"


def op_access(ctx, path, mode):
    check_libc(LIBC.access(fsencode(path), mode))
    return "0"


def op_stat(ctx, path, fields):
    st = os.stat(path)
    return ",".join(field_value(st, f) for f in fields)


def op_lstat(ctx, path, fields):
    st = os.lstat(path)
    return ",".join(field_value(st, f) for f in fields)


def op_save(ctx, name, kind, target, field):
    ctx.effects.saved[name] = None
    value = raw_value(stat_of(ctx, kind, target), field)
    ctx.effects.saved[name] = value
    return "0"


def op_cmp(ctx, name, kind, target, field):
    value = raw_value(stat_of(ctx, kind, target), field)
    before = ctx.saved.get(name)
    if before is None:
        return "unsaved"
    return "same" if value == before else "changed"


def op_ino_eq(ctx, a, b):
    sa, sb = os.lstat(a), os.lstat(b)
    return "same" if (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino) else "different"


def op_sleep(ctx, seconds):
    time.sleep(seconds)
    return "0"


def op_ls(ctx, path):
    names = sorted(os.listdir(path))
    return " ".join(show_name(n) for n in names) if names else "(empty)"


def op_cat(ctx, path):
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    return show_bytes(b"".join(chunks))


def op_write_file(ctx, path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return "0"


def op_expect_size(ctx, path, size):
    actual = os.stat(path).st_size
    return "0" if actual == size else "size %d" % actual


def parse_float(tok):
    try:
        value = float(tok)
    except ValueError:
        raise ScenarioError("expected seconds, got %r" % tok)
    if not 0 <= value <= 60:
        raise ScenarioError("sleep between 0 and 60 seconds, not %r" % tok)
    return value


def parse_one_field(tok):
    if "," in tok:
        raise ScenarioError("save and cmp take one field, not %r" % tok)
    return parse_fields(tok, SAVE_FIELDS)[0]


def enum(values):
    def parse(tok):
        if tok not in values:
            raise ScenarioError("expected one of %s, got %r" % ("|".join(values), tok))
        return tok
    return parse


def fd_name(tok):
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok):
        raise ScenarioError("bad descriptor name %r" % tok)
    return tok


# P path, L symlink target (may be absolute), F descriptor name, N saved name, M octal mode,
# I integer, T text, S plain word, O open flags, A access mode, W whence, X time, D field
# list, K stat kind, Y one field, R rename flag, Z xattr flag, B nofollow, U mknod type,
# E seconds, XN xattr name (a path's expansions, no other checks).
KINDS = {
    "P": expand_path,
    "L": lambda t: expand_path(t, absolute_ok=True),
    "F": fd_name,
    "N": fd_name,
    "M": parse_mode,
    "I": parse_int,
    "T": parse_text,
    "S": lambda t: t,
    "O": parse_flags,
    "A": parse_access,
    "W": parse_whence,
    "X": parse_time,
    "D": parse_fields,
    "K": enum(("stat", "lstat", "fstat")),
    "Y": parse_one_field,
    "R": enum(tuple(RENAME_FLAGS)),
    "Z": enum(tuple(XATTR_FLAGS)),
    "B": enum(("nofollow",)),
    "U": enum(tuple(MKNOD_TYPES)),
    "E": parse_float,
    "XN": lambda t: expand_path(t).encode("utf-8"),
}

# name: (kinds of the required arguments, kinds of the optional ones, function)
OPS = {
    "open": ("PO", "M", op_open),
    "write": ("FT", "", op_write),
    "pwrite": ("FIT", "", op_pwrite),
    "read": ("FI", "", op_read),
    "pread": ("FII", "", op_pread),
    "ftruncate": ("FI", "", op_ftruncate),
    "fsync": ("F", "", op_fsync),
    "fstat": ("FD", "", op_fstat),
    "close": ("F", "", op_close),
    "fchmod": ("FM", "", op_fchmod),
    "fchown": ("FII", "", op_fchown),
    "lseek": ("FIW", "", op_lseek),
    "futimens": ("FXX", "", op_futimens),
    "mkdir": ("PM", "", op_mkdir),
    "rmdir": ("P", "", op_rmdir),
    "unlink": ("P", "", op_unlink),
    "rename": ("PP", "R", op_rename),
    "link": ("PP", "", op_link),
    "symlink": ("LP", "", op_symlink),
    "readlink": ("P", "", op_readlink),
    "mkfifo": ("PM", "", op_mkfifo),
    "mknod": ("PUMII", "", op_mknod),
    "chmod": ("PM", "", op_chmod),
    "chown": ("PII", "", op_chown),
    "lchown": ("PII", "", op_lchown),
    "truncate": ("PI", "", op_truncate),
    "utimensat": ("PXX", "B", op_utimensat),
    "umask": ("M", "", op_umask),
    "setxattr": ("PST", "Z", op_setxattr),
    "getxattr": ("PS", "I", op_getxattr),
    "listxattr": ("P", "", op_listxattr),
    "removexattr": ("PS", "", op_removexattr),
    "access": ("PA", "", op_access),
    "stat": ("PD", "", op_stat),
    "lstat": ("PD", "", op_lstat),
    "save": ("NKSY", "", op_save),
    "cmp": ("NKSY", "", op_cmp),
    "ino_eq": ("PP", "", op_ino_eq),
    "sleep": ("E", "", op_sleep),
    "ls": ("P", "", op_ls),
    "cat": ("P", "", op_cat),
    "write_file": ("PT", "", op_write_file),
    "expect_size": ("PI", "", op_expect_size),
}
# Ops that only change the driver's own process and so never run as another user.
DRIVER_ONLY = {"umask", "sleep"}


def parse_cred(tok):
    m = re.fullmatch(r"([0-9]+):([0-9]+)(?::([0-9]+(?:,[0-9]+)*))?", tok)
    if not m:
        raise ScenarioError("expected UID:GID[:G1,G2,...] after 'as', got %r" % tok)
    groups = [int(g) for g in m.group(3).split(",")] if m.group(3) else []
    return (int(m.group(1)), int(m.group(2)), groups)


def parse_step(lineno, line):
    try:
        tokens = shlex.split(line, comments=True, posix=True)
    except ValueError as e:
        raise ScenarioError("cannot split the line: %s" % e)
    if not tokens:
        return None
    cred = None
    if tokens[0] == "as":
        if len(tokens) < 3:
            raise ScenarioError("'as' needs a user and an operation")
        cred = parse_cred(tokens[1])
        tokens = tokens[2:]
    fd = None
    if len(tokens) >= 2 and tokens[-2] == "=>":
        fd = fd_name(tokens[-1])
        tokens = tokens[:-2]
    op, raw = tokens[0], tokens[1:]
    if op not in OPS:
        raise ScenarioError("unknown operation %r" % op)
    required, optional, _ = OPS[op]
    if fd is not None and op != "open":
        raise ScenarioError("only open keeps a descriptor with '=> NAME'")
    if cred is not None and op in DRIVER_ONLY:
        raise ScenarioError("%s cannot run as another user" % op)
    if not len(required) <= len(raw) <= len(required) + len(optional):
        raise ScenarioError("%s takes %d to %d arguments, not %d"
                            % (op, len(required), len(required) + len(optional), len(raw)))
    kinds = required + optional
    args = []
    for i, tok in enumerate(raw):
        kind = kinds[i]
        if op in ("setxattr", "getxattr", "removexattr") and i == 1:
            kind = "XN"
        if op in ("save", "cmp") and i == 2:
            kind = "F" if raw[1] == "fstat" else "P"
        args.append(KINDS[kind](tok))
    if op == "open" and args[1] & os.O_CREAT and len(args) < 3:
        raise ScenarioError("open with O_CREAT needs a MODE")
    if op in ("setxattr", "getxattr", "removexattr"):
        args[1] = args[1].decode("utf-8")
    return Step(lineno, line.strip(), cred, op, args, fd)


def parse_scenario(path):
    steps = []
    saved = set()
    descriptors = set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            try:
                step = parse_step(lineno, line)
                if step is None:
                    continue
                if step.op == "save":
                    saved.add(step.args[0])
                if step.op == "cmp" and step.args[0] not in saved:
                    raise ScenarioError("cmp %s before any save of it" % step.args[0])
                if step.fd_name:
                    descriptors.add(step.fd_name)
                fd_arg = step.args[0] if step.op in (
                    "write", "pwrite", "read", "pread", "ftruncate", "fsync", "fstat", "close",
                    "fchmod", "fchown", "lseek", "futimens") else (
                    step.args[2] if step.op in ("save", "cmp") and step.args[1] == "fstat"
                    else None)
                if fd_arg is not None and fd_arg not in descriptors:
                    raise ScenarioError("descriptor %s used before any open of it" % fd_arg)
            except ScenarioError as e:
                raise ScenarioError("%s:%d: %s" % (os.path.basename(path), lineno, e))
            steps.append(step)
    return steps


# ---------------------------------------------------------------------------------------------
# Running

def perform(ctx, step):
    """Runs the step in this process; returns the result text. Only OSError becomes a result."""
    ctx.effects = Effects()
    fn = OPS[step.op][2]
    try:
        return fn(ctx, *step.args)
    except OSError as e:
        return errno_name(e)


def apply_effects(ctx, step, effects, fd_in_driver):
    if step.fd_name is not None:
        old = ctx.fds.get(step.fd_name)
        if old is not None:
            raise ScenarioError("descriptor %s is still open" % step.fd_name)
        ctx.fds[step.fd_name] = fd_in_driver
    elif fd_in_driver is not None:
        os.close(fd_in_driver)  # an open without "=> NAME" closes at once
    if effects.closed is not None:
        ctx.fds[effects.closed] = None
    ctx.saved.update(effects.saved)


def run_in_driver(ctx, step):
    result = perform(ctx, step)
    apply_effects(ctx, step, ctx.effects, ctx.effects.new_fd)
    return result


def run_as_user(ctx, step):
    uid, gid, groups = step.cred
    sys.stdout.flush()
    sys.stderr.flush()
    parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            parent_end.close()
            fds = []
            try:
                os.setgroups(groups)
                os.setgid(gid)
                os.setuid(uid)
                result = perform(ctx, step)
                effects = ctx.effects
                message = {"result": result, "closed": effects.closed,
                           "saved": effects.saved}
                if effects.new_fd is not None:
                    fds = [effects.new_fd]
            except BaseException:
                message = {"fatal": traceback.format_exc()}
            socket.send_fds(child_end, [b"F" if fds else b"N"], fds)
            child_end.sendall(json.dumps(message).encode("utf-8"))
            child_end.close()
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    child_end.close()
    try:
        first, fds, _, _ = socket.recv_fds(parent_end, 1, 1)
        chunks = []
        while True:
            chunk = parent_end.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        parent_end.close()
        _, status = os.waitpid(pid, 0)
    if not first or os.waitstatus_to_exitcode(status) != 0:
        raise ScenarioError("the child running the step as %d:%d failed (status %d)"
                            % (uid, gid, status))
    message = json.loads(b"".join(chunks).decode("utf-8"))
    if "fatal" in message:
        raise ScenarioError("the step failed in the child:\n" + message["fatal"])
    effects = Effects()
    effects.closed = message["closed"]
    effects.saved = message["saved"]
    if effects.closed is not None and ctx.fds.get(effects.closed) is not None:
        os.close(ctx.fds[effects.closed])
    new_fd = fds[0] if fds else None
    if step.fd_name is None and new_fd is None and first == b"F":
        raise ScenarioError("the child sent no descriptor")
    apply_effects(ctx, step, effects, new_fd)
    return message["result"]


def run_scenario(scenario, folder, out):
    steps = parse_scenario(scenario)
    if os.geteuid() != 0:
        raise ScenarioError("fsops.py must run as root (it runs steps as other users)")
    if not os.path.isdir(folder):
        raise ScenarioError("no such folder: %s" % folder)
    if os.listdir(folder):
        raise ScenarioError("the folder is not empty: %s" % folder)
    os.chdir(folder)
    os.umask(0o022)
    ctx = Context()
    try:
        for step in steps:
            try:
                if step.cred is None:
                    result = run_in_driver(ctx, step)
                else:
                    result = run_as_user(ctx, step)
            except ScenarioError as e:
                raise ScenarioError("%s:%d: %s" % (os.path.basename(scenario), step.lineno, e))
            except Exception:
                raise ScenarioError("%s:%d: %s" % (os.path.basename(scenario), step.lineno,
                                                   traceback.format_exc()))
            out.write("%d %s -> %s\n" % (step.lineno, step.text(), result))
            out.flush()
    finally:
        for fd in ctx.fds.values():
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
    return len(steps)


# ---------------------------------------------------------------------------------------------
# Self-test

def fs_type(path):
    """The type of the file system that holds path, from /proc/self/mountinfo."""
    path = os.path.realpath(path)
    best, best_type = "", "?"
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            mount_point = left.split()[4].replace("\\040", " ")
            inside = path == mount_point or path.startswith(mount_point.rstrip("/") + "/")
            if inside and len(mount_point) >= len(best):
                best, best_type = mount_point, right.split()[0]
    return best_type


def selftest(verbose):
    if os.geteuid() != 0:
        print("fsops.py --selftest must run as root", file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    scenarios = sorted(glob.glob(os.path.join(here, "*.scn")))
    if not scenarios:
        print("no scenarios in %s" % here, file=sys.stderr)
        return 2
    failures = 0
    print("reference file system under %s: %s" % (tempfile.gettempdir(),
                                                     fs_type(tempfile.gettempdir())))
    for scenario in scenarios:
        name = os.path.basename(scenario)
        outputs = []
        bases = []
        problem = None
        try:
            # Two folders at different depths: the outputs must not show where they ran.
            for sub in ("a", os.path.join("bb", "ccc", "dddd")):
                base = tempfile.mkdtemp(prefix="fsops-selftest-")
                bases.append(base)
                os.chmod(base, 0o755)
                folder = os.path.join(base, sub)
                os.makedirs(folder, mode=0o755)
                for d in (os.path.join(base, "bb"), os.path.join(base, "bb", "ccc"), folder):
                    if os.path.isdir(d):
                        os.chmod(d, 0o755)
                started = time.monotonic()
                proc = subprocess.run([sys.executable, os.path.abspath(__file__), scenario,
                                       folder], capture_output=True, text=True)
                elapsed = time.monotonic() - started
                if proc.returncode != 0:
                    problem = "exit %d: %s" % (proc.returncode, proc.stderr.strip())
                    break
                if base in proc.stdout:
                    problem = "the output shows the folder %s" % base
                    break
                outputs.append(proc.stdout)
        finally:
            for base in bases:
                shutil.rmtree(base, ignore_errors=True)
        if problem is None and outputs[0] != outputs[1]:
            diff = [("  first:  " + a, "  second: " + b) for a, b in
                    zip(outputs[0].splitlines(), outputs[1].splitlines()) if a != b]
            problem = "the two runs differ:\n" + "\n".join(x for pair in diff[:10]
                                                           for x in pair)
        steps = len(outputs[0].splitlines()) if outputs else 0
        if problem is None:
            print("ok    %-20s %4d steps, identical in both folders (%.1f s a run)"
                  % (name, steps, elapsed))
            if verbose:
                sys.stdout.write(outputs[0])
        else:
            failures += 1
            print("FAIL  %-20s %s" % (name, problem))
    print("%d of %d scenarios passed the self-test" % (len(scenarios) - failures,
                                                       len(scenarios)))
    return 1 if failures else 0


def main(argv):
    sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")
    if len(argv) >= 2 and argv[1] == "--selftest":
        if len(argv) > 3 or (len(argv) == 3 and argv[2] != "-v"):
            print("usage: fsops.py --selftest [-v]", file=sys.stderr)
            return 2
        return selftest(len(argv) == 3)
    if len(argv) != 3:
        print("usage: fsops.py SCENARIO_FILE DIR | fsops.py --selftest [-v]", file=sys.stderr)
        return 2
    try:
        run_scenario(argv[1], argv[2], sys.stdout)
    except ScenarioError as e:
        sys.stdout.flush()
        print("fsops.py: scenario error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
