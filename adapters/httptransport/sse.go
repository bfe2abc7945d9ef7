package httptransport

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// streamEvent is one server-sent event as the go-sdk's reader (mcp/event.go)
// yields it: name, id and retry are the last of their fields, trimmed of
// spaces; data joins the data lines (each trimmed of spaces) with '\n'.
// data is only valid until the next call of sseReader.next.
type streamEvent struct {
	name, id, retry string
	data            []byte
}

// errSSEMalformed is the error of a line without a ':' (the SDK fails the
// stream on one), errSSETooLarge that of an event over the receive cap.
var (
	errSSEMalformed = errors.New("httptransport: malformed line in SSE stream")
	errSSETooLarge  = errors.New("httptransport: SSE event exceeded the receive cap")
)

// sseBufSize is the first size of the buffer a stream is read into (it
// doubles while a line does not fit), and maxPooledSSE the largest buffer
// kept for the next stream: a tools/list page of a large catalog (about
// 75 KiB for 100 tools with their schemas) is read into a warm buffer
// without allocating, while a stream that carried a larger event does
// not pin its memory.
const (
	sseBufSize   = 4 << 10
	maxPooledSSE = 1 << 20
)

// sseReader splits an SSE stream into events. Lines end at "\r\n", "\n"
// or a lone "\r" (the SSE specification; a "\r" that ends one read and a
// "\n" that starts the next are one line end); a line "field:value" sets
// a field ("event", "id", "retry", "data"; others are ignored, and a
// line starting with ':' is a comment); an empty line ends the event. An
// event cut by the end of the stream is delivered, as the SDK does. An
// event whose lines (line ends included) exceed limit bytes fails the
// stream with errSSETooLarge before more of it is buffered. It is not
// safe for concurrent use; its buffers are pooled (release).
//
// The stream is read into one buffer, grown by doubling while a line
// does not fit (so a line is never copied out of it), and an event's
// only data line (how servers write a message) is handed out as it lies
// in the buffer: the buffer keeps it in place, its offsets moved when the
// buffer is compacted, until the event ends. Only an event with several
// data lines is joined into a second buffer.
type sseReader struct {
	body  io.Reader
	limit int
	bufs  *sseBufs
	r, w  int  // bufs.buf[r:w] is read but not yet split
	skip  bool // the last line ended with '\r': a '\n' first is its end
	eof   bool
	err   error // the read error to report once the buffer is empty
	// ds and de are the offsets in bufs.buf of the current event's only
	// data value so far, when pinned (ds >= 0): compaction keeps
	// bufs.buf[ds:] and moves both.
	ds, de int
}

// sseBufs are the buffers of one sseReader, pooled.
type sseBufs struct {
	buf  []byte // the stream's bytes; at least sseBufSize long
	data []byte // the joined data of an event with several data lines
}

var ssePool = sync.Pool{New: func() any { return &sseBufs{buf: make([]byte, sseBufSize)} }}

func newSSEReader(body io.Reader, limit int64) *sseReader {
	l := int(min(limit, int64(int(^uint(0)>>1))))
	return &sseReader{body: body, limit: l, bufs: ssePool.Get().(*sseBufs), ds: -1}
}

// lasting marks the reader's stream as one that may stay open for the
// whole session (the legacy era's standalone GET stream): a buffer the
// pool handed out grown by earlier streams is swapped for a first-size
// one (the grown one goes back to the pool), so that an idle stream does
// not hold up to maxPooledSSE for its lifetime. It may still grow for an
// event that needs it, as any stream's buffer does.
func (s *sseReader) lasting() {
	b := s.bufs
	if len(b.buf) <= sseBufSize {
		return
	}
	big := &sseBufs{buf: b.buf}
	b.buf = make([]byte, sseBufSize)
	ssePool.Put(big)
}

// release gives the buffers back (a buffer larger than maxPooledSSE is
// left to the collector); the reader must not be used after, nor the data
// of an event it returned.
func (s *sseReader) release() {
	b := s.bufs
	if b == nil {
		return
	}
	s.bufs = nil
	if len(b.buf) > maxPooledSSE {
		b.buf = make([]byte, sseBufSize)
	}
	if cap(b.data) > maxPooledSSE {
		b.data = nil
	}
	b.data = b.data[:0]
	ssePool.Put(b)
}

