package httptransport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SetInboundFilter makes tr, a transport Factory.Transport returned, ask
// admit about every request and notification the server sends in an SSE
// stream (its method, and whether it is a request) before the SDK reads
// it, and drop the event when admit returns false; responses and events
// the SDK would not decode as a message pass unchanged. It is mcpsession's
// Conn.InboundFilter: the SDK queues every inbound request and
// notification without bound, so a flood must be cut here. A JSON reply
// carries one message, the answer to one request, and is not filtered.
// admit is called from the goroutine reading the stream and must not
// block. A later call replaces the filter; nil removes it (for streams
// opened after the call). It reports false, doing nothing, when tr was not
// made by this package. Safe for concurrent use.
func SetInboundFilter(tr *mcp.StreamableClientTransport, admit func(method string, call bool) bool) bool {
	if tr == nil || tr.HTTPClient == nil {
		return false
	}
	rt, ok := tr.HTTPClient.Transport.(*roundTripper)
	if !ok {
		return false
	}
	if admit == nil {
		rt.filter.Store(nil)
	} else {
		rt.filter.Store(&admit)
	}
	return true
}

// sseFilter passes an SSE stream through, event by event, dropping the
// events whose message the filter refuses. It splits the stream exactly as
// the go-sdk's reader does (mcp/event.go): lines end at '\n', a trailing
// '\r' is trimmed, an empty line ends an event, a line is "field:value";
// so what it judges is what the SDK will read. An event longer than limit
// is passed on unjudged (the SDK refuses it, since its MaxEventSize is the
// same cap), and so is anything after a read error.
type sseFilter struct {
	body  io.ReadCloser
	admit func(method string, call bool) bool
	limit int

	mu      sync.Mutex // guards reading and closed
	reading bool       // a Read is under way: Close leaves bufs to it
	closed  bool

	bufs    *sseBufs // nil once given back
	content bool     // the line being read has a byte other than '\r' and '\n'
	over    bool     // the event outgrew limit: its lines pass as they come
	out     []byte   // what Read hands out next (the unread part of bufs.out)
	err     error
}

// sseBufs are the buffers of one sseFilter, pooled: a stream's answer is
// read through them, then they serve the next stream. A buffer that grew
// past maxPooledEvent (an event that large) is dropped rather than kept.
type sseBufs struct {
	r     *bufio.Reader
	event []byte // the raw lines of the event being read
	out   []byte // the backing of sseFilter.out
}

// sseReadSize is the size of the reader a stream is split with (a longer
// line is read in pieces; a session's standing GET stream holds one for
// its whole life), and maxPooledEvent the largest event buffer kept for
// the next stream.
const (
	sseReadSize    = 4 << 10
	maxPooledEvent = 64 << 10
)

var ssePool = sync.Pool{New: func() any { return &sseBufs{r: bufio.NewReaderSize(nil, sseReadSize)} }}

// errReadAfterClose is what Read returns once the filter is closed.
var errReadAfterClose = errors.New("httptransport: read on closed response body")

func newSSEFilter(body io.ReadCloser, admit func(string, bool) bool, limit int64) *sseFilter {
	l := int(min(limit, int64(int(^uint(0)>>1))))
	b := ssePool.Get().(*sseBufs)
	b.r.Reset(body)
	return &sseFilter{body: body, bufs: b, admit: admit, limit: l}
}

// Close closes the body and gives the buffers back (once a Read under way
// returns). It may be called concurrently with Read.
func (f *sseFilter) Close() error {
	err := f.body.Close()
	f.mu.Lock()
	f.closed = true
	if !f.reading {
		f.release()
	}
	f.mu.Unlock()
	return err
}

// release gives the buffers back to the pool; f.mu is held.
func (f *sseFilter) release() {
	b := f.bufs
	if b == nil {
		return
	}
	f.bufs, f.out = nil, nil
	b.r.Reset(nil)
	if cap(b.event) > maxPooledEvent {
		b.event = nil
	}
	if cap(b.out) > maxPooledEvent {
		b.out = nil
	}
	b.event, b.out = b.event[:0], b.out[:0]
	ssePool.Put(b)
}

func (f *sseFilter) Read(p []byte) (int, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return 0, errReadAfterClose
	}
	f.reading = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.reading = false
		if f.closed {
			f.release()
		}
		f.mu.Unlock()
	}()
	for len(f.out) == 0 && f.err == nil {
		f.step()
	}
	if len(f.out) > 0 {
		n := copy(p, f.out)
		f.out = f.out[n:]
		return n, nil
	}
	return 0, f.err
}

// emit hands b out next. With nothing left to hand out (always, as step
// calls it) it is copied into the out buffer, which is free again.
func (f *sseFilter) emit(b []byte) {
	if len(f.out) > 0 {
		f.out = append(f.out, b...)
		return
	}
	f.bufs.out = append(f.bufs.out[:0], b...)
	f.out = f.bufs.out
}

