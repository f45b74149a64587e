"""Where checkpoint bytes come from and where they go: reads that never take more memory than
the bytes actually there, and writes that replace a file whole or not at all.

Reading: a checkpoint's own sizes are believed only as far as the file backs them. For a regular
file or an in-memory buffer the size is known, and a size in a header that reaches past the end
is refused before anything is allocated; for anything else (``/dev/zero``, a device, a pipe
behind a path) memory grows only with the bytes that actually arrive.

Writing: the bytes go to an unnamed file in the target's directory (Linux ``O_TMPFILE``), which
is fsync'ed, given a hidden name and renamed over the target. A save killed while writing
therefore leaves nothing behind at all; where ``O_TMPFILE`` is missing the temporary file is
named ``.<target>.<pid>.<hex>.leafgrad-tmp`` from the start, and every successful save of that
target removes the ones whose process is gone.
"""
import errno
import io
import os
import pickle
import stat

import numpy as np

CHUNK = 16 << 20  # bytes read at a time where the destination cannot be allocated up front


class CheckpointError(RuntimeError):
    """A file that is not a complete, intact checkpoint that leafgrad can read: truncated,
    damaged, malformed, or holding a type leafgrad does not have."""


# A checkpoint that names a class or function neither admitted by default nor allowlisted, or a
# pickle that asks for more than data: refused before anything is built from it, with the very
# type torch.load's weights_only refusals have (not a RuntimeError: ``except RuntimeError``
# catches neither).
UnsafeCheckpointError = pickle.UnpicklingError


_DOCS = ('\n\nCheck the documentation of leafgrad.load to learn more about types accepted by default with '
         'weights_only https://pytorch.org/docs/stable/generated/torch.load.html.')
_NO_CODE = ('leafgrad.load never rebuilds a class or calls a function that is not allowlisted, with '
            '`weights_only=False` neither.')


def refusal(detail, kind='other'):
    """The UnsafeCheckpointError for ``detail`` (torch's words), wrapped as torch.load wraps its
    weights-only errors: ``kind`` 'global' (a global not allowlisted), 'blocked' (a module never
    allowed) or 'other'. leafgrad's header says what is true of leafgrad: the allowlist is the one
    way to load more, whatever ``weights_only`` says."""
    if kind == 'global':
        return UnsafeCheckpointError(
            'Weights only load failed. This file can still be loaded, to do so you have one option, \033[1mdo it '
            'only if you trust the source of the checkpoint\033[0m: allowlist the global named below, as the '
            f'following error message recommends ({_NO_CODE})\n\tWeightsUnpickler error: {detail}{_DOCS}')
    return UnsafeCheckpointError(f'Weights only load failed. {_NO_CODE}\n\n{detail}{_DOCS}')