// fill reads more of the stream into the buffer after w, making room
// first when it is full: the bytes before keep (the start of the line
// being read, or of the pinned data value when there is one) are dropped
// and the rest moved to the front; when nothing can be dropped the
// buffer doubles. It returns how far the buffer moved (keep's new offset
// is keep-shift). Read errors are kept in s.eof and s.err.
func (s *sseReader) fill(keep int) (shift int) {
	b := s.bufs
	if s.ds >= 0 {
		keep = min(keep, s.ds)
	}
	switch {
	case keep == s.w || (keep > 0 && s.w == len(b.buf)):
		// Nothing to keep, or room once the consumed bytes are dropped.
		copy(b.buf, b.buf[keep:s.w])
		shift = keep
	case s.w == len(b.buf):
		nb := make([]byte, 2*len(b.buf))
		copy(nb, b.buf[:s.w])
		b.buf = nb
	}
	s.r -= shift
	s.w -= shift
	if s.ds >= 0 {
		s.ds -= shift
		s.de -= shift
	}
	m, err := s.body.Read(b.buf[s.w:])
	s.w += m
	if err != nil {
		s.eof, s.err = true, err
	}
	return shift
}

// readLine returns the next line without its end, as it lies in the
// buffer (valid until the next call), its offset there, and how many
// bytes it took from the stream (line end included); io.EOF (or the read
// error) once nothing is left, a final line without an end being returned
// first. budget bounds the bytes taken: beyond it errSSETooLarge.
func (s *sseReader) readLine(budget int) (line []byte, at, n int, err error) {
	b := s.bufs
	for s.skip {
		if s.r < s.w {
			s.skip = false
			if b.buf[s.r] == '\n' {
				s.r++
				n++
			}
			break
		}
		if s.eof {
			s.skip = false
			break
		}
		s.fill(s.r)
	}
	start, scanned := s.r, s.r // the line is buf[start:...]; no end in buf[start:scanned]
	for {
		if i := lineEnd(b.buf[scanned:s.w]); i >= 0 {
			end := scanned + i
			n += end - start + 1
			if n > budget {
				return nil, 0, n, errSSETooLarge
			}
			s.r = end + 1
			if b.buf[end] == '\r' {
				s.skip = true
			}
			return b.buf[start:end], start, n, nil
		}
		if n+s.w-start > budget {
			return nil, 0, n + s.w - start, errSSETooLarge
		}
		if s.eof {
			s.r = s.w
			if s.w > start {
				return b.buf[start:s.w], start, n + s.w - start, nil
			}
			return nil, 0, n, s.err
		}
		scanned = s.w
		shift := s.fill(start)
		start -= shift
		scanned -= shift
	}
}

// next returns the next event. Its error is io.EOF at the end of the
// stream, errSSEMalformed, errSSETooLarge, or the body's read error.
func (s *sseReader) next() (streamEvent, error) {
	var ev streamEvent
	hasData, joined, some := false, false, false
	b := s.bufs
	b.data = b.data[:0]
	s.ds = -1
	data := func() []byte {
		if joined {
			return b.data
		}
		if s.ds >= 0 {
			return b.buf[s.ds:s.de:s.de]
		}
		return b.data
	}
	taken := 0
	for {
		line, at, n, err := s.readLine(s.limit - taken)
		taken += n
		if err != nil {
			if err == errSSETooLarge {
				s.ds = -1
				return streamEvent{}, err
			}
			if some {
				ev.data = data()
				s.ds = -1
				return ev, nil // cut by the end of the stream
			}
			s.ds = -1
			return streamEvent{}, err
		}
		if len(line) == 0 {
			if some {
				ev.data = data()
				s.ds = -1
				return ev, nil
			}
			taken = 0
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			s.ds = -1
			return streamEvent{}, errSSEMalformed
		}
		key, val := line[:colon], line[colon+1:]
		switch string(key) {
		case "event":
			if v := bytes.TrimSpace(val); string(v) == "message" {
				ev.name = "message" // no copy for the common name
			} else {
				ev.name = string(v)
			}
		case "id":
			ev.id = string(bytes.TrimSpace(val))
		case "retry":
			ev.retry = string(bytes.TrimSpace(val))
		case "data":
			v := bytes.TrimSpace(val)
			switch {
			case !hasData:
				// Pinned where it lies (bytes.TrimSpace returns a
				// subslice of val); an empty value is not pinned, so
				// that empty lines after it (which do not end the
				// event) let the buffer be compacted.
				if len(v) > 0 {
					s.ds = at + colon + 1 + cap(val) - cap(v)
					s.de = s.ds + len(v)
				}
				hasData = true
			case !joined:
				if s.ds >= 0 {
					b.data = append(b.data, b.buf[s.ds:s.de]...)
					s.ds = -1
				}
				joined = true
				fallthrough
			default:
				b.data = append(b.data, '\n')
				b.data = append(b.data, v...)
			}
		default:
			continue
		}
		some = ev.name != "" || ev.id != "" || ev.retry != "" || (hasData && len(data()) > 0)
	}
}

// lineEnd returns the index of the first '\r' or '\n' in b, or -1: two
// vectorised IndexByte scans (the '\r' one only before the first '\n')
// instead of IndexAny's byte-by-byte loop, which dominated reading a
// large event.
func lineEnd(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	if n >= 0 {
		b = b[:n]
	}
	if r := bytes.IndexByte(b, '\r'); r >= 0 {
		return r
	}
	return n
}