// emitEvent hands the event read out next and starts a new one, swapping
// the event and out buffers rather than copying (when nothing is left to
// hand out, always as step calls it).
func (f *sseFilter) emitEvent() {
	b := f.bufs
	if len(f.out) > 0 {
		f.out = append(f.out, b.event...)
		b.event = b.event[:0]
		return
	}
	b.event, b.out = b.out[:0], b.event
	f.out = b.out
}

// step reads one line (or the part of it that fits the reader's buffer)
// and moves the event forward.
func (f *sseFilter) step() {
	b := f.bufs
	frag, err := b.r.ReadSlice('\n')
	if len(frag) > 0 {
		if !f.content && len(bytes.Trim(frag, "\r\n")) > 0 {
			f.content = true
		}
		if f.over {
			f.emit(frag)
		} else {
			b.event = append(b.event, frag...)
			if len(b.event) > f.limit {
				f.emitEvent()
				f.over = true
			}
		}
	}
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return // the rest of the line follows
	case err != nil:
		// The end of the stream (or a failure). The SDK delivers an event
		// cut by the end of the stream too, so it is judged as well.
		if !f.over && len(b.event) > 0 && f.keep(b.event) {
			f.emitEvent()
		}
		b.event, f.err = b.event[:0], err
		return
	}
	// A whole line ended with frag; only an empty one ends the event.
	content := f.content
	f.content = false
	if content {
		return
	}
	if f.over {
		f.over = false
		return
	}
	if f.keep(b.event) {
		f.emitEvent()
	} else {
		b.event = b.event[:0]
	}
}

// keep decides one whole event (its raw lines, the empty line included).
// An event with one data line (as every server writes a message) is judged
// in place; only data spread over several lines is joined into a copy.
func (f *sseFilter) keep(event []byte) bool {
	var name, data []byte
	hasData, joined := false, false
	for len(event) > 0 {
		line := event
		if i := bytes.IndexByte(event, '\n'); i >= 0 {
			line, event = event[:i], event[i+1:]
		} else {
			event = nil
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			continue
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return true // malformed: the SDK fails the stream on it
		}
		switch string(key) {
		case "event":
			name = bytes.TrimSpace(val)
		case "data":
			val = bytes.TrimSpace(val)
			switch {
			case !hasData:
				data = val
			case !joined:
				data = append(append(append(make([]byte, 0, len(data)+1+len(val)), data...), '\n'), val...)
				joined = true
			default:
				data = append(append(data, '\n'), val...)
			}
			hasData = true
		}
	}
	if len(data) == 0 || (len(name) > 0 && string(name) != "message") {
		return true // the SDK skips it, or it is no message
	}
	method, call, ok := topMethod(data)
	if !ok {
		return true // a response, or what the SDK will fail to decode
	}
	return f.admit(method, call)
}

// topMethod returns the string value of the top-level "method" member of
// the JSON object data, and whether it has a top-level "id" member that is
// not null (a request, not a notification); ok is false when data is not
// an object with a string "method". Members are matched by their exact
// (unescaped) name, and the last of duplicate members counts, as the
// go-sdk's decoder does. Values are skipped, not decoded, except the
// method string. It never allocates more than the method's copy.
func topMethod(data []byte) (method string, call, ok bool) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", false, false
	}
	i++
	for {
		i = skipWS(data, i)
		if i >= len(data) || data[i] == '}' {
			if !ok {
				return "", false, false
			}
			return method, call, true
		}
		switch data[i] {
		case ',':
			i++
			continue
		case '"':
		default:
			return "", false, false
		}
		kend := skipString(data, i)
		if kend < 0 {
			return "", false, false
		}
		key := data[i:kend]
		i = skipWS(data, kend)
		if i >= len(data) || data[i] != ':' {
			return "", false, false
		}
		i = skipWS(data, i+1)
		vend := skipValue(data, i)
		if vend < 0 {
			return "", false, false
		}
		switch {
		case keyIs(key, "method"):
			method, ok = "", false
			if data[i] == '"' {
				var m string // here, so only a method member moves it to the heap
				if err := json.Unmarshal(data[i:vend], &m); err == nil {
					method, ok = m, true
				}
			}
		case keyIs(key, "id"):
			call = !bytes.Equal(data[i:vend], []byte("null"))
		}
		i = vend
	}
}

// keyIs reports whether the quoted JSON string key is name once unescaped.
func keyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return len(key) == len(name)+2 && string(key[1:len(key)-1]) == name
	}
	var s string
	return json.Unmarshal(key, &s) == nil && s == name
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a
// quote), or -1 when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or
// -1 when it does not end. Objects and arrays are skipped by bracket
// depth, strings inside them respected; scalars run to the next
// delimiter.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && !scalarEnd(b[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// scalarEnd reports whether c ends a scalar JSON value.
func scalarEnd(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
