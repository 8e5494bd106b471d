package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// What a run leaves in its directory was written by the customer's code,
// which can replace any file there with a link (to /dev/zero, to the
// worker's /proc/self/environ), a FIFO or a file of any size before the
// run ends. The host therefore reads nothing of a run's directory with a
// plain open: only through OpenResult and ReadResult, which never follow
// a link, take only a regular file of a bounded size, and read under a
// deadline.

// ErrUnsafeResult is what OpenResult answers for a file the host must not
// read: a link, a FIFO, a device, a directory, or a path leaving the run's
// directory. errors.Is matches it.
var ErrUnsafeResult = errors.New("not a regular file inside the run's directory")

// ErrResultTooLarge means a file a run left is larger than the host reads.
var ErrResultTooLarge = errors.New("larger than the host reads")

// ReadDeadline bounds how long the host reads one file a run left.
const ReadDeadline = 30 * time.Second

// OpenResult opens the file at rel (slash-separated, relative to dir, a
// run's directory on the host) for reading, refusing every link on the
// way (symlinks and /proc's magic links), any path that leaves dir or
// crosses a mount, and anything but a regular file of at most max bytes.
// It answers the file and its size.
func OpenResult(dir, rel string, max int64) (*os.File, int64, error) {
	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	if rel == "." || path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, 0, fmt.Errorf("%s: %w", rel, ErrUnsafeResult)
	}
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("open the run's directory: %w", err)
	}
	defer unix.Close(root)
	// O_NONBLOCK: opening a FIFO must not wait for a writer that never
	// comes; the type check below refuses it.
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	fd, err := unix.Openat2(root, rel, &unix.OpenHow{Flags: uint64(flags),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV})
	if errors.Is(err, unix.ENOSYS) {
		fd, err = openBeneath(root, rel, flags)
	}
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV), errors.Is(err, unix.ENXIO):
		return nil, 0, fmt.Errorf("%s: %w", rel, ErrUnsafeResult)
	case err != nil:
		return nil, 0, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, 0, &os.PathError{Op: "stat", Path: rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		_ = unix.Close(fd)
		return nil, 0, fmt.Errorf("%s: %w", rel, ErrUnsafeResult)
	}
	if st.Size > max {
		_ = unix.Close(fd)
		return nil, 0, fmt.Errorf("%s is %d bytes: %w (%d)", rel, st.Size, ErrResultTooLarge, max)
	}
	return os.NewFile(uintptr(fd), path.Join(dir, rel)), st.Size, nil
}

// openBeneath is OpenResult's resolution on kernels without openat2: one
// component at a time, each opened without following a link.
func openBeneath(root int, rel string, flags int) (int, error) {
	parts := strings.Split(rel, "/")
	at := root
	for i, p := range parts {
		if p == ".." || p == "" {
			if at != root {
				_ = unix.Close(at)
			}
			return -1, unix.EXDEV
		}
		f := unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(parts)-1 {
			f = flags
		}
		fd, err := unix.Openat(at, p, f, 0)
		if at != root {
			_ = unix.Close(at)
		}
		if err != nil {
			return -1, err
		}
		at = fd
	}
	return at, nil
}

// ReadResult reads the file at rel inside dir as OpenResult opens it,
// whole, within ReadDeadline (or ctx's end, if sooner).
func ReadResult(ctx context.Context, dir, rel string, max int64) ([]byte, error) {
	f, size, err := OpenResult(dir, rel, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(ctx, ReadDeadline)
	defer cancel()
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		// The file cannot grow past what was checked: read at most that.
		b := make([]byte, 0, size)
		b, err := readUpTo(f, b, size)
		done <- read{b, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("read %s: %w", rel, r.err)
		}
		return r.b, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("read %s: %w", rel, ctx.Err())
	}
}

func readUpTo(r io.Reader, b []byte, n int64) ([]byte, error) {
	lr := io.LimitReader(r, n)
	for {
		if len(b) == cap(b) {
			return b, nil
		}
		m, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