class Source:
    """A binary file being read from its current position.

    ``size`` is the number of bytes from the start position to the end when it can be known
    (regular files, seekable buffers), else None. ``path`` is set when it was opened by name.
    """

    def __init__(self, file, name, size, path=None):
        self.file = file
        self.name = name
        self.size = size
        self.path = path
        self.start = file.tell() if size is not None else 0
        self.pos = 0  # bytes consumed since start

    @classmethod
    def open(cls, f):
        """A Source for a path or a readable file object (which must be seekable, as torch.load
        requires); the caller closes ``.file`` when it opened it (``.path`` set)."""
        if isinstance(f, (str, bytes, os.PathLike)):
            path = os.fsdecode(f)
            file = open(path, 'rb')
            try:
                st = os.fstat(file.fileno())
                size = st.st_size if stat.S_ISREG(st.st_mode) else None
                return cls(file, repr(path), size, path=path)
            except BaseException:
                file.close()
                raise
        if not callable(getattr(f, 'read', None)):
            raise AttributeError(f"'{type(f).__name__}' object has no attribute 'read'")
        _check_seekable(f)
        return cls(f, 'the checkpoint stream', _stream_size(f))

    def close_if_opened(self):
        if self.path is not None:
            self.file.close()

    @property
    def remaining(self):
        return None if self.size is None else self.size - self.pos

    def _short(self, n, what):
        return CheckpointError(f'leafgrad.load: {self.name} is truncated: {what} needs {n} more bytes than the '
                               f'file holds')

    def require(self, n, what):
        """Fail now if fewer than ``n`` bytes are left (when the size is known)."""
        if self.size is not None and n > self.size - self.pos:
            raise self._short(n - (self.size - self.pos), what)

    def read(self, n, what='the file'):
        """Exactly ``n`` bytes (CheckpointError if the file ends first)."""
        self.require(n, what)
        if n <= CHUNK:
            data = self.file.read(n)
        else:  # a size nothing vouches for yet: let memory follow what arrives
            parts, got = [], 0
            while got < n:
                part = self.file.read(min(CHUNK, n - got))
                if not part:
                    break
                parts.append(part)
                got += len(part)
            data = b''.join(parts)
        if len(data) != n:
            self.pos += len(data)
            raise self._short(n - len(data), what)
        self.pos += n
        return data

    def readline(self, limit, what):
        line = self.file.readline(limit)
        self.pos += len(line)
        if not line.endswith(b'\n'):
            raise CheckpointError(f'leafgrad.load: {self.name} is corrupted: {what} is not a line of at most '
                                  f'{limit} bytes')
        return line

    def read_array(self, nbytes, what):
        """A new writable uint8 array of the next ``nbytes`` bytes, read straight into place."""
        self.require(nbytes, what)
        if self.size is None:
            buf = bytearray()
            while len(buf) < nbytes:
                part = self.file.read(min(CHUNK, nbytes - len(buf)))
                if not part:
                    raise self._short(nbytes - len(buf), what)
                buf += part
            self.pos += nbytes
            return np.frombuffer(buf, np.uint8)
        out = np.empty(nbytes, np.uint8)
        self.read_into(out, what)
        return out

    def read_into(self, out, what):
        """Fill the uint8 array ``out`` (NumPy) with the next ``out.size`` bytes."""
        view = memoryview(out).cast('B')
        readinto = getattr(self.file, 'readinto', None)
        done = 0
        while done < len(view):
            if readinto is not None:
                got = readinto(view[done:done + CHUNK * 4])
            else:
                part = self.file.read(min(CHUNK, len(view) - done))
                got = len(part)
                view[done:done + got] = part
            if not got:
                self.pos += done
                raise self._short(len(view) - done, what)
            done += got
        self.pos += done

    def seek(self, pos):
        """Move to ``pos`` bytes after the start (sources of known size only)."""
        self.file.seek(self.start + pos)
        self.pos = pos

    def seek_absolute(self, position):
        """Move to ``position`` in the underlying file (as a zip directory counts)."""
        self.file.seek(position)
        self.pos = position - self.start


class _Mapping:
    """A file mapped copy-on-write; ``mapping[begin:end]`` is a writable uint8 array on those
    bytes, one per storage (each its own NumPy base, so that saving one saves only its bytes)."""

    def __init__(self, mm, offset):
        self.mm, self.offset = mm, offset
        self.size = len(mm) - offset

    def __getitem__(self, part):
        begin, end = part.start, part.stop
        if end == begin:
            return np.empty(0, np.uint8)
        return np.frombuffer(self.mm, np.uint8, count=end - begin, offset=self.offset + begin)


def map_copy_on_write(source, offset):
    """The file of ``source`` from ``offset`` on, mapped copy-on-write (``mmap=True``): tensors
    on it may be changed, the file is not."""
    if source.path is None:
        raise ValueError('f must be a file path in order to use the mmap argument')
    import mmap  # (loaded when first used: only load(mmap=True) needs it)
    with open(source.path, 'rb') as f:
        return _Mapping(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY), offset)


