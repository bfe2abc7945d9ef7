package stdiotransport

import (
	"bytes"
	"io"
	"sync"
)

// The bounds of the stderr tail a Transport keeps.
const (
	// StderrTailBytes is how many of the most recent bytes of the child's
	// stderr (its whole process group's) a Transport keeps in memory:
	// 16 KiB. Older bytes are dropped as new ones arrive.
	StderrTailBytes = 16 << 10
	// StderrTailLines is the most lines Transport.StderrTail returns: the
	// last 100.
	StderrTailLines = 100
)

// stderrTail is the child's stderr sink: it counts every byte and keeps
// the last StderrTailBytes in a ring, grown on demand (a quiet child's
// costs nothing). Safe for concurrent use.
type stderrTail struct {
	mu    sync.Mutex
	buf   []byte // the ring; its length grows to StderrTailBytes
	start int    // index of the oldest kept byte
	n     int    // bytes kept
	total int64  // bytes written
}

// Write keeps the last StderrTailBytes of p and what came before it; it
// never fails and never blocks on anything but the lock.
func (s *stderrTail) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	q := p
	if need := s.n + len(q); need > len(s.buf) && len(s.buf) < StderrTailBytes {
		s.growRing(need)
	}
	if len(q) >= len(s.buf) {
		copy(s.buf, q[len(q)-len(s.buf):])
		s.start, s.n = 0, len(s.buf)
		return len(p), nil
	}
	w := (s.start + s.n) % len(s.buf)
	k := copy(s.buf[w:], q)
	copy(s.buf, q[k:])
	s.n += len(q)
	if s.n > len(s.buf) {
		s.start = (s.start + s.n - len(s.buf)) % len(s.buf)
		s.n = len(s.buf)
	}
	return len(p), nil
}

// growRing replaces the ring by one of at least need bytes (at most
// StderrTailBytes), holding the kept bytes from its front.
func (s *stderrTail) growRing(need int) {
	size := min(max(need, 2*len(s.buf), 256), StderrTailBytes)
	ring := make([]byte, size)
	k := copy(ring, s.buf[s.start:min(s.start+s.n, len(s.buf))])
	copy(ring[k:], s.buf[:s.n-k])
	s.buf, s.start = ring, 0
}

// stderrReadSize is the small buffer ReadFrom reads into between bursts.
const stderrReadSize = 512

// ReadFrom drains r into the tail until r ends, and returns what it read
// and r's error (nil at io.EOF). os/exec's goroutine that copies the
// child's stderr pipe calls it (in place of io.Copy's 32 KiB buffer held
// for the child's whole life): it reads into a small buffer, and into a
// pooled readBufSize one only while reads keep filling the small one (a
// burst), releasing that one after the first read that does not fill it,
// before it waits again.
func (s *stderrTail) ReadFrom(r io.Reader) (int64, error) {
	small := make([]byte, stderrReadSize)
	var big *[]byte
	defer func() {
		if big != nil {
			readBufs.Put(big)
		}
	}()
	var total int64
	for {
		buf := small
		if big != nil {
			buf = *big
		}
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = s.Write(buf[:n])
			total += int64(n)
		}
		switch {
		case n == len(buf) && big == nil:
			big = readBufs.Get().(*[]byte)
		case n < len(buf) && big != nil:
			readBufs.Put(big)
			big = nil
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// bytesWritten is the count of every byte written.
func (s *stderrTail) bytesWritten() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// tail returns the kept bytes as whole lines: when older bytes were
// dropped, the partial first line is dropped too (so a value cut by the
// bound never shows its end alone); then only the last StderrTailLines
// lines are kept. The last line may lack its newline (the child may still
// be writing it).
func (s *stderrTail) tail() string {
	s.mu.Lock()
	b := make([]byte, 0, s.n)
	b = append(b, s.buf[s.start:min(s.start+s.n, len(s.buf))]...)
	if s.start+s.n > len(s.buf) {
		b = append(b, s.buf[:s.start+s.n-len(s.buf)]...)
	}
	truncated := s.total > int64(s.n)
	s.mu.Unlock()
	if truncated {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return ""
		}
		b = b[i+1:]
	}
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	lines := 1
	for i := end - 1; i >= 0; i-- {
		if b[i] != '\n' {
			continue
		}
		if lines == StderrTailLines {
			b = b[i+1:]
			break
		}
		lines++
	}
	return string(b)
}
