package stdiotransport

import (
	"bytes"
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
// the last StderrTailBytes in a ring. Safe for concurrent use.
type stderrTail struct {
	mu    sync.Mutex
	buf   [StderrTailBytes]byte
	start int   // index of the oldest kept byte
	n     int   // bytes kept
	total int64 // bytes written
}

// Write keeps the last StderrTailBytes of p and what came before it; it
// never fails and never blocks on anything but the lock.
func (s *stderrTail) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	q := p
	if len(q) >= len(s.buf) {
		copy(s.buf[:], q[len(q)-len(s.buf):])
		s.start, s.n = 0, len(s.buf)
		return len(p), nil
	}
	w := (s.start + s.n) % len(s.buf)
	k := copy(s.buf[w:], q)
	copy(s.buf[:], q[k:])
	s.n += len(q)
	if s.n > len(s.buf) {
		s.start = (s.start + s.n - len(s.buf)) % len(s.buf)
		s.n = len(s.buf)
	}
	return len(p), nil
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