def _check_seekable(f):
    # torch.load reads only from seekable files, with this advice
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        raise type(e)(str(e) + '. You can only leafgrad.load from a file that is seekable. Please pre-load the '
                      'data into a buffer like io.BytesIO and try to load from it instead.') from None


def _stream_size(f):
    """Bytes from the current position to the end of a seekable stream, or None where the end
    is not a size (a file object on a device or pipe)."""
    try:
        st = os.fstat(f.fileno())
    except (AttributeError, OSError, io.UnsupportedOperation, ValueError):
        pass
    else:
        if not stat.S_ISREG(st.st_mode):
            return None
    here = f.tell()
    end = f.seek(0, io.SEEK_END)
    f.seek(here)
    return max(end - here, 0)


# ---- writing -------------------------------------------------------------------------------------
_TEMP_SUFFIX = '.leafgrad-tmp'


def write_atomically(path, write):
    """Write the file ``path`` as ``write(binary_file)`` writes it, whole or not at all.

    A symlink is written through (its target is replaced, the link kept, as ``open(path, 'wb')``
    does); a new file gets the permissions ``open`` would give it (0o666 less the umask), an
    existing one keeps its own.
    """
    path = os.fspath(path)
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f'Parent directory {parent} does not exist.')
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    directory, base = os.path.split(target)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = _write_temp(directory, base, mode, write, path)
    try:
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
    remove_stale_temps(directory, base)


def _temp_name(directory, base):
    return os.path.join(directory, f'.{base}.{os.getpid()}.{os.urandom(4).hex()}{_TEMP_SUFFIX}')


def _write_temp(directory, base, mode, write, path):
    """Write and fsync the new contents; return the hidden name they now have."""
    fd = _open_unnamed(directory)
    if fd is not None:
        try:
            with os.fdopen(fd, 'wb') as out:
                _fill(out, mode, write)
                tmp = _temp_name(directory, base)
                os.link(f'/proc/self/fd/{out.fileno()}', tmp)
            return tmp
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.EPERM, errno.EXDEV, errno.EOPNOTSUPP, errno.EACCES):
                raise _about(e, path) from None
            # the unnamed file cannot be given a name here (no /proc, say): write a named one
    tmp = _temp_name(directory, base)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_CLOEXEC', 0), 0o666)
    except OSError as e:
        raise _about(e, path) from None
    try:
        with os.fdopen(fd, 'wb') as out:
            _fill(out, mode, write)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _open_unnamed(directory):
    flag = getattr(os, 'O_TMPFILE', None)
    if flag is None or not os.path.isdir('/proc/self/fd'):
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY | getattr(os, 'O_CLOEXEC', 0), 0o666)
    except OSError:  # a filesystem without O_TMPFILE (EOPNOTSUPP, EISDIR on old kernels, ...)
        return None


def _fill(out, mode, write):
    if mode is not None:
        os.fchmod(out.fileno(), mode)
    write(out)
    out.flush()
    os.fsync(out.fileno())


def _about(e, path):
    """The same OSError, naming the file the caller asked for rather than a temporary one."""
    if isinstance(e, OSError) and e.errno is not None:
        return type(e)(e.errno, e.strerror, path)
    return e


def _unlink_quietly(name):
    try:
        os.unlink(name)
    except OSError:
        pass


def remove_stale_temps(directory, base):
    """Remove the temporary files of saves of ``base`` whose process no longer runs (killed
    between naming and renaming, or on a filesystem without unnamed files)."""
    prefix = f'.{base}.'
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(_TEMP_SUFFIX)):
            continue
        parts = entry[len(prefix):-len(_TEMP_SUFFIX)].split('.')
        if len(parts) != 2 or not parts[0].isdigit() or len(parts[1]) != 8:
            continue
        pid = int(parts[0])
        if pid != os.getpid() and not _process_exists(pid):
            _unlink_quietly(os.path.join(directory, entry))


def _process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True
